"""One output-folder policy for every command that writes a folder: export, site and import.

Each refusal is tried on all three commands, on real folders: the command exits 1, says what
is wrong and what to do, and every file on disk is as it was (no stray temporary or
``.link.*.old`` either). The repository, a folder holding it and the home folder are refused
even when they hold the command's marker, and with ``--force``.
"""

from __future__ import annotations

import os
from collections.abc import Callable, Iterator
from pathlib import Path

import pytest

from casebank.cli import main
from casebank.workspace import output_marker
from gitrepo import GitRepo

pytestmark = pytest.mark.usefixtures("isolated_git")

SAMPLE = Path(__file__).parent / "data" / "agentclinic_sample.jsonl"
COMMANDS = ("export", "site", "import")


def argv(command: str, root: Path, out: Path, *extra: str) -> list[str]:
    given = ["--out", str(out), "--root", str(root), *extra]
    if command == "export":
        return ["export", "--release", "1.0.0", *given]
    if command == "site":
        return ["site", *given]
    return ["import", "agentclinic", str(SAMPLE), *given]


def everything(folder: Path) -> dict[str, bytes | str]:
    """Every path under ``folder`` (links as their target), to compare before and after."""
    found: dict[str, bytes | str] = {}
    for path in sorted(folder.rglob("*")):
        relative = path.relative_to(folder).as_posix()
        if path.is_symlink():
            found[relative] = f"-> {os.readlink(path)}"
        elif path.is_file():
            found[relative] = path.read_bytes()
        else:
            found[relative] = "folder"
    return found


Where = Callable[[GitRepo, Path], Path]
PROTECTED: dict[str, Where] = {
    "the repository": lambda repo, tmp: repo.root,
    "a folder holding the repository": lambda repo, tmp: tmp,
    "the home folder": lambda repo, tmp: tmp / "users" / "ann",
    "a folder holding the home folder": lambda repo, tmp: tmp / "users",
}


@pytest.mark.parametrize("command", COMMANDS)
@pytest.mark.parametrize("what", sorted(PROTECTED))
def test_the_repository_and_home_are_never_an_output_folder(
    released: GitRepo,
    tmp_path: Path,
    capsys: pytest.CaptureFixture[str],
    monkeypatch: pytest.MonkeyPatch,
    command: str,
    what: str,
) -> None:
    home = tmp_path / "users" / "ann"
    home.mkdir(parents=True)
    monkeypatch.setenv("HOME", str(home))
    out = PROTECTED[what](released, tmp_path)
    # Even a marker planted there (or --force) does not make the folder the command's own.
    (out / output_marker(command)).write_text("planted")
    before = everything(tmp_path)
    code = main(argv(command, released.root, out, *(() if command == "site" else ("--force",))))
    err = capsys.readouterr().err
    assert code == 1, err
    assert f"--out {out} is {what.replace('the home folder', 'your home folder')}" in err
    assert "hint: give a new folder of its own" in err
    assert everything(tmp_path) == before


@pytest.mark.parametrize("command", COMMANDS)
@pytest.mark.parametrize("points_to", ["a folder of someone's files", "the repository"])
def test_a_symbolic_link_as_out_is_refused_and_leaves_no_stray(
    released: GitRepo,
    tmp_path: Path,
    capsys: pytest.CaptureFixture[str],
    command: str,
    points_to: str,
) -> None:
    target = released.root
    if points_to != "the repository":
        target = tmp_path / "theirs"
        target.mkdir()
        (target / "notes.txt").write_text("keep me")
    link = tmp_path / "link"
    link.symlink_to(target, target_is_directory=True)
    before = everything(tmp_path)
    code = main(argv(command, released.root, link, *(() if command == "site" else ("--force",))))
    err = capsys.readouterr().err
    assert code == 1 and f"--out {link} is a symbolic link (to {target})" in err, err
    assert f"give the folder it points to ({target}) itself" in err
    assert everything(tmp_path) == before  # no .link.*.old, no .link.*.tmp


@pytest.mark.parametrize("command", COMMANDS)
def test_a_file_as_out_is_refused(
    released: GitRepo, tmp_path: Path, capsys: pytest.CaptureFixture[str], command: str
) -> None:
    out = tmp_path / "notes.txt"
    out.write_text("keep me")
    before = everything(tmp_path)
    assert main(argv(command, released.root, out)) == 1
    assert f"--out {out} is a file, not a folder" in capsys.readouterr().err
    assert everything(tmp_path) == before


@pytest.mark.parametrize("command", ["export", "site"])
def test_a_folder_the_command_did_not_write_is_never_replaced(
    released: GitRepo, tmp_path: Path, capsys: pytest.CaptureFixture[str], command: str
) -> None:
    theirs = tmp_path / "theirs"
    (theirs / "work").mkdir(parents=True)
    (theirs / "work" / "thesis.tex").write_text("unpushed work")
    before = everything(tmp_path)
    for extra in ((), ("--force",) if command == "export" else ()):
        assert main(argv(command, released.root, theirs, *extra)) == 1
        err = capsys.readouterr().err
        assert "did not write" in err and output_marker(command) in err
        assert everything(tmp_path) == before


@pytest.mark.parametrize("command", ["export", "site"])
def test_a_folder_the_command_wrote_is_replaced_whole(
    released: GitRepo, tmp_path: Path, capsys: pytest.CaptureFixture[str], command: str
) -> None:
    out = tmp_path / "nested" / "out"
    extra = () if command == "site" else ("--force",)
    assert main(argv(command, released.root, out)) == 0
    assert (out / output_marker(command)).is_file()
    (out / "stale.txt").write_text("from an older run")
    assert main(argv(command, released.root, out, *extra)) == 0
    assert not (out / "stale.txt").exists()
    # a site's marker does not let export replace the site, and the reverse
    other = "site" if command == "export" else "export"
    before = everything(tmp_path)
    assert main(argv(other, released.root, out, *(["--force"] if other == "export" else []))) == 1
    assert f"`casebank {other}` did not write" in capsys.readouterr().err
    assert everything(tmp_path) == before
    assert sorted(p.name for p in (tmp_path / "nested").iterdir()) == ["out"]


def test_import_adds_drafts_to_a_folder_and_deletes_nothing(
    released: GitRepo, tmp_path: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    drafts = tmp_path / "drafts"
    drafts.mkdir()
    (drafts / "mine.yaml").write_text("case_id: mine\n")
    assert main(argv("import", released.root, drafts)) == 0
    assert (drafts / "mine.yaml").read_text() == "case_id: mine\n"
    assert len(list(drafts.glob("*.yaml"))) == 5


def fill_the_disk_at_write(nth: int, monkeypatch: pytest.MonkeyPatch) -> None:
    """The disk fills up while the ``nth`` file a folder writer writes is written."""
    from casebank import workspace

    written: list[int] = []
    real = workspace._write_synced

    def fill_up(fd: int, content: bytes, mode: int) -> None:
        written.append(fd)
        if len(written) == nth:
            os.close(fd)
            raise OSError(28, "No space left on device")
        real(fd, content, mode)

    monkeypatch.setattr(workspace, "_write_synced", fill_up)


@pytest.mark.parametrize("command", ["export", "site"])
def test_a_full_disk_names_the_file_and_leaves_nothing(
    released: GitRepo,
    tmp_path: Path,
    capsys: pytest.CaptureFixture[str],
    monkeypatch: pytest.MonkeyPatch,
    command: str,
) -> None:
    # The catalog remembered first (as `validate` leaves it), so that the writes counted are
    # the folder writer's, not the cache's (a cache that cannot be written is no failure).
    assert main(["validate", "--root", str(released.root)]) == 0
    capsys.readouterr()
    fill_the_disk_at_write(2, monkeypatch)
    out = tmp_path / "new" / "out"
    before = everything(tmp_path)
    assert main(argv(command, released.root, out)) == 1
    err = capsys.readouterr().err
    assert f"cannot write {out}/" in err and "No space left on device" in err
    assert "hint: the disk holding it is full" in err
    assert everything(tmp_path) == before  # not even the parent folder it made


def test_files_made_as_they_are_written_stop_when_a_write_fails(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    """A folder written from files as they are made (the site's pages, rendered by worker
    processes meanwhile): a failed write stops the maker before the error is raised, and
    leaves nothing behind."""
    from casebank import workspace
    from casebank.errors import WriteError

    events: list[str] = []

    def pages() -> Iterator[tuple[str, bytes]]:
        try:
            for n in range(5):
                events.append(f"made {n}")
                yield f"page-{n}.html", b"<p>page</p>"
        finally:
            events.append("stopped")

    fill_the_disk_at_write(2, monkeypatch)  # at page-1.html
    root = tmp_path / "repo"
    root.mkdir()
    try:
        workspace.write_folder_atomically(
            tmp_path / "out", pages(), command="site", root=root, replace=False
        )
    except WriteError:
        events.append("raised")
    assert events == ["made 0", "made 1", "stopped", "raised"]
    assert sorted(p.name for p in tmp_path.iterdir()) == ["home", "repo"]


def test_what_a_builder_fails_to_read_is_its_own_error_not_a_write_failure(
    tmp_path: Path,
) -> None:
    """Export and site make their files while the folder is written: an OSError of the
    builder's own (a file it reads) stays itself, and the folder is undone."""
    from casebank import workspace

    def build(folder: workspace.FolderWriter) -> None:
        folder.write("first.txt", b"one")
        raise FileNotFoundError(2, "No such file or directory", "/the/source.css")

    root = tmp_path / "repo"
    root.mkdir()
    with pytest.raises(FileNotFoundError) as raised:
        workspace.build_folder_atomically(
            tmp_path / "out", build, command="export", root=root, replace=False
        )
    assert raised.value.filename == "/the/source.css"
    assert sorted(p.name for p in tmp_path.iterdir()) == ["home", "repo"]
