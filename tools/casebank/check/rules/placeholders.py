"""Placeholders: text that `casebank new` wrote and nobody has filled in yet, and text that
another format wrote where it had nothing to say ("Not provided", "N/A")."""

from __future__ import annotations

import json
from collections.abc import Iterator
from typing import Any

from casebank.check.problem import Severity
from casebank.check.registry import CaseContext, CaseReport, Finding, post_pass, rule
from casebank.format.document import Document, Path
from casebank.format.scaffold import PLACEHOLDER, is_stand_in

MARKER = PLACEHOLDER  # what `casebank new` writes in every blank


def is_placeholder(value: Any) -> bool:
    return isinstance(value, str) and value.lstrip().startswith(MARKER)


def _walk(value: Any, path: Path) -> Iterator[tuple[Path, str, bool]]:
    if isinstance(value, dict):
        for key, item in value.items():
            if is_placeholder(key):
                yield (*path, key), key, True
            yield from _walk(item, (*path, key))
    elif isinstance(value, list):
        for i, item in enumerate(value):
            yield from _walk(item, (*path, i))
    elif is_placeholder(value):
        yield path, value, False


@rule(
    "CB418",
    "placeholder",
    Severity.ERROR,
    "Text still holding a `TODO` placeholder from `casebank new`.",
)
def check_placeholders(ctx: CaseContext) -> Iterator[Finding]:
    """`casebank new` writes a TODO placeholder in every field to fill in; validation points at
    each one left. A placeholder outranks any other problem at the same field, so a new case
    reports each blank once.

    Bad:

        metadata:
          title: "TODO: short title"

    Good:

        metadata:
          title: "Acute chest pain in a smoker"
    """
    # Nearly always absent: the source says so without a walk, or one C-speed dump of the data.
    if not ctx.doc.may_hold(MARKER) or MARKER not in json.dumps(ctx.data, ensure_ascii=False):
        return
    for path, text, is_key in _walk(ctx.data, ()):
        what = "name" if is_key else "text"
        shown = " ".join(text.split())
        yield Finding(
            path,
            f"this {what} is still a placeholder: `{shown}`",
            "replace it with the real content (the placeholder says what belongs here)",
            at_key=is_key,
        )


@post_pass(order=10)
def placeholders_outrank(doc: Document, report: CaseReport) -> None:
    """Where a field is still a placeholder, that is the one thing to say about it."""
    blanks = {p.path for p in report.problems if p.rule == check_placeholders.code}
    if blanks:
        report.problems = [
            p for p in report.problems if p.rule == check_placeholders.code or p.path not in blanks
        ]


# Where a text is what the patient says or what an examination finds: a stand-in there would be
# served as content. (Qualifiers such as an allergy's severity may truly be "unknown"; a
# result's value is CB419's.)
_SERVED_TEXTS: tuple[Path, ...] = (
    ("patient", "persona"),
    ("patient", "social_history"),
    ("presentation", "chief_complaint"),
    ("presentation", "history_of_present_illness"),
    ("ground_truth", "final_diagnosis"),
)
_SERVED_ITEMS: tuple[tuple[Path, str | None], ...] = (
    (("patient", "family_history"), None),
    (("patient", "pmh"), "condition"),
    (("patient", "meds"), "name"),
    (("patient", "allergies"), "substance"),
    (("ground_truth", "differential"), None),
)
_FINDING_DETAILS = frozenset(
    ["unit", "flag", "laterality", "note", "examiner_note", "reference_range"]
)


@rule(
    "CB429",
    "stand-in-text",
    Severity.ERROR,
    "Text that only stands in for content (Not provided, N/A, Unknown) where content belongs.",
)
def check_stand_ins(ctx: CaseContext) -> Iterator[Finding]:
    """Other formats fill a field they have nothing for with words such as "Not provided",
    "N/A", "Unknown" or "None reported". In a case, the simulated patient would say them and an
    examination would report them as findings. Write what belongs there, or leave the field
    out; a result that has none states it with `status` (CB419).

    Bad:

        physical_exam:
          respiratory rate: "Not provided"

    Good:

        physical_exam:
          respiratory rate: {value: 18, unit: "/min"}
    """
    for path, text in _served(ctx.data):
        if is_stand_in(text):
            yield Finding(
                path,
                f"`{text.strip()}` only stands in for content: it would be served as what the "
                "patient says or an examination finds",
                "write the finding or the history it stands for, or remove the field "
                "(a missing finding is not served)",
            )


def _served(data: Any) -> Iterator[tuple[Path, str]]:
    """Each text that is served as what the patient says or an examination finds."""
    for path in _SERVED_TEXTS:
        value = _at(data, path)
        if isinstance(value, str):
            yield path, value
    for path, key in _SERVED_ITEMS:
        listed = _at(data, path)
        for i, item in enumerate(listed if isinstance(listed, list) else []):
            value = item.get(key) if key is not None and isinstance(item, dict) else item
            if isinstance(value, str):
                yield (*path, i) if key is None else (*path, i, key), value
    yield from _findings(_at(data, ("physical_exam",)), ("physical_exam",))


def _findings(value: Any, path: Path) -> Iterator[tuple[Path, str]]:
    if isinstance(value, str):
        yield path, value
    elif isinstance(value, dict):
        for key, item in value.items():
            if key not in _FINDING_DETAILS:
                yield from _findings(item, (*path, key))


def _at(data: Any, path: Path) -> Any:
    for part in path:
        if not isinstance(data, dict):
            return None
        data = data.get(part)
    return data
