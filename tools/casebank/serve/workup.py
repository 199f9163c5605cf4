"""A work-up as ``casebank-score/2`` reads it: which must-order items the orders and the
examinations meet, what else was ordered, and what it all cost the patient.

Test credit follows the results oracle (docs/scoring.md): an order meets a must-order test
when it is that test (by name, alias, or with its timing taken out: "troponin at 0 and 1 h"),
a panel holding it, a test the catalog says answers it, or when the oracle answers the order
from the same listed result it answers the test from (an INR from the coagulation screen a case
lists, an appendix ultrasound from its abdominal ultrasound). An examination meets a bedside
must-order item whose findings it returns (vital signs). Every other order costs by burden.
"""

from __future__ import annotations

from collections.abc import Iterable, Mapping, Sequence
from dataclasses import dataclass, field
from typing import Any

from casebank.format.catalog import Catalog, CatalogTest
from casebank.format.names import clean_order
from casebank.format.orders import order_groups, orders
from casebank.serve.oracle import LISTED, UNAVAILABLE, UNKNOWN, Answer, Oracle, exam_key

EXPECTED = ("investigations", "expected")
SHOULD_NOT_ORDER_PENALTY = 0.25
# What one order outside must and optional costs, before the cap (docs/scoring.md).
BASE_PENALTY = 0.02
COST_PENALTY = {"low": 0.0, "medium": 0.01, "high": 0.03, "very_high": 0.05}
MSV_PENALTY, MSV_CAP = 0.005, 0.06  # per mSv, and at most
INVASIVE_PENALTY = {"none": 0.0, "minimal": 0.02, "invasive": 0.08}
CONTRAST_PENALTY, SEDATION_PENALTY = 0.03, 0.03
ORDER_CAP = 0.2  # one unneeded order never costs as much as a should-not-order one
EXAMINABLE = frozenset(["bedside", "assessment"])


def order_penalty(test: CatalogTest | None, invasive_counted: bool = False) -> float:
    """What one unneeded order costs (of the diagnostics component): a base, and more for
    its cost band, dose, invasiveness, contrast and sedation; an unknown test the base. A
    procedure already counted (``invasive_counted``: a second analyte of one pleural tap)
    adds no invasiveness again."""
    penalty = BASE_PENALTY
    if test is not None and test.cost is not None and test.cost.band is not None:
        penalty += COST_PENALTY.get(test.cost.band, 0.0)
    burden = test.burden if test is not None else None
    if burden is not None:
        penalty += min(MSV_CAP, MSV_PENALTY * (burden.radiation_msv or 0.0))
        if not invasive_counted:
            penalty += INVASIVE_PENALTY.get(burden.invasive, 0.0)
        penalty += CONTRAST_PENALTY if burden.contrast not in ("none", "") else 0.0
        penalty += SEDATION_PENALTY if burden.sedation else 0.0
    return round(min(ORDER_CAP, penalty), 6)


def procedure_of(test: CatalogTest) -> str | None:
    """The needle or procedure a test needs, counted once however many tests it yields: the
    specimen of a lab test (one venepuncture for every blood test, one pleural tap for every
    pleural fluid analyte), else the test itself; None for a test that breaks no skin."""
    if test.burden is None or test.burden.invasive not in ("minimal", "invasive"):
        return None
    if test.kind in ("lab", "microbiology") and test.specimen:
        return f"{test.burden.invasive}:{test.specimen}"
    return f"{test.burden.invasive}:{test.name}"


@dataclass
class Expected:
    """One case's expected work-up, read once, with its oracle."""

    catalog: Catalog
    oracle: Oracle
    groups: list[list[CatalogTest]]  # must-order items, each as its alternatives
    unknown: list[str]  # must-order items no alternative of which the catalog knows
    optional: list[CatalogTest]
    should_not: list[CatalogTest]
    _answers: dict[str, tuple[Answer, CatalogTest | None]] = field(default_factory=dict)
    _sources: dict[str, frozenset[str]] = field(default_factory=dict)
    _meets: dict[tuple[str, str], bool] = field(default_factory=dict)
    _examined: dict[str, set[str]] = field(default_factory=dict)

    def __post_init__(self) -> None:
        # Names, not tests, are compared: a catalog test's equality walks every field.
        self.names = [group_name(g) for g in self.groups]
        self.should_not_names = frozenset(t.name for t in self.should_not)
        self.optional_names = frozenset(t.name for t in self.optional)

    def answer(self, name: str) -> tuple[Answer, CatalogTest | None]:
        """The oracle's answer to an order, and the catalog test it is (timing taken out of
        a name the catalog does not know as written)."""
        found = self._answers.get(name)
        if found is None:
            answer = self.oracle.answer(name)
            if answer.source == UNKNOWN:
                cleaned = clean_order(name)
                if cleaned != name:
                    answer = self.oracle.answer(cleaned)
            test = self.catalog.resolve(answer.test) if answer.test else None
            found = self._answers[name] = (answer, test)
        return found

    def sources(self, answer: Answer) -> frozenset[str]:
        """The listed results an answer comes from (results keys)."""
        if answer.origin:
            return frozenset(answer.origin.split(", "))
        key = self.oracle.listed.get(answer.test or "")
        return frozenset([key]) if key and answer.source in (LISTED, UNAVAILABLE) else frozenset()

    def sources_of(self, wanted: CatalogTest) -> frozenset[str]:
        found = self._sources.get(wanted.name)
        if found is None:
            found = self._sources[wanted.name] = self.sources(self.answer(wanted.name)[0])
        return found

    def meets(self, name: str, wanted: CatalogTest) -> bool:
        """Whether an order meets a wanted test (remembered: submissions repeat orders)."""
        found = self._meets.get((name, wanted.name))
        if found is None:
            found = self._meets[(name, wanted.name)] = self._meets_now(name, wanted)
        return found

    def examined(self, part: str) -> set[str]:
        found = self._examined.get(part)
        if found is None:
            found = self._examined[part] = examined_names(self.oracle, [part])
        return found

    def _meets_now(self, name: str, wanted: CatalogTest) -> bool:
        answer, test = self.answer(name)
        if test is not None and (
            test is wanted
            or any(t is wanted for t in self.catalog.components_of(test))
            or any(t is test for t in self.catalog.answered_by(wanted))
        ):
            return True
        given = self.sources(answer)
        return bool(given) and bool(given & self.sources_of(wanted))


def expected(data: Mapping[str, Any], catalog: Catalog) -> Expected:
    groups: list[list[CatalogTest]] = []
    unknown: list[str] = []
    for group in order_groups(data, *EXPECTED, "must_order"):
        tests = [t for named in group if (t := catalog.resolve(named.name)) is not None]
        if tests:
            groups.append(_unique(tests))
        else:
            unknown.append(" or ".join(named.name for named in group))
    return Expected(
        catalog,
        Oracle(data, catalog, views=False),  # scoring asks which test answers, not what
        groups,
        unknown,
        _resolved(data, "optional", catalog),
        _resolved(data, "should_not_order", catalog),
    )


def _resolved(data: Mapping[str, Any], name: str, catalog: Catalog) -> list[CatalogTest]:
    tests = (catalog.resolve(n.name) for n in orders(data, *EXPECTED, name))
    return _unique(t for t in tests if t is not None)


def _unique(tests: Iterable[CatalogTest]) -> list[CatalogTest]:
    """Each test once (catalog tests hold mappings, so they are told apart by name)."""
    return list({t.name: t for t in tests}.values())


def group_name(group: Sequence[CatalogTest]) -> str:
    return " or ".join(t.name for t in group)


# --- examinations ------------------------------------------------------------------------


def examined_names(oracle: Oracle, parts: Iterable[str]) -> set[str]:
    """The examination keys (``exam_key``) of every section and finding the examinations
    returned, the parts' own names included."""
    found: set[str] = set()
    for part in parts:
        answer = oracle.examine(part)
        if answer.source != LISTED or answer.result is None:
            continue
        if answer.test:
            found |= {exam_key(step) for step in answer.test.split(" > ")}
        _collect(answer.result.get("findings"), found)
    return found


def _collect(value: Any, found: set[str]) -> None:
    if isinstance(value, Mapping):
        for key, item in value.items():
            found.add(exam_key(str(key)))
            if isinstance(item, Mapping) and "value" not in item:
                _collect(item, found)


def examined_meets(wanted: CatalogTest, names: set[str]) -> bool:
    """Whether an examination's findings stand for a bedside test (vital signs, a score)."""
    if wanted.kind not in EXAMINABLE:
        return False
    return any(exam_key(n) in names for n in (wanted.name, *wanted.aliases) if exam_key(n))


# --- the work-up -------------------------------------------------------------------------


@dataclass
class Workup:
    """What a submission's orders and examinations did, against one case."""

    hit: list[str]
    missed: list[str]
    credited_by: dict[str, str]
    should_not: list[str]
    optional: list[str]
    unneeded: list[dict[str, Any]]
    not_in_catalog: list[str]
    tests: list[CatalogTest]  # every distinct catalog test ordered, for cost and burden
    recall: float
    penalty: float  # of the diagnostics component, before the floor at 0

    @property
    def diagnostics(self) -> float:
        return round(max(0.0, self.recall - self.penalty), 6)

    @property
    def overflow(self) -> float:
        """The penalty the diagnostics component could not absorb: taken from the score."""
        return round(max(0.0, self.penalty - self.recall), 6)


def read_workup(key: Expected, ordered: Sequence[str], examined: Sequence[str]) -> Workup:
    names = list(dict.fromkeys(n.strip() for n in ordered if n.strip()))
    exam: set[str] = set().union(*(key.examined(part) for part in examined))
    credited: dict[str, str] = {}
    for name, group in zip(key.names, key.groups, strict=True):
        by = next((n for w in group for n in names if key.meets(n, w)), None)
        if by is None and exam and any(examined_meets(w, exam) for w in group):
            by = "examination"
        if by is not None:
            credited[name] = by
    hit = [n for n in key.names if n in credited]
    missed = [n for n in key.names if n not in credited] + key.unknown
    workup = Workup(hit, missed, credited, [], [], [], [], [], 0.0, 0.0)
    _sort_orders(key, names, set(credited.values()), workup)
    total = len(key.groups) + len(key.unknown)
    workup.recall = round(len(hit) / total, 6) if total else 1.0
    penalty = SHOULD_NOT_ORDER_PENALTY * len(workup.should_not)
    penalty += sum(u["penalty"] for u in workup.unneeded)
    workup.penalty = round(min(1.0, penalty), 6)
    return workup


def _sort_orders(key: Expected, names: list[str], crediting: set[str], workup: Workup) -> None:
    """Each order once by test: must, optional, should-not or unneeded. An unneeded order is
    charged its burden, but not again for a needle or procedure another order already needs
    (a second blood test from the same venepuncture)."""
    seen: set[str] = set()
    unneeded: list[tuple[str, CatalogTest | None]] = []
    procedures: set[str] = set()
    for name in names:
        test = key.answer(name)[1]
        if test is None:
            workup.not_in_catalog.append(name)
            if name not in crediting:
                unneeded.append((name, None))
            continue
        if test.name in seen:
            continue
        seen.add(test.name)
        workup.tests.append(test)
        if test.name in key.should_not_names:
            workup.should_not.append(test.name)
        elif name in crediting or any(key.meets(name, w) for g in key.groups for w in g):
            pass
        elif test.name in key.optional_names or any(key.meets(name, o) for o in key.optional):
            workup.optional.append(test.name)
        else:
            unneeded.append((name, test))
            continue
        procedures.add(procedure_of(test) or "")
    for name, found in unneeded:
        procedure = procedure_of(found) if found is not None else None
        penalty = order_penalty(found, procedure in procedures)
        workup.unneeded.append({"order": name, "test": found and found.name, "penalty": penalty})
        procedures.add(procedure or "")


# --- cost and burden ---------------------------------------------------------------------


def cost_and_burden(tests: Iterable[CatalogTest]) -> dict[str, Any]:
    """A work-up's cost (a total per currency, the tests costed only by tier, and the least it
    costs in USD with each tier at the bottom of its band) and burden
    (effective dose, invasive procedures counted once per procedure, contrast studies,
    sedations, and the tests whose dose no cited table gives)."""
    totals: dict[str, float] = {}
    tiers: dict[str, int] = {}
    msv = 0.0
    unpriced = contrast = sedation = count = dose_unknown = 0
    procedures: set[str] = set()
    listed = list(tests)
    for test in listed:
        count += 1
        cost = test.cost
        if cost is not None and cost.amount is not None and cost.currency:
            totals[cost.currency] = totals.get(cost.currency, 0.0) + cost.amount
        elif cost is not None and cost.tier:
            tiers[cost.tier] = tiers.get(cost.tier, 0) + 1
        else:
            unpriced += 1
        burden = test.burden
        if burden is None:
            continue
        if burden.radiation_msv is None:
            dose_unknown += 1
        msv += burden.radiation_msv or 0.0
        if (procedure := procedure_of(test)) is not None and burden.invasive == "invasive":
            procedures.add(procedure)
        contrast += burden.contrast not in ("none", "")
        sedation += burden.sedation
    return {
        "tests": count,
        "least_cost": round(sum(least_cost(t) for t in listed), 2),
        "cost": {k: round(v, 2) for k, v in sorted(totals.items())},
        "cost_tiers": dict(sorted(tiers.items())),
        "cost_unknown": unpriced,
        "radiation_msv": round(msv, 3),
        "radiation_unknown": dose_unknown,
        "invasive": len(procedures),
        "contrast": contrast,
        "sedation": sedation,
    }


# The least a test priced only by its tier costs: the bottom of the tier's band (catalog
# header), so that a sum over a work-up is a lower bound and never an invented price.
TIER_FLOOR = {"low": 0.0, "medium": 25.0, "high": 150.0, "very_high": 750.0}


def least_cost(test: CatalogTest | None, currency: str = "USD") -> float:
    """A test's amount in ``currency``, or the floor of its tier; 0 when the catalog gives
    neither (or prices it in another currency)."""
    cost = test.cost if test is not None else None
    if cost is None:
        return 0.0
    if cost.amount is not None:
        return cost.amount if cost.currency == currency else 0.0
    return TIER_FLOOR.get(cost.tier or "", 0.0)
