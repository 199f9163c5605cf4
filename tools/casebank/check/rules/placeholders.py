"""Placeholders: text that `casebank new` wrote and nobody has filled in yet."""

from __future__ import annotations

import json
from collections.abc import Iterator
from typing import Any

from casebank.check.engine import CaseContext, CaseReport, Finding, post_pass, rule
from casebank.check.problem import Severity
from casebank.format.document import Document, Path
from casebank.format.scaffold import PLACEHOLDER

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
    if MARKER not in json.dumps(ctx.data, ensure_ascii=False):  # C speed; nearly always absent
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
