"""`casebank verify`: clean releases pass; every kind of tampering exits 1 naming the release."""

from __future__ import annotations

import json
from collections.abc import Callable
from pathlib import Path
from typing import Any

import pytest
from git.cmd import Git

from conftest import run_cli as cli
from gitrepo import BOB, CATALOG, GitRepo, case_text, dataset

pytestmark = pytest.mark.usefixtures("isolated_git")


@pytest.fixture
def released(tmp_path: Path, capsys: pytest.CaptureFixture[str]) -> GitRepo:
    """Two releases: 1.0.0 (alpha, beta, gamma), then 2.0.0 (alpha changed, gamma removed)."""
    repo = dataset(tmp_path / "repo")
    assert cli(capsys, "release", "--root", str(repo.root), "1.0.0")[0] == 0
    repo.write("cases/alpha.yaml", case_text("alpha", "Revised"))
    repo.delete("cases/gamma.yaml")
    repo.commit("Revise alpha, retire gamma", author=BOB)
    assert cli(capsys, "release", "--root", str(repo.root), "2.0.0")[0] == 0
    repo.write("cases/beta.yaml", case_text("beta", "Unreleased edit"))
    repo.commit("Work after the last release")
    return repo


def verify(capsys: pytest.CaptureFixture[str], repo: GitRepo) -> tuple[int, str]:
    code, out, _ = cli(capsys, "verify", "--root", str(repo.root))
    return code, out


def test_no_releases_yet_exits_0(tmp_path: Path, capsys: pytest.CaptureFixture[str]) -> None:
    repo = dataset(tmp_path / "repo")
    assert verify(capsys, repo) == (0, "no releases yet: nothing to verify\n")


def test_untouched_releases_verify(
    released: GitRepo, capsys: pytest.CaptureFixture[str], monkeypatch: pytest.MonkeyPatch
) -> None:
    logs: list[str] = []
    execute = Git.execute

    def counting(self: Git, command: Any, *args: Any, **kwargs: Any) -> Any:
        logs.extend(part for part in command if part == "log")
        return execute(self, command, *args, **kwargs)

    monkeypatch.setattr(Git, "execute", counting)
    assert verify(capsys, released) == (0, "verified 2 release(s): 1.0.0, 2.0.0\n")
    assert logs == ["log"]  # one history pass for every release


def edit_manifest(
    version: str, change: Callable[[dict[str, Any]], None]
) -> Callable[[GitRepo], None]:
    def tamper(repo: GitRepo) -> None:
        path = repo.root / f"releases/{version}.json"
        data = json.loads(path.read_text("utf-8"))
        change(data)
        path.write_text(
            json.dumps(data, indent=2, sort_keys=True, ensure_ascii=False) + "\n", encoding="utf-8"
        )
        repo.commit(f"Tamper with {version}")

    return tamper


def _case(data: dict[str, Any], case_id: str) -> dict[str, Any]:
    return next(c for c in data["cases"] if c["case_id"] == case_id)


def _reformat(repo: GitRepo) -> None:
    path = repo.root / "releases/1.0.0.json"
    path.write_text(
        json.dumps(json.loads(path.read_text("utf-8")), indent=4, sort_keys=True) + "\n",
        encoding="utf-8",
    )
    repo.commit("Reformat a manifest")


def _move_tag(repo: GitRepo) -> None:
    repo.git("tag", "-f", "-a", "-m", "moved", "v1.0.0", "v2.0.0^{commit}")


def _delete_tag(repo: GitRepo) -> None:
    repo.git("tag", "-d", "v2.0.0")


def _lightweight_tag(repo: GitRepo) -> None:
    repo.git("tag", "-f", "v1.0.0", "v1.0.0^{commit}")


def _stray_tag(repo: GitRepo) -> None:
    repo.git("tag", "-a", "-m", "not a release", "v3.0.0")


def _delete_manifest(repo: GitRepo) -> None:
    repo.delete("releases/1.0.0.json")
    repo.commit("Delete a manifest")


def _rewrite_history(repo: GitRepo, *, move_tags: bool) -> None:
    """Re-create every commit with another author for the first one (as a rebase would)."""
    commits = repo.git("rev-list", "--reverse", "--first-parent", "HEAD").split()
    releases = {repo.git("rev-parse", f"{tag}^{{commit}}").strip(): tag for tag in repo.tags()}
    parent: str | None = None
    for number, commit in enumerate(commits):
        tree = repo.git("rev-parse", f"{commit}^{{tree}}").strip()
        message = repo.git("log", "-1", "--format=%B", commit)
        who = {"GIT_AUTHOR_NAME": "Someone Else"} if number == 0 else {}
        date = repo.git("log", "-1", "--format=%cI", commit).strip()
        env = {**who, "GIT_AUTHOR_DATE": date, "GIT_COMMITTER_DATE": date}
        parent = repo.git(
            "commit-tree", tree, *(["-p", parent] if parent else []), "-m", message, env=env
        ).strip()
        if move_tags and commit in releases:
            repo.git("tag", "-f", "-a", "-m", "re-tagged", releases[commit], parent)
    assert parent is not None
    repo.git("reset", "-q", "--hard", parent)


TAMPERING = {
    "edited case hash": (
        edit_manifest("1.0.0", lambda d: _case(d, "beta").update(sha256="0" * 64)),
        [
            "release 1.0.0, case beta: `sha256` is '000",
            "release 1.0.0: releases/1.0.0.json on HEAD differs",
            "release 2.0.0, case beta: version 1 has content",
        ],
    ),
    "edited title": (
        edit_manifest("2.0.0", lambda d: _case(d, "alpha").update(title="Something else")),
        ["release 2.0.0, case alpha: `title` is 'Something else' in the manifest, but 'Revised'"],
    ),
    "version not bumped": (
        edit_manifest("2.0.0", lambda d: _case(d, "alpha").update(version=1)),
        [
            "release 2.0.0, case alpha: its content changed, so its version should be 2, not 1",
            "release 2.0.0, case alpha: version 1 has content",
        ],
    ),
    "version jumped": (
        edit_manifest("2.0.0", lambda d: _case(d, "alpha").update(version=3)),
        ["release 2.0.0, case alpha: its content changed, so its version should be 2, not 3"],
    ),
    "removed case dropped": (
        edit_manifest("2.0.0", lambda d: d.update(removed=[])),
        ["release 2.0.0: `removed` is []"],
    ),
    "case smuggled in": (
        edit_manifest(
            "2.0.0", lambda d: d["cases"].append({**_case(d, "beta"), "case_id": "zeta"})
        ),
        ["release 2.0.0, case zeta: in the manifest, but not in the source commit"],
    ),
    "source commit edited": (
        edit_manifest("2.0.0", lambda d: d.update(source_commit="1" * 40)),
        [
            "release 2.0.0: its source commit 1111111111111111111111111111111111111111 is not",
            "release 2.0.0: tag v2.0.0 points at",
        ],
    ),
    "broken chain": (
        edit_manifest("2.0.0", lambda d: d.update(previous_version=None)),
        ["release 2.0.0: it names no release as its previous version, not 1.0.0"],
    ),
    "manifest reformatted": (
        _reformat,
        ["release 1.0.0: the manifest's data is right but its bytes were edited"],
    ),
    "tag moved": (_move_tag, ["release 1.0.0: tag v1.0.0 points at"]),
    "tag deleted": (_delete_tag, ["release 2.0.0: the manifest has no tag v2.0.0"]),
    "tag not annotated": (_lightweight_tag, ["release 1.0.0: tag v1.0.0 is not an annotated tag"]),
    "tag without manifest": (
        _stray_tag,
        ["release 3.0.0: tag v3.0.0 has no manifest releases/3.0.0.json on HEAD"],
    ),
    "manifest deleted": (
        _delete_manifest,
        [
            "release 1.0.0: tag v1.0.0 has no manifest releases/1.0.0.json",
            "release 2.0.0: it names 1.0.0 as its previous version, not none",
        ],
    ),
    "manifest corrupted": (
        lambda r: (r.write("releases/1.0.0.json", "{not json"), r.commit("Corrupt"))[1],
        ["release 1.0.0: releases/1.0.0.json: not valid JSON"],
    ),
    "stray file in releases": (
        lambda r: (r.write("releases/latest.json", "{}"), r.commit("Add a stray file"))[1],
        ["release latest: releases/latest.json is not named after a release version"],
    ),
    "history rewritten": (
        lambda r: _rewrite_history(r, move_tags=False),
        [
            "release 1.0.0: tag v1.0.0 is not in HEAD's history",
            "release 2.0.0: tag v2.0.0 is not in HEAD's history",
        ],
    ),
    "history rewritten and re-tagged": (
        lambda r: _rewrite_history(r, move_tags=True),
        ["release 1.0.0: tag v1.0.0 points at", "release 2.0.0: tag v2.0.0 points at"],
    ),
}


@pytest.mark.parametrize("name", TAMPERING)
def test_tampering_fails_naming_the_release_and_case(
    released: GitRepo, capsys: pytest.CaptureFixture[str], name: str
) -> None:
    tamper, expected = TAMPERING[name]
    tamper(released)
    code, out = verify(capsys, released)
    assert code == 1, out
    lines = out.splitlines()
    assert lines[-1].startswith("verify failed: ")
    for message in expected:
        assert any(line.startswith(f"error: {message}") for line in lines), (message, out)


def test_a_changed_case_history_is_caught_by_recomputation(
    tmp_path: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    """Re-creating a release's history with other content: the manifest no longer matches."""
    repo = dataset(tmp_path / "repo")
    assert cli(capsys, "release", "--root", str(repo.root), "1.0.0")[0] == 0
    manifest = (repo.root / "releases/1.0.0.json").read_bytes()
    other = dataset(
        tmp_path / "other", {c: case_text(c, f"Other {c}") for c in ("alpha", "beta", "gamma")}
    )
    other.write(
        "releases/1.0.0.json",
        manifest.replace(repo.git("rev-parse", "v1.0.0^").strip().encode(), other.head().encode()),
    )
    other.write("CHANGELOG.md", (repo.root / "CHANGELOG.md").read_text("utf-8"))
    other.commit("Release dataset 1.0.0")
    other.git("tag", "-a", "-m", "forged", "v1.0.0")
    code, out = verify(capsys, other)
    assert code == 1
    assert "error: release 1.0.0, case alpha: `sha256` is" in out
    assert "error: release 1.0.0, case alpha: `title` is 'Case alpha' in the manifest" in out


def test_a_shallow_clone_exits_1(
    released: GitRepo, tmp_path: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    clone = tmp_path / "shallow"
    released.git("clone", "-q", "--depth", "1", f"file://{released.root}", str(clone))
    code, _, err = cli(capsys, "verify", "--root", str(clone))
    assert code == 1
    assert "shallow clone" in err and "fetch-depth: 0" in err


def test_outside_a_git_repository_exits_1(
    tmp_path: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    folder = tmp_path / "plain"
    folder.mkdir()
    (folder / "catalog.yaml").write_text(CATALOG, encoding="utf-8")
    code, _, err = cli(capsys, "verify", "--root", str(folder))
    assert code == 1
    assert "not inside a git repository" in err


def test_usage_errors_exit_2(released: GitRepo, capsys: pytest.CaptureFixture[str]) -> None:
    code, _, err = cli(capsys, "verify", "--root", str(released.root), "--bogus")
    assert code == 2
    assert "unrecognized arguments" in err


def test_an_empty_repository_has_no_releases(
    tmp_path: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    repo = GitRepo.create(tmp_path / "empty")
    repo.write("catalog.yaml", CATALOG)
    assert verify(capsys, repo) == (0, "no releases yet: nothing to verify\n")


def test_a_lone_corrupt_manifest_is_not_mistaken_for_no_releases(
    tmp_path: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    repo = dataset(tmp_path / "repo")
    repo.write("releases/1.0.0.json", "[]")
    repo.commit("A manifest that is not one")
    code, out = verify(capsys, repo)
    assert code == 1
    assert "error: release 1.0.0: releases/1.0.0.json: not a casebank manifest" in out
