"""The engine's own rule: casebank failed on a file, and says so instead of losing the report."""

from __future__ import annotations

from casebank.check.problem import Severity
from casebank.check.registry import rule

INTERNAL_ERROR = rule(
    "CB100",
    "internal-error",
    Severity.ERROR,
    "casebank itself failed while checking this file (a bug to report).",
    target="load",
    doc="""
    A bug in casebank, not a mistake in the file: checking the file raised an unexpected error.
    The run goes on and reports every other file; this file's report is incomplete until the
    bug is fixed. Please report it with the file attached (`casebank --debug validate` prints
    the traceback).

    Bad:

        (any input that makes a check fail unexpectedly)

    Good:

        (the same file, checked by a fixed casebank)
    """,
)
