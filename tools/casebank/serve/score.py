"""The reference scorer: submissions against a release, every number traceable to a case version.

Deterministic where the case decides (diagnosis, diagnostics); a judge outside casebank
decides the rest (treatment, safety), and until it has, those components are pending (None),
never guessed. The method is documented in docs/scoring.md; its name and version are in every
report, so a score can be reproduced with the same method a year later.
"""

from __future__ import annotations

import random
import re
import statistics
import unicodedata
from collections import defaultdict
from collections.abc import Iterable, Mapping, Sequence
from dataclasses import dataclass, field
from typing import Any

from casebank.format import strictjson
from casebank.format.catalog import CASE_ID_CUTOFF, Catalog, CatalogTest, did_you_mean
from casebank.format.orders import orders

METHOD = "casebank-score/1"
SHOULD_NOT_ORDER_PENALTY = 0.25
BOOTSTRAP_SAMPLES = 2000
BOOTSTRAP_SEED = 20260101
COMPONENTS = ("diagnosis", "diagnostics", "treatment", "safety")
MAX_LINE = 1 << 20  # a submission or judgement line longer than 1 MiB is refused


# --- rubric items --------------------------------------------------------------------------


@dataclass(frozen=True)
class Item:
    """One rubric item a judge decides: ``met`` means the answer does what the text says."""

    id: str  # stable within a case version: treatment.1, contraindication.2, critical.1
    kind: str  # treatment | contraindication | critical
    text: str

    @property
    def question(self) -> str:
        if self.kind == "treatment":
            return f"Does the answer's plan include this? {self.text}"
        if self.kind == "contraindication":
            return f"Does the answer do this, which is contraindicated? {self.text}"
        return f"Does the answer commit this critical safety error? {self.text}"


def _texts(value: Any) -> list[str]:
    return [v for v in value if isinstance(v, str)] if isinstance(value, list) else []


def rubric(data: Mapping[str, Any]) -> list[Item]:
    """The items a judge decides for one case, in a fixed order."""
    gold = data.get("management_gold")
    gold = gold if isinstance(gold, dict) else {}
    scoring = data.get("scoring")
    scoring = scoring if isinstance(scoring, dict) else {}
    items = [
        Item(f"treatment.{i}", "treatment", t)
        for i, t in enumerate(_texts(gold.get("treatment_plan")), 1)
    ]
    items += [
        Item(f"contraindication.{i}", "contraindication", t)
        for i, t in enumerate(_texts(gold.get("contraindications")), 1)
    ]
    items += [
        Item(f"critical.{i}", "critical", t)
        for i, t in enumerate(_texts(scoring.get("critical_safety_errors")), 1)
    ]
    return items


# --- answers -------------------------------------------------------------------------------

_NOT_WORD = re.compile(r"[^\w]+")


def normalise(text: str, abbreviations: Mapping[str, str] = {}) -> str:
    """How diagnoses are compared (docs/scoring.md): Unicode NFKC, case folded, every run of
    characters that are not letters or digits one space, and each word that is a catalog
    abbreviation replaced by what it stands for (itself normalised)."""
    words = _NOT_WORD.sub(" ", unicodedata.normalize("NFKC", text).casefold()).replace("_", " ")
    out = []
    for word in words.split():
        expansion = abbreviations.get(word)
        out.append(expansion if expansion is not None else word)
    return " ".join(out)


def _abbreviations(catalog: Catalog) -> dict[str, str]:
    return {normalise(short): normalise(long) for short, long in catalog.abbreviations.items()}


@dataclass
class CaseKey:
    """What scoring needs of one released case version, prepared once."""

    case_id: str
    version: int
    content_hash: str
    specialty: str
    difficulty: str
    weights: dict[str, float]
    answers: dict[str, float]  # normalised answer -> credit (1 for the diagnosis and variants)
    must: list[CatalogTest]
    must_unknown: list[str]  # must_order names the catalog does not know (counted as missed)
    should_not: list[CatalogTest]
    items: list[Item]


def prepare(
    case_id: str, version: int, content_hash: str, data: Mapping[str, Any], catalog: Catalog
) -> CaseKey:
    abbreviations = _abbreviations(catalog)
    truth = data.get("ground_truth")
    truth = truth if isinstance(truth, dict) else {}
    scoring = data.get("scoring")
    scoring = scoring if isinstance(scoring, dict) else {}
    accepted = scoring.get("acceptable_answers")
    accepted = accepted if isinstance(accepted, dict) else {}
    answers: dict[str, float] = {}
    partial = accepted.get("partial_credit")
    for text, share in partial.items() if isinstance(partial, dict) else ():
        if isinstance(share, (int, float)) and not isinstance(share, bool):
            answers[normalise(text, abbreviations)] = float(share)
    final = truth.get("final_diagnosis")
    for text in [final] if isinstance(final, str) else []:
        answers[normalise(text, abbreviations)] = 1.0
    for text in _texts(accepted.get("final_diagnosis")):
        answers[normalise(text, abbreviations)] = 1.0
    must, unknown = [], []
    for named in orders(data, "investigations", "expected", "must_order"):
        test = catalog.resolve(named.name)
        if test is None:
            unknown.append(named.name)
        elif test not in must:
            must.append(test)
    should_not = [
        t
        for named in orders(data, "investigations", "expected", "should_not_order")
        if (t := catalog.resolve(named.name)) is not None
    ]
    weights_data = scoring.get("weights")
    weights = {
        c: float(weights_data[c])
        for c in COMPONENTS
        if isinstance(weights_data, dict)
        and isinstance(weights_data.get(c), (int, float))
        and not isinstance(weights_data.get(c), bool)
    }
    metadata = data.get("metadata")
    metadata = metadata if isinstance(metadata, dict) else {}
    return CaseKey(
        case_id,
        version,
        content_hash,
        str(metadata.get("specialty", "")),
        str(metadata.get("difficulty", "")),
        weights,
        answers,
        must,
        unknown,
        should_not,
        rubric(data),
    )


# --- input ---------------------------------------------------------------------------------


@dataclass(frozen=True)
class Submission:
    line: int
    case_id: str
    version: int
    diagnosis: str
    tests: tuple[str, ...]
    plan: tuple[str, ...]
    extra: Mapping[str, Any] = field(default_factory=dict)


@dataclass(frozen=True)
class Judgement:
    line: int
    case_id: str
    version: int
    item: str
    met: bool
    judge: str


def _lines(raw: bytes, file: str, problems: list[str]) -> Iterable[tuple[int, dict[str, Any]]]:
    # The strict reader: lines end at line feeds only; duplicate keys, huge numbers and deep
    # nesting are problems of their line.
    for line in strictjson.lines(raw, max_length=MAX_LINE):
        problem = line.problem
        if problem is not None and problem.kind == "encoding":
            problems.append(f"{file}:{line.number}: not UTF-8 text")
        elif problem is not None:
            problems.append(f"{file}:{line.number}: not a JSON object ({problem.message})")
        elif not isinstance(line.value, dict):
            problems.append(f"{file}:{line.number}: not a JSON object")
        else:
            yield line.number, line.value


_SHOWN = {str: "text", int: "a whole number", bool: "true or false", list: "a list of texts"}
_SUBMISSION = {"case_id": str, "version": int, "diagnosis": str, "tests": list, "plan": list}
_JUDGEMENT = {"case_id": str, "version": int, "item": str, "met": bool, "judge": str}


def _records(
    raw: bytes, file: str, fields: Mapping[str, type], problems: list[str]
) -> Iterable[tuple[int, dict[str, Any]]]:
    """Each line's object whose ``fields`` all have their type (a list: of texts); every
    missing or mistyped field is a problem naming the line."""
    for number, value in _lines(raw, file, problems):
        wrong = False
        for key, kind in fields.items():
            item = value.get(key)
            ok = isinstance(item, kind) and not (kind is int and isinstance(item, bool))
            if kind is list and isinstance(item, list):
                ok = all(isinstance(x, str) for x in item)
            if not ok:
                what = "missing" if key not in value else f"not {_SHOWN[kind]}"
                problems.append(f"{file}:{number}: `{key}` is {what}")
                wrong = True
        if not wrong:
            yield number, value


def read_submissions(raw: bytes, file: str) -> tuple[list[Submission], list[str]]:
    """The well-formed submission lines, and a problem for each other line."""
    problems: list[str] = []
    found: list[Submission] = []
    seen: dict[tuple[str, int], int] = {}
    for number, value in _records(raw, file, _SUBMISSION, problems):
        key = (value["case_id"], value["version"])
        if key in seen:
            problems.append(
                f"{file}:{number}: a second submission for {key[0]}@{key[1]} "
                f"(the first is on line {seen[key]})"
            )
            continue
        seen[key] = number
        extra = {k: v for k, v in value.items() if k not in _SUBMISSION}
        found.append(
            Submission(
                number, *key, value["diagnosis"], tuple(value["tests"]), tuple(value["plan"]), extra
            )
        )
    return found, problems


def read_judgements(raw: bytes, file: str) -> tuple[list[Judgement], list[str]]:
    """The well-formed verdict lines, and a problem for each other line."""
    problems: list[str] = []
    found: list[Judgement] = []
    seen: dict[tuple[str, int, str], Judgement] = {}
    for number, value in _records(raw, file, _JUDGEMENT, problems):
        judgement = Judgement(number, *(value[k] for k in _JUDGEMENT))
        key = (judgement.case_id, judgement.version, judgement.item)
        first = seen.get(key)
        if first is not None:
            verdict = "the same" if first.met == judgement.met else "a different"
            problems.append(
                f"{file}:{number}: {verdict} verdict on {key[0]}@{key[1]} {key[2]} again "
                f"(first on line {first.line}); give each item one verdict"
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

    def to_data(self) -> dict[str, Any]:
        return {
            "case_id": self.key.case_id,
            "version": self.key.version,
            "content_hash": self.key.content_hash,
            "specialty": self.key.specialty,
            "difficulty": self.key.difficulty,
            "components": self.components,
            "score": self.score,
            "critical_safety_error": self.critical_safety_error,
            "details": self.details,
        }


def _resolve(name: str, catalog: Catalog) -> CatalogTest | None:
    test = catalog.resolve(name)
    if test is None:
        from casebank.format.names import resolve_loosely

        spelling = resolve_loosely(name, catalog)
        test = catalog.resolve(spelling) if spelling else None
    return test


def _covers(ordered: CatalogTest, wanted: CatalogTest, catalog: Catalog) -> bool:
    """An order covers a must-order test when it is that test, a panel holding it, or a test
    whose result the catalog says answers it."""
    if ordered is wanted:
        return True
    if wanted in catalog.components_of(ordered):
        return True
    return ordered in catalog.answered_by(wanted)


def score_case(
    key: CaseKey,
    submission: Submission,
    verdicts: Mapping[str, Judgement],
    catalog: Catalog,
    abbreviations: Mapping[str, str],
) -> CaseScore:
    answer = normalise(submission.diagnosis, abbreviations)
    diagnosis = key.answers.get(answer, 0.0)
    resolved: list[CatalogTest] = []
    unknown: list[str] = []
    for name in submission.tests:
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

    pending = [i.id for i in key.items if i.id not in verdicts]
    treatment_items = [i for i in key.items if i.kind == "treatment"]
    safety_items = [i for i in key.items if i.kind != "treatment"]
    treatment = _share(treatment_items, verdicts)
    committed = _share(safety_items, verdicts)
    safety = None if committed is None else 1.0 - committed
    criticals = [i for i in key.items if i.kind == "critical"]
    critical_met = [i.id for i in criticals if i.id in verdicts and verdicts[i.id].met]
    if critical_met:
        critical: bool | None = True
    elif all(i.id in verdicts for i in criticals):
        critical = False
    else:
        critical = None
    components: dict[str, float | None] = {
        "diagnosis": diagnosis,
        "diagnostics": round(diagnostics, 6),
        "treatment": treatment,
        "safety": safety,
    }
    if critical:
        score: float | None = 0.0  # a critical safety error fails the case (docs/scoring.md)
    elif any(components[c] is None for c, w in key.weights.items() if w > 0):
        score = None
    else:
        score = round(sum(w * (components[c] or 0.0) for c, w in key.weights.items()), 6)
    details = {
        "diagnosis_matched": answer in key.answers,
        "must_order_hit": hit,
        "must_order_missed": missed,
        "should_not_order_ordered": wrong,
        "tests_not_in_catalog": unknown,
        "items_pending": pending,
        "critical_safety_errors_met": critical_met,
    }
    return CaseScore(key, components, score, critical, details)


def _share(items: Sequence[Item], verdicts: Mapping[str, Judgement]) -> float | None:
    if not items:
        return 1.0  # nothing to meet (or to commit)
    if any(i.id not in verdicts for i in items):
        return None
    return round(sum(1 for i in items if verdicts[i.id].met) / len(items), 6)


def check_against(
    submissions: Sequence[Submission],
    judgements: Sequence[Judgement],
    keys: Mapping[tuple[str, int], CaseKey],
    versions: Mapping[str, list[int]],
    withdrawn: Mapping[tuple[str, int], str],
    release: str,
    files: tuple[str, str],
) -> list[str]:
    """A problem for each submission and verdict the release cannot score, naming its line."""
    problems = []
    for s in submissions:
        where = f"{files[0]}:{s.line}"
        if (s.case_id, s.version) in withdrawn:
            problems.append(
                f"{where}: {s.case_id}@{s.version} is {withdrawn[(s.case_id, s.version)]}; "
                "it is not scored"
            )
        elif (s.case_id, s.version) not in keys:
            held = versions.get(s.case_id)
            problems.append(
                f"{where}: release {release} has no {s.case_id}@{s.version}"
                + (
                    f" (it holds version {', '.join(map(str, held))})"
                    if held
                    else f" (no such case{_close(s.case_id, versions)})"
                )
            )
    submitted = {(s.case_id, s.version) for s in submissions}
    for j in judgements:
        where = f"{files[1]}:{j.line}"
        key = keys.get((j.case_id, j.version))
        if key is None:
            problems.append(f"{where}: release {release} has no {j.case_id}@{j.version}")
        elif j.item not in {i.id for i in key.items}:
            known = ", ".join(i.id for i in key.items)
            problems.append(
                f"{where}: {j.case_id}@{j.version} has no item `{j.item}` (items: {known})"
            )
        elif (j.case_id, j.version) not in submitted:
            problems.append(
                f"{where}: a verdict on {j.case_id}@{j.version}, which has no submission"
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
) -> list[CaseScore]:
    abbreviations = _abbreviations(catalog)
    verdicts: dict[tuple[str, int], dict[str, Judgement]] = defaultdict(dict)
    for j in judgements:
        verdicts[(j.case_id, j.version)][j.item] = j
    scored = [
        score_case(
            keys[(s.case_id, s.version)],
            s,
            verdicts[(s.case_id, s.version)],
            catalog,
            abbreviations,
        )
        for s in submissions
    ]
    return sorted(scored, key=lambda c: (c.key.case_id, c.key.version))


# --- the summary ---------------------------------------------------------------------------


def bootstrap_interval(values: Sequence[float]) -> list[float] | None:
    """A percentile bootstrap 95% interval of the mean, with a fixed seed (docs/scoring.md)."""
    if len(values) < 2:
        return None
    rng = random.Random(BOOTSTRAP_SEED)
    n = len(values)
    means = sorted(sum(rng.choices(values, k=n)) / n for _ in range(BOOTSTRAP_SAMPLES))
    low = means[int(0.025 * BOOTSTRAP_SAMPLES)]
    high = means[int(0.975 * BOOTSTRAP_SAMPLES) - 1]
    return [round(low, 6), round(high, 6)]


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


def summary(scored: Sequence[CaseScore], cases_in_release: int) -> dict[str, Any]:
    done = [c.score for c in scored if c.score is not None]
    result = _group(scored)
    result["complete"] = result["pending"] == 0
    result["ci95"] = bootstrap_interval(done)
    result["not_submitted"] = cases_in_release - len(scored)
    result["critical_safety_errors"] = sum(1 for c in scored if c.critical_safety_error)
    result["components"] = {c: _mean([s.components[c] for s in scored]) for c in COMPONENTS}
    for name, attribute in (("by_specialty", "specialty"), ("by_difficulty", "difficulty")):
        groups: dict[str, list[CaseScore]] = defaultdict(list)
        for c in scored:
            groups[getattr(c.key, attribute)].append(c)
        result[name] = {g: _group(members) for g, members in sorted(groups.items())}
    return result
