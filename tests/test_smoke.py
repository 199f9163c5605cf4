"""One end-to-end run of the installed `casebank` command, as a user would type it."""

from __future__ import annotations

import os
import shutil
import subprocess
import sys
from pathlib import Path

import pytest

from conftest import RepoMaker, edit


def installed_command() -> list[str]:
    found = shutil.which("casebank", path=str(Path(sys.executable).parent))
    if found is None:
        if os.environ.get("NOX_CURRENT_SESSION"):
            pytest.fail("the casebank console script is not installed in the nox session")
        return [sys.executable, "-m", "casebank"]
    return [found]


def test_installed_command_validates_a_repository(make_repo: RepoMaker) -> None:
    root = make_repo()
    ok = subprocess.run(
        [*installed_command(), "validate", "--format", "text"],
        cwd=root,
        capture_output=True,
        text=True,
        check=False,
    )
    assert (ok.returncode, ok.stdout.strip()) == (0, "All clear: 2 files checked, no problems.")

    (root / "cases" / "valid_case.yaml").write_text(
        edit("  age: 54", "  age: -3"), encoding="utf-8"
    )
    bad = subprocess.run(
        [*installed_command(), "validate"],
        cwd=root,
        capture_output=True,
        text=True,
        check=False,
        env={**os.environ, "GITHUB_ACTIONS": ""},
    )
    assert bad.returncode == 1
    assert bad.stdout.startswith("cases/valid_case.yaml:10:8: error [CB207 out-of-range]")


def test_python_dash_m_works_too(make_repo: RepoMaker) -> None:
    result = subprocess.run(
        [sys.executable, "-m", "casebank", "rules"],
        capture_output=True,
        text=True,
        check=False,
        cwd=make_repo(),
    )
    assert result.returncode == 0 and "CB101" in result.stdout
