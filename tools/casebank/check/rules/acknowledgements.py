"""Acknowledgements: a case may accept a specific warning, with a written reason."""

from __future__ import annotations

from typing import Any

from casebank.check.problem import Problem, Severity
from casebank.check.registry import CaseReport, Finding, post_pass, rule, stamp
from casebank.format.document import Document
from casebank.format.walk import case_tree, field_at

STALE_ACK = rule(
    "CB417",
    "stale-acknowledgement",
    Severity.WARNING,
    "An acknowledged warning that names no warning this case has.",
    doc="""
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
)


def _min_reason() -> int:
    """The schema's minimum length for a reason: an acknowledgement without one hides nothing."""
    reason = field_at(case_tree(), ("acknowledged_warnings", 0, "reason"))
    assert reason is not None
    return int(reason.rules["minlength"])


MIN_REASON = _min_reason()


def _acknowledgements(doc: Document) -> list[tuple[int, dict[str, Any]]]:
    acks = doc.data.get("acknowledged_warnings")
    if not isinstance(acks, list):
        return []
    return [
        (i, a)
        for i, a in enumerate(acks)
        if isinstance(a, dict)
        and isinstance(a.get("rule"), str)
        and isinstance(a.get("reason"), str)
        and len(a["reason"].strip()) >= MIN_REASON
    ]


def _covers(ack: dict[str, Any], p: Problem) -> bool:
    if ack["rule"] not in (p.rule, p.name):
        return False
    where = ack.get("path")
    if not isinstance(where, str) or not where:
        return True
    return p.path == where or p.path.startswith((f"{where}.", f"{where}["))


@post_pass(order=20)
def apply_acknowledgements(doc: Document, report: CaseReport) -> None:
    """Set aside the warnings the case acknowledges; report acknowledgements that match none."""
    acks = _acknowledgements(doc)
    if not acks:
        return
    kept: list[Problem] = []
    used: set[int] = set()
    for p in report.problems:
        match = next((i for i, a in acks if p.severity is Severity.WARNING and _covers(a, p)), None)
        if match is None:
            kept.append(p)
        else:
            used.add(match)
            report.acknowledged.append(p)
    for i, ack in acks:
        if i not in used:
            where = f" at `{ack['path']}`" if isinstance(ack.get("path"), str) else ""
            kept.append(
                stamp(
                    STALE_ACK,
                    Finding(
                        ("acknowledged_warnings", i, "rule"),
                        f"acknowledgement of `{ack['rule']}`{where} matches no warning "
                        "in this case",
                        "remove it (errors cannot be acknowledged; fix them instead)",
                    ),
                    doc,
                )
            )
    report.problems = kept
