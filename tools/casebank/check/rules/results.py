"""Results: each result is complete for its type and status, in a unit and range the catalog
accepts, and says what it is rather than holding a placeholder."""

from __future__ import annotations

from collections.abc import Iterator
from typing import Any, NamedTuple

from casebank.check.problem import Severity
from casebank.check.registry import CaseContext, Finding, rule
from casebank.format.catalog import CatalogTest
from casebank.format.document import Path
from casebank.format.results import ResultEntry, is_placeholder_result, parse_reference_range
from casebank.format.results import result_entries as _entries
from casebank.format.schema import RESULT_TYPES

__all__ = ["parse_reference_range"]


class Resolved(NamedTuple):
    """A result as written, and the catalog test it is of (inside its panel, if a member),
    with what the rules ask of every result read once (eight rules read them all)."""

    r: ResultEntry
    test: CatalogTest | None
    path: Path
    name: str
    entry: Any
    kind: str
    final: bool
    has_series: bool

    @classmethod
    def of(cls, r: ResultEntry, test: CatalogTest | None) -> Resolved:
        entry = r.entry
        final = r.status == "final"
        series = isinstance(entry.get("series"), list)
        return cls(r, test, r.path, r.name, entry, r.kind, final, series)


def result_entries(ctx: CaseContext) -> list[Resolved]:
    """Every result, panel member and series point (computed once per case)."""

    def compute() -> list[Resolved]:
        found = []
        for r in _entries(ctx.data):
            panel = ctx.resolve(r.panel) if r.panel is not None else None
            test = (
                ctx.catalog.resolve(r.name, panel=panel)
                if ctx.catalog is not None and r.panel is not None
                else ctx.resolve(r.name)
            )
            found.append(Resolved.of(r, test))
        return found

    entries: list[Resolved] = ctx.memo("result_entries", compute)
    return entries


def _is_number(value: Any) -> bool:
    return isinstance(value, (int, float)) and not isinstance(value, bool)


def _valued(r: Resolved) -> bool:
    """Whether this entry itself must hold a value (not a series parent, and final)."""
    return r.final and not r.has_series


@rule(
    "CB305",
    "lab-value-incomplete",
    Severity.ERROR,
    "A lab value needs a numeric value, a unit and a reference range.",
)
def check_lab_values_complete(ctx: CaseContext) -> Iterator[Finding]:
    """Spec, section 5: lab values carry `unit` and `reference_range`. The value itself is a
    number, so that it can be compared with the range; a word such as "elevated" is a
    `qualitative` result. A result that is not final (`status: pending`) has no value yet, and
    a series holds its values in its points.

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
        if r.kind != "lab_value" or not _valued(r):
            continue
        value = r.entry.get("value")
        if not _is_number(value):
            yield Finding(r.path, _no_number(ctx, r, value), _number_hint(value), at_key=True)
        for needed, hint in (
            ("unit", _units_hint(r.test)),
            ("reference_range", 'add e.g. `reference_range: "3.5–5.0"`'),
        ):
            if needed not in r.entry:
                yield Finding(r.path, f"lab value `{r.name}` has no `{needed}`", hint, at_key=True)


def _no_number(ctx: CaseContext, r: Resolved, value: Any) -> str:
    source = ctx.doc.plain_number_like.get((*r.path, "value"))
    if source is not None:
        return (
            f"lab value `{r.name}` has no numeric `value`: YAML 1.1 reads the unquoted "
            f"`{source}` as text, because an exponent needs a decimal point"
        )
    if value is None:
        return f"lab value `{r.name}` has no numeric `value`"
    return f"lab value `{r.name}` has the text `{value}` where a number belongs"


def _number_hint(value: Any) -> str:
    return (
        "give the number alone (units go in `unit`; write 1000 or 1.0e+3, not 1e3); for a "
        "word such as `elevated` use `type: qualitative`; if the result is not back, set "
        "`status: pending`"
    )


def _units_hint(test: CatalogTest | None) -> str:
    if test is not None and test.unit:
        return f"add `unit:`; the catalog's preferred unit for {test.name} is {test.unit}"
    return "add `unit:` with the unit of the value"


@rule(
    "CB416",
    "result-incomplete",
    Severity.ERROR,
    "A text or qualitative result without text, a panel without components, or a series "
    "point without a result.",
)
def check_other_results_complete(ctx: CaseContext) -> Iterator[Finding]:
    """A `text_report` or `qualitative` result holds its text in `value`; a `panel` holds its
    member results in `components`; each point of a `series` holds a full result. A result
    that is not final (`status: pending`, `not_done`, `unavailable`) needs neither.

    Bad:

        ECG:
          type: text_report

    Good:

        ECG:
          type: text_report
          value: "Sinus rhythm, ST elevation in V1–V4."
    """
    for r in result_entries(ctx):
        if not _valued(r):
            continue
        if r.kind in ("text_report", "qualitative") and not isinstance(r.entry.get("value"), str):
            yield Finding(
                r.path,
                f"{r.kind.replace('_', ' ')} `{r.name}` has no text `value`",
                "write the result as text in `value:`, or set `status:` if it is not back",
                at_key=r.r.at is None,
            )
        elif r.kind == "panel" and r.r.panel is None and not r.entry.get("components"):
            yield Finding(
                r.path,
                f"panel `{r.name}` has no `components`" + (f" at `{r.r.at}`" if r.r.at else ""),
                "list each member test under `components:` with its result",
                at_key=r.r.at is None,
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
    a chest X-ray a `text_report`. A numeric test may always be reported qualitatively
    ("elevated").

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
        if r.test is None or r.kind not in RESULT_TYPES or not r.test.result_types:
            continue
        allowed = set(r.test.result_types) | ({"qualitative"} if r.test.numeric else set())
        if r.kind not in allowed:
            yield Finding(
                (*r.path, "type"),
                f"`{r.name}` is given as {r.kind}, but the catalog allows "
                f"{', '.join(r.test.result_types)} for {r.test.name}",
                f"use `type: {r.test.result_types[0]}`",
            )


@rule(
    "CB403",
    "unit-not-accepted",
    Severity.ERROR,
    "A value in a unit casebank cannot read, or of another dimension than the test's.",
    needs_catalog=True,
)
def check_units(ctx: CaseContext) -> Iterator[Finding]:
    """Units are read with UCUM semantics: `/mm3`, `/µL` and `10*3/uL` are one unit, and so are
    `s` and `seconds`. A result's unit must be readable, and of the same dimension as the
    catalog's unit for that test (or one of the other dimensions it lists: mg/dL beside
    mmol/L for glucose), so that values compare across cases. Look-alike characters (a
    Cyrillic `х` for `x`) are named.

    Bad:

        Potassium: {type: lab_value, value: 5.9, unit: mg/dL, reference_range: "3.5–5.0"}

    Good:

        Potassium: {type: lab_value, value: 5.9, unit: mmol/L, reference_range: "3.5–5.0"}
    """
    from casebank.format import units

    for r in result_entries(ctx):
        unit = r.entry.get("unit")
        if r.test is None or not isinstance(unit, str) or not r.test.unit:
            continue
        parsed = units.safe_parse(unit)
        path = (*r.path, "unit")
        if parsed is None:
            odd = units.lookalikes(unit)
            yield Finding(
                path,
                f"`{unit}` is not a unit casebank can read"
                + (f"; it contains {', '.join(odd)}" if odd else ""),
                f"write a UCUM unit or a common spelling of it; the catalog gives "
                f"{r.test.name} in {r.test.unit}",
            )
            continue
        accepted = [u for u in r.test.accepted_units if units.safe_parse(u) is not None]
        if accepted and not any(units.same_dimension(unit, u) for u in accepted):
            yield Finding(
                path,
                f"`{unit}` is {units.describe(parsed)}, but {r.test.name} is given in "
                f"{' or '.join(accepted)} ({units.describe(units.safe_parse(accepted[0]))})",
                f"give the value in {r.test.unit}"
                + (f" (or {', '.join(accepted[1:])})" if len(accepted) > 1 else ""),
            )


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


@rule(
    "CB419",
    "result-placeholder",
    Severity.ERROR,
    "A result value that is a placeholder (pending, N/A, not specified) instead of a result.",
)
def check_placeholder_results(ctx: CaseContext) -> Iterator[Finding]:
    """A simulator serves `value` as the result. "Pending", "N/A", "Not done", "Unknown" or
    "Not specified" there would be served as if it were a finding. State where a result stands
    with `status` (pending, not_done, unavailable), and keep `value` for a real result.

    Bad:

        Blood culture:
          type: text_report
          value: "Pending"

    Good:

        Blood culture:
          type: text_report
          status: pending
          note: "Taken on arrival; reported at 48 hours."
    """
    for r in result_entries(ctx):
        value = r.entry.get("value")
        if isinstance(value, str) and is_placeholder_result(value):
            yield Finding(
                (*r.path, "value"),
                f"`{value.strip()}` is a placeholder, not a result of `{r.name}`",
                "write the result; if there is none, remove `value` and state the status: "
                "`status: pending` (not back yet), `not_done` or `unavailable`, with a `note`",
            )


@rule(
    "CB421",
    "result-status-conflict",
    Severity.ERROR,
    "A result that is not final but holds a value, or holds both a value and a series.",
)
def check_status(ctx: CaseContext) -> Iterator[Finding]:
    """A pending, not-done or unavailable result has no value yet: the value would be served as
    if it had come back. A series holds its values in its points, not beside them.

    Bad:

        Troponin:
          type: lab_value
          status: pending
          value: 2.4

    Good:

        Troponin:
          type: lab_value
          status: pending
          note: "Repeat due 3 hours after the first."
    """
    for r in result_entries(ctx):
        holds = [k for k in ("value", "components") if k in r.entry]
        if not r.final and holds:
            yield Finding(
                (*r.path, holds[0]),
                f"`{r.name}` is {r.r.status.replace('_', ' ')} but holds a `{holds[0]}`",
                "remove the value, or set `status: final` if the result is back",
            )
        elif r.has_series and "value" in r.entry:
            yield Finding(
                (*r.path, "value"),
                f"`{r.name}` has both a `value` and a `series`",
                "put every value in the series, each with its time (`at`)",
            )


@rule(
    "CB422",
    "attachment-missing",
    Severity.ERROR,
    "A result refers to an attachment file that is not in the case's attachments folder.",
)
def check_attachments(ctx: CaseContext) -> Iterator[Finding]:
    """A result's `attachments` name files under `cases/<case_id>/attachments/` (an ECG
    tracing, an audiogram). Each must exist, so that the file is part of the case's version.

    Bad:

        ECG:
          type: text_report
          value: "Atrial fibrillation, rate 130."
          attachments: ["ecg.png"]      # but cases/<case_id>/attachments/ecg.png is missing

    Good:

        ECG:
          type: text_report
          value: "Atrial fibrillation, rate 130."
          attachments: ["ecg.png"]      # cases/<case_id>/attachments/ecg.png is committed
    """
    for r in result_entries(ctx):
        names = r.entry.get("attachments")
        for i, rel in enumerate(names if isinstance(names, list) else []):
            if isinstance(rel, str) and rel not in ctx.attachments:
                case_id = ctx.get("case_id")
                folder = f"cases/{case_id}/attachments/" if isinstance(case_id, str) else ""
                yield Finding(
                    (*r.path, "attachments", i),
                    f"attachment `{rel}` of `{r.name}` is not in {folder or 'the case folder'}",
                    "add the file there (paths are relative to the attachments folder), or "
                    "correct the name"
                    + (
                        f"; files there: {', '.join(sorted(ctx.attachments))}"
                        if ctx.attachments
                        else ""
                    ),
                )
