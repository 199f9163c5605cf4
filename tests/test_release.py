"""`casebank release` on real temporary repositories: plans, versions, refusals, all-or-nothing."""

from __future__ import annotations

import json
import stat
from pathlib import Path
from typing import Any

import pytest

from casebank.errors import CasebankError
from casebank.format.schema import SCHEMA_VERSION, schema_fingerprint
from casebank.release import git
from casebank.release.changelog import HEADER, insert_section
from casebank.release.manifest import dumps, loads
from conftest import run_cli as cli
from gitrepo import ANN, BOB, RELEASE_CLOCK, GitRepo, case_text

pytestmark = pytest.mark.usefixtures("isolated_git")


def release(capsys: pytest.CaptureFixture[str], repo: GitRepo, *argv: str) -> tuple[int, str, str]:
    return cli(capsys, "release", "--root", str(repo.root), *argv)


def manifest(repo: GitRepo, version: str) -> dict[str, Any]:
    data: dict[str, Any] = json.loads((repo.root / f"releases/{version}.json").read_text("utf-8"))
    return data


def cases_of(data: dict[str, Any]) -> dict[str, dict[str, Any]]:
    return {case["case_id"]: case for case in data["cases"]}


def second_round(repo: GitRepo) -> None:
    """The issue's scenario: one case changed, one only re-commented, one added, one removed."""
    repo.write(
        "cases/alpha.yaml", case_text("alpha", "Case alpha, revised").replace("age: 54", "age: 57")
    )
    repo.write("cases/beta.yaml", case_text("beta", "Case beta", comment="reviewed, no change"))
    repo.write("cases/delta.yaml", case_text("delta", "Case delta"))
    repo.delete("cases/gamma.yaml")
    repo.commit("Second round\n\nCo-authored-by: Bob Builder <bob@example.org>")


def test_first_release(repo: GitRepo, capsys: pytest.CaptureFixture[str]) -> None:
    source = repo.head()
    code, out, _ = release(capsys, repo, "1.0.0")
    assert code == 0, out
    assert "released 1.0.0" in out
    data = manifest(repo, "1.0.0")
    assert data["manifest_format"] == 3
    assert (data["licence"], data["withdrawn"]) == ("CC-BY-4.0", [])
    assert (data["dataset"], data["version"], data["previous_version"]) == (
        "casebank",
        "1.0.0",
        None,
    )
    assert data["source_commit"] == source
    assert data["created"] == "2023-11-14T23:13:20Z"  # the source commit's time, not the clock
    assert data["schema"] == {"version": SCHEMA_VERSION, "sha256": schema_fingerprint()}
    assert data["catalog"]["blob"] == repo.git("rev-parse", f"{source}:catalog.yaml").strip()
    assert data["counts"] == {
        "cases": 3,
        "added": 3,
        "changed": 0,
        "removed": 0,
        "unchanged": 0,
        "withdrawn": 0,
    }
    assert [a["case_id"] for a in data["added"]] == ["alpha", "beta", "gamma"]
    alpha = cases_of(data)["alpha"]
    assert alpha == {
        "case_id": "alpha",
        "version": 1,
        "sha256": alpha["sha256"],
        "path": "cases/alpha.yaml",
        "blob": repo.git("rev-parse", f"{source}:cases/alpha.yaml").strip(),
        "attachments": {},
        "first_release": "1.0.0",
        "last_changed": {"commit": source, "date": "2023-11-14T23:13:20Z"},
        "authors": [{"name": ANN[0], "email": ANN[1]}],
        "title": "Case alpha",
        "specialty": "emergency_medicine",
        "difficulty": "medium",
        "reviewers": [],
        "provenance": {"source": "original", "licence": "CC-BY-4.0"},
    }
    # One commit, child of the source, holding only the manifest and the changelog; tagged.
    assert repo.git("rev-parse", "HEAD^").strip() == source
    changed = repo.git("diff-tree", "--no-commit-id", "--name-only", "-r", "HEAD").split()
    assert changed == ["CHANGELOG.md", "releases/1.0.0.json"]
    assert repo.git("cat-file", "-t", "v1.0.0").strip() == "tag"
    assert repo.git("rev-parse", "v1.0.0^{commit}").strip() == repo.head()
    assert repo.git("status", "--porcelain") == ""
    changelog = (repo.root / "CHANGELOG.md").read_text("utf-8")
    assert changelog.startswith(HEADER)
    assert "## [1.0.0] - 2023-11-14\n\n### Added\n- `alpha` v1: Case alpha\n" in changelog


def test_second_release_versions_changes_and_changelog(
    repo: GitRepo, capsys: pytest.CaptureFixture[str]
) -> None:
    assert release(capsys, repo, "1.0.0")[0] == 0
    first_manifest = (repo.root / "releases/1.0.0.json").read_bytes()
    changelog = (repo.root / "CHANGELOG.md").read_text("utf-8")
    changelog = changelog.replace("## [1.0.0]", "## [Unreleased]\n\nNotes by people.\n\n## [1.0.0]")
    repo.write("CHANGELOG.md", changelog + "\nA closing remark written by hand.\n")
    repo.commit("Edit the changelog by hand")
    second_round(repo)
    change = repo.head()

    code, out, _ = release(capsys, repo, "2.0.0")
    assert code == 0, out
    data = manifest(repo, "2.0.0")
    assert data["previous_version"] == "1.0.0"
    assert data["added"] == [{"case_id": "delta", "version": 1}]
    assert data["changed"] == [
        {
            "case_id": "alpha",
            "from_version": 1,
            "to_version": 2,
            "sections": ["metadata", "patient"],
        }
    ]
    assert data["removed"] == [{"case_id": "gamma", "last_version": 1}]
    assert data["counts"] == {
        "cases": 3,
        "added": 1,
        "changed": 1,
        "removed": 1,
        "unchanged": 1,
        "withdrawn": 0,
    }
    cases = cases_of(data)
    assert {c: cases[c]["version"] for c in cases} == {"alpha": 2, "beta": 1, "delta": 1}
    assert cases["delta"]["first_release"] == "2.0.0"
    assert cases["alpha"]["first_release"] == "1.0.0"
    assert cases["alpha"]["last_changed"]["commit"] == change
    assert cases["alpha"]["authors"] == [
        {"name": ANN[0], "email": ANN[1]},
        {"name": BOB[0], "email": BOB[1]},
    ]
    beta_before = cases_of(json.loads(first_manifest))["beta"]
    assert cases["beta"]["sha256"] == beta_before["sha256"]  # re-commented: same content
    assert cases["beta"]["blob"] != beta_before["blob"]  # ... in a different file
    assert cases["beta"]["last_changed"] == beta_before["last_changed"]
    # The old manifest still lists gamma, untouched.
    assert (repo.root / "releases/1.0.0.json").read_bytes() == first_manifest
    text = (repo.root / "CHANGELOG.md").read_text("utf-8")
    assert text.index("Notes by people.") < text.index("## [2.0.0]") < text.index("## [1.0.0]")
    assert text.endswith("A closing remark written by hand.\n")
    assert (
        "## [2.0.0] - 2023-11-15\n\n### Added\n- `delta` v1: Case delta\n\n### Changed\n"
        "- `alpha` v1 → v2: metadata, patient\n\n### Removed\n"
        "- `gamma` (last version v1)\n"
    ) in text


def test_a_re_added_case_continues_its_numbering(
    repo: GitRepo, capsys: pytest.CaptureFixture[str]
) -> None:
    assert release(capsys, repo, "1.0.0")[0] == 0
    repo.delete("cases/gamma.yaml")
    repo.delete("cases/beta.yaml")
    repo.commit("Retire gamma and beta")
    assert release(capsys, repo, "2.0.0")[0] == 0
    assert manifest(repo, "2.0.0")["removed"] == [
        {"case_id": "beta", "last_version": 1},
        {"case_id": "gamma", "last_version": 1},
    ]
    repo.write("cases/gamma.yaml", case_text("gamma", "Gamma returns, revised"))
    repo.write("cases/beta.yaml", case_text("beta", "Case beta", comment="back as it was"))
    repo.commit("Bring them back")
    assert release(capsys, repo, "2.1.0")[0] == 0
    data = manifest(repo, "2.1.0")
    assert data["added"] == [{"case_id": "beta", "version": 1}, {"case_id": "gamma", "version": 2}]
    gamma = cases_of(data)["gamma"]
    assert (gamma["version"], gamma["first_release"]) == (2, "1.0.0")


def test_dry_run_prints_the_plan_and_writes_nothing(
    repo: GitRepo, capsys: pytest.CaptureFixture[str]
) -> None:
    assert release(capsys, repo, "1.0.0")[0] == 0
    second_round(repo)
    before = repo.state()
    code, out, _ = release(capsys, repo, "2.0.0", "--dry-run")
    assert code == 0
    assert repo.state() == before
    table = out.splitlines()
    assert table[0].startswith("release 2.0.0 (previous: 1.0.0) of commit ")
    assert table[2].split() == ["STATUS", "CASE", "VERSION", "DETAIL"]
    assert table[3].split() == ["added", "delta", "1", "Case", "delta"]
    assert table[4].split() == ["changed", "alpha", "1", "->", "2", "metadata,", "patient"]
    assert table[5].split() == ["removed", "gamma", "1"]
    assert table[6].split() == ["unchanged", "beta", "1"]
    assert table[6].index("beta") == table[3].index("delta")  # aligned columns
    assert table[-1] == "3 cases: 1 added, 1 changed, 1 removed, 1 unchanged"


def ignored_state(repo: GitRepo) -> tuple[str, dict[str, bytes]]:
    """`git status --porcelain --ignored`, and the bytes of every ignored file."""
    status = repo.git("status", "--porcelain", "--ignored", "--untracked-files=all")
    ignored = [line[3:] for line in status.splitlines() if line.startswith("!! ")]
    return status, {p: (repo.root / p).read_bytes() for p in ignored if (repo.root / p).is_file()}


@pytest.mark.parametrize("warm", [False, True], ids=["no cache", "warm cache"])
def test_dry_run_writes_nothing_not_even_the_cache(
    repo: GitRepo, capsys: pytest.CaptureFixture[str], warm: bool
) -> None:
    if warm:
        assert cli(capsys, "validate", "--root", str(repo.root))[0] == 0
    repo.write("cases/delta.yaml", case_text("delta"))  # a file validation has not seen
    repo.commit("Add delta")
    before = ignored_state(repo)
    assert release(capsys, repo, "1.0.0", "--dry-run")[0] == 0
    assert ignored_state(repo) == before


@pytest.mark.parametrize(
    "edit,expected",
    [
        (lambda r: r.delete("cases/gamma.yaml"), "2.0.0"),
        (lambda r: r.write("cases/delta.yaml", case_text("delta")), "1.1.0"),
        (lambda r: r.write("cases/alpha.yaml", case_text("alpha", "New title")), "1.0.1"),
    ],
)
def test_suggest_proposes_the_next_version(
    repo: GitRepo, capsys: pytest.CaptureFixture[str], edit: Any, expected: str
) -> None:
    assert release(capsys, repo, "--suggest")[:2] == (0, "1.0.0\n")
    assert release(capsys, repo, "1.0.0")[0] == 0
    edit(repo)
    repo.commit("Edit")
    assert release(capsys, repo, "--suggest")[:2] == (0, f"{expected}\n")


@pytest.mark.parametrize(
    "argv,message",
    [
        (["1.0"], "not a release version"),
        (["v1.0.0"], "not a release version"),
        (["01.0.0"], "not a release version"),
        ([], "give the version"),
        (["1.0.0", "--suggest"], "--suggest takes no version"),
        (["1.0.0", "--bogus"], "unrecognized arguments"),
    ],
)
def test_usage_errors_exit_2(
    repo: GitRepo, capsys: pytest.CaptureFixture[str], argv: list[str], message: str
) -> None:
    before = repo.state()
    code, _, err = release(capsys, repo, *argv)
    assert code == 2
    assert message in err
    assert repo.state() == before


def _lightweight_tag(repo: GitRepo) -> None:
    repo.git("tag", "v1.0.0")


def _dirty(repo: GitRepo) -> None:
    repo.write("cases/alpha.yaml", case_text("alpha", "Uncommitted"))


def _untracked(repo: GitRepo) -> None:
    repo.write("notes.txt", "scratch\n")


def _invalid(repo: GitRepo) -> None:
    repo.write("cases/alpha.yaml", case_text("alpha").replace("age: 54", "age: fifty"))
    repo.commit("Break alpha")


@pytest.mark.parametrize(
    "prepare,version,message",
    [
        (_lightweight_tag, "1.0.0", "release 1.0.0 already exists"),
        (_lightweight_tag, "0.9.0", "not above the latest release 1.0.0"),
        (_dirty, "1.0.0", "the working tree is not clean"),
        (_untracked, "1.0.0", "notes.txt"),
        (_invalid, "1.0.0", "validation found 1 error"),
    ],
)
def test_refusals_exit_1_and_change_nothing(
    repo: GitRepo, capsys: pytest.CaptureFixture[str], prepare: Any, version: str, message: str
) -> None:
    prepare(repo)
    before = repo.state()
    code, _, err = release(capsys, repo, version)
    assert code == 1
    assert message in err
    assert "hint:" in err
    assert repo.state() == before


def test_an_existing_or_lower_release_is_refused(
    repo: GitRepo, capsys: pytest.CaptureFixture[str]
) -> None:
    assert release(capsys, repo, "1.2.0")[0] == 0
    before = repo.state()
    assert "already exists" in release(capsys, repo, "1.2.0")[2]
    assert "not above the latest release 1.2.0" in release(capsys, repo, "1.1.9")[2]
    assert release(capsys, repo, "1.1.9", "--dry-run")[0] == 1
    assert repo.state() == before


def test_a_repository_without_commits_is_refused(
    tmp_path: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    repo = GitRepo.create(tmp_path / "empty")
    repo.write("catalog.yaml", "vocabularies: {}\n")
    code, _, err = release(capsys, repo, "1.0.0")
    assert (code, "no commits yet" in err) == (1, True)


def test_a_shallow_clone_is_refused(
    repo: GitRepo, tmp_path: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    repo.write("cases/alpha.yaml", case_text("alpha", "Later"))
    repo.commit("Later")
    clone = tmp_path / "shallow"
    repo.git("clone", "-q", "--depth", "1", f"file://{repo.root}", str(clone))
    code, _, err = cli(capsys, "release", "--root", str(clone), "1.0.0")
    assert code == 1
    assert "shallow clone" in err and "git fetch --unshallow" in err


def _raise(*args: object, **kwargs: object) -> None:
    raise CasebankError("injected failure")


def _interrupt(*args: object, **kwargs: object) -> None:
    raise KeyboardInterrupt


@pytest.mark.parametrize("with_previous", [False, True], ids=["first", "second"])
@pytest.mark.parametrize(
    "step,failure,code",
    [
        ("stage", _raise, 1),  # after the manifest and changelog are written
        ("commit", _raise, 1),
        ("create_tag", _raise, 1),  # after the commit
        ("create_tag", _interrupt, 2),
        ("push", _raise, 1),  # after the tag
    ],
)
def test_a_failure_at_any_step_leaves_the_repository_as_it_was(
    repo: GitRepo,
    capsys: pytest.CaptureFixture[str],
    monkeypatch: pytest.MonkeyPatch,
    tmp_path: Path,
    with_previous: bool,
    step: str,
    failure: Any,
    code: int,
) -> None:
    remote = tmp_path / "remote.git"
    repo.git("init", "-q", "--bare", str(remote))
    repo.git("remote", "add", "origin", str(remote))
    if with_previous:
        assert release(capsys, repo, "1.0.0")[0] == 0
        second_round(repo)
    before = repo.state()
    monkeypatch.setattr(git, step, failure)
    result = release(capsys, repo, "2.0.0", "--push")
    assert result[0] == code
    assert repo.state() == before
    assert repo.git("ls-remote", str(remote)) == ""


def test_a_failing_commit_hook_leaves_the_repository_as_it_was(
    repo: GitRepo, capsys: pytest.CaptureFixture[str]
) -> None:
    hook = repo.root / ".git/hooks/pre-commit"
    hook.write_text("#!/bin/sh\necho 'hook says no' >&2\nexit 1\n", encoding="utf-8")
    hook.chmod(hook.stat().st_mode | stat.S_IEXEC)
    before = repo.state()
    code, _, err = release(capsys, repo, "1.0.0")
    assert code == 1
    assert "hook says no" in err
    assert repo.state() == before


def test_a_tag_created_behind_our_back_is_not_ours_to_delete(
    repo: GitRepo, capsys: pytest.CaptureFixture[str]
) -> None:
    hook = repo.root / ".git/hooks/post-commit"
    hook.write_text("#!/bin/sh\ngit tag v1.0.0 HEAD\n", encoding="utf-8")
    hook.chmod(hook.stat().st_mode | stat.S_IEXEC)
    head, status, _, files, index = repo.state()
    code, _, err = release(capsys, repo, "1.0.0")
    assert code == 1
    assert "already exists" in err
    assert repo.state() == (head, status, ["v1.0.0"], files, index)


def test_push_sends_the_commit_and_the_tag(
    repo: GitRepo, tmp_path: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    remote = tmp_path / "remote.git"
    repo.git("init", "-q", "--bare", str(remote))
    repo.git("remote", "add", "upstream", str(remote))
    code, out, _ = release(capsys, repo, "1.0.0", "--push", "--remote", "upstream")
    assert code == 0, out
    refs = dict(
        line.split("\t")[::-1] for line in repo.git("ls-remote", str(remote)).split("\n") if line
    )
    assert refs["refs/heads/main"] == repo.head()
    assert refs["refs/tags/v1.0.0"] == repo.git("rev-parse", "v1.0.0").strip()


def test_push_needs_a_branch(repo: GitRepo, capsys: pytest.CaptureFixture[str]) -> None:
    repo.git("checkout", "-q", "--detach")
    code, _, err = release(capsys, repo, "1.0.0", "--push")
    assert (code, "detached" in err) == (1, True)


def test_two_clones_releasing_the_same_version_write_identical_manifests(
    repo: GitRepo,
    tmp_path: Path,
    capsys: pytest.CaptureFixture[str],
    monkeypatch: pytest.MonkeyPatch,
) -> None:
    assert release(capsys, repo, "1.0.0")[0] == 0
    second_round(repo)
    made = []
    for number, clock in enumerate(("2031-05-05T10:00:00Z", "2032-06-06T11:11:11Z")):
        clone = tmp_path / f"clone{number}"
        repo.git("clone", "-q", str(repo.root), str(clone))
        monkeypatch.setenv("GIT_COMMITTER_DATE", clock)
        monkeypatch.setenv("GIT_AUTHOR_DATE", clock)
        code, out, _ = cli(capsys, "release", "--root", str(clone), "2.0.0")
        assert code == 0, out
        made.append(
            ((clone / "releases/2.0.0.json").read_bytes(), (clone / "CHANGELOG.md").read_bytes())
        )
    assert made[0] == made[1]
    assert dumps(loads(made[0][0], "2.0.0.json")) == made[0][0]  # round-trips to the byte
    assert RELEASE_CLOCK[:4] not in made[0][0].decode()


def test_changelog_insertion_keeps_every_human_line() -> None:
    existing = (
        "# Our changes\n\nIntro by people.\n\n## [Unreleased]\n- pending\n\n"
        "## [1.0.0] - 2024-01-01\n\nHand-written note.\n"
    )
    updated = insert_section(existing, "## [1.1.0] - 2024-02-01\n\n### Added\n- x\n", "1.1.0")
    assert updated.replace("## [1.1.0] - 2024-02-01\n\n### Added\n- x\n\n", "") == existing
    assert updated.index("## [Unreleased]") < updated.index("## [1.1.0]")
    with pytest.raises(CasebankError, match=r"already has a section for 1\.0\.0"):
        insert_section(existing, "## [1.0.0]\n", "1.0.0")
    assert insert_section("# Log", "## [1.0.0]\n", "1.0.0") == "# Log\n\n## [1.0.0]\n"


def test_a_rejected_push_undoes_the_release(
    repo: GitRepo, capsys: pytest.CaptureFixture[str], tmp_path: Path
) -> None:
    before = repo.state()
    code, _, err = release(capsys, repo, "1.0.0", "--push", "--remote", str(tmp_path / "none"))
    assert code == 1
    assert "git push failed" in err
    assert repo.state() == before
