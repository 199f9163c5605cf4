"""The offline demo, for real: `python -m casebank.harness.evaluate` (what `nox -s eval` runs)
starts `inspect eval casebank/osce` with the scripted model `casebank/smoke`, with every
internet connection refused (a sitecustomize in the child processes), no tokenizer cache and
no API key, and reads the logs it wrote; a failing eval exits 1."""

from __future__ import annotations

import os
import subprocess
import sys
from pathlib import Path
from typing import Any

import pytest

pytest.importorskip(
    "inspect_ai",
    reason="inspect_ai is not installed: `python3 -m pip install -e '.[inspect]'` (nox -s tests)",
)

from inspect_ai.log import EvalLog, read_eval_log

from casebank.cli import main
from casebank.harness import smoke
from casebank.harness.osce import EPISODE
from gitrepo import GitRepo

pytestmark = pytest.mark.usefixtures("isolated_git")

TOOLS = Path(__file__).parents[1] / "tools"
OFFLINE = """\
import socket

_connect, _connect_ex = socket.socket.connect, socket.socket.connect_ex


def _refuse(self, address, *rest):
    if self.family in (socket.AF_INET, socket.AF_INET6):
        raise OSError(f"the network is off in this test (a connection to {address!r})")
    return _connect(self, address, *rest)


def _refuse_ex(self, address):
    if self.family in (socket.AF_INET, socket.AF_INET6):
        return 101  # ENETUNREACH
    return _connect_ex(self, address)


socket.socket.connect, socket.socket.connect_ex = _refuse, _refuse_ex
"""


def evaluate(
    folder: Path, tmp_path: Path, *args: str
) -> tuple[subprocess.CompletedProcess[str], list[EvalLog]]:
    """Run the evaluator in ``folder`` offline; what it printed and the logs it wrote."""
    site = tmp_path / "offline"
    site.mkdir(exist_ok=True)
    (site / "sitecustomize.py").write_text(OFFLINE, "utf-8")
    (tmp_path / "tiktoken").mkdir(exist_ok=True)
    logs = tmp_path / "logs"
    env = {
        k: v
        for k, v in os.environ.items()
        if not k.endswith("_API_KEY") and not k.startswith("INSPECT_")
    }
    env |= {
        "PYTHONPATH": os.pathsep.join([str(site), str(TOOLS)]),
        "TIKTOKEN_CACHE_DIR": str(tmp_path / "tiktoken"),
        "INSPECT_LOG_DIR": str(logs),
        "INSPECT_DISPLAY": "plain",
    }
    before = set(logs.glob("*.eval")) if logs.is_dir() else set()
    ran = subprocess.run(
        [sys.executable, "-m", "casebank.harness.evaluate", *args],
        cwd=folder,
        env=env,
        capture_output=True,
        text=True,
        timeout=600,
        check=False,
    )
    written = sorted(set(logs.glob("*.eval")) - before) if logs.is_dir() else []
    return ran, [read_eval_log(str(p)) for p in written]


def episode(log: EvalLog, sample_id: str) -> dict[str, Any]:
    [found] = [s for s in log.samples or [] if s.id == sample_id]
    record: dict[str, Any] = found.store[EPISODE]
    return record


def test_the_offline_demo_runs_the_whole_pipeline_and_is_reproducible(
    repo: GitRepo, tmp_path: Path
) -> None:
    """A repository with no release (a fresh clone): the demo cuts one in a throw-away clone,
    exports it, and plays every station with casebank/smoke, offline."""
    ran, [log] = evaluate(repo.root, tmp_path)
    assert ran.returncode == 0, ran.stdout[-3000:] + ran.stderr[-3000:]
    assert "the eval succeeded" in ran.stdout
    assert not (repo.root / "releases").exists()  # the user's repository is left as it was
    assert log.status == "success" and log.eval.model == "casebank/smoke"
    assert log.eval.task_args["bundle"].endswith("casebank-1.0.0")
    assert [s.id for s in log.samples or []] == ["alpha@1", "beta@1", "gamma@1"]
    alpha = episode(log, "alpha@1")
    assert alpha["ended"] == "final_answer" and alpha["submission"]["source"] == "final_answer"
    assert alpha["submission"]["diagnosis"] == "Chest pain"  # the complaint, in the brief
    assert [o["request"] for o in alpha["orders"]] == list(smoke.TESTS)
    assert {o["source"] for o in alpha["orders"]} <= {"listed", "derived", "policy", "unknown_test"}
    assert alpha["examined"] == ["vital signs"]
    [reply] = alpha["patient_replies"]
    assert reply["question"] == smoke.QUESTION and reply["unsupported"] == []
    assert reply["reply"] == (
        "Central pressure for 45 minutes, started at rest, spreading to the left arm, "
        "with sweating and nausea."
    )
    assert log.results is not None
    [scores] = log.results.scores
    metrics = {name: m.value for name, m in scores.metrics.items()}
    assert metrics["scored"] == 3 and metrics["pending"] == 0  # the smoke judge decided all
    assert metrics["patient_fidelity"] == 1.0 and metrics["questions"] == 1.0
    assert log.stats.model_usage["casebank/smoke"].input_tokens > 0

    # The same run again gives the same transcripts and scores.
    again, [second] = evaluate(repo.root, tmp_path)
    assert again.returncode == 0, again.stderr[-3000:]
    for one, two in zip(log.samples or [], second.samples or [], strict=True):
        assert one.store[EPISODE] == two.store[EPISODE]
        assert one.scores is not None and two.scores is not None
        assert [s.value for s in one.scores.values()] == [s.value for s in two.scores.values()]


def test_the_demo_uses_the_newest_release_when_there_is_one(
    released: GitRepo, tmp_path: Path
) -> None:
    text = (released.root / "cases/alpha.yaml").read_text("utf-8")
    released.write("cases/alpha.yaml", text.replace("age: 54", "age: 55"))
    released.commit("alpha is a year older")
    assert main(["release", "1.1.0", "--root", str(released.root)]) == 0
    ran, [log] = evaluate(released.root, tmp_path)
    assert ran.returncode == 0, ran.stderr[-3000:]
    assert log.eval.task_args["bundle"].endswith("casebank-1.1.0")
    assert log.eval.dataset.name == "casebank-1.1.0"


@pytest.mark.parametrize(
    "args,expected",
    [
        pytest.param(
            ["--model", "casebank/smoke", "-T", "bundle=/no/such/bundle"],
            ["--bundle /no/such/bundle: not there", "inspect wrote no log"],
            id="task-refused",
        ),
        pytest.param(
            ["--model", "casebank/smoke", "-T", "release=1.0.0",
             "-T", "patient_model=casebank/nobody"],
            ["the eval ended `error`", "casebank/nobody"],
            id="sample-error",
        ),
        pytest.param(
            ["--model", "casebank/smoke", "-T", "release=1.0.0", "--no-fail-on-error",
             "-T", "patient_model=casebank/nobody"],
            ["sample alpha@1 failed", "casebank/nobody"],
            id="sample-error-not-failing-the-eval",
        ),
    ],
)  # fmt: skip
def test_a_failing_eval_exits_1_naming_what_failed(
    released: GitRepo, tmp_path: Path, args: list[str], expected: list[str]
) -> None:
    ran, _ = evaluate(released.root, tmp_path, *args)
    assert ran.returncode == 1, ran.stdout[-2000:] + ran.stderr[-2000:]
    for text in expected:
        assert text in ran.stdout + ran.stderr
    assert "the eval succeeded" not in ran.stdout


def test_the_smoke_model_is_named_by_its_one_name() -> None:
    with pytest.raises(ValueError, match="casebank/smoke"):
        smoke.SmokeModel("gpt-9")


def test_the_smoke_patient_says_only_what_its_view_holds() -> None:
    from casebank.harness.grounding import patient_prompt

    data = {
        "patient": {"age": 40, "sex": "female"},
        "presentation": {
            "chief_complaint": "Headache",
            "history_of_present_illness": "Worst headache of her life, sudden. Vomited twice.",
        },
        "diagnosis": {"final": "Subarachnoid haemorrhage"},
    }
    assert smoke.patient(patient_prompt(data)) == "Worst headache of her life, sudden."
    del data["presentation"]["history_of_present_illness"]  # type: ignore[attr-defined]
    assert smoke.patient(patient_prompt(data)) == "Headache"
