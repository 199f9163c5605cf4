"""The structured physical examination: sections down to findings, each finding complete."""

from __future__ import annotations

from collections.abc import Iterator
from typing import Any

from casebank.check.problem import Severity
from casebank.check.registry import CaseContext, Finding, rule
from casebank.format.document import Path
from casebank.format.schema import FINDING_FIELDS

# A section whose parts are named only like a finding's fields is a finding missing its value.
_FINDING_FIELDS = frozenset(FINDING_FIELDS) - {"value"}


def _sections(value: Any, at: Path) -> Iterator[tuple[Path, dict[str, Any]]]:
    if isinstance(value, dict):
        yield at, value
        for key, item in value.items():
            if isinstance(item, dict) and "value" not in item:
                yield from _sections(item, (*at, key))


@rule(
    "CB425",
    "finding-without-value",
    Severity.WARNING,
    "An examination finding that gives a unit or flag but no value.",
)
def check_findings_have_values(ctx: CaseContext) -> Iterator[Finding]:
    """A measured finding is `{value, unit, ...}`. Without `value`, the mapping reads as a
    section whose parts are called `unit` or `flag`, which is never what was meant.

    Bad:

        physical_exam:
          temperature: {unit: Cel, flag: high}

    Good:

        physical_exam:
          temperature: {value: 38.4, unit: Cel, flag: high}
    """
    exam = ctx.get("physical_exam")
    for path, section in _sections(exam, ("physical_exam",)):
        if path == ("physical_exam",):
            continue
        if section and set(section) <= _FINDING_FIELDS and not set(section) <= {"note"}:
            yield Finding(
                path,
                f"`{path[-1]}` looks like a measured finding without its `value`",
                "add `value:` (the measurement or a short text), or name the parts of this "
                "section for what they are",
                at_key=True,
            )
