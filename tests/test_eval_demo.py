"""The offline demo, for real: the noxfile's `eval` session, with each command it runs started
as nox would (only `session.install` is left out: the packages are here already), runs
`inspect eval casebank/osce` with the scripted model `casebank/smoke`, with every internet
connection refused (a sitecustomize in the child processes), no tokenizer cache and no API
key, then checks the logs; a failing eval fails the session."""

from __future__ import annotations

import os
import subprocess
import sys
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

import pytest

pytest.importorskip(
    "inspect_ai",
    reason="inspect_ai is not installed: `python3 -m pip install -e '.[inspect]'` (nox -s tests)",
)

from inspect_ai.log import EvalLog, read_eval_log

from casebank.cli import main
from casebank.harness import evaluate as evaluator
from casebank.harness import smoke
from casebank.harness.osce import EPISODE
from conftest import load_noxfile
from gitrepo import GitRepo

pytestmark = pytest.mark.usefixtures("isolated_git")

ROOT = Path(__file__).parents[1]
pytest.importorskip("nox", reason="nox is not installed: `python3 -m pip install nox`")
NOXFILE = load_noxfile()
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


class Failed(Exception):
    """What nox makes of a command that exits non-zero, or of session.error: a failed session."""


@dataclass
class Session:
    """The part of nox.Session the eval session uses; each command really runs, in a child
    process that inherits the test's (offline) environment. `python` and `inspect` are this
    interpreter's, where nox would use its virtual environment's."""

    posargs: list[str]
    said: list[str] = field(default_factory=list)

    def install(self, *packages: str) -> None:
        assert packages == (".[inspect]",)

    def run(self, *args: str) -> None:
        command = [sys.executable, *args[1:]] if args[0] == "python" else list(args)
        if args[0] == "inspect":
            command = [sys.executable, "-m", "inspect_ai", *args[1:]]
        ran = subprocess.run(command, capture_output=True, text=True, timeout=600, check=False)
        self.said.append(ran.stdout + ran.stderr)
        if ran.returncode != 0:
            raise Failed(f"{' '.join(args[:4])} exited {ran.returncode}")

    def error(self, message: str) -> None:
        self.said.append(message)
        raise Failed(message)

    @property
    def output(self) -> str:
        return "\n".join(self.said)


def evaluate(
    folder: Path, tmp_path: Path, monkeypatch: pytest.MonkeyPatch, *args: str
) -> tuple[bool, str, list[EvalLog]]:
    """`nox -s eval -- ARGS` in ``folder``, offline: whether it succeeded, what it printed, and
    the logs it wrote."""
    site = tmp_path / "offline"
    site.mkdir(exist_ok=True)
    (site / "sitecustomize.py").write_text(OFFLINE, "utf-8")
    (tmp_path / "tiktoken").mkdir(exist_ok=True)
    logs = tmp_path / "logs"
    for name in list(os.environ):
        if name.endswith("_API_KEY") or name.startswith("INSPECT_"):
            monkeypatch.delenv(name)
    # Only the offline switch: casebank comes from the installed package, as in `nox -s eval`
    # (the source tree on PYTHONPATH beside an installed casebank hides the inspect_ai entry
    # point's task from inspect's registry: "No inspect tasks were found").
    monkeypatch.setenv("PYTHONPATH", str(site))
    monkeypatch.setenv("TIKTOKEN_CACHE_DIR", str(tmp_path / "tiktoken"))
    monkeypatch.setenv("INSPECT_LOG_DIR", str(logs))
    monkeypatch.setenv("INSPECT_DISPLAY", "plain")
    monkeypatch.chdir(folder)
    before = set(logs.glob("*.eval")) if logs.is_dir() else set()
    session = Session(list(args))
    try:
        NOXFILE.eval(session)
        succeeded = True
    except Failed:
        succeeded = False
    written = sorted(set(logs.glob("*.eval")) - before) if logs.is_dir() else []
    return succeeded, session.output, [read_eval_log(str(p)) for p in written]


def episode(log: EvalLog, sample_id: str) -> dict[str, Any]:
    [found] = [s for s in log.samples or [] if s.id == sample_id]
    record: dict[str, Any] = found.store[EPISODE]
    return record


def test_the_offline_demo_runs_the_whole_pipeline_and_is_reproducible(
    repo: GitRepo, tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    """A repository with no release (a fresh clone): the demo cuts one in a throw-away clone,
    exports it, and plays every station with casebank/smoke, offline."""
    ok, said, [log] = evaluate(repo.root, tmp_path, monkeypatch)
    assert ok, said[-3000:]
    assert "the eval succeeded" in said and "over release 1.0.0" in said
    assert not (repo.root / "releases").exists()  # the user's repository is left as it was
    assert log.status == "success" and log.eval.model == "casebank/smoke"
    assert log.eval.dataset.name == "casebank-1.0.0"
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
    again, said, [second] = evaluate(repo.root, tmp_path, monkeypatch)
    assert again, said[-3000:]
    for one, two in zip(log.samples or [], second.samples or [], strict=True):
        assert one.store[EPISODE] == two.store[EPISODE]
        assert one.scores is not None and two.scores is not None
        assert [s.value for s in one.scores.values()] == [s.value for s in two.scores.values()]


def test_the_demo_uses_the_newest_release_when_there_is_one(
    released: GitRepo, tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    text = (released.root / "cases/alpha.yaml").read_text("utf-8")
    released.write("cases/alpha.yaml", text.replace("age: 54", "age: 55"))
    released.commit("alpha is a year older")
    assert main(["release", "1.1.0", "--root", str(released.root)]) == 0
    ok, said, [log] = evaluate(released.root, tmp_path, monkeypatch)
    assert ok, said[-3000:]
    assert log.eval.dataset.name == "casebank-1.1.0" and "over release 1.1.0" in said


@pytest.mark.parametrize(
    "args,expected",
    [
        pytest.param(
            ["--model", "casebank/smoke", "-T", "bundle=/no/such/bundle"],
            ["--bundle /no/such/bundle: not there"],  # inspect exits 1 for this one
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
def test_a_failing_eval_fails_the_session_naming_what_failed(
    released: GitRepo,
    tmp_path: Path,
    monkeypatch: pytest.MonkeyPatch,
    args: list[str],
    expected: list[str],
) -> None:
    ok, said, _ = evaluate(released.root, tmp_path, monkeypatch, *args)
    assert not ok, said[-3000:]
    for text in expected:
        assert text in said
    assert "the eval succeeded" not in said


def test_the_session_and_the_evaluator_agree_on_the_demo() -> None:
    assert NOXFILE.EVAL_DEMO == evaluator.DEMO_ARGS


def test_check_names_a_log_that_does_not_read(
    tmp_path: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    bad = tmp_path / "2026-01-01T00-00-00+00-00_osce_x.eval"
    bad.write_bytes(b"not a log")
    assert evaluator.main(["check", str(bad)]) == 1
    assert f"{bad}: not an inspect log that reads" in capsys.readouterr().err
    assert evaluator.main(["demo"]) == 2


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
