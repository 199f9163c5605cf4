"""Units with UCUM semantics: spellings that mean one unit are one unit; dimensions decide."""

from __future__ import annotations

import re
from collections.abc import Callable
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


# --- one value, two units -------------------------------------------------------------------


@pytest.mark.parametrize(
    "a,a_unit,b,b_unit,same",
    [
        (14.9, "g/dL", 149, "g/L", True),  # the example
        (14.9, "g/dL", 150, "g/L", False),  # 149 g/L written to the gram
        (15, "g/dL", 149, "g/L", True),  # 15 g/dL is written to ±0.5 g/dL
        (7.1, "mmol/L", 7100, "µmol/L", True),
        (7.1, "mmol/L", 7100, "umol/L", True),
        (1.2, "mg/dL", 106, "µmol/L", None),  # mass and substance: no molar mass in a unit
        (38.2, "Cel", 100.8, "[degF]", True),  # temperatures are affine, not proportional
        (38.2, "°C", 101.5, "°F", False),
        (310.15, "K", 37, "Cel", True),
        (4.2, "mmol/L", 7.1, "mmol/L", False),
        (1, "10*9/L", 1000, "/uL", True),
        (120, "mmHg", 16, "kPa", True),
        (5, "nonsense", 5, "g/L", None),
    ],
)
def test_the_same_value_in_two_units_is_the_same_value(
    a: float, a_unit: str, b: float, b_unit: str, same: bool | None
) -> None:
    assert units.same_quantity(a, a_unit, b, b_unit) is same
    assert units.same_quantity(b, b_unit, a, a_unit) is same


def test_conversion_goes_through_the_unit_table() -> None:
    assert units.convert(14.9, "g/dL", "g/L") == pytest.approx(149)
    assert units.convert(37, "Cel", "[degF]") == pytest.approx(98.6)
    assert units.convert(1, "mmol/L", "mg/dL") is None


def _member_and_alone(value: str, unit: str) -> str:
    return edit(
        "  results_generated_policy: normal_unless_listed\n",
        f"    Hemoglobin: {{type: lab_value, value: {value}, unit: {unit}, "
        'reference_range: "130-170"}\n  results_generated_policy: normal_unless_listed\n',
    )


def test_a_member_listed_alone_in_other_units_agrees_when_it_is_the_same_value() -> None:
    """CB424 compares through the units: the fixture's panel has Hemoglobin 14.1 g/dL."""
    assert check_text(_member_and_alone("141", "g/L")) == []
    [problem] = check_text(_member_and_alone("151", "g/L"))
    assert problem.rule == "CB424"
    assert problem.message.endswith("is 14.1 g/dL, but `Hemoglobin` on its own is 151 g/L")


def test_a_member_listed_alone_in_units_that_cannot_be_converted_says_so() -> None:
    # (the test catalog gives Hemoglobin in g/dL or g/L, so CB403 speaks about the unit too)
    [problem] = [p for p in check_text(_member_and_alone("2.19", "mmol/L")) if p.rule == "CB424"]
    assert problem.message.endswith("on its own is 2.19 mmol/L, in units that cannot be converted")
    assert "the same unit" in problem.hint


@pytest.mark.parametrize(
    "written,shown",
    [
        ("Cel", "°C"),
        ("[degF]", "°F"),
        ("mm[Hg]", "mmHg"),
        ("cm[H2O]", "cmH2O"),
        ("umol/L", "µmol/L"),
        ("10*9/L", "×10^9/L"),
        ("10*3/uL", "×10^3/µL"),
        ("[IU]/L", "IU/L"),
        ("meq/L", "mEq/L"),
        ("%{predicted}", "% predicted"),
        ("{copies}/mL", "copies/mL"),
        ("[pH]", "pH"),
        ("mL/(24.h)", "mL/24 h"),
        ("mPa.s", "mPa·s"),
        # what clinicians already write is shown as written
        ("°C", "°C"),
        ("mmHg", "mmHg"),
        ("×10^9/L", "×10^9/L"),
        ("mIU/L", "mIU/L"),
        ("U/g Hb", "U/g Hb"),
        ("mmol/min/kPa", "mmol/min/kPa"),
    ],
)
def test_units_are_shown_by_their_display_names(written: str, shown: str) -> None:
    assert units.display(written) == shown


def test_reports_and_pages_show_display_names_and_data_keeps_the_code(
    make_repo: Callable[..., Path], capsys: pytest.CaptureFixture[str]
) -> None:
    from casebank.cli import main
    from casebank.site.nodes import measure, with_unit

    text = edit("unit: ×10^9/L, reference_range: {low", "unit: 10*9/L, reference_range: {low")
    root = make_repo({"valid_case.yaml": text})
    argv = ["results", "valid_case", "Platelet count", "--root", str(root)]
    assert main(argv) == 0
    shown = capsys.readouterr().out
    assert "unit: ×10^9/L" in shown and "10*9" not in shown
    assert main([*argv, "--format", "json"]) == 0
    assert '"unit": "10*9/L"' in capsys.readouterr().out  # served data is the case's data
    assert with_unit(38.2, "Cel") == "38.2 °C"
    assert with_unit(0.82, "1") == "0.82"
    assert measure({"value": 146, "unit": "mm[Hg]", "flag": "high"}).value == "146 mmHg"
