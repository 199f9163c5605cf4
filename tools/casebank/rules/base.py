"""The rule registry: every check casebank makes has a stable code, a name and documentation.

A rule module declares its rules with :func:`case_rule` (a check over one case), or
:func:`catalog_rule` (a check over the catalog), or :func:`declare` (a problem raised by the loader
or the schema, which has no check function of its own). A check only says *where* and *what*; the
engine stamps the rule's code, name and severity on each finding and turns the path into a line
and column.

Each rule's docstring is its user documentation: a paragraph, then ``Bad:`` and ``Good:`` YAML
examples. ``docs/rules.md`` and ``casebank rules`` are generated from it.
"""

from __future__ import annotations

import inspect
from collections.abc import Callable, Iterable, Iterator
from dataclasses import dataclass, field
from typing import Any, TypeVar

from casebank.catalog import Catalog, CatalogTest
from casebank.loader import Document
from casebank.problem import Path, Severity


@dataclass(frozen=True)
class Finding:
    """What a check reports: a place in the document and what is wrong there."""

    path: Path
    message: str
    hint: str = ""
    at_key: bool = False  # point at the key (`unknwn_field:`) rather than its value


@dataclass
class CaseContext:
    """What a case check may look at: the loaded case and, when it loaded, the catalog."""

    doc: Document
    catalog: Catalog | None
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


CaseCheck = Callable[[CaseContext], Iterable[Finding]]
CatalogCheck = Callable[[Document], Iterable[Finding]]


@dataclass(frozen=True)
class Rule:
    code: str
    name: str
    severity: Severity
    summary: str
    family: str
    doc: str
    target: str  # "load", "schema", "case", "repository" or "catalog"
    check: Callable[..., Iterable[Finding]] | None = None
    needs_catalog: bool = False


REGISTRY: dict[str, Rule] = {}
_BY_NAME: dict[str, Rule] = {}

F = TypeVar("F", bound=Callable[..., Iterable[Finding]])


def _register(rule: Rule) -> Rule:
    if rule.code in REGISTRY or rule.name in _BY_NAME:
        raise RuntimeError(f"rule {rule.code} {rule.name} is declared twice")
    REGISTRY[rule.code] = rule
    _BY_NAME[rule.name] = rule
    return rule


def _family(obj: object) -> str:
    module = inspect.getmodule(obj)
    return module.__name__.rsplit(".", 1)[-1] if module else "unknown"


def declare(
    code: str, name: str, severity: Severity, summary: str, doc: str, *, target: str, family: str
) -> Rule:
    """Declare a rule raised by the loader, the schema or the engine rather than a check."""
    return _register(Rule(code, name, severity, summary, family, inspect.cleandoc(doc), target))


def _checked_rule(
    target: str, code: str, name: str, severity: Severity, summary: str, needs_catalog: bool
) -> Callable[[F], F]:
    def wrap(check: F) -> F:
        doc = inspect.cleandoc(check.__doc__ or "")
        _register(
            Rule(code, name, severity, summary, _family(check), doc, target, check, needs_catalog)
        )
        return check

    return wrap


def case_rule(
    code: str, name: str, severity: Severity, summary: str, *, needs_catalog: bool = False
) -> Callable[[F], F]:
    """Declare a check over one case: ``check(ctx: CaseContext) -> Iterable[Finding]``."""
    return _checked_rule("case", code, name, severity, summary, needs_catalog)


def catalog_rule(code: str, name: str, severity: Severity, summary: str) -> Callable[[F], F]:
    """Declare a check over the catalog file: ``check(doc: Document) -> Iterable[Finding]``."""
    return _checked_rule("catalog", code, name, severity, summary, needs_catalog=False)


def rule_named(name_or_code: str) -> Rule | None:
    return REGISTRY.get(name_or_code) or _BY_NAME.get(name_or_code)


def case_rules() -> Iterator[Rule]:
    return (r for r in REGISTRY.values() if r.target == "case")


def catalog_rules() -> Iterator[Rule]:
    return (r for r in REGISTRY.values() if r.target == "catalog")
