"""References to tests: every name resolves through the catalog, once, and has its result."""

from __future__ import annotations

from collections.abc import Iterator
from typing import Any

from casebank.check.engine import CaseContext, Finding, rule
from casebank.check.problem import Severity
from casebank.format.catalog import fold
from casebank.format.document import Path, format_path

EXPECTED_LISTS = ("must_order", "optional", "should_not_order")


def test_references(ctx: CaseContext) -> list[tuple[Path, str]]:
    """Every place a case names a test, with the name as written."""
    refs: list[tuple[Path, str]] = []
    for name in EXPECTED_LISTS:
        refs.extend(ctx.texts("investigations", "expected", name))
    refs.extend(ctx.texts("investigations", "catalog_hints"))
    results = ctx.get("investigations", "results")
    if isinstance(results, dict):
        refs.extend((("investigations", "results", key), key) for key in results)
    return refs


def canonical(ctx: CaseContext, name: str) -> str:
    """The catalog's name for a test when it resolves, else the folded name as written."""
    test = ctx.resolve(name)
    return test.name if test is not None else fold(name)


@rule(
    "CB304",
    "unknown-test",
    Severity.ERROR,
    "A test name that is not in the catalog (by name or alias).",
    needs_catalog=True,
)
def check_unknown_tests(ctx: CaseContext) -> Iterator[Finding]:
    """Every test a case names, in `expected` (must_order, optional, should_not_order),
    `catalog_hints` and the keys of `results`, must be a catalog test name or alias, compared
    case-insensitively. One name per test keeps the dataset consistent across cases.

    Bad:

        investigations:
          expected:
            must_order: ["Troponine"]

    Good:

        investigations:
          expected:
            must_order: ["Troponin"]      # or an alias such as "hs-troponin"
    """
    assert ctx.catalog is not None
    for path, name in test_references(ctx):
        if ctx.resolve(name) is None:
            suggestion = ctx.catalog.suggest_test(name)
            hint = (
                f"did you mean `{suggestion}`? Use a catalog name or alias"
                if suggestion
                else "use a name or alias from catalog.yaml, or propose the test there"
            )
            yield Finding(
                path, f"`{name}` is not a test in the catalog", hint, at_key=path[-1] == name
            )


@rule(
    "CB401",
    "test-listed-twice",
    Severity.ERROR,
    "The same test twice in one list, or in two of must/optional/should-not order.",
)
def check_test_listed_twice(ctx: CaseContext) -> Iterator[Finding]:
    """A test is either required, optional or to be avoided, never two of these, and is listed
    once. Aliases count as the same test (`EKG` and `ECG` are one test).

    Bad:

        expected:
          must_order: ["ECG", "Troponin"]
          optional: ["EKG"]

    Good:

        expected:
          must_order: ["ECG", "Troponin"]
          optional: ["Chest X-ray"]
    """
    first_seen: dict[str, tuple[str, Path]] = {}
    for list_name in EXPECTED_LISTS:
        for path, name in ctx.texts("investigations", "expected", list_name):
            key = canonical(ctx, name)
            if key in first_seen:
                other_list, other_path = first_seen[key]
                where = (
                    "again in the same list"
                    if other_list == list_name
                    else f"in both `{other_list}` and `{list_name}`"
                )
                yield Finding(
                    path,
                    f"`{name}` is listed {where} (first at `{format_path(other_path)}`)",
                    "keep the test in one place only",
                )
            else:
                first_seen[key] = (list_name, path)
    yield from _duplicates_in(ctx, ("investigations", "catalog_hints"))


def _duplicates_in(ctx: CaseContext, path: tuple[str, ...]) -> Iterator[Finding]:
    seen: set[str] = set()
    for item_path, name in ctx.texts(*path):
        key = canonical(ctx, name)
        if key in seen:
            yield Finding(
                item_path,
                f"`{name}` is listed twice in `{format_path(path)}`",
                "remove the repeated entry",
            )
        seen.add(key)


@rule(
    "CB405",
    "must-order-without-result",
    Severity.WARNING,
    "A must-order test has no result and no results_generated_policy is set.",
)
def check_must_order_has_result(ctx: CaseContext) -> Iterator[Finding]:
    """A test the gold answer requires is usually the one that carries the key finding. With no
    result and no `results_generated_policy`, the simulator would have to invent it.

    Bad:

        investigations:
          expected:
            must_order: ["ECG"]
          results: {}

    Good:

        investigations:
          expected:
            must_order: ["ECG"]
          results:
            ECG: {type: text_report, value: "ST elevation in II, III and aVF."}
    """
    if ctx.get("investigations", "results_generated_policy") is not None:
        return
    results = ctx.get("investigations", "results")
    have = {canonical(ctx, k) for k in results} if isinstance(results, dict) else set()
    for path, name in ctx.texts("investigations", "expected", "must_order"):
        if canonical(ctx, name) not in have:
            yield Finding(
                path,
                f"must-order test `{name}` has no result",
                f"add `{name}` under `investigations.results`, or set "
                "`investigations.results_generated_policy`",
            )


@rule(
    "CB415",
    "panel-component-unknown",
    Severity.ERROR,
    "A panel result lists a component the catalog's panel does not contain.",
    needs_catalog=True,
)
def check_panel_components(ctx: CaseContext) -> Iterator[Finding]:
    """The components of a panel result are catalog tests (by name or alias) that belong to that
    panel in the catalog.

    Bad:

        Complete blood count:
          type: panel
          components:
            Troponin: {value: 2.4, unit: ng/mL, reference_range: "0.00–0.04"}

    Good:

        Complete blood count:
          type: panel
          components:
            Hemoglobin: {value: 13.2, unit: g/dL, reference_range: "13.0–17.0"}
    """
    results = ctx.get("investigations", "results")
    if not isinstance(results, dict):
        return
    for name, entry in results.items():
        panel = ctx.resolve(name)
        components = entry.get("components") if isinstance(entry, dict) else None
        if panel is None or not isinstance(components, dict):
            continue
        members = {fold(c) for c in panel.components}
        for component in components:
            path = ("investigations", "results", name, "components", component)
            test = ctx.resolve(component)
            if test is None:
                yield Finding(
                    path,
                    f"`{component}` is not a test in the catalog",
                    _member_hint(panel.components),
                    at_key=True,
                )
            elif fold(test.name) not in members:
                yield Finding(
                    path,
                    f"`{component}` is not part of the `{panel.name}` panel",
                    _member_hint(panel.components),
                    at_key=True,
                )


def _member_hint(members: Any) -> str:
    if not members:
        return "this test is not a panel in the catalog; give a single result instead"
    return f"the panel's components are: {', '.join(members)}"
