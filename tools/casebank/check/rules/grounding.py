"""Grounding: served as the results oracle serves it, a case must not contradict itself."""

from __future__ import annotations

from collections.abc import Iterator

from casebank.check.problem import Severity
from casebank.check.registry import CaseContext, Finding, rule
from casebank.check.rules.references import oracle
from casebank.format.catalog import CatalogTest
from casebank.format.results import judgement

_NORMAL_POLICIES = ("normal_unless_listed", "generate_consistent")
_SHOWN = 6


def _bearing(ctx: CaseContext, test: CatalogTest, entry: dict[str, object]) -> list[CatalogTest]:
    """Tests whose result bears on ``test``'s: its family, tests whose result answers it, and,
    for a panel given as one report (no members), its members: asked for one by one, they
    would come back from the policy whatever the report says."""
    assert ctx.catalog is not None
    related = [*ctx.catalog.family_of(test), *ctx.catalog.answered_by(test)]
    if test.is_panel and not entry.get("components") and not entry.get("series"):
        related += ctx.catalog.components_of(test)
    found = {t.name: t for t in related}
    found.pop(test.name, None)
    return list(found.values())


@rule(
    "CB420",
    "served-contradiction",
    Severity.WARNING,
    "An abnormal result whose related tests would be served as normal by the policy.",
    needs_catalog=True,
)
def check_served_contradiction(ctx: CaseContext) -> Iterator[Finding]:
    """Under `normal_unless_listed`, a test the case does not list is served the catalog's
    normal result. When a listed result is abnormal (or a report that does not say it is
    normal), a related test (one of its family, such as telemetry beside an ECG; a test whose
    result would answer it, such as a urinalysis beside a urine dipstick; a member of a panel
    given as one text report, such as urine ketones beside a urinalysis report) would then come
    back normal and contradict it. List that test's result (a panel with its members), or
    declare that the listed result answers it (`answers: [...]` on the result). A result that
    is not final (`not_done`, `pending`, `unavailable`) states nothing, so it contradicts nothing.

    Bad:

        results:
          Urine dipstick: {type: text_report, value: "Blood 3+, protein 1+."}
        results_generated_policy: normal_unless_listed     # Urinalysis would come back normal

    Good:

        results:
          Urine dipstick:
            type: text_report
            value: "Blood 3+, protein 1+."
            answers: [Urinalysis]
        results_generated_policy: normal_unless_listed
    """
    served = oracle(ctx)
    if served.policy not in _NORMAL_POLICIES:
        return
    results = ctx.get("investigations", "results")
    for key, entry in results.items() if isinstance(results, dict) else ():
        test = ctx.resolve(key)
        if test is None or not isinstance(entry, dict):
            continue
        judged = judgement(entry)
        if judged == "normal":
            continue
        if entry.get("status", "final") != "final":
            continue  # a test not done, pending or unavailable states no result to contradict
        normal = [
            other.name
            for other in _bearing(ctx, test, entry)
            if served.answer(other.name).source == "policy"
        ]
        if normal:
            shown = ", ".join(f"`{n}`" for n in normal[:_SHOWN])
            more = f" and {len(normal) - _SHOWN} more" if len(normal) > _SHOWN else ""
            what = "abnormal" if judged == "abnormal" else "not marked normal"
            yield Finding(
                ("investigations", "results", key),
                f"`{key}` is {what}, but {shown}{more} would be served the catalog's normal "
                f"result ({served.policy}), contradicting it",
                f"list their results, or add `answers: [{normal[0]}]` to `{key}` if its result "
                "answers them",
                at_key=True,
            )


def _measure(entry: object) -> tuple[object, object] | None:
    if not isinstance(entry, dict) or "value" not in entry:
        return None
    return entry.get("value"), entry.get("unit")


@rule(
    "CB424",
    "member-listed-twice",
    Severity.WARNING,
    "A test listed on its own and inside a panel, with different values.",
    needs_catalog=True,
)
def check_member_conflict(ctx: CaseContext) -> Iterator[Finding]:
    """A panel member given both as its own result and inside a listed panel is served from the
    listed result when asked for alone, and from the panel inside the panel: two different
    values would contradict each other. Give it once, or give both the same value; where the
    two really are different measurements (a blood gas analyser beside the laboratory),
    acknowledge the warning and say so. The same value in two units is the same value
    (14.9 g/dL and 149 g/L agree, each read to the precision it is written with); units that
    cannot be converted into each other (mmol/L and mg/dL need a molar mass) are reported.

    Bad:

        results:
          Potassium: {type: lab_value, value: 7.1, unit: mmol/L, reference_range: "3.5–5.0"}
          Basic metabolic panel:
            type: panel
            components:
              Potassium: {value: 4.2, unit: mmol/L, reference_range: "3.5–5.0"}

    Good:

        results:
          Basic metabolic panel:
            type: panel
            components:
              Potassium: {value: 7.1, unit: mmol/L, reference_range: "3.5–5.0", flag: critical_high}
    """
    assert ctx.catalog is not None
    results = ctx.get("investigations", "results")
    if not isinstance(results, dict):
        return
    alone = {}
    for key, entry in results.items():
        test = ctx.resolve(key)
        if test is not None:
            alone[test.name] = (key, entry)
    for key, entry in results.items():
        panel = ctx.resolve(key)
        components = entry.get("components") if isinstance(entry, dict) else None
        for member, sub in components.items() if isinstance(components, dict) else ():
            test = ctx.catalog.resolve(member, panel=panel)
            if test is None or test.name not in alone or alone[test.name][0] == key:
                continue
            other_key, other = alone[test.name]
            mine, theirs = _measure(sub), _measure(other)
            if mine is None or theirs is None:
                continue
            agree = _agree(mine, theirs)
            if agree is not True:
                apart = "" if agree is False else ", in units that cannot be converted"
                yield Finding(
                    ("investigations", "results", key, "components", member),
                    f"`{member}` in `{key}` is {_shown(sub)}, but `{other_key}` on its own "
                    f"is {_shown(other)}{apart}",
                    "give the test once, or the same value in both places"
                    + ("" if agree is False else " and the same unit"),
                    at_key=True,
                )


def _agree(mine: tuple[object, object], theirs: tuple[object, object]) -> bool | None:
    """True when two results are one value (in one unit or two), False when they differ,
    None when their units cannot be converted into each other."""
    if mine == theirs:
        return True
    (value, unit), (other, other_unit) = mine, theirs
    numbers = all(isinstance(v, (int, float)) and not isinstance(v, bool) for v in (value, other))
    if not numbers or not isinstance(unit, str) or not isinstance(other_unit, str):
        return False
    if unit == other_unit:
        return value == other
    from casebank.format import units

    assert isinstance(value, (int, float)) and isinstance(other, (int, float))
    return units.same_quantity(value, unit, other, other_unit)


def _shown(entry: object) -> str:
    measured = _measure(entry)
    assert measured is not None
    value, unit = measured
    return f"{value} {unit}".strip() if unit else str(value)
