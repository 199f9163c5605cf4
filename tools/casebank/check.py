"""The engine: run the schema and every rule over loaded documents, and stamp their problems.

Checking never reads files or git: it takes loaded documents and the catalog and returns
``Problem``s. Rules say where and what; the engine adds the rule's code, name and severity and
turns the document path into a line and column.
"""

from __future__ import annotations

from collections.abc import Iterable
from dataclasses import dataclass, field
from typing import Any

import casebank.rules  # noqa: F401  (importing the package registers every rule)
from casebank.catalog import Catalog
from casebank.loader import Document
from casebank.problem import Problem, Severity, format_path
from casebank.rules.acknowledgements import STALE_ACK
from casebank.rules.base import CaseContext, Finding, Rule, case_rules, catalog_rules
from casebank.rules.placeholders import PLACEHOLDER
from casebank.rules.schema import SchemaChecker
from casebank.schema import CASE_SCHEMA, CATALOG_SCHEMA


def problem(rule: Rule, finding: Finding, doc: Document) -> Problem:
    line, column = doc.locate(finding.path, at_key=finding.at_key)
    return Problem(
        file=doc.file,
        line=line,
        column=column,
        rule=rule.code,
        path=format_path(finding.path),
        message=finding.message,
        severity=rule.severity,
        hint=finding.hint,
        name=rule.name,
    )


@dataclass
class CaseReport:
    problems: list[Problem] = field(default_factory=list)
    acknowledged: list[Problem] = field(default_factory=list)


class Checker:
    """Checks cases (and the catalog) against one catalog. Build once, reuse for every file."""

    def __init__(self, catalog: Catalog | None) -> None:
        self.catalog = catalog
        self.case_schema = SchemaChecker(CASE_SCHEMA)
        self.catalog_schema = SchemaChecker(CATALOG_SCHEMA)
        self.rules = [
            r
            for r in case_rules()
            if r.check is not None and (catalog is not None or not r.needs_catalog)
        ]

    def check_case(self, doc: Document) -> CaseReport:
        found = [problem(rule, finding, doc) for rule, finding in self.case_schema.check(doc)]
        ctx = CaseContext(doc, self.catalog)
        for rule in self.rules:
            assert rule.check is not None
            found.extend(problem(rule, finding, doc) for finding in rule.check(ctx))
        return apply_acknowledgements(doc, outrank_by_placeholders(found))

    def check_catalog(self, doc: Document) -> list[Problem]:
        found = [problem(rule, finding, doc) for rule, finding in self.catalog_schema.check(doc)]
        for rule in catalog_rules():
            assert rule.check is not None
            found.extend(problem(rule, finding, doc) for finding in rule.check(doc))
        return found


# The schema asks for the same; an acknowledgement without a real reason hides nothing.
MIN_REASON = 20


def outrank_by_placeholders(found: list[Problem]) -> list[Problem]:
    """Where a field is still a placeholder, that is the one thing to say about it."""
    blanks = {p.path for p in found if p.rule == PLACEHOLDER.code}
    if not blanks:
        return found
    return [p for p in found if p.rule == PLACEHOLDER.code or p.path not in blanks]


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


def apply_acknowledgements(doc: Document, found: Iterable[Problem]) -> CaseReport:
    """Set aside the warnings the case acknowledges; report acknowledgements that match none."""
    acks = _acknowledgements(doc)
    report = CaseReport()
    used: set[int] = set()
    for p in found:
        match = next((i for i, a in acks if p.severity is Severity.WARNING and _covers(a, p)), None)
        if match is None:
            report.problems.append(p)
        else:
            used.add(match)
            report.acknowledged.append(p)
    for i, ack in acks:
        if i not in used:
            report.problems.append(
                problem(
                    STALE_ACK,
                    Finding(
                        ("acknowledged_warnings", i, "rule"),
                        f"acknowledgement of `{ack['rule']}`"
                        + (f" at `{ack['path']}`" if isinstance(ack.get("path"), str) else "")
                        + " matches no warning in this case",
                        "remove it (errors cannot be acknowledged; fix them instead)",
                    ),
                    doc,
                )
            )
    return report
