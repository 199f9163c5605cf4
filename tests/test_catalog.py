"""The catalog's own rules, and the catalog as a lookup."""

from __future__ import annotations

import pytest

from casebank.check.engine import Checker
from casebank.check.rules.catalog_entries import loinc_check_digit
from casebank.format.catalog import build_catalog
from casebank.format.loader import load_document
from casebank.format.names import suggest
from conftest import TEST_CATALOG, line_of


def catalog_found(text: str) -> list[tuple[str, str, int]]:
    loaded = load_document("catalog.yaml", text.encode())
    assert loaded.document is not None, loaded.problems
    problems = Checker(build_catalog(loaded.document.data)).check_catalog(loaded.document)
    return sorted((p.rule, p.path, p.line) for p in problems)


def edit_catalog(old: str, new: str) -> str:
    assert TEST_CATALOG.count(old) == 1, old
    return TEST_CATALOG.replace(old, new)


def test_the_test_catalog_is_clean() -> None:
    assert catalog_found(TEST_CATALOG) == []


def test_shipped_catalog_has_no_errors() -> None:
    from conftest import FIXTURES

    text = (FIXTURES.parent.parent / "catalog.yaml").read_text(encoding="utf-8")
    assert [f for f in catalog_found(text)] == []


def test_alias_clashing_with_another_name_case_insensitively() -> None:
    text = edit_catalog('aliases: ["CBC", "FBC"]', 'aliases: ["CBC", "FBC", "hb"]')
    # The later spelling is the one reported: "Hb" of Hemoglobin, after CBC's "hb".
    assert catalog_found(text) == [("CB501", "tests[4].aliases[0]", line_of(text, '"Hb"'))]


def test_alias_repeated_within_an_entry() -> None:
    text = edit_catalog('aliases: ["CBC", "FBC"]', 'aliases: ["CBC", "cbc"]')
    assert [r for r, _, _ in catalog_found(text)] == ["CB501"]


@pytest.mark.parametrize(
    ("code", "digit"),
    [("2160", 0), ("718", 7), ("2823", 3), ("11524", 6), ("4548", 4), ("2345", 7)],
)
def test_loinc_check_digits_of_known_codes(code: str, digit: int) -> None:
    assert loinc_check_digit(code) == digit


def test_wrong_loinc_check_digit() -> None:
    text = edit_catalog('loinc: "718-7"', 'loinc: "718-1"')
    assert catalog_found(text) == [("CB502", "tests[4].loinc", line_of(text, "718-1"))]


def test_malformed_loinc_is_a_format_error() -> None:
    text = edit_catalog('loinc: "718-7"', 'loinc: "LP718"')
    assert [r for r, _, _ in catalog_found(text)] == ["CB206"]


def test_panel_component_must_be_a_catalog_test() -> None:
    text = edit_catalog(
        "components: [Hemoglobin, Platelet count]", "components: [Hemoglobin, Platelet counts]"
    )
    assert catalog_found(text) == [
        ("CB503", "tests[3].components[1]", line_of(text, "Platelet counts"))
    ]


def test_panel_without_components() -> None:
    text = edit_catalog("    components: [Hemoglobin, Platelet count]\n", "")
    assert [r for r, _, _ in catalog_found(text)] == ["CB503"]


def test_numeric_test_without_unit() -> None:
    text = edit_catalog("    unit: mmol/L\n", "")
    assert [r for r, _, _ in catalog_found(text)] == ["CB504"]


def test_an_unreadable_catalog_unit_is_refused() -> None:
    text = edit_catalog("    unit: g/dL\n", "    unit: gramme per decilitre\n")
    assert [r for r, _, _ in catalog_found(text)] == ["CB504"]


def test_catalog_schema_errors_are_positioned() -> None:
    text = edit_catalog("    kind: imaging\n", "    kind: radiology\n")
    assert catalog_found(text) == [("CB204", "tests[9].kind", line_of(text, "radiology"))]


def test_resolution_is_case_and_space_insensitive() -> None:
    loaded = load_document("catalog.yaml", TEST_CATALOG.encode())
    assert loaded.document is not None
    catalog = build_catalog(loaded.document.data)
    test = catalog.resolve("  complete   BLOOD count ")
    assert test is not None and test.name == "Complete blood count"
    assert catalog.resolve("fbc") is test
    assert suggest("Troponine", catalog) == "Troponin"
    # filler words, British spellings and word order do not change which test is meant
    assert suggest("Potassium level", catalog) == "Potassium"
    assert suggest("serum haemoglobin result", catalog) == "Hemoglobin"


def test_a_panels_members_are_found_once_and_handed_out_as_a_copy() -> None:
    """``components_of`` finds a panel's members once per catalog; each caller gets its own
    list, so one that changes it changes nothing for the next."""
    loaded = load_document("catalog.yaml", TEST_CATALOG.encode())
    assert loaded.document is not None
    catalog = build_catalog(loaded.document.data)
    panel = catalog.resolve("CBC")
    assert panel is not None and panel.components
    first = catalog.components_of(panel)
    assert [t.name for t in first] == [
        t.name for c in panel.components if (t := catalog.resolve(c)) is not None
    ]
    first.clear()
    again = catalog.components_of(panel)
    assert again and again is not first


# --- cost and burden ----------------------------------------------------------------------

CXR_COST = '    cost: {amount: 32.67, currency: USD, year: 2025, source: cms-pfs, code: "71046"}\n'
CXR_BURDEN = "    burden: {invasive: none, radiation_msv: 0.1, contrast: none, sedation: false}\n"


def test_every_shipped_test_has_a_cost_and_a_burden() -> None:
    """Issue 23: the whole catalog, test by test, with the sources cited in its header."""
    from conftest import FIXTURES

    text = (FIXTURES.parent.parent / "catalog.yaml").read_text(encoding="utf-8")
    loaded = load_document("catalog.yaml", text.encode())
    assert loaded.document is not None
    catalog = build_catalog(loaded.document.data)
    lacking = [t.name for t in catalog.tests if t.cost is None or t.burden is None]
    assert lacking == [] and len(catalog.tests) > 1000
    priced = [t.cost for t in catalog.tests if t.cost and t.cost.amount is not None]
    assert priced and all(c and c.currency and c.year and c.source for c in priced)
    assert all(t.cost and t.cost.band for t in catalog.tests)
    header = text.split("vocabularies:")[0]
    for source in ("Clinical Laboratory Fee Schedule", "Physician Fee Schedule", "Mettler"):
        assert source in header


@pytest.mark.parametrize(
    "cost,where",
    [
        ("", "tests[9]"),
        ("    cost: {amount: 32.67}\n", "tests[9].cost"),
        ("    cost: {tier: medium, amount: 32.67, currency: USD, year: 2025, source: x}\n",
         "tests[9].cost"),
        ("    cost: {tier: medium}\n", None),
        (CXR_COST, None),
    ],
)  # fmt: skip
def test_a_test_needs_a_sourced_cost_or_a_tier(cost: str, where: str | None) -> None:
    text = edit_catalog(CXR_COST, cost)
    if where is None:
        assert catalog_found(text) == []
        return
    line = line_of(text, cost.strip() if cost else "name: Chest X-ray")
    assert catalog_found(text) == [("CB505", where, line)]


def test_a_test_needs_a_burden_and_a_dose_or_unknown() -> None:
    text = edit_catalog(CXR_BURDEN, "")
    assert catalog_found(text) == [("CB505", "tests[9]", line_of(text, "name: Chest X-ray"))]
    assert catalog_found(edit_catalog("radiation_msv: 0.1,", "radiation_msv: unknown,")) == []
    guessed = edit_catalog("radiation_msv: 0.1,", "radiation_msv: some,")
    assert [r for r, _, _ in catalog_found(guessed)] == ["CB204"]  # not one of the forms


@pytest.mark.parametrize("which", ["shipped", "test"])
def test_a_catalog_built_from_its_canonical_content_is_the_one_built_from_its_file(
    which: str,
) -> None:
    """A release is scored with the catalog remembered as built from the file's data (as
    validation and `results` build it), and from a bundle with the one built from its
    canonical content: the two are the same catalog (every number is read as a float)."""
    from pathlib import Path

    from casebank.format.canonical import canonical_data

    text = (
        (Path(__file__).parent.parent / "catalog.yaml").read_text(encoding="utf-8")
        if which == "shipped"
        else TEST_CATALOG.replace("amount: 32.67", "amount: 32.0")  # canonical: 32
    )
    assert which == "shipped" or "amount: 32.0" in text
    loaded = load_document("catalog.yaml", text.encode())
    assert loaded.document is not None
    assert build_catalog(canonical_data(loaded.document.data)) == build_catalog(
        loaded.document.data
    )


@pytest.mark.parametrize("which", ["shipped", "test"])
def test_a_stored_catalog_reads_back_as_the_same_catalog(which: str) -> None:
    """What a one-case command reads back from its memory is the catalog it would build: every
    test, field by field (tuples as tuples, a cost as a Cost), the vocabularies and the
    indexes; a memory stored with other fields is refused, never read as this catalog."""
    import json
    from dataclasses import fields
    from pathlib import Path

    from casebank.format.catalog import CatalogTest, restored_catalog, stored_catalog

    text = (
        (Path(__file__).parent.parent / "catalog.yaml").read_text(encoding="utf-8")
        if which == "shipped"
        else TEST_CATALOG
    )
    loaded = load_document("catalog.yaml", text.encode())
    assert loaded.document is not None
    built = build_catalog(loaded.document.data)
    stored = json.loads(json.dumps(stored_catalog(built)))
    restored = restored_catalog(stored)
    assert restored == built
    for mine, theirs in zip(restored.tests, built.tests, strict=True):
        for f in fields(CatalogTest):
            assert type(getattr(mine, f.name)) is type(getattr(theirs, f.name)), f.name
    assert any(t.cost is not None for t in restored.tests)
    stored = json.loads(json.dumps(stored_catalog(built)))
    stored["fields"] = stored["fields"][:-1]
    with pytest.raises(ValueError, match="other fields"):
        restored_catalog(stored)
