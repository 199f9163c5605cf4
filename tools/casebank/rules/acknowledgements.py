"""Acknowledgements: a case may accept a specific warning, with a written reason."""

from __future__ import annotations

from casebank.problem import Severity
from casebank.rules.base import declare

STALE_ACK = declare(
    "CB417",
    "stale-acknowledgement",
    Severity.WARNING,
    "An acknowledged warning that names no warning this case has.",
    """
    `acknowledged_warnings` accepts a specific warning with a written reason. An entry that
    names an unknown rule, a rule that is an error (errors cannot be acknowledged), or a warning
    the case no longer has, is stale: remove it, so that acknowledgements stay meaningful.

    Bad:

        acknowledged_warnings:
          - rule: CB408
            reason: "The patient names her own diagnosis: she had the same last year."
        # ... but nothing in the case triggers CB408 any more

    Good:

        # (no acknowledged_warnings, or only ones that match a current warning)
    """,
    target="case",
    family="acknowledgements",
)
