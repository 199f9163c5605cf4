"""The reference scorer: submissions against a release, every number traceable to a case version.

Deterministic where the case decides (diagnosis, diagnostics); a judge outside casebank
decides the rest (treatment, safety, the process of the consultation, and a diagnosis the
matcher cannot decide), and until it has, those are pending (None), never guessed. Two
methods, named in every report so that a score can be reproduced a year later
(docs/scoring.md): ``casebank-score/2``, the default, and ``casebank-score/1``, kept exactly.
"""

from __future__ import annotations

import contextlib
import json
import os
import re
import statistics
import unicodedata
from collections import defaultdict
from collections.abc import Callable, Iterable, Mapping, Sequence
from dataclasses import dataclass, field, fields
from functools import cached_property, partial
from typing import TYPE_CHECKING, Any

from casebank.format import strictjson
from casebank.format.catalog import CASE_ID_CUTOFF, Catalog, CatalogTest, did_you_mean
from casebank.format.orders import orders
from casebank.format.schema import SCORE_COMPONENTS
from casebank.serve import bootstrap
from casebank.serve.diagnosis import DiagnosisKey, Match, diagnosis_key
from casebank.serve.workup import (
    SHOULD_NOT_ORDER_PENALTY,
    Expected,
    Workup,
    cost_and_burden,
    expected,
    read_workup,
)

if TYPE_CHECKING:
    from casebank.release.released import ReleasedCase


@dataclass(frozen=True, order=True)
class InputProblem:
    """A line of a submissions or verdicts file that cannot be scored: the file, the line
    and what is wrong, sorted by file and line and rendered ``FILE:LINE: message``."""

    file: str
    line: int
    message: str

    def __str__(self) -> str:
        return f"{self.file}:{self.line}: {self.message}"


METHOD_1 = "casebank-score/1"
METHOD_2 = "casebank-score/2"
METHODS = (METHOD_2, METHOD_1)
METHOD = METHOD_2
BOOTSTRAP_SAMPLES = bootstrap.SAMPLES
BOOTSTRAP_SEED = bootstrap.SEED
COMPONENTS = SCORE_COMPONENTS  # declared once, with the schema
DIAGNOSIS_ITEM = "diagnosis.equivalent"
MAX_LINE = 1 << 20  # a submission or judgement line longer than 1 MiB is refused

__all__ = [
    "COMPONENTS",
    "METHOD",
    "METHODS",
    "SHOULD_NOT_ORDER_PENALTY",
    "CaseKey",
    "CaseScore",
    "Item",
    "Judgement",
    "Submission",
    "bootstrap_interval",
    "check_against",
    "compare",
    "prepare",
    "read_judgements",
    "read_submissions",
    "rubric",
    "score_all",
    "summary",
]


# --- rubric items --------------------------------------------------------------------------

_QUESTIONS = {
    "treatment": "Does the answer's plan include this? {}",
    "contraindication": "Does the answer do this, which is contraindicated? {}",
    "critical": "Does the answer commit this critical safety error? {}",
    "process": "Did the doctor do this in the consultation (the transcript, else the answer)? {}",
    "diagnosis": (
        "Does the answer's diagnosis name this diagnosis, in other words or more specifically "
        "(not a different or a vaguer condition)? {}"
    ),
}


@dataclass(frozen=True)
class Item:
    """One rubric item a judge decides: ``met`` means the answer does what the text says."""

    id: str  # stable within a case version: treatment.1, contraindication.2, critical.1
    kind: str  # treatment | contraindication | critical | process | diagnosis
    text: str

    @property
    def question(self) -> str:
        return _QUESTIONS[self.kind].format(self.text)


def _texts(value: Any) -> list[str]:
    return [v for v in value if isinstance(v, str)] if isinstance(value, list) else []


def _dict(value: Any) -> Mapping[str, Any]:
    return value if isinstance(value, dict) else {}


def rubric(data: Mapping[str, Any], method: str = METHOD) -> list[Item]:
    """The items a judge decides for one case, in a fixed order (``process`` from method 2)."""
    gold = _dict(data.get("management_gold"))
    scoring = _dict(data.get("scoring"))
    sources = [
        ("treatment", gold.get("treatment_plan")),
        ("contraindication", gold.get("contraindications")),
        ("critical", scoring.get("critical_safety_errors")),
    ]
    if method != METHOD_1:
        sources.append(("process", scoring.get("process")))
    return [
        Item(f"{kind}.{i}", kind, text)
        for kind, value in sources
        for i, text in enumerate(_texts(value), 1)
    ]


def diagnosis_item(data: Mapping[str, Any]) -> Item:
    final = _dict(data.get("ground_truth")).get("final_diagnosis")
    return Item(DIAGNOSIS_ITEM, "diagnosis", final if isinstance(final, str) else "")


# --- answers (method 1) --------------------------------------------------------------------


def normalise(text: str, abbreviations: Mapping[str, str] = {}) -> str:
    """How method 1 compares diagnoses (docs/scoring.md): Unicode NFKC, case folded, every run
    of characters that are not letters or digits one space, and each word that is a catalog
    abbreviation replaced by what it stands for (itself normalised)."""
    words = re.sub(r"[^\w]+", " ", unicodedata.normalize("NFKC", text).casefold())
    out = []
    for word in words.replace("_", " ").split():
        expansion = abbreviations.get(word)
        out.append(expansion if expansion is not None else word)
    return " ".join(out)


_normalised_for: list[tuple[Mapping[str, str], dict[str, str]]] = []  # the last catalog's


def _abbreviations(catalog: Catalog) -> dict[str, str]:
    """The catalog's abbreviations normalised, once per catalog (asked for by every case)."""
    table = catalog.abbreviations
    if _normalised_for and _normalised_for[0][0] is table:
        return _normalised_for[0][1]
    normalised = {normalise(short): normalise(long) for short, long in table.items()}
    _normalised_for[:] = [(table, normalised)]
    return normalised


# --- what scoring needs of a case ----------------------------------------------------------


@dataclass
class CaseKey:
    """What scoring needs of one released case version, prepared once (what only one method
    needs is built on first use, so that a release's cases cost little until scored)."""

    case_id: str
    version: int
    content_hash: str
    specialty: str
    difficulty: str
    # The case's data, read on first use of ``data``: from a release, where the case is
    # scored (in the worker that scores it), not in the parent first.
    read: Callable[[], Mapping[str, Any]] = field(repr=False)
    catalog: Catalog | None = field(default=None, repr=False)

    @cached_property
    def data(self) -> Mapping[str, Any]:
        return self.read()

    @cached_property
    def weights(self) -> dict[str, float]:
        """The case's own weights of the components (``scoring.weights``)."""
        weights = _dict(_dict(self.data.get("scoring")).get("weights"))
        return {
            c: float(weights[c])
            for c in COMPONENTS
            if isinstance(weights.get(c), (int, float)) and not isinstance(weights.get(c), bool)
        }

    @cached_property
    def items(self) -> list[Item]:
        """Method 2's items (method 1 leaves out the process items): read where the case is
        scored, in the worker that scores it."""
        return rubric(self.data)

    @cached_property
    def answers(self) -> dict[str, float]:
        """Method 1: each normalised answer the case accepts, and its credit."""
        assert self.catalog is not None
        abbreviations = _abbreviations(self.catalog)
        truth = _dict(self.data.get("ground_truth"))
        accepted = _dict(_dict(self.data.get("scoring")).get("acceptable_answers"))
        answers: dict[str, float] = {}
        for text, share in _dict(accepted.get("partial_credit")).items():
            if isinstance(share, (int, float)) and not isinstance(share, bool):
                answers[normalise(text, abbreviations)] = float(share)
        final = truth.get("final_diagnosis")
        for text in [final] if isinstance(final, str) else []:
            answers[normalise(text, abbreviations)] = 1.0
        for text in _texts(accepted.get("final_diagnosis")):
            answers[normalise(text, abbreviations)] = 1.0
        return answers

    @cached_property
    def _must(self) -> tuple[list[CatalogTest], list[str]]:
        assert self.catalog is not None
        must: list[CatalogTest] = []
        unknown: list[str] = []
        for named in orders(self.data, "investigations", "expected", "must_order"):
            test = self.catalog.resolve(named.name)
            if test is None:
                unknown.append(named.name)
            elif test not in must:
                must.append(test)
        return must, unknown

    @property
    def must(self) -> list[CatalogTest]:
        """Method 1: the must-order tests the catalog knows."""
        return self._must[0]

    @property
    def must_unknown(self) -> list[str]:
        """Method 1: must_order names the catalog does not know (counted as missed)."""
        return self._must[1]

    @cached_property
    def should_not(self) -> list[CatalogTest]:
        """Method 1: the should-not-order tests the catalog knows."""
        assert self.catalog is not None
        return [
            t
            for named in orders(self.data, "investigations", "expected", "should_not_order")
            if (t := self.catalog.resolve(named.name)) is not None
        ]

    @cached_property
    def diagnosis(self) -> DiagnosisKey:
        assert self.catalog is not None
        return diagnosis_key(self.data, self.catalog.abbreviations)

    @cached_property
    def expected(self) -> Expected:
        assert self.catalog is not None
        return expected(self.data, self.catalog)

    def items_of(self, method: str) -> list[Item]:
        return [i for i in self.items if method != METHOD_1 or i.kind != "process"]

    @cached_property
    def item_ids(self) -> frozenset[str]:
        return frozenset([*(i.id for i in self.items), DIAGNOSIS_ITEM])


def prepare(
    case_id: str, version: int, content_hash: str, data: Mapping[str, Any], catalog: Catalog
) -> CaseKey:
    metadata = _dict(data.get("metadata"))
    return CaseKey(
        case_id,
        version,
        content_hash,
        str(metadata.get("specialty", "")),
        str(metadata.get("difficulty", "")),
        partial(_given, data),
        catalog,
    )


def _given(data: Mapping[str, Any]) -> Mapping[str, Any]:
    return data


def prepare_released(case: ReleasedCase, catalog: Catalog) -> CaseKey:
    """A released case's key, its data not yet read: the specialty and difficulty are its
    manifest entry's (the release recorded them from the same data), and the data is parsed
    where the case is scored (``ReleasedCase.data``)."""
    entry = case.entry
    return CaseKey(
        entry.case_id,
        entry.version,
        entry.sha256,
        entry.specialty,
        entry.difficulty,
        partial(getattr, case, "data"),
        catalog,
    )


# --- input ---------------------------------------------------------------------------------


@dataclass(frozen=True)
class Turn:
    """One turn of a consultation's transcript: who spoke (doctor, patient, tool) and what."""

    role: str
    text: str


@dataclass(frozen=True)
class Submission:
    line: int
    case_id: str
    version: int
    diagnosis: str
    tests: tuple[str, ...]
    plan: tuple[str, ...]
    extra: Mapping[str, Any] = field(default_factory=dict)
    run: str = ""
    ordered: tuple[str, ...] = ()  # orders made during the consultation (the harness's)
    examined: tuple[str, ...] = ()  # parts of the examination asked for
    transcript: tuple[Turn, ...] = ()


@dataclass(frozen=True)
class Judgement:
    line: int
    case_id: str
    version: int
    item: str
    met: bool
    judge: str
    run: str = ""


def _lines(
    raw: bytes, file: str, problems: list[InputProblem]
) -> Iterable[tuple[int, dict[str, Any]]]:
    # The strict reader: lines end at line feeds only; duplicate keys, huge numbers and deep
    # nesting are problems of their line.
    for line in strictjson.lines(raw, max_length=MAX_LINE):
        problem = line.problem
        if problem is not None and problem.kind == "encoding":
            problems.append(InputProblem(file, line.number, "not UTF-8 text"))
        elif problem is not None:
            problems.append(
                InputProblem(file, line.number, f"not a JSON object ({problem.message})")
            )
        elif not isinstance(line.value, dict):
            problems.append(InputProblem(file, line.number, "not a JSON object"))
        else:
            yield line.number, line.value


_TURNS = "turns"  # a transcript: a list of {"role": text, "text": text}
_SHOWN = {
    str: "text",
    int: "a whole number",
    bool: "true or false",
    list: "a list of texts",
    _TURNS: 'a list of {"role": text, "text": text} objects',
}
_SUBMISSION = {"case_id": str, "version": int, "diagnosis": str, "tests": list, "plan": list}
_SUBMISSION_OPTIONAL = {"run": str, "ordered": list, "examined": list, "transcript": _TURNS}
_JUDGEMENT = {"case_id": str, "version": int, "item": str, "met": bool, "judge": str}
_JUDGEMENT_OPTIONAL = {"run": str}


def _fits(item: Any, kind: Any) -> bool:
    if kind == _TURNS:
        return isinstance(item, list) and all(
            isinstance(t, dict)
            and isinstance(t.get("role"), str)
            and isinstance(t.get("text"), str)
            for t in item
        )
    if kind is list:
        return isinstance(item, list) and all(isinstance(x, str) for x in item)
    return isinstance(item, kind) and not (kind is int and isinstance(item, bool))


def _records(
    raw: bytes,
    file: str,
    fields: Mapping[str, Any],
    problems: list[InputProblem],
    optional: Mapping[str, Any] = {},
) -> Iterable[tuple[int, dict[str, Any]]]:
    """Each line's object whose ``fields`` all have their type (a list: of texts), and whose
    ``optional`` fields, where given, have theirs; every missing or mistyped field is a
    problem naming the line."""
    for number, value in _lines(raw, file, problems):
        wrong = False
        for key, kind in (*fields.items(), *optional.items()):
            if key in optional and key not in value:
                continue
            if not _fits(value.get(key), kind):
                what = "missing" if key not in value else f"not {_SHOWN[kind]}"
                problems.append(InputProblem(file, number, f"`{key}` is {what}"))
                wrong = True
        if not wrong:
            yield number, value


def _run(run: str) -> str:
    return f" in run `{run}`" if run else ""


def read_submissions(raw: bytes, file: str) -> tuple[list[Submission], list[InputProblem]]:
    """The well-formed submission lines, and a problem for each other line."""
    problems: list[InputProblem] = []
    found: list[Submission] = []
    seen: dict[tuple[str, str, int], int] = {}
    known = {*_SUBMISSION, *_SUBMISSION_OPTIONAL}
    for number, value in _records(raw, file, _SUBMISSION, problems, _SUBMISSION_OPTIONAL):
        run = value.get("run", "")
        key = (run, value["case_id"], value["version"])
        if key in seen:
            problems.append(
                InputProblem(
                    file,
                    number,
                    f"a second submission for {key[1]}@{key[2]}{_run(run)} "
                    f"(the first is on line {seen[key]})",
                )
            )
            continue
        seen[key] = number
        found.append(
            Submission(
                number,
                value["case_id"],
                value["version"],
                value["diagnosis"],
                tuple(value["tests"]),
                tuple(value["plan"]),
                {k: v for k, v in value.items() if k not in known},
                run,
                tuple(value.get("ordered", ())),
                tuple(value.get("examined", ())),
                tuple(Turn(t["role"], t["text"]) for t in value.get("transcript", ())),
            )
        )
    return found, problems


def read_judgements(raw: bytes, file: str) -> tuple[list[Judgement], list[InputProblem]]:
    """The well-formed verdict lines, and a problem for each other line."""
    problems: list[InputProblem] = []
    found: list[Judgement] = []
    seen: dict[tuple[str, str, int, str], Judgement] = {}
    for number, value in _records(raw, file, _JUDGEMENT, problems, _JUDGEMENT_OPTIONAL):
        judgement = Judgement(
            number,
            value["case_id"],
            value["version"],
            value["item"],
            value["met"],
            value["judge"],
            value.get("run", ""),
        )
        key = (judgement.run, judgement.case_id, judgement.version, judgement.item)
        first = seen.get(key)
        if first is not None:
            verdict = "the same" if first.met == judgement.met else "a different"
            problems.append(
                InputProblem(
                    file,
                    number,
                    f"{verdict} verdict on {key[1]}@{key[2]} {key[3]}"
                    f"{_run(judgement.run)} again (first on line {first.line}); give each item "
                    "one verdict",
                )
            )
            continue
        seen[key] = judgement
        found.append(judgement)
    return found, problems


# --- scoring -------------------------------------------------------------------------------


@dataclass
class CaseScore:
    key: CaseKey
    components: dict[str, float | None]
    score: float | None
    critical_safety_error: bool | None
    details: dict[str, Any]
    run: str = ""
    process: float | None = None
    workup: dict[str, Any] | None = None  # cost and burden (method 2)
    method: str = METHOD
    # ``to_data`` as the JSON report writes it, made where the case was scored (in a forked
    # worker, for a large run) when ``score_all`` was asked to ``encode``; else None.
    json_text: str | None = field(default=None, repr=False, compare=False)

    def to_data(self) -> dict[str, Any]:
        data: dict[str, Any] = {
            "case_id": self.key.case_id,
            "version": self.key.version,
            "content_hash": self.key.content_hash,
            "specialty": self.key.specialty,
            "difficulty": self.key.difficulty,
        }
        if self.run:
            data["run"] = self.run
        data |= {
            "components": self.components,
            "score": self.score,
            "critical_safety_error": self.critical_safety_error,
        }
        if self.method != METHOD_1:
            data["process"] = self.process
            data["workup"] = self.workup
        data["details"] = self.details
        return data


def _resolve(name: str, catalog: Catalog) -> CatalogTest | None:
    test = catalog.resolve(name)
    if test is None:
        from casebank.format.names import resolve_loosely

        spelling = resolve_loosely(name, catalog)
        test = catalog.resolve(spelling) if spelling else None
    return test


def _covers(ordered: CatalogTest, wanted: CatalogTest, catalog: Catalog) -> bool:
    """Method 1: an order covers a must-order test when it is that test, a panel holding it,
    or a test whose result the catalog says answers it."""
    if ordered is wanted:
        return True
    if wanted in catalog.components_of(ordered):
        return True
    return ordered in catalog.answered_by(wanted)


def _judged(
    items: Sequence[Item], verdicts: Mapping[str, Judgement]
) -> tuple[float | None, float | None, list[str]]:
    """Treatment, safety (pending: None) and the critical items met."""
    treatment = _share([i for i in items if i.kind == "treatment"], verdicts)
    committed = _share([i for i in items if i.kind in ("contraindication", "critical")], verdicts)
    criticals = [i for i in items if i.kind == "critical"]
    met = [i.id for i in criticals if i.id in verdicts and verdicts[i.id].met]
    return treatment, None if committed is None else round(1.0 - committed, 6), met


def _share(items: Sequence[Item], verdicts: Mapping[str, Judgement]) -> float | None:
    if not items:
        return 1.0  # nothing to meet (or to commit)
    if any(i.id not in verdicts for i in items):
        return None
    return round(sum(1 for i in items if verdicts[i.id].met) / len(items), 6)


def _weighted(
    key: CaseKey, components: Mapping[str, float | None], critical: bool | None, overflow: float
) -> float | None:
    if critical:
        return 0.0  # a critical safety error fails the case (docs/scoring.md)
    if any(components[c] is None for c, w in key.weights.items() if w > 0):
        return None
    total = sum(w * (components[c] or 0.0) for c, w in key.weights.items())
    total -= key.weights.get("diagnostics", 0.0) * overflow
    return round(max(0.0, total), 6)


def score_v1(
    key: CaseKey,
    submission: Submission,
    verdicts: Mapping[str, Judgement],
    catalog: Catalog,
    abbreviations: Mapping[str, str],
) -> CaseScore:
    """``casebank-score/1``, exactly as it was published."""
    answer = normalise(submission.diagnosis, abbreviations)
    resolved: list[CatalogTest] = []
    unknown: list[str] = []
    for name in (*submission.ordered, *submission.tests):
        test = _resolve(name, catalog)
        if test is None:
            unknown.append(name)
        elif test not in resolved:
            resolved.append(test)
    hit = [w.name for w in key.must if any(_covers(o, w, catalog) for o in resolved)]
    missed = [w.name for w in key.must if w.name not in hit] + key.must_unknown
    wrong = [t.name for t in key.should_not if t in resolved]
    total_must = len(key.must) + len(key.must_unknown)
    recall = len(hit) / total_must if total_must else 1.0
    diagnostics = max(0.0, recall - SHOULD_NOT_ORDER_PENALTY * len(wrong))
    items = key.items_of(METHOD_1)
    treatment, safety, critical_met = _judged(items, verdicts)
    critical = _critical(items, verdicts)
    components: dict[str, float | None] = {
        "diagnosis": key.answers.get(answer, 0.0),
        "diagnostics": round(diagnostics, 6),
        "treatment": treatment,
        "safety": safety,
    }
    details = {
        "diagnosis_matched": answer in key.answers,
        "must_order_hit": hit,
        "must_order_missed": missed,
        "should_not_order_ordered": wrong,
        "tests_not_in_catalog": unknown,
        "items_pending": [i.id for i in items if i.id not in verdicts],
        "critical_safety_errors_met": critical_met,
    }
    score = _weighted(key, components, critical, 0.0)
    return CaseScore(key, components, score, critical, details, submission.run, method=METHOD_1)


def _critical(items: Sequence[Item], verdicts: Mapping[str, Judgement]) -> bool | None:
    criticals = [i for i in items if i.kind == "critical"]
    if any(i.id in verdicts and verdicts[i.id].met for i in criticals):
        return True
    return False if all(i.id in verdicts for i in criticals) else None


def _diagnosis(
    key: CaseKey, answer: str, verdicts: Mapping[str, Judgement]
) -> tuple[float | None, Match]:
    match = key.diagnosis.match(answer)
    if not match.pending:
        return match.credit, match
    verdict = verdicts.get(DIAGNOSIS_ITEM)
    if verdict is None:
        return None, match
    return (1.0 if verdict.met else match.floor), match


def score_v2(
    key: CaseKey,
    submission: Submission,
    verdicts: Mapping[str, Judgement],
    catalog: Catalog,
) -> CaseScore:
    """``casebank-score/2`` (docs/scoring.md)."""
    diagnosis, match = _diagnosis(key, submission.diagnosis, verdicts)
    workup = read_workup(
        key.expected, (*submission.ordered, *submission.tests), submission.examined
    )
    items = key.items_of(METHOD_2)
    judged = [i for i in items if i.kind != "process"]
    treatment, safety, critical_met = _judged(judged, verdicts)
    critical = _critical(judged, verdicts)
    process_items = [i for i in items if i.kind == "process"]
    process = _share(process_items, verdicts) if process_items else None
    components: dict[str, float | None] = {
        "diagnosis": diagnosis,
        "diagnostics": workup.diagnostics,
        "treatment": treatment,
        "safety": safety,
    }
    pending = [i.id for i in items if i.id not in verdicts]
    if match.pending and diagnosis is None:
        pending.insert(0, DIAGNOSIS_ITEM)
    details = _details_v2(match, workup, pending, critical_met)
    score = _weighted(key, components, critical, workup.overflow)
    return CaseScore(
        key,
        components,
        score,
        critical,
        details,
        submission.run,
        process,
        cost_and_burden(workup.tests),
        METHOD_2,
    )


def _details_v2(
    match: Match, workup: Workup, pending: list[str], critical_met: list[str]
) -> dict[str, Any]:
    return {
        "diagnosis_matched": match.credit is not None and match.credit > 0,
        "diagnosis_match": {
            "relation": match.relation,
            "matched": match.matched,
            "pending": match.pending,
            "floor": match.floor if match.pending else None,
        },
        "must_order_hit": workup.hit,
        "must_order_missed": workup.missed,
        "must_order_credited_by": workup.credited_by,
        "should_not_order_ordered": workup.should_not,
        "optional_ordered": workup.optional,
        "unneeded_orders": workup.unneeded,
        "recall": workup.recall,
        "over_investigation": workup.penalty,
        "over_investigation_from_score": workup.overflow,
        "tests_not_in_catalog": workup.not_in_catalog,
        "items_pending": pending,
        "critical_safety_errors_met": critical_met,
    }


def check_against(
    submissions: Sequence[Submission],
    judgements: Sequence[Judgement],
    keys: Mapping[tuple[str, int], CaseKey],
    versions: Mapping[str, list[int]],
    withdrawn: Mapping[tuple[str, int], str],
    release: str,
    files: tuple[str, str],
) -> list[InputProblem]:
    """A problem for each submission and verdict the release cannot score, naming its line."""
    problems: list[InputProblem] = []
    for s in submissions:
        where = (files[0], s.line)
        if (s.case_id, s.version) in withdrawn:
            problems.append(
                InputProblem(
                    *where,
                    f"{s.case_id}@{s.version} is {withdrawn[(s.case_id, s.version)]}; "
                    "it is not scored",
                )
            )
        elif (s.case_id, s.version) not in keys:
            held = versions.get(s.case_id)
            problems.append(
                InputProblem(
                    *where,
                    f"release {release} has no {s.case_id}@{s.version}"
                    + (
                        f" (it holds version {', '.join(map(str, held))})"
                        if held
                        else f" (no such case{_close(s.case_id, versions)})"
                    ),
                )
            )
    submitted = {(s.run, s.case_id, s.version) for s in submissions}
    for j in judgements:
        where = (files[1], j.line)
        key = keys.get((j.case_id, j.version))
        if key is None:
            problems.append(
                InputProblem(*where, f"release {release} has no {j.case_id}@{j.version}")
            )
        elif j.item not in key.item_ids:
            known = ", ".join(i.id for i in key.items)
            problems.append(
                InputProblem(
                    *where,
                    f"{j.case_id}@{j.version} has no item `{j.item}` (items: {known}, "
                    f"and {DIAGNOSIS_ITEM} where the diagnosis is pending)",
                )
            )
        elif (j.run, j.case_id, j.version) not in submitted:
            run = f" in run `{j.run}`" if j.run else ""
            problems.append(
                InputProblem(
                    *where, f"a verdict on {j.case_id}@{j.version}{run}, which has no submission"
                )
            )
    return problems


def _close(case_id: str, known: Iterable[str]) -> str:
    """``; did you mean `x`?`` for a mistyped case id, or nothing."""
    close = did_you_mean(case_id, known, CASE_ID_CUTOFF).strip()
    return f"; {close[1:-1]}" if close else ""


def score_all(
    submissions: Sequence[Submission],
    judgements: Sequence[Judgement],
    keys: Mapping[tuple[str, int], CaseKey],
    catalog: Catalog,
    method: str = METHOD,
    *,
    encode: bool = False,
) -> list[CaseScore]:
    """Each submission scored, by run and case. ``encode``: each case's record of the JSON
    report is written too, where the case is scored (``CaseScore.json_text``, for
    ``report_json``), so that a large run writes its report in the workers."""
    if method not in METHODS:
        raise ValueError(f"unknown scoring method {method!r} (known: {', '.join(METHODS)})")
    from casebank.parallel import fork_pays, map_chunks

    verdicts: dict[tuple[str, str, int], dict[str, Judgement]] = defaultdict(dict)
    for j in judgements:
        verdicts[(j.run, j.case_id, j.version)][j.item] = j
    # From parallel.POOL_FROM submissions on, forked workers score them (each submission
    # depends only on its case, its verdicts and the catalog, so the scores are the same
    # either way). Sorted by case, a case's submissions go to one worker (but where a chunk
    # of 50 ends), so that its key is read once, not once per worker.
    order = sorted(
        range(len(submissions)), key=lambda i: (submissions[i].case_id, submissions[i].version)
    )
    _SHARED[:] = [(submissions, keys, verdicts, catalog, method, os.getpid(), encode)]
    scored: list[tuple[int, CaseScore]] = []
    try:
        done = map_chunks(
            _score_chunk, order, size=50, start="fork", parallel=fork_pays(len(submissions))
        )
        for index, computed in zip(order, done, strict=True):
            s = submissions[index]
            key = keys[(s.case_id, s.version)]
            fields_of = dict(zip(_COMPUTED, computed, strict=True))
            scored.append((index, CaseScore(key=key, **fields_of)))
    finally:
        _SHARED.clear()
    # By run and case; submissions that tie keep the order they were given in.
    scored.sort(key=lambda p: (p[1].run, p[1].key.case_id, p[1].key.version, p[0]))
    return [c for _, c in scored]


# What forked scoring workers read: the submissions, keys, verdicts, catalog and method, the
# process that forked them, and whether to write each case's record of the JSON report.
_SHARED: list[tuple[Any, ...]] = []


_COMPUTED = tuple(f.name for f in fields(CaseScore) if f.name != "key")  # a worker's part


def _score_chunk(indices: list[int]) -> list[tuple[Any, ...]]:
    """The scores of some submissions, as ``CaseScore`` fields with the key left out (the
    caller has it: a forked worker sends back only what it computed)."""
    from casebank.parallel import lasting

    submissions, keys, verdicts, catalog, method, parent, encode = _SHARED[0]
    abbreviations = _abbreviations(catalog) if method == METHOD_1 else {}
    out = []
    # In a forked worker, what a case's first score builds (its data, parsed here; its
    # diagnosis key, oracle and expected work-up) lasts as long as the worker: built with the
    # cyclic collector paused, which would otherwise walk every case parsed so far again and
    # again. In-process (a small run, or one sample of an evaluation) the collector is left
    # alone: nothing there is frozen for the rest of a long-lived process.
    with lasting() if os.getpid() != parent else contextlib.nullcontext():
        for index in indices:
            s = submissions[index]
            key = keys[(s.case_id, s.version)]
            given = verdicts[(s.run, s.case_id, s.version)]
            if method == METHOD_1:
                c = score_v1(key, s, given, catalog, abbreviations)
            else:
                c = score_v2(key, s, given, catalog)
            if encode:
                c.json_text = _record(c)
            out.append(tuple(getattr(c, name) for name in _COMPUTED))
    return out


def _record(scored: CaseScore) -> str:
    return json.dumps(scored.to_data(), indent=2, ensure_ascii=False)


# Where the cases go: the report's first text that JSON writes so (``release`` and ``scorer``
# come before it; a run's name may come after, in ``summary``, never before).
_CASES_HERE = "\x00cases\x00"
_CASES_WRITTEN = json.dumps(_CASES_HERE)  # as the report's JSON holds it


def report_json(report: Mapping[str, Any]) -> str:
    """``report`` (its ``cases`` a list of ``CaseScore``) as ``json.dumps(..., indent=2,
    ensure_ascii=False)`` writes it with each case's ``to_data``: byte for byte, with each
    case's record taken from ``json_text`` where ``score_all`` wrote it (the pure-Python
    encoder that ``indent`` needs is most of the report's cost, so a large run writes it in
    its workers)."""
    cases: Sequence[CaseScore] = report["cases"]
    head = json.dumps({**report, "cases": _CASES_HERE}, indent=2, ensure_ascii=False)
    texts = [c.json_text if c.json_text is not None else _record(c) for c in cases]
    indented = ",\n    ".join(t.replace("\n", "\n    ") for t in texts)
    return head.replace(_CASES_WRITTEN, f"[\n    {indented}\n  ]" if texts else "[]", 1)


# --- the summary ---------------------------------------------------------------------------


def bootstrap_interval(values: Sequence[float]) -> list[float] | None:
    """A percentile bootstrap 95% interval of the mean, with a fixed seed (docs/scoring.md)."""
    return bootstrap.interval(values)


def _group(scored: Sequence[CaseScore]) -> dict[str, Any]:
    done = [c.score for c in scored if c.score is not None]
    return {
        "n": len(scored),
        "scored": len(done),
        "pending": len(scored) - len(done),
        "mean": round(statistics.fmean(done), 6) if done else None,
    }


def _mean(values: Iterable[float | None]) -> float | None:
    """The mean of the known values (a component's mean over the cases where it is known)."""
    known = [v for v in values if v is not None]
    return round(statistics.fmean(known), 6) if known else None


def _one_summary(scored: Sequence[CaseScore], cases_in_release: int) -> dict[str, Any]:
    done = [c.score for c in scored if c.score is not None]
    result = _group(scored)
    result["complete"] = result["pending"] == 0
    result["ci95"] = bootstrap_interval(done)
    submitted = {(c.key.case_id, c.key.version) for c in scored}
    result["not_submitted"] = cases_in_release - len(submitted)
    result["critical_safety_errors"] = sum(1 for c in scored if c.critical_safety_error)
    result["components"] = {c: _mean([s.components[c] for s in scored]) for c in COMPONENTS}
    if any(c.method != METHOD_1 for c in scored):
        result["process"] = _mean([c.process for c in scored])
        result["diagnosis_pending"] = sum(1 for c in scored if c.components["diagnosis"] is None)
        result["workup"] = workup_means(scored)
    for name, attribute in (("by_specialty", "specialty"), ("by_difficulty", "difficulty")):
        groups: dict[str, list[CaseScore]] = defaultdict(list)
        for c in scored:
            groups[getattr(c.key, attribute)].append(c)
        result[name] = {g: _group(members) for g, members in sorted(groups.items())}
    return result


def workup_means(scored: Sequence[CaseScore]) -> dict[str, Any]:
    """The mean work-up per submission: cost per currency, dose, tests, invasive procedures,
    contrast studies."""
    workups = [c.workup for c in scored if c.workup is not None]
    if not workups:
        return {}
    n = len(workups)
    currencies = sorted({k for w in workups for k in w["cost"]})
    return {
        "cost": {k: round(sum(w["cost"].get(k, 0.0) for w in workups) / n, 2) for k in currencies},
        **{
            name: round(sum(w[name] for w in workups) / n, 3)
            for name in ("radiation_msv", "tests", "invasive", "contrast", "sedation")
        },
    }


def runs_of(scored: Sequence[CaseScore]) -> list[str]:
    return sorted({c.run for c in scored})


def summary(scored: Sequence[CaseScore], cases_in_release: int) -> dict[str, Any]:
    """The summary over every submission; with runs, also one per run and a table of each
    run's accuracy beside its cost (method 2)."""
    result = _one_summary(scored, cases_in_release)
    runs = runs_of(scored)
    if runs != [""] and runs:
        by_run = {r: [c for c in scored if c.run == r] for r in runs}
        result["runs"] = {
            r: _one_summary(members, cases_in_release) for r, members in by_run.items()
        }
        if any(c.method != METHOD_1 for c in scored):
            result["cost_table"] = [
                {
                    "run": r,
                    "n": s["n"],
                    "mean": s["mean"],
                    "diagnosis": s["components"]["diagnosis"],
                    **s["workup"],
                }
                for r, s in result["runs"].items()
            ]
    return result


def _differences(pairs: Iterable[tuple[float | None, float | None]]) -> list[float]:
    return [round(y - x, 6) for x, y in pairs if x is not None and y is not None]


def compare(scored: Sequence[CaseScore], run_a: str, run_b: str) -> dict[str, Any]:
    """Run B against run A over the case versions both scored: the mean paired difference
    (B - A) of the score and of each component, with its percentile bootstrap interval."""
    a = {(c.key.case_id, c.key.version): c for c in scored if c.run == run_a}
    b = {(c.key.case_id, c.key.version): c for c in scored if c.run == run_b}
    both = sorted(k for k in a.keys() & b.keys())
    metrics: dict[str, list[float]] = {}
    metrics["score"] = _differences([(a[k].score, b[k].score) for k in both])
    for name in COMPONENTS:
        metrics[name] = _differences([(a[k].components[name], b[k].components[name]) for k in both])
    by_length: dict[int, list[str]] = defaultdict(list)
    for name, values in metrics.items():
        by_length[len(values)].append(name)
    found: dict[str, list[float] | None] = {}
    for names in by_length.values():  # one pass of draws for every metric of one length
        for name, ci in zip(names, bootstrap.intervals([metrics[n] for n in names]), strict=True):
            found[name] = ci
    return {
        "a": run_a,
        "b": run_b,
        "paired": len(metrics["score"]),
        "answered_by_both": len(both),
        "only_a": len(a.keys() - b.keys()),
        "only_b": len(b.keys() - a.keys()),
        "difference": {
            name: {
                "n": len(values),
                "mean": round(statistics.fmean(values), 6) if values else None,
                "ci95": found[name],
            }
            for name, values in metrics.items()
        },
    }
