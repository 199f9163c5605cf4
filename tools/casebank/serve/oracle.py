"""The results oracle: the one implementation of how a case answers a test order.

A harness asks for a test by name; the oracle answers from the case truth, or from an explicit
policy, and says which (``source``):

- ``listed``: the case lists this test (by name or alias) and its result.
- ``derived``: answered from a listed result of a related test, named in ``from``: a panel
  member from its panel, a panel assembled from listed members, or a listed result the case
  (``answers:``) or the catalog (``answers``) declares to answer this test.
- ``policy``: produced by ``results_generated_policy``: the catalog's normal result for
  ``normal_unless_listed`` (and, conservatively, for ``generate_consistent``).
- ``unavailable``: the case says the result is not available (``status: unavailable`` or
  ``not_done``), the policy says so (``unavailable_unless_listed``, or no policy), or the test
  has no normal result to assume (a blood group).
- ``unknown_test``: not in the catalog; the answer carries a suggestion only where one is safe.

Examinations are answered the same way from ``physical_exam`` (:meth:`Oracle.examine`): the
part asked for, or ``unavailable`` when the case does not record it. Nothing is ever invented.
"""

from __future__ import annotations

import dataclasses
import re
from collections.abc import Mapping
from dataclasses import dataclass, field
from functools import cached_property
from typing import Any

from casebank.format.catalog import BLOOD_SPECIMENS, Catalog, CatalogTest, fold
from casebank.format.names import (
    clean_order,
    resolve_loosely,
    split_side,
    suggest,
    suggest_sided,
)
from casebank.format.results import judgement
from casebank.serve.derive import Derived, Facts, Missing, derive, flagged, mentions
from casebank.serve.views import served

LISTED, DERIVED, POLICY, UNAVAILABLE, UNKNOWN = (
    "listed",
    "derived",
    "policy",
    "unavailable",
    "unknown_test",
)
SOURCES = (LISTED, DERIVED, POLICY, UNAVAILABLE, UNKNOWN)
NOT_AVAILABLE = ("unavailable", "not_done")
GENERIC_NORMAL = "Within normal limits."


@dataclass(frozen=True)
class Answer:
    """The oracle's answer to one request: where the result comes from, and the result."""

    request: str
    test: str | None
    source: str
    origin: str | None  # "from": the listed result an answer was derived from
    result: Mapping[str, Any] | None
    suggestion: str | None = None
    reason: str | None = None  # why no result is served (unavailable answers)

    def to_dict(self) -> dict[str, Any]:
        out: dict[str, Any] = {
            "request": self.request,
            "test": self.test,
            "source": self.source,
            "from": self.origin,
            "result": None if self.result is None else dict(self.result),
        }
        if self.source == UNKNOWN:
            out["suggestion"] = self.suggestion
        if self.reason is not None:
            out["reason"] = self.reason
        return out


@dataclass
class Oracle:
    """Answers test orders and examination requests for one case against one catalog."""

    case: Mapping[str, Any]
    catalog: Catalog
    # False: answers say which test and source answer an order, from where, and why not, but
    # carry no served result (``result`` is empty): what scoring asks, at a tenth of the cost.
    views: bool = True
    listed: dict[str, str] = field(default_factory=dict, init=False)  # test name -> results key
    # member test name -> (results key of its panel, the member's key, whether in a series)
    members: dict[str, tuple[str, str, bool]] = field(default_factory=dict, init=False)
    declared: dict[str, str] = field(default_factory=dict, init=False)  # test -> results key
    results: Mapping[str, Any] = field(default_factory=dict, init=False, repr=False)
    # The listed panels that served nothing (not done, unavailable, pending), in listed order.
    held: list[tuple[CatalogTest, str]] = field(default_factory=list, init=False, repr=False)

    def __post_init__(self) -> None:
        investigations = self.case.get("investigations")
        results = investigations.get("results") if isinstance(investigations, dict) else None
        self.results = results if isinstance(results, dict) else {}
        for key, entry in self.results.items():
            if not isinstance(entry, dict):
                continue  # not a result (validation reports it): nothing to serve
            test = self.catalog.resolve(key)
            self.listed.setdefault(test.name if test else f"?{fold(key)}", key)
            components = entry.get("components")
            series = entry.get("series")
            # The panel's own members, then each member named across its series once (the
            # first mention of a member is the one kept).
            named = [(m, False) for m in (components if isinstance(components, dict) else {})]
            named += [
                (m, True)
                for m in dict.fromkeys(
                    member
                    for point in (series if isinstance(series, list) else [])
                    if isinstance(point, dict) and isinstance(point.get("components"), dict)
                    for member in point["components"]
                )
            ]
            for member, timed in named:
                found = self.catalog.resolve(member, panel=test)
                if found is not None:
                    self.members.setdefault(found.name, (key, member, timed))
            answers = entry.get("answers")
            for name in answers if isinstance(answers, list) else []:
                answered = self.catalog.resolve(name) if isinstance(name, str) else None
                if answered is not None:
                    self.declared.setdefault(answered.name, key)
        for name, key in self.listed.items():
            entry = self.results[key]
            if entry.get("status", "final") != "final":
                panel = self.catalog.resolve(name)
                if panel is not None and panel.is_panel:
                    self.held.append((panel, key))

    @property
    def policy(self) -> str | None:
        investigations = self.case.get("investigations")
        policy = (
            investigations.get("results_generated_policy")
            if isinstance(investigations, dict)
            else None
        )
        return policy if isinstance(policy, str) else None

    # --- tests ---------------------------------------------------------------------------

    def resolve(self, request: str) -> tuple[CatalogTest | None, str | None]:
        """The catalog test a request means, and the side it names (if any)."""
        test = self._lookup(request)
        if test is not None:
            return test, None
        for name in dict.fromkeys((request, clean_order(request))):
            split = split_side(name)
            if split is not None:
                for rest in _sited(split[0]):
                    found = self._lookup(rest)
                    if found is not None:
                        return found, split[1]
                found = self._limb(split[0])
                if found is not None:
                    return found, split[1]
            if name != request and (found := self._lookup(name)) is not None:
                return found, None
        return None, None

    def _limb(self, rest: str) -> CatalogTest | None:
        """``rest`` without its limb word, where the test it then names is of that limb."""
        words = rest.split()
        for word in words:
            limb = _LIMB_SITES.get(word.casefold())
            found = self._lookup(" ".join(w for w in words if w != word)) if limb else None
            if found is not None and limb and limb in (found.site or "").casefold():
                return found
        return None

    def _lookup(self, name: str) -> CatalogTest | None:
        test = self.catalog.resolve(name)
        if test is None:
            loose = resolve_loosely(name, self.catalog)
            test = self.catalog.resolve(loose) if loose else None
        return test

    def answers(self, request: str) -> list[Answer]:
        """The answers to one order as a clinician types it: one test, or several joined
        ("B12 and folate", "FBC + film", "BP, HR"), each answered on its own. A request is split
        only when it names no test as a whole and every part names one."""
        whole = self.answer(request)
        if whole.source != UNKNOWN:
            return [whole]
        named = self._named_within(request)
        if named:
            return named
        parts = [p.strip() for p in _JOINED.split(request) if p.strip()]
        if len(parts) < 2:
            return [whole]
        found = [self.answer(part) for part in parts]
        return [whole] if any(a.source == UNKNOWN for a in found) else found

    def _named_within(self, request: str) -> list[Answer]:
        """The tests an order names around its description: the test after a dash or colon
        ("aspirate R 1st MTPJ - polarised light microscopy"); or the test before "with" and
        those after it, read in the test's specimen ("LP with CSF microscopy, protein and
        glucose": the LP, CSF protein, CSF glucose)."""
        tail = re.split(r"\s+[-–]\s+|:\s+", request, maxsplit=1)
        if len(tail) == 2:
            after = self.answer(tail[1].strip())
            if after.source != UNKNOWN:
                return [dataclasses.replace(after, request=request)]
        head = re.split(r"\s+with\s+", request, maxsplit=1, flags=re.IGNORECASE)
        if len(head) != 2:
            return []
        first = self.answer(head[0].strip())
        if first.source == UNKNOWN:
            return []
        found = [first]
        prefix = _SPECIMEN_OF.get(first.test or "")
        for part in (p.strip() for p in _JOINED.split(head[1]) if p.strip()):
            for name in (part, f"{prefix} {part}" if prefix else None):
                answer = self.answer(name) if name else None
                if answer is not None and answer.source != UNKNOWN:
                    found.append(answer)
                    break
        return found

    def answer(self, request: str) -> Answer:
        test, side = self.resolve(request)
        if test is None:
            listed = self.listed.get(f"?{fold(request)}")
            if listed is not None:  # a name the catalog lacks (validation reports it)
                return self._from_entry(request, None, self.results[listed], LISTED, None)
            sided = suggest_sided(request, self.catalog)
            suggestion = suggest(request, self.catalog) or (sided[0] if sided else None)
            return Answer(request, None, UNKNOWN, None, None, suggestion)
        key = self.listed.get(test.name)
        if key is not None and _same_side(self.results[key], side):
            return self._from_entry(request, test, self.results[key], LISTED, None)
        if test.kind in CASE_DETERMINED:  # what the doctor finds at the bedside comes first
            found = self._from_exam(request, test, side)
            if found is not None:
                return found
        derived = self._derived(request, test)
        if derived is not None:
            return derived
        if test.kind not in CASE_DETERMINED:
            found = self._from_exam(request, test, side)
            if found is not None:
                return found
        return self._unlisted(request, test)

    def _unlisted(self, request: str, test: CatalogTest) -> Answer:
        """A test no listed result answers: computed by its formula, read from a listed report
        that states it (a QTc in the ECG's report), or the policy's answer."""
        missing: tuple[str, ...] = ()
        if test.derive is not None:
            computed = derive(test.derive, self.facts)
            if isinstance(computed, Derived):
                return Answer(request, test.name, DERIVED, computed.origin, computed.result)
            if isinstance(computed, Missing):
                missing = computed.inputs
        if test.kind in CASE_DETERMINED:
            key = self._reported_in(test)
            if key is not None:
                return self._from_entry(request, test, self.results[key], DERIVED, key)
        return self._by_policy(request, test, missing)

    def _reported_in(self, test: CatalogTest) -> str | None:
        """The listed report whose text states this measurement by name ("QTc 486 ms" in the
        ECG's report answers a QTc order)."""
        pattern = mentions(tuple(n for n in (test.name, *test.aliases) if len(n) >= 3))
        if pattern is None:
            return None
        for key, entry in self.results.items():
            if not isinstance(entry, dict) or entry.get("status", "final") != "final":
                continue
            value = entry.get("value")
            if isinstance(value, str) and pattern.search(value):
                return str(key)
        return None

    @cached_property
    def facts(self) -> Facts:
        """What the case records, read once for every derived answer."""
        return Facts(self.case, self.catalog, self._lookup_listed)

    def _lookup_listed(self, name: str) -> tuple[str, Mapping[str, Any]] | None:
        """A listed result of test ``name`` (alone, or as a panel member), and its path."""
        key = self.listed.get(name)
        if key is not None and isinstance(self.results.get(key), dict):
            return f"investigations.results.{key}", self.results[key]
        if name in self.members:
            panel, member, timed = self.members[name]
            return f"investigations.results.{panel}.{member}", self._member(panel, member, timed)
        return None

    def _from_exam(self, request: str, test: CatalogTest, side: str | None = None) -> Answer | None:
        """The examination's reading of ``test`` (of the side the order names, if it names
        one), or for a panel (vital signs) its members'."""
        reading = self.facts.finding(test, side) if test.kind in CASE_DETERMINED else None
        if reading is None:
            reading = self.facts.findings.get(test.name)
            if reading is not None and not reading.of_side(side):
                reading = None
        if reading is not None:
            reading = flagged(self.facts, test.name, reading)
            return Answer(request, test.name, DERIVED, reading.origin, reading.result())
        if not test.is_panel or test.kind not in CASE_DETERMINED:
            return None
        components: dict[str, Any] = {}
        origins = []
        for member in self.catalog.components_of(test):
            found = self.facts.reading(member.name)
            if found is not None:
                found = flagged(self.facts, member.name, found)
                components[member.name] = {**found.result(), "source": DERIVED}
                origins.append(found.origin)
        if not components:
            return None
        result = {"type": "panel", "components": components}
        return Answer(request, test.name, DERIVED, ", ".join(dict.fromkeys(origins)), result)

    def _from_entry(
        self,
        request: str,
        test: CatalogTest | None,
        entry: Mapping[str, Any],
        source: str,
        origin: str | None,
        at: tuple[str, ...] | None = None,
    ) -> Answer:
        name = test.name if test is not None else None
        key = origin if origin is not None else self.listed.get(name or "", request)
        shown = self._shown(entry, at or ("investigations", "results", str(key)))
        if entry.get("status") in NOT_AVAILABLE:
            return Answer(request, name, UNAVAILABLE, origin, shown, reason=_status(entry))
        return Answer(request, name, source, origin, shown)

    def _shown(self, entry: Any, at: tuple[str, ...]) -> Mapping[str, Any]:
        """What of a listed result is served (nothing, for an oracle without views)."""
        return (served(entry, at) or {}) if self.views else {}

    def _derived(self, request: str, test: CatalogTest) -> Answer | None:
        if test.name in self.members:
            key, member, timed = self.members[test.name]
            entry = self._member(key, member, timed)
            at = ("investigations", "results", key) + (() if timed else ("components", member))
            return self._from_entry(request, test, entry, DERIVED, key, at)
        source_key = self.declared.get(test.name)
        if source_key is None:
            source_key = next(
                (
                    self.listed[other.name]
                    for other in self.catalog.answered_by(test)
                    if other.name in self.listed
                ),
                None,
            )
        if source_key is not None:
            return self._from_entry(request, test, self.results[source_key], DERIVED, source_key)
        held = self._held_in_panel(test)
        if held is not None:  # a member of a panel the case says was not done, or is pending
            return self._from_entry(request, test, self.results[held], DERIVED, held)
        if test.is_panel:
            return self._assembled(request, test)
        return None

    def _held_in_panel(self, test: CatalogTest) -> str | None:
        """The results key of a listed panel holding ``test`` that served nothing (not done,
        unavailable or pending): its member has no result either, never a default."""
        for panel, key in self.held:
            if self.catalog.is_component(panel, test):
                return key
        return None

    def _member(self, key: str, member: str, timed: bool) -> Mapping[str, Any]:
        """A panel member's result; from a series of panels, the member's own series."""
        if not timed:
            return self.results[key]["components"][member]  # type: ignore[no-any-return]
        points = [
            {"at": point.get("at"), **point["components"][member]}
            for point in self.results[key]["series"]
            if isinstance(point, dict) and member in (point.get("components") or {})
        ]
        return {"series": points}

    def _assembled(self, request: str, panel: CatalogTest) -> Answer | None:
        """A panel put together from its members' listed results; members the case does not
        list are filled in by the policy, and each member says where it came from."""
        components: dict[str, Any] = {}
        origins: list[str] = []
        for member in self.catalog.components_of(panel):
            key = self.listed.get(member.name)
            if key is not None:
                shown = self._shown(self.results[key], ("investigations", "results", key))
                components[member.name] = {**shown, "source": LISTED, "from": key}
                origins.append(key)
            elif member.name in self.members and self._same_specimen(panel, member.name):
                panel_key, name, timed = self.members[member.name]
                entry = self._member(panel_key, name, timed)
                at = ("investigations", "results", panel_key)
                shown = self._shown(entry, at if timed else (*at, "components", name))
                components[member.name] = {**shown, "source": DERIVED, "from": panel_key}
                origins.append(panel_key)
            elif not member.is_panel:  # computed from the case, or the policy's answer
                filled = self._unlisted(member.name, member)
                components[member.name] = {
                    **(filled.result or {"status": "unavailable"}),
                    "source": filled.source,
                    "from": filled.origin,
                }
        if not origins:
            return None
        result = {"type": "panel", "components": components}
        origin = ", ".join(dict.fromkeys(origins))
        return Answer(request, panel.name, DERIVED, origin, result)

    def _same_specimen(self, panel: CatalogTest, member: str) -> bool:
        """Whether a member listed in another panel may stand in this panel: the same specimen
        (an arterial gas's pO2 is not a venous gas's)."""
        other = self.catalog.resolve(self.members[member][0])
        return _compatible(panel.specimen, other.specimen if other is not None else None)

    def _by_policy(self, request: str, test: CatalogTest, missing: tuple[str, ...] = ()) -> Answer:
        """The catalog's normal result, where the policy and the test's kind allow one and
        nothing the case lists bears against it; otherwise unavailable, with the reason."""
        if test.kind in CASE_DETERMINED and not may_default(test):
            return Answer(
                request, test.name, UNAVAILABLE, None, None, reason=_undetermined(missing)
            )
        sex = self._sex()
        if test.sex is not None and sex in ("female", "male") and sex != test.sex:
            reason = f"not applicable: {test.name} is not done for a {sex} patient"
            return Answer(request, test.name, UNAVAILABLE, None, None, reason=reason)
        policy = self.policy
        if policy not in ("normal_unless_listed", "generate_consistent"):
            return Answer(request, test.name, UNAVAILABLE, None, None, reason=LISTED_ONLY)
        if not test.default_result:
            return Answer(request, test.name, UNAVAILABLE, None, None, reason=NO_NORMAL)
        against = self._abnormal_related(test)
        if against is not None:
            reason = f"not reported on its own here: the case reports {against}"
            return Answer(request, test.name, UNAVAILABLE, None, None, reason=reason)
        kind = "text_report" if "text_report" in test.result_types else "qualitative"
        result = {"type": kind, "value": test.default_result, "flag": "normal"}
        return Answer(request, test.name, POLICY, None, result)

    def _sex(self) -> str | None:
        patient = self.case.get("patient")
        sex = patient.get("sex") if isinstance(patient, dict) else None
        return sex if isinstance(sex, str) else None

    def _abnormal_related(self, test: CatalogTest) -> str | None:
        """A listed result of the test's family that is not normal: a normal default beside it
        would contradict it (troponin I beside a raised troponin T; a Holter beside an ECG
        showing atrial fibrillation)."""
        for other in self.catalog.family_of(test):
            key = self.listed.get(other.name)
            entry = self.results.get(key) if key is not None else None
            if entry is None and other.name in self.members:  # inside a listed panel
                panel, member, timed = self.members[other.name]
                key, entry = panel, self._member(panel, member, timed)
            final = isinstance(entry, dict) and entry.get("status", "final") == "final"
            if final and judgement(entry) != "normal":  # type: ignore[arg-type]
                return key
        return None

    # --- examinations ----------------------------------------------------------------------

    def examine(self, request: str) -> Answer:
        """The part of the physical examination asked for ("cardiovascular examination")."""
        exam = served(self.case.get("physical_exam"), ("physical_exam",))  # no examiner notes
        if isinstance(exam, str):
            return Answer(request, None, LISTED, "physical_exam", {"findings": exam})
        if not isinstance(exam, dict):
            return Answer(request, None, UNAVAILABLE, None, None, reason=_NOT_EXAMINED)
        wanted = exam_key(request)
        if wanted in ("", "physical", "full", "general physical", "complete"):
            return Answer(request, None, LISTED, "physical_exam", {"findings": exam})
        found = _find_part(exam, wanted, ())
        if found is None and wanted == "vital signs":
            vitals = self._from_exam(request, self.catalog.resolve("Vital signs"))  # type: ignore[arg-type]
            if vitals is not None and vitals.result is not None:
                part = "vital signs"
                findings = {k: v for k, v in vitals.result["components"].items()}
                return Answer(
                    request, part, LISTED, vitals.origin, {"part": part, "findings": findings}
                )
        if found is None:
            return Answer(request, None, UNAVAILABLE, None, None, reason=_NOT_EXAMINED)
        path, value = found
        part = " > ".join(path)
        return Answer(request, part, LISTED, "physical_exam", {"part": part, "findings": value})


# The specimen a procedure's "with ..." parts are read in ("LP with protein": CSF protein).
_SPECIMEN_OF = {"Lumbar puncture": "CSF", "Joint aspiration": "Synovial fluid"}

_PLURAL_SITES = {
    "ears": "ear",
    "eyes": "eye",
    "feet": "foot",
    "hands": "hand",
    "arms": "arm",
    "legs": "leg",
    "knees": "knee",
    "hips": "hip",
    "kidneys": "kidney",
    "breasts": "breast",
}


def _sited(rest: str) -> list[str]:
    """What is left of an order once its side is taken ("XR feet" of "XR both feet"), then
    its site in the singular ("XR foot"), then without the site at all ("otoscopy")."""
    words = rest.split()
    single = [_PLURAL_SITES.get(w.casefold(), w) for w in words]
    bare = [w for w in words if w.casefold() not in _PLURAL_SITES]
    return list(dict.fromkeys([rest, " ".join(single), " ".join(bare)]))


# A limb named with its side, where the test names its site in its own words ("DVT scan right
# leg" is the lower limb venous scan): the limb word may go when the test's site is that limb.
_LIMB_SITES = {"leg": "lower limb", "arm": "upper limb"}


_JOINED = re.compile(r"\s*(?:,|\+|&|\band\b)\s*", re.IGNORECASE)

# Kinds of test whose result the case itself determines (an observation, a score, a scale):
# never a catalog default, unless the test is done on a specimen (a point-of-care urine or
# capillary test), whose normal result is plausible like any laboratory test's.
CASE_DETERMINED = frozenset({"bedside", "assessment"})
LISTED_ONLY = "the case lists no result for this test, and serves listed results only"
_NOT_EXAMINED = "the case records no such part of the examination"
NO_NORMAL = "the case lists no result for this test, and no normal result can be assumed"


def may_default(test: CatalogTest) -> bool:
    """Whether the policy may serve ``test``'s catalog default (docs/serving.md, per kind)."""
    return test.kind not in CASE_DETERMINED or test.specimen is not None


def _undetermined(missing: tuple[str, ...]) -> str:
    if missing:
        return (
            f"not recorded for this patient, and the case does not hold {', '.join(missing)} "
            "to calculate it: assess it from the history and the examination"
        )
    return "not recorded for this patient: assess it from the history and the examination"


def _status(entry: Mapping[str, Any]) -> str:
    status = str(entry.get("status")).replace("_", " ")
    return f"{status} for this patient"


def _compatible(a: str | None, b: str | None) -> bool:
    return a is None or b is None or a == b or (a in BLOOD_SPECIMENS and b in BLOOD_SPECIMENS)


def _same_side(entry: Any, side: str | None) -> bool:
    listed = entry.get("laterality") if isinstance(entry, dict) else None
    return side is None or listed is None or listed in (side, "bilateral")


_EXAM_FILLER = frozenset(
    [
        "examination",
        "exam",
        "examine",
        "examined",
        "assessment",
        "assess",
        "of",
        "the",
        "system",
        "systems",
        "findings",
        "check",
        "please",
    ]
)
_EXAM_SYNONYMS = {
    "cardiac": "cardiovascular",
    "heart": "cardiovascular",
    "cvs": "cardiovascular",
    "lungs": "respiratory",
    "lung": "respiratory",
    "chest": "respiratory",
    "resp": "respiratory",
    "abdominal": "abdomen",
    "gastrointestinal": "abdomen",
    "neuro": "neurological",
    "neurologic": "neurological",
    "nervous": "neurological",
    "vitals": "vital signs",
    "observations": "vital signs",
    "skin": "skin",
    "dermatological": "skin",
    "msk": "musculoskeletal",
    "joints": "musculoskeletal",
    "eye": "eyes",
    "ophthalmic": "eyes",
    "ear": "ears",
    "otoscopy": "ears",
    "ent": "ears nose throat",
}


def exam_key(text: str) -> str:
    words = [w for w in re.findall(r"[a-z0-9]+", text.casefold()) if w not in _EXAM_FILLER]
    return " ".join(_EXAM_SYNONYMS.get(w, w) for w in words)


def _find_part(
    value: Mapping[str, Any], wanted: str, at: tuple[str, ...]
) -> tuple[tuple[str, ...], Any] | None:
    """The first section (breadth first) whose name means what was asked."""
    queue: list[tuple[tuple[str, ...], Mapping[str, Any]]] = [(at, value)]
    while queue:
        path, node = queue.pop(0)
        for key, item in node.items():
            if exam_key(key) == wanted or fold(key) == fold(wanted):
                return (*path, key), item
            if isinstance(item, dict) and "value" not in item:
                queue.append(((*path, key), item))
    return None
