"""What a case's tests cost the patient, as the site shows it (issue 23): each test the case
names with its cost and burden from the catalog, and the expected work-up of a case (its
must-order tests) for the release page."""

from __future__ import annotations

from collections.abc import Mapping
from typing import Any

from casebank.format.catalog import Catalog, CatalogTest
from casebank.format.orders import named_tests, order_groups
from casebank.serve.workup import cost_and_burden

EXPECTED = ("investigations", "expected")
_LISTS = {
    "must_order": "must order",
    "optional": "optional",
    "should_not_order": "should not order",
}


def cost_text(test: CatalogTest) -> str:
    cost = test.cost
    if cost is None:
        return "not recorded"
    if cost.amount is not None:
        return (
            f"{cost.amount:,.2f} {cost.currency or ''} ({cost.source or 'no source'}, {cost.year})"
        )
    return f"{(cost.tier or '').replace('_', ' ')} (tier)"


def burden_text(test: CatalogTest) -> dict[str, str]:
    burden = test.burden
    if burden is None:
        return {"invasive": "not recorded", "radiation": "", "contrast": "", "sedation": ""}
    dose = "unknown" if burden.radiation_msv is None else f"{burden.radiation_msv:g} mSv"
    return {
        "invasive": burden.invasive,
        "radiation": dose,
        "contrast": burden.contrast,
        "sedation": "yes" if burden.sedation else "no",
    }


def test_rows(data: Mapping[str, Any], catalog: Catalog | None) -> list[dict[str, str]]:
    """Each catalog test the case names, once, with the list it is in and its burden."""
    if catalog is None:
        return []
    where: dict[str, str] = {}
    tests: dict[str, CatalogTest] = {}
    for named in named_tests(data):
        test = catalog.resolve(named.name)
        if test is None or test.name in tests:
            continue
        tests[test.name] = test
        listed = next((_LISTS[p] for p in named.path if p in _LISTS), "results")
        where[test.name] = listed
    return [
        {"test": name, "listed": where[name], "cost": cost_text(test), **burden_text(test)}
        for name, test in tests.items()
    ]


def expected_workup(data: Mapping[str, Any], catalog: Catalog | None) -> dict[str, Any] | None:
    """The cost and burden of a case's must-order tests (the first of any alternatives)."""
    if catalog is None:
        return None
    tests = [
        test
        for group in order_groups(data, *EXPECTED, "must_order")
        if (test := next((t for n in group if (t := catalog.resolve(n.name))), None))
    ]
    return cost_and_burden(tests)
