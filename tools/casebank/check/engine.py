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

import inspect
import os
import sys
import traceback
from collections.abc import Callable, Iterable, Mapping, Sequence
from dataclasses import dataclass, field
from typing import TYPE_CHECKING, Any, Literal, overload

from casebank.check.problem import FileReport, Problem, Severity
from casebank.errors import DEBUG_VARIABLE
from casebank.format.document import Document, Path, format_path

if TYPE_CHECKING:  # the loader (PyYAML) is imported only where a file is loaded
    from casebank.check.rules.schema import SchemaChecker
    from casebank.format.attachments import Verdict
    from casebank.format.catalog import Catalog, CatalogTest
    from casebank.format.loader import LoadIssue

Target = Literal["load", "schema", "case", "catalog", "repository"]
TARGETS: tuple[Target, ...] = ("load", "schema", "case", "repository", "catalog")


@dataclass(frozen=True)
class Finding:
    """What a check reports: a place in the document and what is wrong there."""

    path: Path
    message: str
    hint: str = ""
    at_key: bool = False  # point at the key (`unknwn_field:`) rather than its value


@dataclass(frozen=True)
class FileFinding:
    """What a repository check reports: a file, and what is wrong with it."""

    file: str
    message: str
    hint: str = ""
    path: str = ""


@dataclass(frozen=True, eq=False)
class Rule:
    code: str
    name: str
    severity: Severity
    summary: str
    family: str
    doc: str
    target: Target
    check: Callable[..., Iterable[Any]] | None = None
    needs_catalog: bool = False


REGISTRY: dict[str, Rule] = {}
_BY_NAME: dict[str, Rule] = {}


def _register(new: Rule) -> Rule:
    if new.code in REGISTRY or new.name in _BY_NAME:
        raise RuntimeError(f"rule {new.code} {new.name} is declared twice")
    if new.target not in TARGETS:
        raise RuntimeError(f"rule {new.code}: unknown target {new.target!r}")
    REGISTRY[new.code] = new
    _BY_NAME[new.name] = new
    return new


def _family(obj: object) -> str:
    module = inspect.getmodule(obj)
    return module.__name__.rsplit(".", 1)[-1] if module else "unknown"


@overload
def rule(
    code: str,
    name: str,
    severity: Severity,
    summary: str,
    *,
    target: Target = "case",
    doc: str,
    needs_catalog: bool = False,
) -> Rule: ...


@overload
def rule(
    code: str,
    name: str,
    severity: Severity,
    summary: str,
    *,
    target: Target = "case",
    doc: None = None,
    needs_catalog: bool = False,
) -> Callable[[Callable[..., Iterable[Any]]], Rule]: ...


def rule(
    code: str,
    name: str,
    severity: Severity,
    summary: str,
    *,
    target: Target = "case",
    doc: str | None = None,
    needs_catalog: bool = False,
) -> Rule | Callable[[Callable[..., Iterable[Any]]], Rule]:
    """Declare a rule: the only way there is.

    With ``doc``, the rule is raised by a pass (the loader, the schema, the engine) and this
    returns it. Without, it decorates the rule's check, whose docstring is its documentation,
    and returns the Rule (with ``check`` set): a check over a :class:`CaseContext` for
    ``target="case"``, a ``Document`` for ``"catalog"``, a :class:`RepositoryContext` for
    ``"repository"``. A docstring is a paragraph, then ``Bad:`` and ``Good:`` YAML examples.
    """
    if doc is not None:
        family = sys._getframe(1).f_globals.get("__name__", "").rsplit(".", 1)[-1]
        return _register(Rule(code, name, severity, summary, family, inspect.cleandoc(doc), target))

    def wrap(check: Callable[..., Iterable[Any]]) -> Rule:
        text = inspect.cleandoc(check.__doc__ or "")
        return _register(
            Rule(code, name, severity, summary, _family(check), text, target, check, needs_catalog)
        )

    return wrap


def rule_named(name_or_code: str) -> Rule | None:
    """The rule with this code or name: "is this code known" and "list them" are one lookup."""
    return REGISTRY.get(name_or_code) or _BY_NAME.get(name_or_code)


def all_rules() -> list[Rule]:
    """Every rule, by code."""
    _load_rules()
    return sorted(REGISTRY.values(), key=lambda r: r.code)


def rules_for(target: Target) -> list[Rule]:
    _load_rules()
    return [r for r in all_rules() if r.target == target and r.check is not None]


def _load_rules() -> None:
    import casebank.check.rules  # noqa: F401  (importing the package registers every rule)


# --- what checks see ------------------------------------------------------------------------


@dataclass
class CaseContext:
    """What a case check may look at: the loaded case, the catalog when it loaded, and the
    case's attachment files (paths below its attachments folder) as the caller found them."""

    doc: Document
    catalog: Catalog | None
    attachments: frozenset[str] = frozenset()
    _cache: dict[str, Any] = field(default_factory=dict, repr=False)

    @property
    def data(self) -> dict[str, Any]:
        return self.doc.data

    def get(self, *path: str | int) -> Any:
        """The value at ``path``, or None where any step is missing or of the wrong kind."""
        value: Any = self.doc.data
        for part in path:
            if isinstance(part, int):
                if not isinstance(value, list) or part >= len(value):
                    return None
            elif not isinstance(value, dict):
                return None
            value = value[part] if isinstance(part, int) else value.get(part)
        return value

    def texts(self, *path: str) -> list[tuple[Path, str]]:
        """The text items of the list at ``path`` with their paths; non-text items skipped."""
        items = self.get(*path)
        if not isinstance(items, list):
            return []
        return [((*path, i), v) for i, v in enumerate(items) if isinstance(v, str)]

    def memo(self, key: str, compute: Callable[[], Any]) -> Any:
        """``compute()`` once per case: several rules walk the same derived data."""
        if key not in self._cache:
            self._cache[key] = compute()
        return self._cache[key]

    def resolve(self, name: str) -> CatalogTest | None:
        return self.catalog.resolve(name) if self.catalog is not None else None


@dataclass(frozen=True)
class RepositoryContext:
    """What a repository check sees: every case file, the ones being checked now, the files
    under cases/ that are not where a case or an attachment belongs, the symbolic links, the
    case ids that have an attachments folder, and, for the cases being checked, each
    attachment's name (below its attachments folder) and what its bytes are."""

    case_files: Sequence[str]
    checked: Sequence[str]
    misplaced: Sequence[str] = ()
    symlinks: Sequence[str] = ()
    attachment_folders: Sequence[str] = ()
    attachments: Mapping[str, Mapping[str, Verdict]] = field(default_factory=dict)


# --- stamping -------------------------------------------------------------------------------


def stamp(found: Rule, finding: Finding, doc: Document) -> Problem:
    """The one place a finding becomes a Problem: the rule's code, name and severity, and the
    line and column of the finding's path."""
    line, column = doc.locate(finding.path, at_key=finding.at_key)
    return Problem(
        file=doc.file,
        line=line,
        column=column,
        rule=found.code,
        path=format_path(finding.path),
        message=finding.message,
        severity=found.severity,
        hint=finding.hint,
        name=found.name,
    )


def stamp_file(found: Rule, finding: FileFinding, line: int = 1, column: int = 1) -> Problem:
    return Problem(
        file=finding.file,
        line=line,
        column=column,
        rule=found.code,
        path=finding.path,
        message=finding.message,
        severity=found.severity,
        hint=finding.hint,
        name=found.name,
    )


def stamp_issue(file: str, issue: LoadIssue) -> Problem:
    """A loader issue, stamped with the load rule of the same name."""
    _load_rules()
    found = _BY_NAME.get(issue.name)
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


# --- post-passes ----------------------------------------------------------------------------


@dataclass
class CaseReport:
    problems: list[Problem] = field(default_factory=list)
    acknowledged: list[Problem] = field(default_factory=list)


PostPass = Callable[[Document, CaseReport], None]
_POST_PASSES: list[tuple[int, PostPass]] = []


def post_pass(order: int) -> Callable[[PostPass], PostPass]:
    """Register a pass over one case's problems, run after every rule, lowest ``order`` first."""

    def wrap(function: PostPass) -> PostPass:
        _POST_PASSES.append((order, function))
        _POST_PASSES.sort(key=lambda item: item[0])
        return function

    return wrap


# --- the checker ----------------------------------------------------------------------------


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
