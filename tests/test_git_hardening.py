"""Right answers about history and the working tree, on real repositories: line-end conversion,
which files belong to a case, attachment identity, and clear messages for a rebased release, a
shallow clone and a detached HEAD."""

from __future__ import annotations

import subprocess
from pathlib import Path

import pytest

from casebank.format.layout import case_part
from casebank.release.history import scan_history
from casebank.workspace import scan_cases
from conftest import run_cli as run
from gitrepo import GitRepo, case_text
from sitedata import tiny_png

pytestmark = pytest.mark.usefixtures("isolated_git")

REPOSITORY = Path(__file__).resolve().parents[1]
# A tracing as an editor writes it: several lines, LF line ends.
SVG = (
    b'<svg xmlns="http://www.w3.org/2000/svg" viewBox="0 0 100 20">\n'
    b'  <path d="M0 10 L20 10 L25 2 L30 18 L35 10 L100 10" fill="none" stroke="black"/>\n'
    b"</svg>\n"
)


def released_with(repo: GitRepo, capsys: pytest.CaptureFixture[str], files: dict) -> None:
    for path, content in files.items():
        repo.write(path, content)
    repo.commit("Attach files")
    assert run(capsys, "release", "1.0.0", "--root", str(repo.root))[0] == 0


# --- line ends: the shipped .gitattributes -------------------------------------------------------


def test_the_repository_ships_its_gitattributes() -> None:
    attributes = (REPOSITORY / ".gitattributes").read_text("utf-8")
    assert "cases/*/attachments/** binary" in attributes
    assert "cases/*.yaml text eol=lf" in attributes


@pytest.mark.parametrize("shipped", [True, False])
def test_autocrlf_does_not_change_an_unchanged_attachment(
    repo: GitRepo, tmp_path: Path, capsys: pytest.CaptureFixture[str], shipped: bool
) -> None:
    files: dict[str, bytes] = {"cases/alpha/attachments/ecg.svg": SVG}
    if shipped:
        files[".gitattributes"] = (REPOSITORY / ".gitattributes").read_bytes()
    released_with(repo, capsys, files)
    clone = tmp_path / "windows"
    subprocess.run(
        ["git", "clone", "-q", "-c", "core.autocrlf=true", str(repo.root), str(clone)],
        check=True,
    )
    converted = (clone / "cases/alpha/attachments/ecg.svg").read_bytes()
    code, out, _ = run(capsys, "diff", "HEAD", "--root", str(clone))
    site = tmp_path / "site"
    assert run(capsys, "site", "--root", str(clone), "--out", str(site))[0] == 0
    page = (site / "cases/alpha.html").read_text("utf-8")
    if shipped:
        assert converted == SVG  # binary: checked out byte for byte
        assert code == 0 and "No case changed." in out
        assert "as released in 1.0.0" in page and "unreleased changes" not in page
    else:  # what the shipped file prevents: the checkout converts, and the attachment "changed"
        assert b"\r\n" in converted
        assert "attachments/ecg.svg" in out
        assert "changed since release 1.0.0" in page


# --- which files belong to a case ------------------------------------------------------------


def test_a_committed_gitkeep_is_no_part_of_a_case_in_history_or_the_working_tree(
    repo: GitRepo, tmp_path: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    released_with(
        repo,
        capsys,
        {
            "cases/alpha/attachments/.gitkeep": b"",
            "cases/alpha/attachments/ecg.png": tiny_png(),
            "cases/beta/attachments/.gitkeep": b"",  # a folder kept for attachments to come
        },
    )
    snapshot = scan_history(repo.root, repo.head(), {repo.head()}).snapshots[repo.head()]
    assert sorted(snapshot.cases["alpha"].attachments) == ["ecg.png"]
    assert dict(snapshot.cases["beta"].attachments) == {}
    listing = scan_cases(repo.root)
    assert listing.attachments == {"alpha": ["ecg.png"]}
    assert case_part("cases/alpha/attachments/.gitkeep") is None
    assert case_part("cases/alpha/attachments/ecg.png") == ("alpha", "ecg.png")
    assert case_part("cases/alpha.yaml") == ("alpha", "")
    manifest = (repo.root / "releases/1.0.0.json").read_text("utf-8")
    assert ".gitkeep" not in manifest
    assert "No case changed." in run(capsys, "diff", "HEAD", "--root", str(repo.root))[1]
    assert run(capsys, "verify", "--root", str(repo.root))[0] == 0
    site = tmp_path / "site"
    assert run(capsys, "site", "--root", str(repo.root), "--out", str(site))[0] == 0
    assert "as released in 1.0.0" in (site / "cases/alpha.html").read_text("utf-8")


def test_removing_one_of_two_identical_attachments_is_a_change(
    repo: GitRepo, capsys: pytest.CaptureFixture[str]
) -> None:
    png = tiny_png()
    released_with(
        repo,
        capsys,
        {"cases/alpha/attachments/before.png": png, "cases/alpha/attachments/after.png": png},
    )
    repo.delete("cases/alpha/attachments/after.png")
    code, out, _ = run(capsys, "diff", "HEAD", "--root", str(repo.root))
    assert code == 0 and "No case changed." not in out
    assert "alpha (cases/alpha.yaml): version 1 → 2 at the next release" in out
    assert "attachments/after.png:" in out and "→ (absent)" in out
    removed = repo.commit("Remove the duplicate")
    code, out, _ = run(capsys, "diff", "HEAD~1", removed, "--root", str(repo.root))
    assert "attachments/after.png:" in out  # between two revisions too
    assert run(capsys, "release", "1.1.0", "--root", str(repo.root))[0] == 0


# --- clear messages -------------------------------------------------------------------------


def test_a_rebased_release_is_named_as_rewritten_history_not_a_fork(
    repo: GitRepo, capsys: pytest.CaptureFixture[str]
) -> None:
    assert run(capsys, "release", "1.0.0", "--root", str(repo.root))[0] == 0
    repo.write("cases/alpha.yaml", case_text("alpha", "Changed alpha"))
    repo.commit("Change alpha")
    assert run(capsys, "release", "1.1.0", "--root", str(repo.root))[0] == 0
    first = repo.git("rev-list", "--max-parents=0", "HEAD").strip()
    repo.git("checkout", "-q", "-b", "rewritten", first)
    repo.write("NOTES.txt", "a commit slipped in under the releases")
    repo.commit("A note")
    repo.git("cherry-pick", f"{first}..main")
    repo.git("branch", "-f", "main", "rewritten")
    repo.git("checkout", "-q", "main")
    code, out, _ = run(capsys, "verify", "--root", str(repo.root))
    assert code == 1
    assert "forked" not in out and "does not contain" not in out
    for version in ("1.0.0", "1.1.0"):
        assert (
            f"release {version}: tag v{version} is not in HEAD's history, yet HEAD holds the "
            f"same releases/{version}.json: the branch was rewritten after the release" in out
        )
    repo.write("cases/beta.yaml", case_text("beta", "Changed beta"))
    repo.commit("Change beta")
    code, _, err = run(capsys, "release", "1.2.0", "--root", str(repo.root))
    assert code == 1 and "the branch was rewritten after the release" in err


def test_every_history_command_in_a_shallow_clone_says_how_to_fetch_it(
    repo: GitRepo, tmp_path: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    assert run(capsys, "release", "1.0.0", "--root", str(repo.root))[0] == 0
    repo.write("cases/alpha.yaml", case_text("alpha", "Changed alpha"))
    repo.commit("Change alpha")
    shallow = tmp_path / "shallow"
    subprocess.run(
        ["git", "clone", "-q", "--depth", "1", f"file://{repo.root}", str(shallow)], check=True
    )
    out = tmp_path / "out"
    for argv in (
        ["site", "--out", str(out)],
        ["site", "--release", "1.0.0", "--out", str(out)],
        ["diff"],
        ["export", "--release", "1.0.0", "--out", str(out)],
    ):
        code, _, err = run(capsys, *argv, "--root", str(shallow))
        assert code == 1, (argv, err)
        assert err.startswith("casebank: this is a shallow clone"), (argv, err)
        assert "git fetch --unshallow" in err and "is missing" not in err
    assert not out.exists()


@pytest.mark.parametrize("extra", [[], ["--dry-run"], ["--push"]])
def test_a_release_on_a_detached_head_is_refused(
    repo: GitRepo, capsys: pytest.CaptureFixture[str], extra: list[str]
) -> None:
    repo.git("checkout", "-q", "--detach")
    before = repo.state()
    code, out, err = run(capsys, "release", "1.0.0", "--root", str(repo.root), *extra)
    assert code == 1 and out == ""
    assert err.startswith(f"casebank: HEAD is detached (at {repo.head()[:12]})")
    assert "git switch main" in err and "push it with" not in err
    assert repo.state() == before
