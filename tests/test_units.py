"""Units with UCUM semantics: spellings that mean one unit are one unit; dimensions decide."""

from __future__ import annotations

import re
from pathlib import Path

import pytest

from casebank.format import units
from conftest import check_text, edit

ROOT = Path(__file__).resolve().parent.parent


@pytest.mark.parametrize(
    "a,b",
    [
        ("/mm3", "/µL"),
        ("/mm³", "cells/µL"),
        ("×10^9/L", "10*9/L"),
        ("x10^9/L", "10^9/L"),
        ("seconds", "s"),
        ("µmol/L", "μmol/L"),  # micro sign and Greek mu
        ("mEq/L", "meq/L"),
        ("mmHg", "mm[Hg]"),
        ("°C", "Cel"),
        ("mL/24 h", "mL/(24.h)"),
    ],
)
def test_equivalent_spellings_are_one_unit(a: str, b: str) -> None:
    first, second = units.parse(a), units.parse(b)
    assert first is not None and second is not None
    assert first.dimension == second.dimension and first.factor == pytest.approx(second.factor)


@pytest.mark.parametrize(
    "a,b",
    [("/µL", "10*3/uL"), ("min", "s"), ("g/dL", "g/L"), ("mmHg", "kPa")],
)
def test_units_of_one_dimension_compare(a: str, b: str) -> None:
    assert units.same_dimension(a, b)


@pytest.mark.parametrize(
    "a,b",
    [
        ("mmol/L", "mg/dL"),  # molar and mass concentrations need a molar mass
        ("IU/L", "/L"),  # an international unit is not a count
        ("points", "%"),  # a score is not a percentage
        ("pH", "ratio"),
        ("copies/mL", "/mL"),
        ("U/L", "mmol/L"),
    ],
)
def test_units_of_other_dimensions_do_not(a: str, b: str) -> None:
    assert not units.same_dimension(a, b)


def test_a_lookalike_character_is_named() -> None:
    assert units.parse("хmol/L") is None  # a Cyrillic ha
    assert units.lookalikes("хmol/L") == ["`х` (cyrillic small letter ha)"]


def test_the_unit_table_matches_ucumvert() -> None:
    """The committed facts are what ucumvert computes; regenerate with
    `python -m casebank.format.units --write catalog.yaml cases/*.yaml tests/fixtures/*.yaml`."""
    stored = units._table()
    for code, (dimension, factor) in stored.items():
        computed = units.compute(code)
        assert computed is not None, code
        assert computed[0] == dimension and computed[1] == pytest.approx(factor), code


def test_every_unit_the_dataset_uses_is_in_the_table() -> None:
    """So that validating the dataset never imports ucumvert (most of a second)."""
    texts = [(ROOT / "catalog.yaml").read_text(encoding="utf-8")]
    texts += [p.read_text(encoding="utf-8") for p in sorted((ROOT / "cases").glob("*.yaml"))]
    table = units._table()
    missing = sorted(
        {u for text in texts for u in units.catalog_units(text) if units.to_ucum(u) not in table}
    )
    assert missing == [], "run `python -m casebank.format.units --write catalog.yaml cases/*.yaml`"


def _unit_problem(unit: str) -> list[tuple[str, str]]:
    text = edit(
        "Platelets: {value: 250, unit: ×10^9/L,", f'Platelets: {{value: 250, unit: "{unit}",'
    )
    return [(p.rule, p.message) for p in check_text(text)]


def test_a_cell_count_in_per_cubic_millimetre_is_accepted() -> None:
    assert _unit_problem("/mm3") == []
    assert _unit_problem("10*3/uL") == []


def test_a_unit_of_another_dimension_is_refused_with_both_dimensions() -> None:
    [(rule, message)] = _unit_problem("mmol/L")
    assert rule == "CB403"
    assert "an amount-of-substance concentration" in message and "a count per volume" in message


def test_an_unreadable_unit_names_its_lookalike() -> None:
    [(rule, message)] = _unit_problem("х10^9/L")
    assert rule == "CB403" and "cyrillic small letter ha" in message


def test_greek_mu_and_the_micro_sign_are_both_micro() -> None:
    text = edit("Hemoglobin: {value: 14.1, unit: g/dL,", "Hemoglobin: {value: 141, unit: g/L,")
    assert check_text(text) == []
    assert re.search("μ", "μmol/L") and units.same_dimension("μmol/L", "µmol/L")
