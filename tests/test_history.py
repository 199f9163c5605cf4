"""History from one pass: last content change, authors, identity across renames, merges."""

from __future__ import annotations

import json
from collections.abc import Iterator
from pathlib import Path
from typing import Any

import pytest
from git.cmd import Git

from casebank.errors import CasebankError
from casebank.format.loader import load_document
from casebank.release.history import Snapshot, scan_history
from casebank.release.manifest import Author
from gitrepo import ANN, BOB, CATALOG, GitRepo, case_text

CAROL = ("Carol Clinician", "carol@example.org")


pytestmark = pytest.mark.usefixtures("isolated_git")


def snapshot(repo: GitRepo, commit: str | None = None) -> Snapshot:
    at = commit or repo.head()
    return scan_history(repo.root, at, {at}).snapshots[at]


def test_state_and_facts_of_each_case(repo: GitRepo) -> None:
    first = repo.head()
    found = snapshot(repo)
    assert sorted(found.cases) == ["alpha", "beta", "gamma"]
    alpha = found.cases["alpha"]
    assert alpha.path == "cases/alpha.yaml"
    assert alpha.blob == repo.git("rev-parse", "HEAD:cases/alpha.yaml").strip()
    assert (alpha.last_changed_commit, alpha.authors) == (first, (Author(*ANN),))
    assert alpha.last_changed_time == found.time == repo.clock
    assert found.catalog_blob == repo.git("rev-parse", "HEAD:catalog.yaml").strip()


def test_comment_only_edits_are_not_content_changes(repo: GitRepo) -> None:
    first = repo.head()
    repo.write("cases/alpha.yaml", case_text("alpha", "Case alpha", comment="reviewed"))
    repo.commit("Add a comment", author=BOB)
    alpha = snapshot(repo).cases["alpha"]
    assert alpha.last_changed_commit == first
    assert alpha.authors == (Author(*ANN),)
    assert alpha.blob == repo.git("rev-parse", "HEAD:cases/alpha.yaml").strip()


def test_authors_include_co_authors_in_first_appearance_order(repo: GitRepo) -> None:
    repo.write("cases/alpha.yaml", case_text("alpha", "Retitled"))
    message = (
        "Retitle\n\nCo-authored-by: Carol Clinician <carol@example.org>\n"
        "Co-authored-by: Ann Again <ANN@example.org>"
    )
    change = repo.commit(message, author=BOB)
    alpha = snapshot(repo).cases["alpha"]
    assert alpha.last_changed_commit == change
    assert alpha.authors == (Author(*ANN), Author(*BOB), Author(*CAROL))
    assert snapshot(repo).cases["beta"].authors == (Author(*ANN),)


def test_merges_follow_the_first_parent(repo: GitRepo) -> None:
    repo.git("checkout", "-q", "-b", "topic")
    repo.write("cases/beta.yaml", case_text("beta", "Changed on a branch"))
    repo.commit("Branch change", author=BOB)
    repo.git("checkout", "-q", "main")
    repo.write("notes.txt", "unrelated\n")
    repo.commit("Unrelated work on main")
    repo.clock += 3600
    repo.git(
        "merge",
        "-q",
        "--no-ff",
        "topic",
        "-m",
        "Merge topic",
        env={
            "GIT_AUTHOR_NAME": CAROL[0],
            "GIT_AUTHOR_EMAIL": CAROL[1],
            "GIT_AUTHOR_DATE": f"@{repo.clock} +0000",
            "GIT_COMMITTER_DATE": f"@{repo.clock} +0000",
        },
    )
    history = scan_history(repo.root, repo.head(), {repo.head()})
    assert len(history.chain) == 3  # the branch commit is not on the first-parent line
    beta = history.snapshots[repo.head()].cases["beta"]
    assert beta.last_changed_commit == repo.head()
    assert beta.authors == (Author(*ANN), Author(*CAROL))


def test_renaming_to_json_keeps_identity_and_content(repo: GitRepo) -> None:
    first = repo.head()
    before = snapshot(repo).cases["alpha"]
    loaded = load_document("cases/alpha.yaml", (repo.root / "cases/alpha.yaml").read_bytes())
    assert loaded.document is not None
    repo.delete("cases/alpha.yaml")
    repo.write("cases/alpha.json", json.dumps(loaded.document.data, indent=2))
    repo.commit("Convert to JSON", author=BOB)
    after = snapshot(repo).cases["alpha"]
    assert after.path == "cases/alpha.json"
    assert after.sha256 == before.sha256
    assert (after.last_changed_commit, after.authors) == (first, (Author(*ANN),))


def test_a_removed_and_re_added_case_counts_its_return_as_a_change(repo: GitRepo) -> None:
    repo.delete("cases/gamma.yaml")
    removed = repo.commit("Remove gamma")
    assert "gamma" not in snapshot(repo).cases
    repo.write("cases/gamma.yaml", case_text("gamma", "Case gamma"))
    back = repo.commit("Restore gamma", author=BOB)
    gamma = snapshot(repo).cases["gamma"]
    assert gamma.last_changed_commit == back != removed
    assert gamma.authors == (Author(*ANN), Author(*BOB))


def test_a_broken_then_fixed_file_counts_both_commits(repo: GitRepo) -> None:
    repo.write("cases/beta.yaml", "case_id: beta\nmetadata: [unclosed\n")
    repo.commit("Break beta", author=BOB)
    assert not snapshot(repo).cases["beta"].digest.valid
    repo.write("cases/beta.yaml", case_text("beta", "Case beta"))
    fixed = repo.commit("Fix beta", author=CAROL)
    beta = snapshot(repo).cases["beta"]
    assert beta.digest.valid
    assert beta.last_changed_commit == fixed
    assert [a.name for a in beta.authors] == [ANN[0], BOB[0], CAROL[0]]


def test_attachments_are_part_of_the_content(repo: GitRepo) -> None:
    before = snapshot(repo).cases["alpha"]
    repo.write("cases/alpha/attachments/ECG strip é.png", b"\x89PNG\r\n")
    added = repo.commit("Attach an ECG", author=BOB)
    alpha = snapshot(repo).cases["alpha"]
    assert list(alpha.attachments) == ["ECG strip é.png"]
    assert alpha.sha256 != before.sha256
    assert alpha.last_changed_commit == added
    repo.delete("cases/alpha/attachments/ECG strip é.png")
    repo.commit("Detach it")
    assert snapshot(repo).cases["alpha"].sha256 == before.sha256


def test_snapshots_of_several_commits_in_one_pass(repo: GitRepo) -> None:
    first = repo.head()
    repo.write("cases/alpha.yaml", case_text("alpha", "Second title"))
    second = repo.commit("Retitle", author=BOB)
    history = scan_history(repo.root, second, {first, second})
    assert history.chain == [first, second]
    assert history.snapshots[first].cases["alpha"].digest.title == "Case alpha"
    assert history.snapshots[second].cases["alpha"].digest.title == "Second title"


def test_one_log_and_one_blob_process_per_pass(
    repo: GitRepo, monkeypatch: pytest.MonkeyPatch
) -> None:
    for number in range(5):
        repo.write(f"cases/case_{number}.yaml", case_text(f"case_{number}"))
        repo.write("cases/alpha.yaml", case_text("alpha", f"Title {number}"))
        repo.commit(f"Commit {number}")
    commands: list[list[str]] = []
    execute = Git.execute

    def counting(self: Git, command: Any, *args: Any, **kwargs: Any) -> Any:
        words = [part for part in command if not part.startswith("-") and "=" not in part]
        commands.append(words[:2])
        return execute(self, command, *args, **kwargs)

    monkeypatch.setattr(Git, "execute", counting)
    found = scan_history(repo.root, repo.head(), {repo.head()})
    assert len(found.snapshots[repo.head()].cases) == 8
    assert commands == [["git", "log"], ["git", "cat-file"]]


def test_a_shallow_clone_is_refused_with_a_hint(repo: GitRepo, tmp_path: Path) -> None:
    from casebank.release.git import check_repository

    repo.write("cases/alpha.yaml", case_text("alpha", "Later"))
    repo.commit("Later")
    clone = tmp_path / "shallow"
    repo.git("clone", "-q", "--depth", "1", f"file://{repo.root}", str(clone))
    with pytest.raises(CasebankError, match="shallow clone") as raised:
        check_repository(clone)
    assert "fetch-depth: 0" in raised.value.hint


def test_outside_a_repository_is_refused(tmp_path: Path) -> None:
    from casebank.release.git import check_repository

    folder = tmp_path / "plain"
    folder.mkdir()
    (folder / "catalog.yaml").write_text(CATALOG, encoding="utf-8")
    with pytest.raises(CasebankError, match="not inside a git repository"):
        check_repository(folder)


def test_blob_reads_stream_in_request_order(repo: GitRepo) -> None:
    from casebank.release.git import read_blobs

    ids = [repo.git("rev-parse", f"HEAD:cases/{c}.yaml").strip() for c in ("gamma", "alpha")]
    found: Iterator[tuple[str, bytes]] = read_blobs(repo.root, ids * 200)
    contents = list(found)
    assert [oid for oid, _ in contents[:2]] == ids
    assert len(contents) == 400
    assert contents[1][1] == (repo.root / "cases/alpha.yaml").read_bytes()


def test_worker_processes_give_the_same_facts(
    repo: GitRepo, monkeypatch: pytest.MonkeyPatch
) -> None:
    import casebank.parallel
    import casebank.release.history

    repo.write("cases/alpha/attachments/scan.pdf", b"%PDF-1.4")
    repo.write("cases/beta.yaml", case_text("beta", "Changed"))
    repo.commit("More")
    alone = snapshot(repo)
    monkeypatch.setattr(casebank.release.history, "PARALLEL_FROM", 1)
    monkeypatch.setattr(casebank.parallel, "workers", lambda jobs=None: 2)
    assert snapshot(repo) == alone
