"""release-safety holds whatever signal dispositions the runner starts casebank with: a release
started with SIGINT ignored (a background job, some CI runners) is still stopped and undone at
once by SIGINT, as by SIGTERM and SIGHUP."""

from __future__ import annotations

import os
import signal
import subprocess
import sys
import time
from pathlib import Path

import pytest

from casebank.cli import main
from gitrepo import GitRepo, case_text

FAULTS = Path(__file__).with_name("faults.py")  # casebank with a fault at a release step

pytestmark = pytest.mark.usefixtures("isolated_git")


def _started_with_ignored(*ignored: signal.Signals) -> None:
    for signum in ignored:
        signal.signal(signum, signal.SIG_IGN)


def paused_release(
    repo: GitRepo, step: str, ignored: tuple[signal.Signals, ...]
) -> subprocess.Popen[str]:
    child = subprocess.Popen(
        [sys.executable, str(FAULTS), "release", "1.1.0", "--root", str(repo.root)],
        stdout=subprocess.PIPE,
        stderr=subprocess.PIPE,
        text=True,
        env={**os.environ, "CASEBANK_TEST_PAUSE_AT": step},
        preexec_fn=lambda: _started_with_ignored(*ignored),
    )
    marker = repo.root / ".git" / "casebank-paused"
    deadline = time.monotonic() + 120
    while not marker.exists():
        assert child.poll() is None, child.communicate()
        assert time.monotonic() < deadline, "the release never reached its pause"
        time.sleep(0.05)
    return child


@pytest.mark.parametrize("step", ["manifest", "commit", "tag"])
@pytest.mark.parametrize("signum", [signal.SIGINT, signal.SIGTERM, signal.SIGHUP])
def test_a_signal_the_runner_ignored_still_undoes_the_release(
    repo: GitRepo, capsys: pytest.CaptureFixture[str], step: str, signum: signal.Signals
) -> None:
    assert main(["release", "1.0.0", "--root", str(repo.root)]) == 0
    repo.write("cases/alpha.yaml", case_text("alpha", "Alpha, revised"))
    repo.commit("Edit alpha")
    capsys.readouterr()
    before = repo.state()
    child = paused_release(repo, step, (signal.SIGINT, signal.SIGTERM, signal.SIGHUP))
    child.send_signal(signum)
    (repo.root / ".git" / "casebank-paused").unlink()
    _, err = child.communicate(timeout=120)
    assert child.returncode == 2, err
    assert "stopped; undone:" in err and "the repository is as it was" in err
    assert repo.state() == before
    assert not (Path(repo.root) / ".git" / "casebank-release.journal").exists()
