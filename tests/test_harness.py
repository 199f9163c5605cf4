"""The inspect_ai task `casebank/osce`, offline: inspect's mockllm plays doctor, patient and
judge from scripts, over a small release cut in a temporary repository. Logs go to tmp_path;
every scripted output carries its token usage, so mockllm never reaches for a tokenizer
download."""

from __future__ import annotations

import json
import math
import re
from collections.abc import Callable, Sequence
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

import pytest

pytest.importorskip(
    "inspect_ai",
    reason="inspect_ai is not installed: `pip install -e '.[inspect]'` (nox -s tests does)",
)

from inspect_ai import eval as inspect_eval
from inspect_ai.log import EvalLog, EvalSample
from inspect_ai.model import ChatMessage, Model, ModelOutput, ModelUsage, get_model

from casebank.cli import main
from casebank.format.catalog import build_catalog
from casebank.harness import grounding
from casebank.harness.osce import EPISODE, osce
from casebank.release.released import load_release
from casebank.serve.oracle import Oracle
from casebank.serve.views import texts
from gitrepo import GitRepo, case_text, dataset

pytestmark = [
    pytest.mark.usefixtures("isolated_git"),
    # inspect_ai's retry policy uses a tenacity argument that tenacity 9.2 deprecated.
    pytest.mark.filterwarnings("ignore:The 'initial' parameter is deprecated:DeprecationWarning"),
    # inspect_ai leaves anyio memory streams to the garbage collector after a run.
    pytest.mark.filterwarnings("ignore:Unclosed <MemoryObject:ResourceWarning"),
    pytest.mark.filterwarnings("ignore::pytest.PytestUnraisableExceptionWarning"),
]

MUST = ["ECG", "Troponin", "CBC"]
PLAN = ["Aspirin 300 mg chewed", "Primary PCI"]
UNKNOWN = "his cholesterol level"
Step = tuple[str, dict[str, Any]] | str  # a tool call (name, arguments) or a final message


def _out(output: ModelOutput) -> ModelOutput:
    output.usage = ModelUsage(input_tokens=1, output_tokens=1, total_tokens=2)
    return output


@dataclass
class Script:
    """One mockllm for every part: the doctor (called with tools) follows ``doctor`` step by
    step, counted by the tool results it has seen; the patient and the judge are told apart
    by their prompts. Every prompt each part received is kept."""

    doctor: Sequence[Step]
    patient: Callable[[str], str] = lambda question: "It started 45 minutes ago, at rest."
    judge: Callable[[str], str] = lambda prompt: '{"met": true}'
    seen: dict[str, list[list[ChatMessage]]] = field(default_factory=dict)

    def __call__(self, messages: list[ChatMessage], tools: list[Any], *_: Any) -> ModelOutput:
        first = messages[0].text if messages else ""
        if tools:
            self.seen.setdefault("doctor", []).append(list(messages))
            step = self.doctor[min(sum(m.role == "tool" for m in messages), len(self.doctor) - 1)]
            if isinstance(step, str):
                return _out(ModelOutput.from_content("mockllm/model", step))
            return _out(ModelOutput.for_tool_call("mockllm/model", step[0], step[1]))
        if first.startswith(grounding.PATIENT_RULES[:40]):
            self.seen.setdefault("patient", []).append(list(messages))
            return _out(ModelOutput.from_content("mockllm/model", self.patient(messages[-1].text)))
        self.seen.setdefault("judge", []).append(list(messages))
        return _out(ModelOutput.from_content("mockllm/model", self.judge(messages[-1].text)))

    def model(self) -> Model:
        return get_model("mockllm/model", custom_outputs=self, memoize=False)


def answer(
    diagnosis: str = "Inferior STEMI", tests: Sequence[str] = (), plan: Sequence[str] = PLAN
) -> Step:
    return ("final_answer", {"diagnosis": diagnosis, "tests": list(tests), "plan": list(plan)})


def orders(*names: str) -> list[Step]:
    return [("order_test", {"name": n}) for n in names]


@pytest.fixture
def released(tmp_path: Path) -> GitRepo:
    """alpha, beta, gamma (the valid case; beta's patient has a declared unknown), as 1.0.0."""
    beta = case_text("beta", "Case beta").replace(
        '  family_history: ["Father had a heart attack at 52"]\n',
        '  family_history: ["Father had a heart attack at 52"]\n'
        f'  unknowns:\n    - topic: "{UNKNOWN}"\n      reason: "nobody told him"\n',
    )
    assert UNKNOWN in beta
    cases = {"alpha": case_text("alpha", "Case alpha"), "beta": beta}
    cases["gamma"] = case_text("gamma", "Case gamma")
    repo = dataset(tmp_path / "repo", cases)
    assert main(["release", "1.0.0", "--root", str(repo.root)]) == 0
    return repo


def run(
    repo: GitRepo,
    tmp_path: Path,
    script: Script,
    roles: dict[str, Model] | None = None,
    **task_args: Any,
) -> EvalLog:
    task = osce(release="1.0.0", root=str(repo.root), **task_args)
    [log] = inspect_eval(
        task,
        model=script.model(),
        model_roles=roles,
        log_dir=str(tmp_path / "logs"),
        display="none",
        max_samples=1,  # the scripts are stateless, but one at a time keeps `seen` in order
    )
    assert log.status == "success", log.error
    return log


def sample(log: EvalLog, sample_id: str) -> EvalSample:
    assert log.samples is not None
    [found] = [s for s in log.samples if s.id == sample_id]
    return found


def value(s: EvalSample) -> dict[str, Any]:
    assert s.scores is not None
    [score] = s.scores.values()
    assert isinstance(score.value, dict)
    return dict(score.value)


def metadata(s: EvalSample) -> dict[str, Any]:
    assert s.scores is not None
    [score] = s.scores.values()
    return score.metadata or {}


def metrics(log: EvalLog) -> dict[str, float]:
    assert log.results is not None
    [scores] = log.results.scores
    return {name: m.value for name, m in scores.metrics.items()}


# --- a full run ----------------------------------------------------------------------------


def test_a_full_run_logs_every_case_version_with_its_identity_and_score(
    released: GitRepo, tmp_path: Path
) -> None:
    before = released.state()
    script = Script([*orders(*MUST), answer()])
    log = run(released, tmp_path, script)
    manifest = json.loads((released.root / "releases" / "1.0.0.json").read_text("utf-8"))
    hashes = {c["case_id"]: c["sha256"] for c in manifest["cases"]}
    assert log.samples is not None and len(log.samples) == 3
    assert log.eval.task == "casebank/osce"
    assert log.eval.metadata is not None and log.eval.metadata["release"] == "1.0.0"
    for case_id in ("alpha", "beta", "gamma"):
        s = sample(log, f"{case_id}@1")
        assert s.metadata == {
            "release": "1.0.0",
            "case_id": case_id,
            "version": 1,
            "content_hash": hashes[case_id],
            "specialty": "emergency_medicine",
            "difficulty": "medium",
        }
        got = value(s)
        assert got["diagnosis"] == 1.0 and got["diagnostics"] == 1.0
        # No judge: treatment and safety are pending, so is the score (never a fail).
        assert math.isnan(got["treatment"]) and math.isnan(got["score"])
        details = metadata(s)
        assert details["pending"] == [
            "treatment.1",
            "treatment.2",
            "contraindication.1",
            "critical.1",
        ]
        assert details["components"]["treatment"] is None
        assert details["ended"] == "final_answer"
        assert s.store[EPISODE]["tests_scored"] == MUST
    # A case id names the diagnosis in a real dataset: neither the doctor nor the patient sees it.
    parts = ("doctor", "patient")
    seen = [m.text for part in parts for ms in script.seen.get(part, []) for m in ms]
    for case_id in ("alpha", "beta", "gamma"):
        assert not [t for t in seen if re.search(rf"\b{case_id}\b", t, re.IGNORECASE)]
    found = metrics(log)
    assert found["pending"] == 3 and found["scored"] == 0 and math.isnan(found["mean_score"])
    assert found["diagnosis"] == 1.0 and found["diagnostics"] == 1.0
    # The log is in tmp_path, and the repository is as it was.
    assert list((tmp_path / "logs").glob("*.eval"))
    assert released.state() == before


def test_a_doctor_who_orders_a_should_not_order_test_loses_diagnostics(
    released: GitRepo, tmp_path: Path
) -> None:
    careful = run(released, tmp_path, Script([*orders(*MUST), answer()]), cases="alpha")
    rash = run(
        released,
        tmp_path,
        # Ordered through the tool and left out of the final answer: it counts all the same.
        Script([*orders(*MUST, "Elective stress test"), answer()]),
        cases="alpha",
    )
    assert value(sample(careful, "alpha@1"))["diagnostics"] == 1.0
    assert value(sample(rash, "alpha@1"))["diagnostics"] == 0.75
    details = metadata(sample(rash, "alpha@1"))["details"]
    assert details["should_not_order_ordered"] == ["Elective stress test"]


def test_tests_listed_in_the_final_answer_count_with_those_ordered(
    released: GitRepo, tmp_path: Path
) -> None:
    log = run(
        released, tmp_path, Script([*orders("ECG"), answer(tests=["Troponin", "CBC", "ECG"])])
    )
    s = sample(log, "alpha@1")
    assert s.store[EPISODE]["tests_scored"] == ["ECG", "Troponin", "CBC"]
    assert value(s)["diagnostics"] == 1.0


# --- grounding -----------------------------------------------------------------------------


def test_the_patient_prompt_holds_the_patient_view_and_nothing_of_the_examiner(
    released: GitRepo, tmp_path: Path
) -> None:
    script = Script([("ask_patient", {"question": "When did it start?"}), answer()])
    run(released, tmp_path, script, cases="beta")
    [[system, question]] = script.seen["patient"]
    prompt = system.text
    assert system.role == "system" and question.text == "When did it start?"
    data = load_release(released.root, "1.0.0", canonical=True).current[1].data
    assert prompt == grounding.patient_prompt(data)
    assert "Central pressure for 45 minutes" in prompt and "Chest pain" in prompt
    assert f"- {UNKNOWN} (nobody told him)" in prompt
    hidden = [
        data["ground_truth"]["final_diagnosis"],
        *data["ground_truth"]["differential"],
        *data["scoring"]["acceptable_answers"]["final_diagnosis"],
        "STEMI",
        "myocardial infarction",
        "Regular rhythm, no murmur",  # an examination finding
        "ST elevation",  # a result
        "2.4",
        "Onset, character, radiation",  # the examiner's checklist
        "Aspirin",
        "Discharging the patient",
    ]
    for text in hidden:
        assert text.casefold() not in prompt.casefold(), text


def test_no_patient_prompt_of_the_dataset_names_its_diagnosis() -> None:
    from casebank.format.loader import load_document

    cases = sorted((Path(__file__).resolve().parent.parent / "cases").glob("*.yaml"))
    assert cases
    for path in cases:
        loaded = load_document(path.name, path.read_bytes()).document
        assert loaded is not None, path
        data = loaded.data
        prompt = grounding.patient_prompt(data)
        known = " ".join(t for _, t in texts(data, "patient"))
        accepted = data.get("scoring", {}).get("acceptable_answers", {})
        for text in [data["ground_truth"]["final_diagnosis"], *accepted.get("final_diagnosis", [])]:
            named = re.search(rf"\b{re.escape(text)}\b", prompt, re.IGNORECASE)
            # Only where the patient knows it already (a past episode in the history).
            assert named is None or text in known, (path.name, text)


def test_tool_results_are_the_oracles_answers(released: GitRepo, tmp_path: Path) -> None:
    requests = ["ECG", "Troponin", "CBC", "Chest X-ray", "Serum unobtainium"]
    steps: list[Step] = [*orders(*requests), ("examine", {"part": "cardiovascular"}), answer()]
    log = run(released, tmp_path, Script(steps), cases="alpha")
    s = sample(log, "alpha@1")
    tools = [m.text for m in s.messages if m.role == "tool"]
    results = [json.loads(t) for t in tools[:-1]]
    loaded = load_release(released.root, "1.0.0", canonical=True)
    oracle = Oracle(loaded.current[0].data, build_catalog(loaded.catalog_data))
    assert results[: len(requests)] == [oracle.answer(r).to_dict() for r in requests]
    assert results[len(requests)] == oracle.examine("cardiovascular").to_dict()
    assert [r["source"] for r in results[: len(requests)]] == [
        "listed",
        "listed",
        "listed",
        "unavailable",  # the test catalog has no normal result for it
        "unknown_test",
    ]


def test_the_patient_reply_is_checked_for_what_its_view_does_not_hold(
    released: GitRepo, tmp_path: Path
) -> None:
    replies = iter(["It started 45 minutes ago.", "My troponin was 2.4, the doctor said STEMI."])
    script = Script(
        [
            ("ask_patient", {"question": "When did it start?"}),
            ("ask_patient", {"question": "Any tests before?"}),
            answer(),
        ],
        patient=lambda question: next(replies),
    )
    log = run(released, tmp_path, script, cases="alpha")
    fidelity = metadata(sample(log, "alpha@1"))["patient_fidelity"]
    assert (fidelity["replies"], fidelity["unsupported"]) == (2, 1)
    [offending] = fidelity["offending"]
    assert offending["question"] == "Any tests before?"
    assert [(u["kind"], u["token"]) for u in offending["unsupported"]] == [
        ("number", "2.4"),
        ("term", "troponin"),
        ("term", "STEMI"),
    ]
    found = metrics(log)
    assert found["patient_fidelity"] == 0.5 and found["unsupported_replies"] == 0.5


def test_fidelity_allows_what_the_view_or_the_doctor_said() -> None:
    data = load_fixture()
    check = grounding.Fidelity(data)
    assert check.check("I'm 54; it has been 45 minutes, and I smoke 20 a day.") == []
    assert check.check("Father had a heart attack at 52.") == []
    # A term of the hidden side is allowed once the doctor said it.
    assert [u.token for u in check.check("An infarction?")] == ["infarction"]
    assert check.check("An infarction?", heard="Could this be an infarction?") == []
    assert [u.token for u in check.check("It was 160 over 95.")] == ["160", "95"]


def load_fixture() -> dict[str, Any]:
    from casebank.format.loader import load_document

    path = Path(__file__).parent / "fixtures" / "valid_case.yaml"
    loaded = load_document(path.name, path.read_bytes()).document
    assert loaded is not None
    return loaded.data


# --- the judge -----------------------------------------------------------------------------


def _verdicts(malformed: str | None = None) -> Callable[[str], str]:
    def judge(prompt: str) -> str:
        if malformed and malformed in prompt:
            return "Yes, I think the plan includes it."
        if "contraindicated" in prompt or "critical safety error" in prompt:
            return '{"met": false}'
        return '{"met": true}'

    return judge


def test_a_judge_decides_the_rubric_items_and_the_score_is_complete(
    released: GitRepo, tmp_path: Path
) -> None:
    judge = Script([], judge=_verdicts())
    log = run(released, tmp_path, Script([*orders(*MUST), answer()]), {"judge": judge.model()})
    s = sample(log, "alpha@1")
    assert value(s)["score"] == 1.0 and value(s)["treatment"] == 1.0
    assert value(s)["safety"] == 1.0
    assert metadata(s)["judge"]["verdicts"] == {
        "treatment.1": True,
        "treatment.2": True,
        "contraindication.1": False,
        "critical.1": False,
    }
    assert metrics(log)["mean_score"] == 1.0 and metrics(log)["scored"] == 3
    assert len(judge.seen["judge"]) == 4 * 3
    assert "Primary PCI" in judge.seen["judge"][0][-1].text


def test_a_malformed_verdict_leaves_its_item_pending_never_failed(
    released: GitRepo, tmp_path: Path
) -> None:
    judge = Script([], judge=_verdicts(malformed="include this? Primary PCI"))
    log = run(
        released,
        tmp_path,
        Script([*orders(*MUST), answer()]),
        {"judge": judge.model()},
        cases="alpha",
    )
    s = sample(log, "alpha@1")
    assert math.isnan(value(s)["treatment"]) and math.isnan(value(s)["score"])
    assert value(s)["safety"] == 1.0
    assert metadata(s)["pending"] == ["treatment.2"]
    assert metadata(s)["judge"]["malformed"] == {
        "treatment.2": "Yes, I think the plan includes it."
    }
    assert metrics(log)["pending"] == 1


@pytest.mark.parametrize(
    ("reply", "met"),
    [
        ('{"met": true}', True),
        (' {"met": false, "reason": "no"}\n', False),
        ('```json\n{"met": true}\n```', None),
        ('{"met": "yes"}', None),
        ("true", None),
        ("", None),
    ],
)
def test_a_verdict_is_strict_json(reply: str, met: bool | None) -> None:
    assert grounding.parse_verdict(reply) is met


# --- the submission and the limits ---------------------------------------------------------


def test_a_doctor_who_stops_without_final_answer_is_read_from_the_last_message(
    released: GitRepo, tmp_path: Path
) -> None:
    last = "Diagnosis: Inferior STEMI\nTests: ECG, Troponin\nPlan:\n- Aspirin 300 mg chewed\n"
    log = run(released, tmp_path, Script([*orders("CBC"), last]), cases="alpha")
    s = sample(log, "alpha@1")
    record = s.store[EPISODE]
    assert record["ended"] == "message"
    assert record["submission"] == {
        "diagnosis": "Inferior STEMI",
        "tests": ["ECG", "Troponin"],
        "plan": ["Aspirin 300 mg chewed"],
        "source": "labelled",
    }
    assert record["tests_scored"] == ["CBC", "ECG", "Troponin"]
    assert value(s)["diagnosis"] == 1.0 and value(s)["diagnostics"] == 1.0


@pytest.mark.parametrize(
    ("text", "expected"),
    [
        (
            '{"diagnosis": "STEMI", "tests": ["ECG"], "plan": ["PCI"]}',
            ("STEMI", ("ECG",), ("PCI",), "json"),
        ),
        (
            "**Diagnosis:** STEMI\n**Investigations:** ECG; troponin\n"
            "**Management:** aspirin; PCI\n",
            ("STEMI", ("ECG", "troponin"), ("aspirin", "PCI"), "labelled"),
        ),
        ("Final diagnosis:\nAortic dissection\n", ("Aortic dissection", (), (), "labelled")),
        (
            "I think this is a STEMI.\nMore later.",
            ("I think this is a STEMI.", (), (), "first_line"),
        ),
        ("", ("", (), (), "empty")),
    ],
)
def test_the_final_message_parse(text: str, expected: tuple[Any, ...]) -> None:
    found = grounding.parse_final_message(text)
    assert (found.diagnosis, found.tests, found.plan, found.source) == expected


def test_orders_past_max_tests_are_not_answered(released: GitRepo, tmp_path: Path) -> None:
    log = run(released, tmp_path, Script([*orders(*MUST), answer()]), cases="alpha", max_tests=2)
    s = sample(log, "alpha@1")
    tools = [m.text for m in s.messages if m.role == "tool"]
    assert tools[2] == "Not answered: the limit of 2 test orders is reached."
    assert s.store[EPISODE]["orders_refused"] == ["CBC"]
    assert s.store[EPISODE]["tests_scored"] == ["ECG", "Troponin"]
    assert value(s)["diagnostics"] == round(2 / 3, 6)


def test_a_doctor_who_never_answers_stops_at_max_turns(released: GitRepo, tmp_path: Path) -> None:
    ask: Step = ("ask_patient", {"question": "Anything else?"})
    script = Script([ask])
    log = run(released, tmp_path, script, cases="alpha", max_turns=3)
    record = sample(log, "alpha@1").store[EPISODE]
    assert (record["ended"], record["turns"]) == ("max_turns", 3)
    assert len(script.seen["doctor"]) == 3 and len(record["patient_replies"]) == 3


# --- refusals ------------------------------------------------------------------------------


def test_a_missing_release_is_casebanks_message(released: GitRepo) -> None:
    with pytest.raises(Exception) as raised:
        osce(release="9.9.9", root=str(released.root))
    assert getattr(raised.value, "message", "") == (
        "casebank: there is no release 9.9.9 (no tag v9.9.9 holding releases/9.9.9.json)\n"
        "  hint: releases: 1.0.0"
    )


def test_an_unknown_case_is_refused(released: GitRepo) -> None:
    with pytest.raises(Exception) as raised:
        osce(release="1.0.0", root=str(released.root), cases="alpha,delta")
    assert "release 1.0.0 has no case delta" in getattr(raised.value, "message", "")


def test_an_inspect_limit_still_records_and_scores_what_happened(
    released: GitRepo, tmp_path: Path
) -> None:
    task = osce(release="1.0.0", root=str(released.root), cases="alpha")
    script = Script([*orders(*MUST), answer()])
    [log] = inspect_eval(
        task, model=script.model(), log_dir=str(tmp_path / "logs"), display="none", message_limit=4
    )
    s = sample(log, "alpha@1")
    record = s.store[EPISODE]
    assert s.limit is not None and s.limit.type == "message"
    assert record["ended"] == "limit"
    assert record["tests_scored"] == ["ECG"]
    assert value(s)["diagnostics"] == round(1 / 3, 6)


# --- method 2: examinations, the judge view, cost and budget -------------------------------


@pytest.fixture
def examined(tmp_path: Path) -> GitRepo:
    """One case whose must-order vital signs are recorded in the examination only."""
    text = case_text("delta", "Case delta").replace(
        "must_order: [ECG, Troponin, CBC]", "must_order: [ECG, Troponin, CBC, Vital signs]"
    )
    text = text.replace(
        '  cardiovascular: "Regular rhythm, no murmur"\n',
        '  cardiovascular: "Regular rhythm, no murmur"\n  vital_signs: "HR 98, BP 150/90"\n',
    )
    repo = dataset(tmp_path / "repo", {"delta": text})
    assert main(["release", "1.0.0", "--root", str(repo.root)]) == 0
    return repo


def test_an_examination_meets_the_vital_signs_a_case_asks_for(
    examined: GitRepo, tmp_path: Path
) -> None:
    without = run(examined, tmp_path, Script([*orders(*MUST), answer()]))
    assert value(sample(without, "delta@1"))["diagnostics"] == 0.75
    steps: list[Step] = [("examine", {"part": "vital signs"}), *orders(*MUST), answer()]
    log = run(examined, tmp_path, Script(steps))
    s = sample(log, "delta@1")
    assert value(s)["diagnostics"] == 1.0
    assert metadata(s)["details"]["must_order_credited_by"]["Vital signs"] == "examination"
    assert s.store[EPISODE]["examined"] == ["vital signs"]


def test_the_judge_sees_the_judge_view_with_every_order_and_the_transcript(
    released: GitRepo, tmp_path: Path
) -> None:
    judge = Script([], judge=_verdicts())
    steps: list[Step] = [
        ("ask_patient", {"question": "When did it start?"}),
        *orders("ECG"),
        answer(tests=["Troponin", "CBC"]),
    ]
    run(released, tmp_path, Script(steps), {"judge": judge.model()}, cases="alpha")
    prompt = judge.seen["judge"][0][-1].text
    assert "- ECG (consultation)\n- Troponin (final answer)\n- CBC (final answer)" in prompt
    assert "doctor: When did it start?\npatient: It started 45 minutes ago" in prompt
    assert "doctor: orders ECG\nresult: {" in prompt


def test_cost_dose_tests_and_questions_are_reported_per_sample_and_as_metrics(
    released: GitRepo, tmp_path: Path
) -> None:
    steps: list[Step] = [
        ("ask_patient", {"question": "When did it start?"}),
        *orders(*MUST, "Chest X-ray"),
        answer(),
    ]
    log = run(released, tmp_path, Script(steps), cases="alpha")
    s = sample(log, "alpha@1")
    got = value(s)
    # The fixture catalog's amounts: ECG 13.91, troponin 12.47, CBC 7.77, chest X-ray 32.67 USD
    assert got["tests"] == 4 and got["questions"] == 1
    assert got["radiation_msv"] == 0.1  # the chest X-ray
    assert got["cost"] == 66.82 == metadata(s)["workup"]["least_cost"]
    found = metrics(log)
    assert found["cost"] == got["cost"] and found["tests"] == 4.0 and found["questions"] == 1.0
    assert found["radiation_msv"] == 0.1


def test_orders_past_the_budget_are_refused_and_recorded(released: GitRepo, tmp_path: Path) -> None:
    steps: list[Step] = [*orders("Chest X-ray", *MUST), answer()]
    log = run(released, tmp_path, Script(steps), cases="alpha", budget=40)
    s = sample(log, "alpha@1")
    record = s.store[EPISODE]
    # The chest X-ray (32.67 USD) is answered; ECG, troponin and CBC would each exceed $40.
    assert record["spent"] == 32.67 and record["orders_refused"] == MUST
    tools = [m.text for m in s.messages if m.role == "tool"]
    assert any(t.startswith("Not answered: the budget of $40.00 would be exceeded") for t in tools)
    assert metadata(s)["orders_refused"] == record["orders_refused"]
    doctor = sample(log, "alpha@1").messages[0].text
    assert "once $40 of test orders is spent" in doctor


def test_a_negative_budget_is_refused(released: GitRepo) -> None:
    with pytest.raises(Exception) as raised:
        osce(release="1.0.0", root=str(released.root), budget=-5)
    assert "budget must be a number of USD" in getattr(raised.value, "message", "")


# --- from an export bundle ------------------------------------------------------------------


def _bundle(repo: GitRepo, out: Path) -> Path:
    assert main(["export", "--release", "1.0.0", "--out", str(out), "--root", str(repo.root)]) == 0
    return out


def test_a_run_from_the_bundle_is_the_run_from_the_git_release(
    released: GitRepo, tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    """Everything the doctor is told, every answer and every score, sample by sample; the
    bundle is read with no repository in sight."""
    steps = [("ask_patient", {"question": "When did it start?"}), ("examine", {"part": "full"})]
    steps += [*orders(*MUST, "Elective stress test"), answer()]
    roles = {"judge": Script([]).model()}
    from_git = run(released, tmp_path / "git", Script(steps), roles)
    bundle = _bundle(released, tmp_path / "bundle")
    elsewhere = tmp_path / "elsewhere"
    elsewhere.mkdir()
    monkeypatch.chdir(elsewhere)
    task = osce(bundle=str(bundle))
    [from_bundle] = inspect_eval(
        task,
        model=Script(steps).model(),
        model_roles=roles,
        log_dir=str(tmp_path / "bundle-logs"),
        display="none",
        max_samples=1,
    )
    assert from_bundle.status == "success", from_bundle.error
    assert from_bundle.eval.metadata == from_git.eval.metadata
    assert from_bundle.eval.dataset.name == "casebank-1.0.0"
    for one, two in zip(from_git.samples or [], from_bundle.samples or [], strict=True):
        assert (one.id, one.metadata) == (two.id, two.metadata)
        assert isinstance(one.input, list) and isinstance(two.input, list)
        assert [(m.role, m.text) for m in one.input] == [(m.role, m.text) for m in two.input]
        assert one.store[EPISODE] == two.store[EPISODE]
        assert json.dumps(value(one)) == json.dumps(value(two))  # NaN (pending) included
        assert json.dumps(metadata(one)) == json.dumps(metadata(two))
    assert json.dumps(metrics(from_git)) == json.dumps(metrics(from_bundle))
    assert metrics(from_bundle)["scored"] == 3


def test_a_tampered_bundle_is_refused_before_the_run(released: GitRepo, tmp_path: Path) -> None:
    bundle = _bundle(released, tmp_path / "bundle")
    path = bundle / "cases.jsonl"
    path.write_text(path.read_text("utf-8").replace("Primary PCI", "Discharge home", 1), "utf-8")
    with pytest.raises(Exception) as raised:
        osce(bundle=str(bundle))
    message = getattr(raised.value, "message", "")
    assert message.startswith("casebank: ") and "do not match SHA256SUMS" in message
    assert f"{path}: changed since the export" in message and "hint: " in message


def test_release_or_bundle_one_of_them(released: GitRepo, tmp_path: Path) -> None:
    bundle = _bundle(released, tmp_path / "bundle")
    for given in ({}, {"release": "1.0.0", "bundle": str(bundle)}):
        with pytest.raises(Exception) as raised:
            osce(root=str(released.root), **given)
        assert "-T release=X.Y.Z (from git) or -T bundle=DIR" in getattr(
            raised.value, "message", ""
        )
