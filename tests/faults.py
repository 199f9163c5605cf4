"""Run `casebank` with a fault at one release step: the release-safety tests' launcher.

    python tests/faults.py ARGV...     (CASEBANK_TEST_CRASH_AT=STEP or CASEBANK_TEST_PAUSE_AT=STEP)

The release calls ``casebank.release.journal.checkpoint(root, step)`` at each step (journal,
manifest, changelog, stage, commit, tag, push); in casebank it does nothing. This launcher
replaces that seam before running the command, so that the release is killed (SIGKILL) at the
step named by CASEBANK_TEST_CRASH_AT, or waits there while `.git/casebank-paused` exists
(CASEBANK_TEST_PAUSE_AT). Nothing of this reaches a user's casebank.
"""

from __future__ import annotations

import os
import signal
import sys
import time
from pathlib import Path

CRASH_AT = "CASEBANK_TEST_CRASH_AT"
PAUSE_AT = "CASEBANK_TEST_PAUSE_AT"


def fault(root: Path, step: str) -> None:
    from casebank.release import git

    if os.environ.get(CRASH_AT) == step:
        os.kill(os.getpid(), signal.SIGKILL)
    if os.environ.get(PAUSE_AT) == step:
        marker = git.git_dir(root) / "casebank-paused"
        marker.write_text(str(os.getpid()), encoding="utf-8")
        while marker.exists():
            time.sleep(0.05)


def launch(argv: list[str]) -> int:
    from casebank.cli import main
    from casebank.release import apply, journal

    journal.checkpoint = fault  # type: ignore[assignment]
    apply.checkpoint = fault  # type: ignore[attr-defined]
    return main(argv)


if __name__ == "__main__":
    sys.exit(launch(sys.argv[1:]))
