"""The rule registry: one Rule type, one way to declare a rule, and what checks see and return.

Rules (``casebank.check.rules``) and the engine (``casebank.check.engine``) both import this
module, and it imports neither: declaring a rule registers it here, running rules is the
engine's. :func:`stamp` is the one place a finding becomes a Problem: the rule's code, name
and severity, and the line and column of the finding's path.
"""

from __future__ import annotations

import inspect
import sys
from collections.abc import Callable, Iterable, Mapping, Sequence
from dataclasses import dataclass, field
from typing import TYPE_CHECKING, Any, Literal, overload

from casebank.check.problem import Problem, Severity
from casebank.format.document import Document, Path, format_path

if TYPE_CHECKING:  # the loader (PyYAML) is imported only where a file is loaded
    from casebank.format.attachments import Verdict
    from casebank.format.catalog import Catalog, CatalogTest
    from casebank.format.orders import NamedTest

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

    def named_tests(self) -> list[NamedTest]:
        """Every place the case names a test (casebank.format.orders), found once per case."""
        from casebank.format.orders import named_tests

        found: list[NamedTest] = self.memo("named_tests", lambda: named_tests(self.data))
        return found


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
