"""The catalog's own rules: unique names, real LOINC codes, complete panels and units."""

from __future__ import annotations

from collections.abc import Iterator
from typing import Any

from casebank.check.problem import Severity
from casebank.check.registry import Finding, rule
from casebank.format.catalog import fold
from casebank.format.document import Document, Path


def _entries(doc: Document) -> Iterator[tuple[Path, dict[str, Any]]]:
    tests = doc.data.get("tests")
    if isinstance(tests, list):
        for i, entry in enumerate(tests):
            if isinstance(entry, dict):
                yield ("tests", i), entry


def _strings(value: Any) -> list[str]:
    return [v for v in value if isinstance(v, str)] if isinstance(value, list) else []


@rule(
    "CB501",
    "catalog-duplicate-name",
    Severity.ERROR,
    "A test name or alias used twice in the catalog (case-insensitively).",
    target="catalog",
)
def check_unique_names(doc: Document) -> Iterator[Finding]:
    """A name must mean exactly one test, or cases would silently refer to the wrong one. Names
    and aliases are compared case-insensitively across the whole catalog.

    Bad:

        - name: Troponin
          aliases: [hs-troponin]
        - name: High-sensitivity troponin
          aliases: [HS-Troponin]

    Good:

        - name: Troponin
          aliases: [hs-troponin, High-sensitivity troponin]
    """
    seen: dict[str, str] = {}
    for path, entry in _entries(doc):
        spellings: list[tuple[Path, str]] = []
        if isinstance(entry.get("name"), str):
            spellings.append(((*path, "name"), entry["name"]))
        spellings.extend(
            ((*path, "aliases", i), alias)
            for i, alias in enumerate(entry.get("aliases") or [])
            if isinstance(alias, str)
        )
        owner = str(entry.get("name", "?"))
        local: set[str] = set()
        for spelling_path, spelling in spellings:
            key = fold(spelling)
            if key in local:
                yield Finding(
                    spelling_path,
                    f"`{spelling}` is listed twice for {owner}",
                    "remove the repeated alias",
                )
            elif key in seen:
                yield Finding(
                    spelling_path,
                    f"`{spelling}` ({owner}) is already used by {seen[key]}",
                    "a name or alias can mean only one test; remove or rename it",
                )
            local.add(key)
        for key in local:
            seen.setdefault(key, owner)


def loinc_check_digit(number: str) -> int:
    """LOINC's mod-10 check digit (the Luhn algorithm) for the digits before the hyphen."""
    total = 0
    for position, char in enumerate(reversed(number)):
        digit = int(char)
        if position % 2 == 0:
            digit *= 2
            digit = digit - 9 if digit > 9 else digit
        total += digit
    return (10 - total % 10) % 10


@rule(
    "CB502",
    "loinc-check-digit",
    Severity.ERROR,
    "A LOINC code whose check digit is wrong.",
    target="catalog",
)
def check_loinc(doc: Document) -> Iterator[Finding]:
    """A LOINC code ends in a mod-10 check digit; a wrong one means a mistyped code that would
    link the test to another concept. When unsure of a code, leave `loinc` out.

    Bad:

        loinc: "2160-1"

    Good:

        loinc: "2160-0"
    """
    for path, entry in _entries(doc):
        code = entry.get("loinc")
        if not isinstance(code, str) or code.count("-") != 1:
            continue
        number, check = code.split("-")
        if not (number.isdigit() and check.isdigit() and len(check) == 1):
            continue  # the schema's pattern reports the form
        expected = loinc_check_digit(number)
        if int(check) != expected:
            yield Finding(
                (*path, "loinc"),
                f"LOINC code `{code}` of {entry.get('name')} fails "
                f"its check digit (expected {number}-{expected})",
                "check the code against the LOINC database, or remove it",
            )


@rule(
    "CB503",
    "catalog-panel",
    Severity.ERROR,
    "A panel whose components are missing or are not catalog tests.",
    target="catalog",
)
def check_panels(doc: Document) -> Iterator[Finding]:
    """A test whose result type includes `panel` lists its member tests under `components`, each
    the name of another catalog entry; only panels have components.

    Bad:

        - name: Complete blood count
          result_types: [panel]
          components: [Haemoglobin count]

    Good:

        - name: Complete blood count
          result_types: [panel]
          components: [Hemoglobin, White blood cell count, Platelet count]
    """
    names = {fold(e["name"]) for _, e in _entries(doc) if isinstance(e.get("name"), str)}
    for path, entry in _entries(doc):
        is_panel = "panel" in _strings(entry.get("result_types"))
        components = _strings(entry.get("components"))
        if is_panel and not components:
            yield Finding(
                path,
                f"panel {entry.get('name')} lists no `components`",
                "list the member tests by their catalog names",
            )
        elif components and not is_panel:
            yield Finding(
                (*path, "components"),
                f"{entry.get('name')} has components but is not a panel",
                "add `panel` to `result_types`",
            )
        for i, component in enumerate(components):
            if fold(component) not in names:
                yield Finding(
                    (*path, "components", i),
                    f"component `{component}` of {entry.get('name')} is not a "
                    "catalog test (by canonical name)",
                    "add the test to the catalog, or use its canonical name",
                )


@rule(
    "CB504",
    "catalog-units",
    Severity.ERROR,
    "A numeric test without a unit, or with a unit casebank cannot read.",
    target="catalog",
)
def check_units(doc: Document) -> Iterator[Finding]:
    """Tests with `lab_value` results declare their preferred `unit` (any unit of the same
    dimension is then accepted in cases) and, in `units`, units of other dimensions also
    accepted. Each must be readable with UCUM semantics.

    Bad:

        - name: Potassium
          result_types: [lab_value]

    Good:

        - name: Potassium
          result_types: [lab_value]
          unit: mmol/L
    """
    from casebank.format import units

    for path, entry in _entries(doc):
        if "lab_value" not in _strings(entry.get("result_types")):
            continue
        unit = entry.get("unit")
        if not isinstance(unit, str):
            yield Finding(
                path,
                f"{entry.get('name')} has numeric results but no `unit`",
                "add the preferred `unit:` (UCUM or a common clinical spelling)",
            )
            continue
        listed = [((*path, "unit"), unit)] + [
            ((*path, "units", i), u) for i, u in enumerate(_strings(entry.get("units")))
        ]
        for where, spelling in listed:
            if units.safe_parse(spelling) is None:
                odd = units.lookalikes(spelling)
                yield Finding(
                    where,
                    f"unit `{spelling}` of {entry.get('name')} cannot be read"
                    + (f"; it contains {', '.join(odd)}" if odd else ""),
                    "write it in UCUM or a common clinical spelling (mmol/L, ×10^9/L, mmHg)",
                )


_PRICE = ("amount", "currency", "year", "source")


@rule(
    "CB505",
    "catalog-cost-burden",
    Severity.WARNING,
    "A test without its cost (a sourced amount, or a tier) or its burden.",
    target="catalog",
)
def check_cost_and_burden(doc: Document) -> Iterator[Finding]:
    """Every test says what it costs and what it costs the patient, so that the scorer can
    charge an unneeded order by its burden and report each work-up's cost, dose, invasive
    procedures and contrast studies (docs/scoring.md). A cost is an amount with its currency,
    year and source (a public fee schedule cited in the catalog header), or, where no public
    figure exists, a relative tier; never both, never an invented number. A burden gives all of
    `invasive`, `radiation_msv` (`unknown` where no cited table has the study), `contrast` and
    `sedation`.

    Bad:

        - name: Chest X-ray
          kind: imaging
          result_types: [text_report]
          cost: {amount: 32.67}

    Good:

        - name: Chest X-ray
          kind: imaging
          result_types: [text_report]
          cost: {amount: 32.67, currency: USD, year: 2025, source: cms-pfs, code: "71046"}
          burden: {invasive: none, radiation_msv: 0.1, contrast: none, sedation: false}
    """
    for path, entry in _entries(doc):
        name = entry.get("name", "?")
        cost, burden = entry.get("cost"), entry.get("burden")
        if not isinstance(cost, dict):
            yield Finding(
                path,
                f"{name} has no `cost`",
                "add `cost: {amount, currency, year, source}` from a public fee schedule cited "
                "in the catalog header, or `cost: {tier: low|medium|high|very_high}`",
            )
        elif "tier" in cost and "amount" in cost:
            yield Finding(
                (*path, "cost"),
                f"the cost of {name} gives both an amount and a tier",
                "keep the sourced amount, or only the tier where no public figure exists",
            )
        elif "tier" not in cost and [k for k in _PRICE if k not in cost]:
            missing = ", ".join(f"`{k}`" for k in _PRICE if k not in cost)
            yield Finding(
                (*path, "cost"),
                f"the cost of {name} lacks {missing}",
                "give the amount with its currency, year and source, or a `tier` instead",
            )
        if not isinstance(burden, dict):
            yield Finding(
                path,
                f"{name} has no `burden`",
                "add `burden: {invasive, radiation_msv, contrast, sedation}` (catalog header)",
            )
