"""Results: each result is complete for its type, in a unit and range the catalog accepts."""

from __future__ import annotations

import re
from collections.abc import Iterator
from dataclasses import dataclass
from typing import Any

from casebank.check.engine import CaseContext, Finding, rule
from casebank.check.problem import Severity
from casebank.format.catalog import CatalogTest, did_you_mean
from casebank.format.document import Path


@dataclass(frozen=True)
class ResultEntry:
    path: Path
    name: str
    entry: dict[str, Any]
    kind: str  # lab_value, qualitative, text_report, panel (or the unknown type as written)
    test: CatalogTest | None
    in_panel: bool = False


def result_entries(ctx: CaseContext) -> list[ResultEntry]:
    """Every result, panel components included (computed once per case)."""
    entries: list[ResultEntry] = ctx.memo("result_entries", lambda: list(_result_entries(ctx)))
    return entries


def _result_entries(ctx: CaseContext) -> Iterator[ResultEntry]:
    """Every result, panel components included. A component's type follows its value."""
    results = ctx.get("investigations", "results")
    if not isinstance(results, dict):
        return
    for name, entry in results.items():
        if not isinstance(entry, dict):
            continue
        path: Path = ("investigations", "results", name)
        kind = entry.get("type")
        yield ResultEntry(
            path, name, entry, kind if isinstance(kind, str) else "", ctx.resolve(name)
        )
        components = entry.get("components")
        if not isinstance(components, dict):
            continue
        for component, sub in components.items():
            if isinstance(sub, dict):
                yield ResultEntry(
                    (*path, "components", component),
                    component,
                    sub,
                    _component_kind(sub),
                    ctx.resolve(component),
                    in_panel=True,
                )


def _component_kind(entry: dict[str, Any]) -> str:
    kind = entry.get("type")
    if isinstance(kind, str):
        return kind
    return "qualitative" if isinstance(entry.get("value"), str) else "lab_value"


def _is_number(value: Any) -> bool:
    return isinstance(value, (int, float)) and not isinstance(value, bool)


@rule(
    "CB305",
    "lab-value-incomplete",
    Severity.ERROR,
    "A lab value needs a numeric value, a unit and a reference range.",
)
def check_lab_values_complete(ctx: CaseContext) -> Iterator[Finding]:
    """Spec, section 5: lab values carry `unit` and `reference_range`. The value itself is a
    number, so that it can be compared with the range; write qualitative results as type
    `qualitative`.

    Bad:

        Troponin:
          type: lab_value
          value: 2.4

    Good:

        Troponin:
          type: lab_value
          value: 2.4
          unit: ng/mL
          reference_range: "0.00–0.04"
    """
    for r in result_entries(ctx):
        if r.kind != "lab_value":
            continue
        if not _is_number(r.entry.get("value")):
            yield Finding(
                r.path,
                f"lab value `{r.name}` has no numeric `value`",
                "give the number alone (units go in `unit`); for a text result use "
                "`type: qualitative`",
                at_key=True,
            )
        for needed, hint in (
            ("unit", _units_hint(r.test)),
            ("reference_range", 'add e.g. `reference_range: "3.5–5.0"`'),
        ):
            if needed not in r.entry:
                yield Finding(r.path, f"lab value `{r.name}` has no `{needed}`", hint, at_key=True)


def _units_hint(test: CatalogTest | None) -> str:
    if test is not None and test.accepted_units:
        return f"add `unit:`; the catalog accepts {', '.join(test.accepted_units)}"
    return "add `unit:` with the unit of the value"


@rule(
    "CB416",
    "result-incomplete",
    Severity.ERROR,
    "A text or qualitative result without text, or a panel without components.",
)
def check_other_results_complete(ctx: CaseContext) -> Iterator[Finding]:
    """A `text_report` or `qualitative` result holds its text in `value`; a `panel` holds its
    member results in `components`.

    Bad:

        ECG:
          type: text_report

    Good:

        ECG:
          type: text_report
          value: "Sinus rhythm, ST elevation in V1–V4."
    """
    for r in result_entries(ctx):
        if r.kind in ("text_report", "qualitative") and not isinstance(r.entry.get("value"), str):
            yield Finding(
                r.path,
                f"{r.kind.replace('_', ' ')} `{r.name}` has no text `value`",
                "write the result as text in `value:`",
                at_key=True,
            )
        elif r.kind == "panel" and not r.in_panel and not r.entry.get("components"):
            yield Finding(
                r.path,
                f"panel `{r.name}` has no `components`",
                "list each member test under `components:` with its result",
                at_key=True,
            )


@rule(
    "CB402",
    "result-type-not-allowed",
    Severity.ERROR,
    "A result type the catalog entry for that test does not allow.",
    needs_catalog=True,
)
def check_result_type_allowed(ctx: CaseContext) -> Iterator[Finding]:
    """The catalog says which result types each test produces: a troponin is a `lab_value`,
    a chest X-ray a `text_report`.

    Bad:

        Chest X-ray:
          type: lab_value
          value: 1

    Good:

        Chest X-ray:
          type: text_report
          value: "No consolidation, effusion or pneumothorax."
    """
    for r in result_entries(ctx):
        if r.test is None or not r.kind or r.kind not in _KNOWN or not r.test.result_types:
            continue
        if r.kind not in r.test.result_types:
            yield Finding(
                (*r.path, "type"),
                f"`{r.name}` is given as {r.kind}, but the catalog allows "
                f"{', '.join(r.test.result_types)} for {r.test.name}",
                f"use `type: {r.test.result_types[0]}`",
            )


_KNOWN = {"lab_value", "qualitative", "text_report", "panel"}


@rule(
    "CB403",
    "unit-not-accepted",
    Severity.ERROR,
    "A lab value in a unit the catalog entry does not accept.",
    needs_catalog=True,
)
def check_units(ctx: CaseContext) -> Iterator[Finding]:
    """Each numeric test lists the units it accepts; a value in another unit (or a misspelt
    one) cannot be compared across cases. Units are case-sensitive (`mmol/L`, not `mmol/l`).

    Bad:

        Potassium: {type: lab_value, value: 5.9, unit: mmol/l, reference_range: "3.5–5.0"}

    Good:

        Potassium: {type: lab_value, value: 5.9, unit: mmol/L, reference_range: "3.5–5.0"}
    """
    for r in result_entries(ctx):
        unit = r.entry.get("unit")
        if r.test is None or not isinstance(unit, str) or not r.test.accepted_units:
            continue
        if unit not in r.test.accepted_units:
            yield Finding(
                (*r.path, "unit"),
                f"unit `{unit}` is not accepted for {r.test.name}"
                + did_you_mean(unit, r.test.accepted_units),
                f"use one of: {', '.join(r.test.accepted_units)}",
            )


_NUMBER = r"[-+]?\d+(?:\.\d+)?"
_RANGE = re.compile(rf"^\s*({_NUMBER})\s*(?:[–—-]|to)\s*({_NUMBER})\s*$")
_BOUND = re.compile(rf"^\s*(<=|>=|[<>≤≥])\s*({_NUMBER})\s*$")


def parse_reference_range(value: Any) -> tuple[float | None, float | None] | None:
    """(low, high) from `a–b`, `a-b`, `<b`, `≤b`, `>a`, `≥a` or {low, high}; None if unreadable."""
    if isinstance(value, dict):
        low, high = value.get("low"), value.get("high")
        if (low is None and high is None) or not all(
            v is None or _is_number(v) for v in (low, high)
        ):
            return None
        return (None if low is None else float(low), None if high is None else float(high))
    if not isinstance(value, str):
        return None
    match = _RANGE.match(value)
    if match:
        return float(match.group(1)), float(match.group(2))
    match = _BOUND.match(value)
    if match:
        bound = float(match.group(2))
        return (None, bound) if match.group(1) in ("<", "<=", "≤") else (bound, None)
    return None


@rule(
    "CB404",
    "bad-reference-range",
    Severity.ERROR,
    "A lab reference range that does not parse, or whose low exceeds its high.",
)
def check_reference_ranges(ctx: CaseContext) -> Iterator[Finding]:
    """A lab value's reference range is one of `a–b` (or `a-b`), `<b`, `≤b`, `>a`, `≥a`, or a
    mapping with `low` and/or `high`; the low limit does not exceed the high one. Units belong in
    `unit`, not in the range. Use the mapping form for negative limits.

    Bad:

        reference_range: "5.0–3.5 mmol/L"

    Good:

        reference_range: "3.5–5.0"
    """
    for r in result_entries(ctx):
        if r.kind != "lab_value" or "reference_range" not in r.entry:
            continue
        raw = r.entry["reference_range"]
        path = (*r.path, "reference_range")
        parsed = parse_reference_range(raw)
        if parsed is None:
            yield Finding(
                path,
                f"reference range {raw!r} of `{r.name}` cannot be read",
                'write `low–high` (e.g. "3.5–5.0"), `<high`, `>low`, or '
                "{low: 3.5, high: 5.0}, without units",
            )
        elif parsed[0] is not None and parsed[1] is not None and parsed[0] > parsed[1]:
            yield Finding(
                path,
                f"reference range {raw!r} of `{r.name}` has its low limit above its high limit",
                "swap the two limits",
            )
