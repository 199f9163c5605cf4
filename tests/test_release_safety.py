"""Nothing published is ever wrong: releases under poisoned history, tampering, forks, kills,
signals, concurrency, failing writes, umasks and removals. Each on a real temporary repository.
"""

from __future__ import annotations

import json
import os
import signal
import stat
import subprocess
import sys
import time
from pathlib import Path
from typing import Any

import pytest

from casebank.cli import main
from conftest import examples
from conftest import run_cli as run
from gitrepo import GitRepo, case_text, dataset

FAULTS = Path(__file__).with_name("faults.py")  # casebank with a fault at a release step

pytestmark = pytest.mark.usefixtures("isolated_git")

KILL_STEPS = ["journal", "manifest", "changelog", "stage", "commit", "tag"]
BEFORE_COMMIT = {"journal", "manifest", "changelog", "stage"}


def released(repo: GitRepo, capsys: pytest.CaptureFixture[str], version: str) -> None:
    code, out, err = run(capsys, "release", "--root", str(repo.root), version)
    assert code == 0, out + err


def change(repo: GitRepo, case_id: str, title: str) -> None:
    repo.write(f"cases/{case_id}.yaml", case_text(case_id, title))
    repo.commit(f"Edit {case_id}")


def process(repo: GitRepo, *argv: str, **env: str) -> subprocess.Popen[str]:
    return subprocess.Popen(
        [sys.executable, str(FAULTS), *argv, "--root", str(repo.root)],
        stdout=subprocess.PIPE,
        stderr=subprocess.PIPE,
        text=True,
        env={**os.environ, **env},
    )


def git_dir(repo: GitRepo) -> Path:
    return repo.root / ".git"


# --- a total history scan -------------------------------------------------------------------


def test_a_poisoned_past_commit_is_a_fact_of_history_not_a_crash(
    repo: GitRepo, capsys: pytest.CaptureFixture[str]
) -> None:
    released(repo, capsys, "1.0.0")
    repo.write("cases/delta.json", '{"case_id": "delta", "age": NaN}')
    repo.commit("A broken JSON case")
    repo.delete("cases/delta.json")
    repo.write("cases/delta.yaml", case_text("delta"))
    repo.commit("Fixed")
    root = str(repo.root)
    assert run(capsys, "verify", "--root", root)[0] == 0
    assert run(capsys, "diff", "--root", root, "HEAD~2")[0] == 0
    assert run(capsys, "release", "--root", root, "--suggest")[1].strip() == "1.1.0"
    assert run(capsys, "release", "--root", root, "1.1.0")[0] == 0


# --- release runs verify first --------------------------------------------------------------


def test_a_hand_edited_past_manifest_blocks_the_next_release(
    repo: GitRepo, capsys: pytest.CaptureFixture[str]
) -> None:
    released(repo, capsys, "1.0.0")
    path = repo.root / "releases" / "1.0.0.json"
    data = json.loads(path.read_text())
    data["cases"][0]["version"] = 7
    path.write_text(json.dumps(data, indent=2, sort_keys=True) + "\n")
    repo.commit("Edit a released manifest")
    change(repo, "alpha", "Alpha, later")
    code, _, err = run(capsys, "release", "--root", str(repo.root), "1.1.0")
    assert code == 1
    assert "release 1.0.0 does not verify" in err and "restore the manifests" in err
    assert repo.tags() == ["v1.0.0"]


def test_a_deleted_manifest_with_its_tag_left_blocks_the_next_release(
    repo: GitRepo, capsys: pytest.CaptureFixture[str]
) -> None:
    released(repo, capsys, "1.0.0")
    repo.delete("releases/1.0.0.json")
    repo.commit("Lose the manifest")
    change(repo, "alpha", "Alpha, later")
    code, _, err = run(capsys, "release", "--root", str(repo.root), "1.1.0")
    assert code == 1 and "release 1.0.0 does not verify" in err
    assert "has no manifest" in err


def test_forked_release_lines_are_refused_with_how_to_reconcile(
    repo: GitRepo, capsys: pytest.CaptureFixture[str], tmp_path: Path
) -> None:
    released(repo, capsys, "2.0.0")
    # A second clone cuts 2.1.0 without knowing what the first will release next.
    other = GitRepo(tmp_path / "other")
    subprocess.run(["git", "clone", "-q", str(repo.root), str(other.root)], check=True)
    change(other, "alpha", "Alpha on the branch")
    released(other, capsys, "2.1.0")
    change(repo, "beta", "Beta on main")
    released(repo, capsys, "2.2.0")
    repo.git("fetch", "-q", str(other.root), "main:side", "--tags")
    repo.git("merge", "-q", "--no-edit", "-X", "ours", "side")  # both changed the changelog
    change(repo, "gamma", "Gamma after the merge")
    code, _, err = run(capsys, "release", "--root", str(repo.root), "2.3.0")
    assert code == 1
    assert "forked" in err and "Releases must form one line" in err
    code, out, _ = run(capsys, "verify", "--root", str(repo.root))
    assert code == 1 and "forked" in out


# --- crash safety ---------------------------------------------------------------------------


@pytest.mark.parametrize("step", KILL_STEPS)
def test_a_release_killed_at_any_step_is_finished_or_undone_by_the_next_run(
    repo: GitRepo, capsys: pytest.CaptureFixture[str], step: str
) -> None:
    released(repo, capsys, "1.0.0")
    change(repo, "alpha", "Alpha, revised")
    before = repo.state()
    killed = process(repo, "release", "1.1.0", CASEBANK_TEST_CRASH_AT=step)
    killed.communicate(timeout=60)
    assert killed.returncode == -signal.SIGKILL
    assert (git_dir(repo) / "casebank-release.journal").exists()
    # the next release (of another version) first finishes or undoes the interrupted one
    code, _, err = run(capsys, "release", "--root", str(repo.root), "1.1.0", "--dry-run")
    assert code == 1 and "was interrupted" in err  # a dry run says so and touches nothing
    code, out, err = run(capsys, "verify", "--root", str(repo.root))
    if step in BEFORE_COMMIT:
        assert "undid the interrupted release 1.1.0" in err
        assert repo.state() == before
        assert code == 0 and "verified 1 release(s)" in out
    else:
        assert "the interrupted release 1.1.0" in err
        assert repo.tags() == ["v1.0.0", "v1.1.0"]
        assert code == 0 and "verified 2 release(s)" in out
    assert not (git_dir(repo) / "casebank-release.journal").exists()
    assert not (git_dir(repo) / "casebank-release.lock").exists()


def _wait_for_pause(repo: GitRepo, timeout: float = 60) -> None:
    marker = git_dir(repo) / "casebank-paused"
    deadline = time.monotonic() + timeout
    while not marker.exists():
        assert time.monotonic() < deadline, "the release never reached its pause"
        time.sleep(0.05)


@pytest.mark.parametrize("signum", [signal.SIGTERM, signal.SIGHUP, signal.SIGINT])
@pytest.mark.parametrize("step", ["changelog", "commit"])
def test_a_signal_undoes_the_release_at_once(
    repo: GitRepo, capsys: pytest.CaptureFixture[str], signum: int, step: str
) -> None:
    released(repo, capsys, "1.0.0")
    change(repo, "alpha", "Alpha, revised")
    before = repo.state()
    paused = process(repo, "release", "1.1.0", CASEBANK_TEST_PAUSE_AT=step)
    _wait_for_pause(repo)
    paused.send_signal(signum)
    (git_dir(repo) / "casebank-paused").unlink()
    _, err = paused.communicate(timeout=60)
    assert paused.returncode == 2, err
    assert "stopped; undone:" in err and "the repository is as it was" in err
    assert repo.state() == before
    assert not (git_dir(repo) / "casebank-release.journal").exists()


def test_a_second_release_refuses_at_once_and_touches_nothing(
    repo: GitRepo, capsys: pytest.CaptureFixture[str]
) -> None:
    change(repo, "alpha", "Alpha, revised")
    first = process(repo, "release", "1.0.0", CASEBANK_TEST_PAUSE_AT="manifest")
    _wait_for_pause(repo)
    during = repo.state()
    code, _, err = run(capsys, "release", "--root", str(repo.root), "1.0.1")
    assert code == 1
    holder = f"casebank release 1.0.0 (process {first.pid}"
    assert f"another release is running in this repository: {holder}" in err
    assert repo.state() == during
    (git_dir(repo) / "casebank-paused").unlink()
    _, err = first.communicate(timeout=60)
    assert first.returncode == 0, err
    assert repo.tags() == ["v1.0.0"]
    assert run(capsys, "verify", "--root", str(repo.root))[0] == 0


def test_a_lock_left_by_a_killed_release_is_taken_over(
    repo: GitRepo, capsys: pytest.CaptureFixture[str]
) -> None:
    killed = process(repo, "release", "1.0.0", CASEBANK_TEST_CRASH_AT="manifest")
    killed.communicate(timeout=60)
    assert (git_dir(repo) / "casebank-release.lock").exists()
    code, _, err = run(capsys, "release", "--root", str(repo.root), "1.0.0")
    assert code == 0, err
    assert "undid the interrupted release 1.0.0" in err


# --- failure messages -----------------------------------------------------------------------


def test_a_write_that_fails_says_its_cause_first_then_what_was_undone(
    repo: GitRepo, capsys: pytest.CaptureFixture[str], monkeypatch: pytest.MonkeyPatch
) -> None:
    import casebank.release.apply as apply

    real = apply.write_atomically

    def refuse_changelog(target: Path, content: bytes) -> None:
        if target.name == "CHANGELOG.md":
            raise PermissionError(1, "Operation not permitted", str(target))
        real(target, content)

    monkeypatch.setattr(apply, "write_atomically", refuse_changelog)
    before = repo.state()
    code, _, err = run(capsys, "release", "--root", str(repo.root), "1.0.0")
    assert code == 1
    first, hint = err.splitlines()[:2]
    assert first == (
        "casebank: the release 1.0.0 failed: cannot write CHANGELOG.md: Operation not permitted"
    )
    assert "undone: releases/1.0.0.json removed" in hint
    assert "the repository is as it was" in hint and "NOT undone" not in hint
    assert repo.state() == before


def test_an_unwritable_releases_folder_is_exit_1_not_an_internal_error(
    repo: GitRepo, capsys: pytest.CaptureFixture[str], monkeypatch: pytest.MonkeyPatch
) -> None:
    import casebank.release.apply as apply

    def read_only(target: Path, content: bytes) -> None:
        raise PermissionError(13, "Permission denied", str(target))

    monkeypatch.setattr(apply, "write_atomically", read_only)
    code, _, err = run(capsys, "release", "--root", str(repo.root), "1.0.0")
    assert code == 1 and "cannot write 1.0.0.json: Permission denied" in err
    assert "internal error" not in err


# --- file modes -----------------------------------------------------------------------------


@pytest.mark.parametrize("umask,mode", [(0o022, 0o644), (0o002, 0o664)])
def test_written_files_honour_the_umask(
    repo: GitRepo, capsys: pytest.CaptureFixture[str], umask: int, mode: int
) -> None:
    old = os.umask(umask)
    try:
        released(repo, capsys, "1.0.0")
    finally:
        os.umask(old)
    for relative in ("releases/1.0.0.json", "CHANGELOG.md"):
        assert stat.S_IMODE((repo.root / relative).stat().st_mode) == mode, relative


# --- --suggest and removals -----------------------------------------------------------------


def test_a_removal_needs_a_major_release_or_a_reason(
    repo: GitRepo, capsys: pytest.CaptureFixture[str]
) -> None:
    released(repo, capsys, "1.0.0")
    repo.delete("cases/gamma.yaml")
    repo.commit("Retire gamma")
    root = str(repo.root)
    assert run(capsys, "release", "--root", root, "--suggest")[1].strip() == "2.0.0"
    code, _, err = run(capsys, "release", "--root", root, "1.1.0")
    assert code == 1 and "removes 1 case(s) (gamma)" in err and "--allow-removal" in err
    reason = "gamma duplicated beta; no evaluation used it"
    assert run(capsys, "release", "--root", root, "1.1.0", "--allow-removal", reason)[0] == 0
    changelog = (repo.root / "CHANGELOG.md").read_text()
    assert f"Removed in a minor release, not a major one: {reason}" in changelog


def test_suggest_proposes_only_what_release_accepts(
    repo: GitRepo, capsys: pytest.CaptureFixture[str]
) -> None:
    released(repo, capsys, "1.0.0")
    change(repo, "alpha", "Alpha, revised")
    root = str(repo.root)
    suggested = run(capsys, "release", "--root", root, "--suggest")[1].strip()
    assert run(capsys, "release", "--root", root, suggested, "--dry-run")[0] == 0
    repo.git("tag", "v1.0.1", "HEAD")  # a stray tag: both refuse, for the same reason
    code_suggest, _, err_suggest = run(capsys, "release", "--root", root, "--suggest")
    code_release, _, err_release = run(capsys, "release", "--root", root, "1.0.2")
    assert code_suggest == code_release == 1
    assert "v1.0.1" in err_suggest and "v1.0.1" in err_release


# --- the guarantee, as a property -----------------------------------------------------------

from hypothesis import HealthCheck, event, settings  # noqa: E402
from hypothesis import strategies as st  # noqa: E402
from hypothesis.stateful import (  # noqa: E402
    RuleBasedStateMachine,
    initialize,
    invariant,
    rule,
)

# The repository every run starts from, released once as 1.0.1 by the first run and copied.
_FIRST_RELEASE: list[tuple[GitRepo, dict[tuple[str, int], str]]] = []


class Releases(RuleBasedStateMachine):
    """Random edits, merges, tampering and releases on a real repository. Whatever happens, no
    (case_id, version) ever names two content hashes across the releases casebank made, and a
    release that succeeds leaves a repository that verifies."""

    def __init__(self) -> None:
        super().__init__()
        self.published: dict[tuple[str, int], str] = {}
        self.version = [1, 0, 0]
        self.tampered = False

    @initialize()
    def repository(self) -> None:
        import atexit
        import shutil
        import tempfile

        self.work = Path(tempfile.mkdtemp(prefix="casebank-states-"))
        self.edits = 0
        if _FIRST_RELEASE:  # the first run made it: every later run starts from a copy
            template, published = _FIRST_RELEASE[0]
            shutil.copytree(template.root, self.work / "repo", symlinks=True)
            self.repo = GitRepo(self.work / "repo", template.clock)
            self.published = dict(published)
            self.version = [1, 0, 1]
            return
        self.repo = dataset(self.work / "repo")
        self.release("patch")  # every run starts from a first release (1.0.1)
        assert self.version == [1, 0, 1]
        first = Path(tempfile.mkdtemp(prefix="casebank-states-first-"))
        atexit.register(shutil.rmtree, first, ignore_errors=True)  # kept for every later run
        template = GitRepo(first / "repo")
        shutil.copytree(self.repo.root, template.root, symlinks=True)
        _FIRST_RELEASE.append((GitRepo(template.root, self.repo.clock), dict(self.published)))

    def teardown(self) -> None:
        import shutil

        shutil.rmtree(self.work, ignore_errors=True)

    def _cli(self, *argv: str) -> int:
        import contextlib
        import io

        with contextlib.redirect_stdout(io.StringIO()), contextlib.redirect_stderr(io.StringIO()):
            return main([*argv, "--root", str(self.repo.root)])

    @rule(case=st.sampled_from(["alpha", "beta", "gamma", "delta"]))
    def edit(self, case: str) -> None:
        self.edits += 1
        self.repo.write(f"cases/{case}.yaml", case_text(case, f"{case} edit {self.edits}"))
        self.repo.commit(f"Edit {case}")

    @rule(case=st.sampled_from(["beta", "gamma"]))
    def remove(self, case: str) -> None:
        if (self.repo.root / f"cases/{case}.yaml").exists():
            self.repo.delete(f"cases/{case}.yaml")
            self.repo.commit(f"Remove {case}")

    @rule()
    def merge_a_side_branch(self) -> None:
        self.repo.git("checkout", "-q", "-b", f"side{self.edits}")
        self.edits += 1
        self.repo.write("cases/alpha.yaml", case_text("alpha", f"alpha side {self.edits}"))
        self.repo.commit("Side edit")
        self.repo.git("checkout", "-q", "main")
        self.repo.git("merge", "-q", "--no-edit", "--no-ff", f"side{self.edits - 1}")

    @rule(bump=st.sampled_from(["major", "minor", "patch", "suggest"]))
    def release(self, bump: str) -> None:
        if bump == "suggest":
            import contextlib
            import io

            out = io.StringIO()
            with contextlib.redirect_stdout(out), contextlib.redirect_stderr(io.StringIO()):
                if main(["release", "--suggest", "--root", str(self.repo.root)]) != 0:
                    return
            version = out.getvalue().strip()
        else:
            major, minor, patch = self.version
            version = {
                "major": f"{major + 1}.0.0",
                "minor": f"{major}.{minor + 1}.0",
                "patch": f"{major}.{minor}.{patch + 1}",
            }[bump]
        if self._cli("release", version) != 0:
            event("a release refused")
            return
        event("a release made")
        self.version = [int(p) for p in version.split(".")]
        data = json.loads((self.repo.root / f"releases/{version}.json").read_text())
        for entry in data["cases"]:
            key = (entry["case_id"], entry["version"])
            assert self.published.setdefault(key, entry["sha256"]) == entry["sha256"], key
        assert self._cli("verify") == 0

    @rule(
        case=st.sampled_from(["alpha", "beta", "delta"]), bump=st.sampled_from(["minor", "patch"])
    )
    def edit_and_release(self, case: str, bump: str) -> None:
        self.edit(case)
        self.release(bump)

    @rule()
    def tamper_with_a_manifest(self) -> None:
        manifests = sorted((self.repo.root / "releases").glob("*.json"))
        if manifests:
            data: Any = json.loads(manifests[0].read_text())
            data["cases"][0]["version"] += 1
            manifests[0].write_text(json.dumps(data, indent=2, sort_keys=True) + "\n")
            self.repo.commit("Tamper")
            self.tampered = True

    @rule()
    def delete_a_tag(self) -> None:
        tags = self.repo.tags()
        if tags:
            self.repo.git("tag", "-d", tags[-1])
            self.tampered = True

    @invariant()
    def no_lock_or_journal_is_left(self) -> None:
        if hasattr(self, "repo"):
            assert not (self.repo.root / ".git" / "casebank-release.journal").exists()
            assert not (self.repo.root / ".git" / "casebank-release.lock").exists()


TestReleaseStates = Releases.TestCase
TestReleaseStates.settings = settings(
    max_examples=examples(30),
    stateful_step_count=12,
    deadline=None,
    suppress_health_check=[HealthCheck.too_slow, HealthCheck.filter_too_much],
)
