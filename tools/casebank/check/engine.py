"""The engine: one Rule type, one registry, the passes that run rules, one place that stamps.

Every problem casebank reports comes from a rule in ``REGISTRY``, and every rule is declared the
same way, with :func:`rule`. The passes, in order, for one case file:

1. **load**: the loader (``casebank.format.loader``) reads the bytes; each of its issues is a
   load rule, found by the issue's name. A refused file gets no further pass.
2. **schema**: the Cerberus schema, through ``casebank.check.rules.schema``'s table of errors.
3. **case**: every case rule's check, over a :class:`CaseContext`.
4. **post-passes**, registered with :func:`post_pass`: the placeholder pass (a blank field is
   reported once, as a blank) and the acknowledgement pass (warnings a case accepts with a
   written reason are set aside).

The catalog gets the load, schema and catalog passes; the repository as a whole gets the
repository pass (rules over the set of files, such as duplicate ids). Checks only say *where*
and *what* (a :class:`Finding`); :func:`stamp` adds the rule's code, name and severity and turns
the document path into a line and column. Checking never reads files or git: it is handed
bytes, documents and the catalog.
"""

from __future__ import annotations

import os
import traceback
from collections.abc import Callable
from typing import TYPE_CHECKING, Any

from casebank.check.problem import FileReport, Problem
from casebank.check.registry import (
    _POST_PASSES,
    REGISTRY,
    CaseContext,
    CaseReport,
    FileFinding,
    Finding,
    RepositoryContext,
    Rule,
    Target,
    rule_named,
    stamp,
    stamp_file,
)
from casebank.errors import DEBUG_VARIABLE
from casebank.format.document import Document

if TYPE_CHECKING:  # the loader (PyYAML) is imported only where a file is loaded
    from casebank.check.rules.schema import SchemaChecker
    from casebank.format.catalog import Catalog
    from casebank.format.loader import LoadIssue

__all__ = [
    "Annotate",
    "CaseContext",
    "CaseReport",
    "Checker",
    "FileFinding",
    "Finding",
    "RepositoryContext",
    "Rule",
    "all_rules",
    "check_repository",
    "rule_named",
    "rules_for",
    "stamp",
    "stamp_file",
    "stamp_issue",
]


def all_rules() -> list[Rule]:
    """Every rule, by code."""
    _load_rules()
    return sorted(REGISTRY.values(), key=lambda r: r.code)


def rules_for(target: Target) -> list[Rule]:
    _load_rules()
    return [r for r in all_rules() if r.target == target and r.check is not None]


def _load_rules() -> None:
    import casebank.check.rules  # noqa: F401  (importing the package registers every rule)


def stamp_issue(file: str, issue: LoadIssue) -> Problem:
    """A loader issue, stamped with the load rule of the same name."""
    _load_rules()
    found = rule_named(issue.name)
    if found is None or found.target != "load":
        raise RuntimeError(f"the loader's issue {issue.name!r} has no load rule")
    return Problem(
        file=file,
        line=issue.line,
        column=issue.column,
        rule=found.code,
        path=issue.path,
        message=issue.message,
        severity=found.severity,
        hint=issue.hint,
        name=found.name,
    )


# Called with (file, raw bytes, parsed data or None); its result is kept with the report.
Annotate = Callable[[str, bytes, "dict[str, Any] | None"], Any]


class Checker:
    """Checks cases, the catalog and the repository against one catalog. Build once, reuse."""

    def __init__(self, catalog: Catalog | None) -> None:
        from casebank.check.rules.internal import INTERNAL_ERROR

        self.catalog = catalog
        self.case_rules = [
            r for r in rules_for("case") if catalog is not None or not r.needs_catalog
        ]
        self.internal_error = INTERNAL_ERROR

    # Each schema's validator is built on first use, once per process (building one costs a
    # quarter of a second): a run that checks only the catalog never builds the case's.
    @property
    def case_schema(self) -> SchemaChecker:
        from casebank.check.rules.schema import schema_checker

        return schema_checker("case")

    @property
    def catalog_schema(self) -> SchemaChecker:
        from casebank.check.rules.schema import schema_checker

        return schema_checker("catalog")

    def check_file(
        self,
        relative: str,
        raw: bytes,
        annotate: Annotate | None = None,
        attachments: frozenset[str] = frozenset(),
    ) -> FileReport:
        """Load and check one case file. Never raises for the file's content: a failure of
        casebank itself becomes an internal-error problem on this file."""
        from casebank.format.loader import load_document

        try:
            loaded = load_document(relative, raw)
            notes = [stamp_issue(relative, issue) for issue in loaded.issues]
            data = loaded.document.data if loaded.document is not None else None
            annotation = annotate(relative, raw, data) if annotate is not None else None
            if loaded.document is None:
                return FileReport(notes, [], annotation)
            report = self.check_case(loaded.document, attachments)
            return FileReport([*notes, *report.problems], report.acknowledged, annotation)
        except Exception as exc:  # the boundary for one file: report it, go on with the rest
            return FileReport([self._internal(relative, "loading and checking", exc)])

    def check_case(self, doc: Document, attachments: frozenset[str] = frozenset()) -> CaseReport:
        found = [stamp(r, f, doc) for r, f in self.case_schema.check(doc)]
        ctx = CaseContext(doc, self.catalog, attachments)
        for case_rule in self.case_rules:
            assert case_rule.check is not None
            try:
                found.extend(stamp(case_rule, f, doc) for f in case_rule.check(ctx))
            except Exception as exc:
                found.append(self._internal(doc.file, f"rule {case_rule.code}", exc))
        report = CaseReport(found)
        for _, function in _POST_PASSES:
            function(doc, report)
        return report

    def check_catalog(self, doc: Document) -> list[Problem]:
        found = [stamp(r, f, doc) for r, f in self.catalog_schema.check(doc)]
        for catalog_rule in rules_for("catalog"):
            assert catalog_rule.check is not None
            try:
                found.extend(stamp(catalog_rule, f, doc) for f in catalog_rule.check(doc))
            except Exception as exc:
                found.append(self._internal(doc.file, f"rule {catalog_rule.code}", exc))
        return found

    def _internal(self, file: str, where: str, exc: Exception) -> Problem:
        if os.environ.get(DEBUG_VARIABLE):
            traceback.print_exc()
        return stamp_file(
            self.internal_error,
            FileFinding(
                file,
                f"casebank failed while {where} on this file: {type(exc).__name__}: {exc}".rstrip(
                    ": "
                ),
                "this is a bug in casebank, not in the file: please report it with the file "
                "attached (`casebank validate --debug` shows the traceback)",
            ),
        )


def check_repository(context: RepositoryContext) -> list[Problem]:
    """The repository pass: rules over the set of case files."""
    found: list[Problem] = []
    for repo_rule in rules_for("repository"):
        assert repo_rule.check is not None
        found.extend(stamp_file(repo_rule, f) for f in repo_rule.check(context))
    return found
