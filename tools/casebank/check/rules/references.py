"""References to tests: every name resolves through the catalog, once, and is served a result."""

from __future__ import annotations

from collections.abc import Iterator, Mapping
from typing import Any

from casebank.check.problem import Severity
from casebank.check.registry import CaseContext, Finding, rule
from casebank.format.catalog import CatalogTest, fold
from casebank.format.document import format_path
from casebank.format.names import suggest_sided
from casebank.format.orders import NamedTest, order_groups, orders

EXPECTED = ("investigations", "expected")
EXPECTED_LISTS = ("must_order", "optional", "should_not_order")
HINTS = ("investigations", "catalog_hints")
MISSING_TEST_HINT = (
    "use a name or alias from catalog.yaml; if the test is missing, ask for it to be added "
    "(CONTRIBUTING.md, 'Asking for a test')"
)


def canonical(ctx: CaseContext, name: str, qualifiers: Mapping[str, str] | None = None) -> str:
    """The catalog's name for a test when it resolves (else the folded name as written), with
    its side: a left and a right knee X-ray are two orders."""
    test = ctx.resolve(name)
    side = (qualifiers or {}).get("laterality", "")
    return (test.name if test is not None else fold(name)) + (f"|{side}" if side else "")


def unknown_hint(ctx: CaseContext, name: str) -> str:
    assert ctx.catalog is not None
    from casebank.format.names import suggest

    suggestion = suggest(name, ctx.catalog)
    if suggestion:
        return f"did you mean `{suggestion}`? Use a catalog name or alias"
    sided = suggest_sided(name, ctx.catalog)
    if sided:
        return (
            f"did you mean `{sided[0]}` with `laterality: {sided[1]}`? The side is a field of "
            "its own, beside the test's catalog name"
        )
    return f"`{name}` is not close to any catalog test; {MISSING_TEST_HINT}"


@rule(
    "CB304",
    "unknown-test",
    Severity.ERROR,
    "A test name that is not in the catalog (by name or alias).",
    needs_catalog=True,
)
def check_unknown_tests(ctx: CaseContext) -> Iterator[Finding]:
    """Every test a case names, in `expected` (must_order, optional, should_not_order),
    `catalog_hints`, a result's `answers` and the keys of `results`, must be a catalog test name
    or alias, compared case-insensitively. One name per test keeps the dataset consistent
    across cases. A suggestion is made only where it clearly means the same test.

    Bad:

        investigations:
          expected:
            must_order: ["Troponine"]

    Good:

        investigations:
          expected:
            must_order: ["Troponin"]      # or an alias such as "hs-troponin"
    """
    for named in ctx.named_tests():
        if ctx.resolve(named.name) is None:
            yield Finding(
                named.path,
                f"`{named.name}` is not a test in the catalog",
                unknown_hint(ctx, named.name),
                at_key=named.is_key,
            )


def _lists(ctx: CaseContext) -> Iterator[tuple[str, NamedTest]]:
    for list_name in EXPECTED_LISTS:
        for named in orders(ctx.data, *EXPECTED, list_name):
            yield list_name, named


@rule(
    "CB401",
    "test-listed-twice",
    Severity.ERROR,
    "The same test twice in one list, or in two of must/optional/should-not order.",
)
def check_test_listed_twice(ctx: CaseContext) -> Iterator[Finding]:
    """A test is either required, optional or to be avoided, never two of these, and is listed
    once. Aliases count as the same test (`EKG` and `ECG` are one test); the same test on two
    sides (`laterality`) is two orders.

    Bad:

        expected:
          must_order: ["ECG", "Troponin"]
          optional: ["EKG"]

    Good:

        expected:
          must_order: ["ECG", "Troponin"]
          optional: ["Chest X-ray"]
    """
    first_seen: dict[str, tuple[str, NamedTest]] = {}
    for list_name, named in _lists(ctx):
        key = canonical(ctx, named.name, named.qualifiers)
        if key in first_seen:
            other_list, other = first_seen[key]
            where = (
                "again in the same list"
                if other_list == list_name
                else f"in both `{other_list}` and `{list_name}`"
            )
            yield Finding(
                named.path,
                f"`{named.name}` is listed {where} (first at `{format_path(other.path)}`)",
                "keep the test in one place only",
            )
        else:
            first_seen[key] = (list_name, named)
    seen: set[str] = set()
    for named in orders(ctx.data, *HINTS):
        key = canonical(ctx, named.name, named.qualifiers)
        if key in seen:
            yield Finding(
                named.path,
                f"`{named.name}` is listed twice in `{format_path(HINTS)}`",
                "remove the repeated entry",
            )
        seen.add(key)


def oracle(ctx: CaseContext) -> Any:
    """The results oracle for this case (one per case, shared by the rules that serve it).
    The rules ask which source answers an order, never what it shows, so it serves no view."""

    def build() -> Any:
        from casebank.serve.oracle import Oracle

        assert ctx.catalog is not None
        return Oracle(ctx.data, ctx.catalog, views=False)

    return ctx.memo("oracle", build)


@rule(
    "CB405",
    "must-order-not-served",
    Severity.WARNING,
    "A must-order test the case itself does not answer: it would be served by the policy.",
    needs_catalog=True,
)
def check_must_order_is_served(ctx: CaseContext) -> Iterator[Finding]:
    """A test the gold answer requires usually carries the key finding. If the case neither
    lists its result nor derives it from a listed one (a panel member, a related result), the
    results oracle answers it from the policy: the catalog's normal result, or "unavailable".
    List the result, or acknowledge the warning when a normal result is the point.

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
    served = oracle(ctx)
    # An item of alternatives (`any_of`) needs one of them answered by the case, not each.
    for group in order_groups(ctx.data, *EXPECTED, "must_order"):
        unserved = []
        for named in group:
            if ctx.resolve(named.name) is None:
                continue  # CB304 says it
            answer = served.answer(_request(named))
            # A result the case itself marks unavailable is deliberate; a policy answer is not.
            if answer.source == "policy" or (
                answer.source == "unavailable" and answer.result is None
            ):
                unserved.append((named, answer.source))
            else:
                break
        else:
            for named, source in unserved[:1]:
                how = "the catalog's normal result" if source == "policy" else "as unavailable"
                yield Finding(
                    named.path,
                    f"must-order test `{named.name}` has no result in this case: it would be "
                    f"served {how} ({served.policy or 'no results_generated_policy'})",
                    f"add `{named.name}` under `investigations.results` (or make a listed "
                    f"result answer it with `answers: [{named.name}]`)",
                )


def _request(named: NamedTest) -> str:
    side = named.qualifiers.get("laterality")
    return f"{side} {named.name}" if side else named.name


@rule(
    "CB415",
    "panel-component-unknown",
    Severity.ERROR,
    "A panel result lists a component that is not a catalog test, or not part of that panel.",
    needs_catalog=True,
)
def check_panel_components(ctx: CaseContext) -> Iterator[Finding]:
    """The components of a panel result are catalog tests that belong to that panel. A name is
    first looked up among the panel's own members (`WBC` in a urinalysis is the urine white
    cell count, not the blood count's), then in the whole catalog; the members of a panel the
    catalog does not know are still checked against the catalog.

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
    assert ctx.catalog is not None
    results = ctx.get("investigations", "results")
    if not isinstance(results, dict):
        return
    for name, entry in results.items():
        if not isinstance(entry, dict):
            continue
        panel = ctx.resolve(name)
        for parent, at in _component_maps(entry):
            for component in parent:
                path = ("investigations", "results", name, *at, "components", component)
                yield from _component(ctx, panel, component, path)


def _component_maps(
    entry: Mapping[str, Any],
) -> Iterator[tuple[Mapping[str, Any], tuple[Any, ...]]]:
    if isinstance(entry.get("components"), dict):
        yield entry["components"], ()
    series = entry.get("series")
    for i, point in enumerate(series if isinstance(series, list) else []):
        if isinstance(point, dict) and isinstance(point.get("components"), dict):
            yield point["components"], ("series", i)


def _component(
    ctx: CaseContext, panel: CatalogTest | None, component: str, path: tuple[Any, ...]
) -> Iterator[Finding]:
    assert ctx.catalog is not None
    test = ctx.catalog.resolve(component, panel=panel)
    if test is None:
        hint = _member_hint(panel) if panel is not None else unknown_hint(ctx, component)
        yield Finding(path, f"`{component}` is not a test in the catalog", hint, at_key=True)
    elif panel is not None and not ctx.catalog.is_component(panel, test):
        yield Finding(
            path,
            f"`{component}` is not part of the `{panel.name}` panel",
            _member_hint(panel),
            at_key=True,
        )


def _member_hint(panel: CatalogTest) -> str:
    if not panel.components:
        return "this test is not a panel in the catalog; give a single result instead"
    return f"the panel's components are: {', '.join(panel.components)}"
