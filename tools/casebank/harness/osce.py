"""``casebank/osce``: the grounded OSCE as an inspect_ai task (docs/harness.md).

One sample per case version of a pinned release, read from git (``-T release=X.Y.Z``) or from
its export bundle (``-T bundle=DIR``, no repository needed), and verified before the run; both
give the release's canonical content, so the two runs are the same. The model under evaluation
plays the doctor and has four tools:
``ask_patient`` (a second model plays the patient from the patient view alone),
``examine`` and ``order_test`` (answered only by the results oracle, as ``casebank results``
answers) and ``final_answer``. The casebank scorer scores the submission (orders made during
the consultation, the final answer's tests, the examinations); rubric items go to a judge
model, shown the judge view with the transcript, when one is given and stay pending
otherwise. Each sample reports its work-up's cost, dose, tests and questions; with a budget,
orders past it are refused.
"""

from __future__ import annotations

import json
import math
import statistics
from collections.abc import Iterator, Mapping
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

from inspect_ai import Task, task
from inspect_ai.dataset import MemoryDataset, Sample
from inspect_ai.model import (
    ChatMessage,
    ChatMessageSystem,
    ChatMessageUser,
    Model,
    execute_tools,
    get_model,
    model_roles,
)
from inspect_ai.scorer import Metric, SampleScore, Score, Scorer, Target, metric, scorer
from inspect_ai.solver import Generate, Solver, TaskState, solver
from inspect_ai.tool import Tool, tool
from inspect_ai.util import LimitExceededError

from casebank import __version__
from casebank.errors import CasebankError, SetupError, UsageError
from casebank.format.catalog import Catalog, build_catalog
from casebank.harness.grounding import (
    Fidelity,
    FinalAnswer,
    doctor_brief,
    doctor_rules,
    judge_prompt,
    parse_final_message,
    parse_verdict,
    patient_prompt,
    submitted_tests,
)
from casebank.release.released import LoadedRelease, ReleasedCase, load_release
from casebank.serve import score as scoring
from casebank.serve.bundle import load_bundle
from casebank.serve.judging import judge_view
from casebank.serve.oracle import Oracle
from casebank.serve.workup import least_cost

EPISODE = "casebank:episode"  # the store key holding what happened in a sample


@dataclass(frozen=True)
class Station:
    """One case version, prepared once for the whole run."""

    release: str
    case: ReleasedCase
    catalog: Catalog
    key: scoring.CaseKey
    oracle: Oracle
    fidelity: Fidelity

    @property
    def sample_id(self) -> str:
        return f"{self.case.entry.case_id}@{self.case.entry.version}"

    def metadata(self) -> dict[str, Any]:
        entry = self.case.entry
        return {
            "release": self.release,
            "case_id": entry.case_id,
            "version": entry.version,
            "content_hash": entry.sha256,
            "specialty": self.key.specialty,
            "difficulty": self.key.difficulty,
        }


class Stations:
    """The stations of one run by sample id. Not a mapping on purpose: inspect logs the
    parameters of a solver or scorer, and an object that is not a collection is logged by
    its ``name`` alone, not with every case in it."""

    def __init__(self, release: str, stations: Mapping[str, Station]) -> None:
        self.release = release
        self.by_id = dict(stations)
        self.name = f"casebank release {release}: {len(self.by_id)} case version(s)"

    def __getitem__(self, sample_id: object) -> Station:
        return self.by_id[str(sample_id)]

    def __iter__(self) -> Iterator[Station]:
        return iter(self.by_id.values())


@task
def osce(
    release: str | None = None,
    root: str = ".",
    bundle: str | None = None,
    patient_model: str | None = None,
    judge_model: str | None = None,
    max_turns: int = 30,
    max_tests: int = 20,
    cases: str | None = None,
    budget: float | None = None,
) -> Task:
    """The grounded OSCE over release ``release`` of the casebank repository at ``root``, or
    over the release in export bundle ``bundle``.

    Args:
        release: The dataset release (X.Y.Z), read from git and verified.
        root: The repository (default: the current directory).
        bundle: An export bundle (`casebank export`) to read the release from instead, with
            no repository: its SHA256SUMS and every case are checked first.
        patient_model: The model that plays the patient (default: the ``patient`` model role,
            else the model under evaluation).
        judge_model: The model that decides rubric items (default: the ``judge`` model role;
            without either, those items are pending).
        max_turns: Most doctor turns (model generations) per case.
        max_tests: Most test orders answered per case.
        cases: Only these cases: case ids, comma-separated.
        budget: Most USD of test orders answered per case (a test priced only by its tier
            counts at the bottom of its band); orders past it are refused and recorded.
    """
    if max_turns < 1 or max_tests < 0:
        raise _refusal("max_turns must be at least 1 and max_tests at least 0")
    if budget is not None and (isinstance(budget, bool) or float(budget) < 0):
        raise _refusal(f"budget must be a number of USD, 0 or more (not {budget!r})")
    budget = None if budget is None else float(budget)
    if (release is None) == (bundle is None):
        raise _refusal(
            "give the release to run: -T release=X.Y.Z (from git) or -T bundle=DIR "
            "(an export bundle), one of them"
        )
    stations = _stations(_loaded(Path(root), release, bundle), cases)
    release = stations.release
    samples = [
        Sample(
            id=s.sample_id,
            input=[
                ChatMessageSystem(content=doctor_rules(max_tests, max_turns, budget)),
                ChatMessageUser(content=doctor_brief(s.case.data)),
            ],
            metadata=s.metadata(),
        )
        for s in stations
    ]
    return Task(
        dataset=MemoryDataset(samples, name=f"casebank-{release}"),
        solver=consultation(stations, patient_model, max_turns, max_tests, budget),
        scorer=casebank_scorer(stations, judge_model),
        metadata={
            "release": str(release),
            "casebank": __version__,
            "scoring_method": scoring.METHOD,
            "max_turns": max_turns,
            "max_tests": max_tests,
            "budget": budget,
        },
    )


def _loaded(root: Path, release: str | None, bundle: str | None) -> LoadedRelease:
    try:
        if bundle is not None:
            return load_bundle(Path(bundle))
        return load_release(root.resolve(), str(release), canonical=True)
    except (CasebankError, UsageError, SetupError) as exc:
        raise _refusal(str(exc), getattr(exc, "hint", "")) from None


def _stations(loaded: LoadedRelease, cases: str | None) -> Stations:
    release = loaded.manifest.version
    catalog = build_catalog(loaded.catalog_data)
    chosen = list(loaded.current)
    if cases:
        wanted = [c.strip() for c in cases.split(",") if c.strip()]
        held = {c.entry.case_id for c in chosen}
        unknown = [c for c in wanted if c not in held]
        if unknown:
            raise _refusal(
                f"release {release} has no case {', '.join(unknown)} (or it is withdrawn)",
                "`casebank show CASE_ID` tells which releases hold a case",
            )
        chosen = [c for c in chosen if c.entry.case_id in wanted]
    stations = {}
    for case in chosen:
        entry = case.entry
        key = scoring.prepare(entry.case_id, entry.version, entry.sha256, case.data, catalog)
        station = Station(
            release, case, catalog, key, Oracle(case.data, catalog), Fidelity(case.data)
        )
        stations[station.sample_id] = station
    return Stations(release, stations)


def _refusal(message: str, hint: str = "") -> Exception:
    """A casebank refusal as inspect prints a prerequisite: the message, no traceback."""
    text = f"casebank: {message}" + (f"\n  hint: {hint}" if hint else "")
    try:
        from inspect_ai._util.error import PrerequisiteError
    except ImportError:  # a future inspect_ai without it: a plain error still says it all
        return RuntimeError(text)
    return PrerequisiteError(text)


# --- the consultation ----------------------------------------------------------------------


@dataclass
class Episode:
    """What happens in one station: the patient's side of the talk, orders and findings."""

    station: Station
    patient: Model
    max_tests: int
    budget: float | None = None
    talk: list[ChatMessage] = field(default_factory=list)
    heard: list[str] = field(default_factory=list)
    replies: list[dict[str, Any]] = field(default_factory=list)
    orders: list[dict[str, Any]] = field(default_factory=list)
    refused: list[str] = field(default_factory=list)
    examinations: list[dict[str, Any]] = field(default_factory=list)
    transcript: list[scoring.Turn] = field(default_factory=list)
    spent: float = 0.0
    final: FinalAnswer | None = None

    def __post_init__(self) -> None:
        self.talk = [ChatMessageSystem(content=patient_prompt(self.station.case.data))]

    async def ask(self, question: str) -> str:
        self.heard.append(question)
        self.transcript.append(scoring.Turn("doctor", question))
        self.talk.append(ChatMessageUser(content=question))
        output = await self.patient.generate(self.talk)
        reply = output.completion.strip()
        self.talk.append(output.message)
        flagged = self.station.fidelity.check(reply, "\n".join(self.heard))
        self.replies.append(
            {"question": question, "reply": reply, "unsupported": [f.to_dict() for f in flagged]}
        )
        self.transcript.append(scoring.Turn("patient", reply))
        return reply or "(the patient says nothing)"

    def order(self, name: str) -> str:
        self.transcript.append(scoring.Turn("doctor", f"orders {name}"))
        price = least_cost(self.station.oracle.resolve(name)[0])
        reply = self._refusal(name, price)
        if reply is None:
            answer = self.station.oracle.answer(name).to_dict()
            self.spent += price
            self.orders.append(answer)
            reply = json.dumps(answer, ensure_ascii=False)
        self.transcript.append(scoring.Turn("result", reply))
        return reply

    def _refusal(self, name: str, price: float) -> str | None:
        """Why an order is not answered (the limit of orders, or the budget), or None."""
        if len(self.orders) >= self.max_tests:
            self.refused.append(name)
            return f"Not answered: the limit of {self.max_tests} test orders is reached."
        if self.budget is not None and self.spent + price > self.budget:
            self.refused.append(name)
            return (
                f"Not answered: the budget of ${self.budget:,.2f} would be exceeded "
                f"(${self.spent:,.2f} spent; this test costs at least ${price:,.2f})."
            )
        return None

    def examine(self, part: str) -> str:
        self.transcript.append(scoring.Turn("doctor", f"examines {part}"))
        answer = self.station.oracle.examine(part).to_dict()
        self.examinations.append(answer)
        reply = json.dumps(answer, ensure_ascii=False)
        self.transcript.append(scoring.Turn("result", reply))
        return reply

    def record(self, ended: str, turns: int) -> dict[str, Any]:
        final = self.final or FinalAnswer("", (), (), "empty")
        ordered = [o["request"] for o in self.orders]
        return {
            "ended": ended,
            "turns": turns,
            "submission": final.to_dict(),
            "tests_scored": list(submitted_tests(ordered, final.tests)),
            "orders": self.orders,
            "orders_refused": self.refused,
            "examinations": self.examinations,
            "examined": [e["request"] for e in self.examinations],
            "spent": round(self.spent, 2),
            "patient_replies": self.replies,
            "transcript": [{"role": t.role, "text": t.text} for t in self.transcript],
        }


@tool
def ask_patient(episode: Episode) -> Tool:
    async def execute(question: str) -> str:
        """Ask the patient one question, in the words you would use in the consultation.

        Args:
            question: What you say to the patient.
        """
        return await episode.ask(question)

    return execute


@tool
def examine(episode: Episode) -> Tool:
    async def execute(part: str) -> str:
        """Examine the patient and get the recorded findings for one part of the examination.

        Args:
            part: The part to examine: "vital signs", "general", "cardiovascular",
                "respiratory", "abdomen", "neurological", ..., or "full" for everything.
        """
        return episode.examine(part)

    return execute


@tool
def order_test(episode: Episode) -> Tool:
    async def execute(name: str) -> str:
        """Order one investigation by name and get its result.

        Args:
            name: The test, by its usual name ("Troponin", "Chest X-ray", "ECG").
        """
        return episode.order(name)

    return execute


@tool
def final_answer(episode: Episode) -> Tool:
    async def execute(diagnosis: str, tests: list[str], plan: list[str]) -> str:
        """Give your answer and end the station. Call it once.

        Args:
            diagnosis: Your single most likely diagnosis.
            tests: The investigations you consider necessary (orders you made count anyway).
            plan: Your management plan, one step per item.
        """
        if episode.final is not None:
            return "Your answer is already recorded; the station is over."
        episode.final = FinalAnswer(diagnosis, tuple(tests), tuple(plan), "final_answer")
        return "Answer recorded. The station is over."

    return execute


@solver
def consultation(
    stations: Stations,
    patient_model: str | None,
    max_turns: int,
    max_tests: int,
    budget: float | None = None,
) -> Solver:
    """The doctor's turns: generate, run the tools called, until final_answer, a message
    without a tool call, or ``max_turns``."""

    async def solve(state: TaskState, generate: Generate) -> TaskState:
        station = stations[state.sample_id]
        patient = get_model(patient_model) if patient_model else get_model(role="patient")
        episode = Episode(station, patient, max_tests, budget)
        state.tools = [
            ask_patient(episode),
            examine(episode),
            order_test(episode),
            final_answer(episode),
        ]
        ended, turns = "max_turns", 0
        try:
            while turns < max_turns and not state.completed:
                turns += 1
                state = await generate(state, tool_calls="none")
                if not state.output.message.tool_calls:
                    ended = "message"
                    break
                done = await execute_tools(state.messages, state.tools)
                state.messages.extend(done.messages)
                if episode.final is not None:
                    ended = "final_answer"
                    break
            else:
                ended = "limit" if state.completed else "max_turns"
        except LimitExceededError:
            ended = "limit"  # inspect's message, token or time limit; scored as it stands
            raise
        except BaseException:
            ended = "interrupted"  # an error or a cancellation: what happened is still kept
            raise
        finally:
            if episode.final is None:
                episode.final = parse_final_message(state.output.completion)
            state.store.set(EPISODE, episode.record(ended, turns))
        return state

    return solve


_NO_EPISODE: dict[str, Any] = {
    "ended": "not_started",
    "turns": 0,
    "submission": FinalAnswer("", (), (), "empty").to_dict(),
    "tests_scored": [],
    "orders": [],
    "examined": [],
    "patient_replies": [],
    "transcript": [],
}

# --- scoring -------------------------------------------------------------------------------


@metric
def mean_score() -> Metric:
    """The mean casebank score over the fully scored samples (pending ones left out)."""

    def compute(scores: list[SampleScore]) -> float:
        done = [v for s in scores if (v := _value(s, "score")) is not None]
        return statistics.fmean(done) if done else math.nan

    return compute


@metric
def scored() -> Metric:
    """How many samples have a score (every component their weights need is known)."""

    def compute(scores: list[SampleScore]) -> int:
        return sum(1 for s in scores if _value(s, "score") is not None)

    return compute


@metric
def pending() -> Metric:
    """How many samples await a judge (a weighted component is pending)."""

    def compute(scores: list[SampleScore]) -> int:
        return sum(1 for s in scores if _value(s, "score") is None)

    return compute


@metric
def components() -> Metric:
    """Each component's mean over the samples where it is known, and the process's (reported
    apart, outside the weighted score)."""

    def compute(scores: list[SampleScore]) -> dict[str, float]:
        return {name: _mean_of(scores, name) for name in (*scoring.COMPONENTS, "process")}

    return compute


WORKUP = ("cost", "radiation_msv", "tests", "questions")


@metric
def workup() -> Metric:
    """The mean work-up per sample: cost (USD, at least: a test priced only by its tier
    counts at the bottom of its band), effective dose (mSv), tests ordered, questions asked."""

    def compute(scores: list[SampleScore]) -> dict[str, float]:
        return {name: _mean_of(scores, name) for name in WORKUP}

    return compute


def _mean_of(scores: list[SampleScore], name: str) -> float:
    known = [v for s in scores if (v := _value(s, name)) is not None]
    return statistics.fmean(known) if known else math.nan


@metric
def patient_fidelity() -> Metric:
    """The share of the patient's replies that hold nothing its view does not support."""

    def compute(scores: list[SampleScore]) -> float:
        replies, flagged = _replies(scores)
        return 1 - flagged / replies if replies else math.nan

    return compute


@metric
def unsupported_replies() -> Metric:
    """The share of the patient's replies with a number or a term its view does not hold."""

    def compute(scores: list[SampleScore]) -> float:
        replies, flagged = _replies(scores)
        return flagged / replies if replies else math.nan

    return compute


def _known(values: Mapping[str, float | None]) -> dict[str, float]:
    """A score value: casebank's pending (None) becomes NaN, inspect's "not scored", which
    its reducers and metrics skip (a None would be read as 0, a fail)."""
    return {k: math.nan if v is None else v for k, v in values.items()}


def _value(sample: SampleScore, name: str) -> float | None:
    value = sample.score.value
    found = value.get(name) if isinstance(value, Mapping) else None
    if not isinstance(found, (int, float)) or isinstance(found, bool) or math.isnan(found):
        return None
    return float(found)


def _replies(scores: list[SampleScore]) -> tuple[float, float]:
    return (
        sum(_value(s, "patient_replies") or 0.0 for s in scores),
        sum(_value(s, "unsupported_replies") or 0.0 for s in scores),
    )


@scorer(
    metrics=[
        mean_score(),
        scored(),
        pending(),
        components(),
        workup(),
        patient_fidelity(),
        unsupported_replies(),
    ]
)
def casebank_scorer(stations: Stations, judge_model: str | None) -> Scorer:
    """casebank's reference scorer (docs/scoring.md) on the episode's submission."""

    async def score(state: TaskState, target: Target) -> Score:
        station = stations[state.sample_id]
        record: dict[str, Any] = state.store.get(EPISODE) or _NO_EPISODE
        given = record["submission"]
        final = FinalAnswer(
            given["diagnosis"], tuple(given["tests"]), tuple(given["plan"]), given["source"]
        )
        submission = _submission(station, record, final)
        judge = _judge(judge_model)
        verdicts, judged = await _judge_items(judge, station, submission)
        [result] = scoring.score_all(
            [submission], verdicts, {station.case.key: station.key}, station.catalog
        )
        replies = record["patient_replies"]
        spent = result.workup or {}
        offending = [
            {"question": r["question"], "reply": r["reply"], "unsupported": r["unsupported"]}
            for r in replies
            if r["unsupported"]
        ]
        return Score(
            value={
                **_known({"score": result.score, **result.components, "process": result.process}),
                "patient_replies": len(replies),
                "unsupported_replies": len(offending),
                "cost": spent.get("least_cost", 0.0),
                "radiation_msv": spent.get("radiation_msv", 0.0),
                "tests": spent.get("tests", 0),
                "questions": len(replies),
            },
            answer=final.diagnosis,
            explanation=_explain(result),
            metadata={
                "components": result.components,
                "process": result.process,
                "workup": result.workup,
                "orders_refused": record.get("orders_refused", []),
                "critical_safety_error": result.critical_safety_error,
                "details": result.details,
                "pending": result.details["items_pending"],
                "judge": judged,
                "submission": final.to_dict(),
                "tests_scored": record["tests_scored"],
                "ended": record["ended"],
                "patient_fidelity": {
                    "replies": len(replies),
                    "unsupported": len(offending),
                    "offending": offending,
                },
            },
        )

    return score


def _submission(
    station: Station, record: Mapping[str, Any], final: FinalAnswer
) -> scoring.Submission:
    """What the episode submits: the final answer, every order the oracle answered during the
    consultation, the examinations, and the transcript."""
    entry = station.case.entry
    return scoring.Submission(
        0,
        entry.case_id,
        entry.version,
        final.diagnosis,
        final.tests,
        final.plan,
        ordered=tuple(o["request"] for o in record.get("orders", [])),
        examined=tuple(record.get("examined", [])),
        transcript=tuple(scoring.Turn(t["role"], t["text"]) for t in record.get("transcript", [])),
    )


def _judge(judge_model: str | None) -> Model | None:
    if judge_model:
        return get_model(judge_model)
    if "judge" in model_roles():
        return get_model(role="judge")
    return None


async def _judge_items(
    judge: Model | None, station: Station, submission: scoring.Submission
) -> tuple[list[scoring.Judgement], dict[str, Any]]:
    """One verdict per rubric item (and on the diagnosis where the matcher cannot decide it),
    asked of the judge with the judge view; a reply that is not exactly
    ``{"met": true|false}`` leaves its item pending, with the reply kept for review."""
    items = list(station.key.items)
    if station.key.diagnosis.match(submission.diagnosis).pending:
        items.insert(0, scoring.diagnosis_item(station.case.data))
    if judge is None:
        return [], {"model": None, "verdicts": {}, "malformed": {}}
    entry = station.case.entry
    view = judge_view(submission)
    verdicts: list[scoring.Judgement] = []
    malformed: dict[str, str] = {}
    for item in items:
        prompt = judge_prompt(item.question, view)
        output = await judge.generate([ChatMessageUser(content=prompt)])
        met = parse_verdict(output.completion)
        if met is None:
            malformed[item.id] = output.completion[:2000]
            continue
        verdicts.append(
            scoring.Judgement(0, entry.case_id, entry.version, item.id, met, str(judge))
        )
    shown = {v.item: v.met for v in verdicts}
    return verdicts, {"model": str(judge), "verdicts": shown, "malformed": malformed}


def _explain(result: scoring.CaseScore) -> str:
    def shown(value: float | None) -> str:
        return "pending" if value is None else f"{value:.3f}"

    parts = ", ".join(f"{name} {shown(result.components[name])}" for name in scoring.COMPONENTS)
    if result.score is None:
        waiting = len(result.details["items_pending"])
        return f"{parts}; score pending ({waiting} rubric item(s) await a judge)"
    tail = " (a critical safety error)" if result.critical_safety_error else ""
    return f"{parts}; score {result.score:.3f}{tail}"
