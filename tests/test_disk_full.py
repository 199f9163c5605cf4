"""A full disk, a quota, a read-only file system: every command that writes exits 1 with the
path it could not write and what to do, and leaves nothing half-written (the old file as it was,
no temporary file). The error is injected where casebank writes bytes (``workspace._write_synced``,
after half of them are on disk); the folder-writing commands are in tests/test_output_folder.py.
"""

from __future__ import annotations

import errno
import os
from collections.abc import Callable
from pathlib import Path

import pytest

from casebank import workspace
from casebank.cli import main
from gitrepo import GitRepo, case_text

pytestmark = pytest.mark.usefixtures("isolated_git")

SAMPLE = Path(__file__).parent / "data" / "agentclinic_sample.jsonl"
HINTS = {
    errno.ENOSPC: "the disk holding it is full",
    errno.EDQUOT: "your disk quota is used up",
    errno.EROFS: "that file system is read-only",
    errno.EACCES: "you may not write there",
}


def fail_writes(monkeypatch: pytest.MonkeyPatch, code: int, after: int = 0, only: str = "") -> None:
    """From the ``after``+1-th file on (of those whose temporary name holds ``only``), half the
    bytes reach the disk, then the write fails."""
    real = workspace._write_synced
    written: list[int] = []

    def failing(fd: int, content: bytes, mode: int) -> None:
        if only not in os.readlink(f"/proc/self/fd/{fd}"):  # the temporary file's name
            real(fd, content, mode)
            return
        written.append(fd)
        if len(written) <= after:
            real(fd, content, mode)
            return
        os.write(fd, content[: len(content) // 2])
        os.close(fd)
        raise OSError(code, os.strerror(code))

    monkeypatch.setattr(workspace, "_write_synced", failing)


def everything(folder: Path) -> dict[str, bytes]:
    return {
        p.relative_to(folder).as_posix(): p.read_bytes()
        for p in sorted(folder.rglob("*"))
        if p.is_file() and not {".git", ".casebank-cache"} & set(p.relative_to(folder).parts)
    }


Command = Callable[[GitRepo, Path], tuple[list[str], str]]
COMMANDS: dict[str, Command] = {
    "release": lambda repo, tmp: (["release", "1.0.0"], "releases/1.0.0.json"),
    "withdraw": lambda repo, tmp: (
        ["withdraw", "alpha@1", "--reason", "The troponin unit was wrong in this version."],
        "withdrawals.yaml",
    ),
    "new": lambda repo, tmp: (["new", "sepsis_002"], "cases/sepsis_002.yaml"),
    "import": lambda repo, tmp: (
        ["import", "agentclinic", str(SAMPLE), "--out", str(repo.root / "drafts")],
        "drafts/inferior_st_elevation_myocardial_infarction_001.yaml",
    ),
    "generate": lambda repo, tmp: (["generate"], "schema/case.schema.json"),
}


@pytest.mark.parametrize("command", sorted(COMMANDS))
def test_a_full_disk_names_the_file_and_leaves_nothing_half_written(
    repo: GitRepo,
    tmp_path: Path,
    capsys: pytest.CaptureFixture[str],
    monkeypatch: pytest.MonkeyPatch,
    command: str,
) -> None:
    if command == "withdraw":
        assert main(["release", "1.0.0", "--root", str(repo.root)]) == 0
    argv, written = COMMANDS[command](repo, tmp_path)
    capsys.readouterr()
    before, files = repo.state(), everything(repo.root)
    fail_writes(monkeypatch, errno.ENOSPC, only=Path(written).name)
    code = main([*argv, "--root", str(repo.root)])
    err = capsys.readouterr().err
    assert code == 1, err
    assert f"cannot write {repo.root / written}: No space left on device" in err
    assert "internal error" not in err
    if command != "release":  # a release says what it undid instead
        assert "hint: the disk holding it is full" in err
    else:
        assert "the repository is as it was" in err
    assert everything(repo.root) == files  # not half a file, not a temporary one
    head, status, tags, _, index = before  # (a folder it made for the file may stay, empty)
    assert (head, status, tags, index) == tuple(repo.state()[i] for i in (0, 1, 2, 4))


@pytest.mark.parametrize("code", sorted(HINTS))
def test_each_kind_of_write_failure_says_what_to_do(
    repo: GitRepo, capsys: pytest.CaptureFixture[str], monkeypatch: pytest.MonkeyPatch, code: int
) -> None:
    assert main(["release", "1.0.0", "--root", str(repo.root)]) == 0
    reason = ["--reason", "The troponin unit was wrong in this version."]
    assert main(["withdraw", "beta@1", *reason, "--root", str(repo.root)]) == 0
    existing = (repo.root / "withdrawals.yaml").read_bytes()  # it must stay as it was
    capsys.readouterr()
    fail_writes(monkeypatch, code)
    assert main(["withdraw", "alpha@1", *reason, "--root", str(repo.root)]) == 1
    err = capsys.readouterr().err
    assert f"cannot write {repo.root / 'withdrawals.yaml'}: {os.strerror(code)}" in err
    assert f"hint: {HINTS[code]}" in err
    assert (repo.root / "withdrawals.yaml").read_bytes() == existing
    assert sorted(p.name for p in repo.root.iterdir() if p.name.startswith(".withdrawals")) == []


def test_a_draft_that_fails_is_not_left_half_written(
    repo: GitRepo, capsys: pytest.CaptureFixture[str], monkeypatch: pytest.MonkeyPatch
) -> None:
    whole = repo.root / "whole"
    argv = ["import", "agentclinic", str(SAMPLE), "--root", str(repo.root), "--out"]
    assert main([*argv, str(whole)]) == 0
    fail_writes(monkeypatch, errno.ENOSPC, after=2)  # the third draft meets the full disk
    out = repo.root / "drafts"
    assert main([*argv, str(out)]) == 1
    assert "No space left on device" in capsys.readouterr().err
    drafts = {p.name: p.read_bytes() for p in out.iterdir()}
    assert len(drafts) == 2  # the third is not there at all, nor a temporary file
    assert all(content == (whole / name).read_bytes() for name, content in drafts.items())


def test_a_case_written_by_new_is_never_overwritten(
    repo: GitRepo, capsys: pytest.CaptureFixture[str], monkeypatch: pytest.MonkeyPatch
) -> None:
    """`new` writes through the same atomic writer, exclusively: a file that appears between
    its check and its write is kept."""
    real = workspace._write_synced

    def someone_else_writes_first(fd: int, content: bytes, mode: int) -> None:
        (repo.root / "cases/sepsis_002.yaml").write_text(case_text("sepsis_002"))
        real(fd, content, mode)

    monkeypatch.setattr(workspace, "_write_synced", someone_else_writes_first)
    assert main(["new", "sepsis_002", "--root", str(repo.root)]) == 1
    assert "exists already" in capsys.readouterr().err
    assert (repo.root / "cases/sepsis_002.yaml").read_text() == case_text("sepsis_002")
    assert not [p for p in (repo.root / "cases").iterdir() if p.name.startswith(".")]
