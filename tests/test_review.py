"""Review on real temporary repositories: a version is reviewed when its exact content hash has a
sign-off from someone who is not among its authors (by name or by email, after .mailmap).

The sign-off is a Reviewed-by trailer on the commit that gave the case that content (the
squash-merge path) or a later review commit from `casebank review` naming `case@hash`; the
authors are the people who made the changes, never the person who merged them.
"""

from __future__ import annotations

import json
import re
from pathlib import Path
from typing import Any

import git
import pytest

from casebank.release import git as gitlayer
from casebank.release.history import scan_history
from casebank.release.manifest import Author
from conftest import run_cli as cli
from gitrepo import ANN, BOB, CATALOG, GitRepo, case_text

CARA = ("Cara Clinician", "cara@example.org")
POLICY = "[release]\nrequire_review = true\n"

pytestmark = pytest.mark.usefixtures("isolated_git")


def reviewed_repo(root: Path, *, cases: tuple[str, ...] = ("alpha",)) -> GitRepo:
    """A repository under the review policy; Ann adds the cases, unreviewed."""
    repo = GitRepo.create(root)
    repo.write("catalog.yaml", CATALOG)
    repo.write(".gitignore", ".casebank-cache/\n")
    repo.write("casebank.toml", POLICY)
    repo.commit("Policy", author=("Mo Maintainer", "mo@example.org"))
    for case_id in cases:
        repo.write(f"cases/{case_id}.yaml", case_text(case_id, f"Case {case_id}"))
    repo.commit("Add " + ", ".join(cases))
    return repo


def status(capsys: pytest.CaptureFixture[str], repo: GitRepo) -> dict[str, dict[str, Any]]:
    code, out, _ = cli(capsys, "review-status", "--root", str(repo.root), "--format", "json")
    cases: list[dict[str, Any]] = json.loads(out)["cases"]
    assert code == (0 if all(c["reviewed"] for c in cases) else 1)
    return {c["case_id"]: c for c in cases}


def revise(repo: GitRepo, case_id: str, age: int) -> None:
    repo.write(f"cases/{case_id}.yaml", case_text(case_id).replace("age: 54", f"age: {age}"))


def manifest_case(repo: GitRepo, version: str, case_id: str) -> dict[str, Any]:
    data = json.loads((repo.root / f"releases/{version}.json").read_text("utf-8"))
    found: dict[str, Any] = next(c for c in data["cases"] if c["case_id"] == case_id)
    return found


def merge_no_ff(repo: GitRepo, branch: str, message: str, merger: tuple[str, str]) -> None:
    repo.clock += 3600
    when = f"@{repo.clock} +0000"
    identity = {"GIT_AUTHOR_DATE": when, "GIT_COMMITTER_DATE": when}
    for role in ("AUTHOR", "COMMITTER"):
        identity |= {f"GIT_{role}_NAME": merger[0], f"GIT_{role}_EMAIL": merger[1]}
    repo.git("merge", "-q", "--no-ff", "-m", message, branch, env=identity)


# --- a review after the fact ----------------------------------------------------------------


def test_an_unreviewed_change_on_main_is_approved_by_a_later_review_commit(
    tmp_path: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    """The issue's trap: once an unreviewed change was on main, nothing could approve it."""
    repo = reviewed_repo(tmp_path / "r", cases=("alpha", "beta"))
    root = str(repo.root)
    assert cli(capsys, "release", "1.0.0", "--root", root)[0] == 1
    before = status(capsys, repo)
    assert [c["reviewed"] for c in before.values()] == [False, False]
    code, out, _ = cli(capsys, "review", "alpha", "beta", "--by", f"{CARA[0]} <{CARA[1]}>",
                       "--root", root)  # fmt: skip
    assert code == 0, out
    hashes = {c: before[c]["sha256"] for c in before}
    assert f"recorded the review of alpha@{hashes['alpha'][:12]} (version 1)" in out
    # An empty commit whose trailers name each case@hash and the reviewer.
    assert repo.git("diff-tree", "--no-commit-id", "--name-only", "-r", "HEAD").split() == []
    trailers = repo.git("log", "-1", "--format=%(trailers)").strip().splitlines()
    assert trailers == [
        f"Reviewed-by: {CARA[0]} <{CARA[1]}>",
        f"Reviewed-case: alpha@{hashes['alpha']}",
        f"Reviewed-case: beta@{hashes['beta']}",
    ]
    after = status(capsys, repo)
    assert after["alpha"]["reviewers"] == [f"{CARA[0]} <{CARA[1]}>"]
    assert after["alpha"]["sha256"] == hashes["alpha"] and after["alpha"]["reviewed"]
    code, out, _ = cli(capsys, "release", "1.0.0", "--root", root)
    assert code == 0, out
    assert manifest_case(repo, "1.0.0", "beta")["reviewers"] == [
        {"name": CARA[0], "email": CARA[1]}
    ]
    assert cli(capsys, "verify", "--root", root)[0] == 0


def test_a_change_after_the_review_is_new_content_and_needs_its_own(
    tmp_path: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    repo = reviewed_repo(tmp_path / "r")
    root = str(repo.root)
    assert cli(capsys, "review", "alpha", "--by", f"{CARA[0]} <{CARA[1]}>", "--root", root)[0] == 0
    reviewed = status(capsys, repo)["alpha"]["sha256"]
    revise(repo, "alpha", 61)
    repo.commit("Change alpha after its review")
    row = status(capsys, repo)["alpha"]
    assert (row["reviewed"], row["reviewers"]) == (False, [])
    assert row["not_counted"] == [
        {
            "reviewer": f"{CARA[0]} <{CARA[1]}>",
            "reason": f"reviewed {reviewed[:12]}, earlier content, not this version's",
        }
    ]
    out = cli(capsys, "review-status", "--root", root)[1]
    [line] = [x for x in out.splitlines() if x.startswith("alpha ")]
    assert "UNREVIEWED" in line and line.endswith("  -")  # never a reviewer on that row
    assert f"not counted: Reviewed-by: {CARA[0]} <{CARA[1]}> (reviewed {reviewed[:12]}" in out
    assert 'casebank review alpha --by "Name <email>"' in out


def test_a_review_commit_on_a_merged_branch_counts(
    tmp_path: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    repo = reviewed_repo(tmp_path / "r")
    repo.git("switch", "-q", "-c", "review-alpha")
    assert cli(capsys, "review", "alpha", "--by", f"{CARA[0]} <{CARA[1]}>",
               "--root", str(repo.root))[0] == 0  # fmt: skip
    repo.git("switch", "-q", "main")
    assert not status(capsys, repo)["alpha"]["reviewed"]  # not on main yet
    merge_no_ff(repo, "review-alpha", "Merge the review of alpha", ("Mo Maintainer", "mo@x.org"))
    assert status(capsys, repo)["alpha"]["reviewers"] == [f"{CARA[0]} <{CARA[1]}>"]
    assert cli(capsys, "release", "1.0.0", "--root", str(repo.root))[0] == 0
    assert cli(capsys, "verify", "--root", str(repo.root))[0] == 0


def test_the_squash_merge_trailer_counts_for_the_content_it_made(
    tmp_path: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    repo = reviewed_repo(tmp_path / "r")
    revise(repo, "alpha", 60)
    repo.commit(f"Revise alpha\n\nReviewed-by: {CARA[0]} <{CARA[1]}>")
    row = status(capsys, repo)["alpha"]
    assert row["reviewers"] == [f"{CARA[0]} <{CARA[1]}>"] and row["not_counted"] == []


# --- who counts: the identity class ---------------------------------------------------------


@pytest.mark.parametrize(
    "trailer,reason",
    [
        ("me", "no email address; a review needs a name and an email: `Name <email>`"),
        ("Ann Author", "no email address; a review needs a name and an email: `Name <email>`"),
        ("Cara Clinician", "no email address; a review needs a name and an email: `Name <email>`"),
        ("<cara@example.org>", "no name; a review needs a name and an email: `Name <email>`"),
        ("Cara <cara>", "`cara` is not an email address; a review needs a name and an email"),
        ("Ann Author <ann@elsewhere.org>", "an author of this version, by name"),
        ("ann author <ann@elsewhere.org>", "an author of this version, by name"),
        ("A. Author <ANN@example.org>", "an author of this version, by email"),
        ("Bob Builder <bob@example.org>", "an author of this version, by email"),  # co-author
    ],
)
def test_a_sign_off_that_does_not_count_says_why(
    tmp_path: Path, capsys: pytest.CaptureFixture[str], trailer: str, reason: str
) -> None:
    repo = reviewed_repo(tmp_path / "r")
    revise(repo, "alpha", 60)
    repo.commit(f"Revise alpha\n\nCo-authored-by: {BOB[0]} <{BOB[1]}>\nReviewed-by: {trailer}")
    row = status(capsys, repo)["alpha"]
    assert (row["reviewed"], row["reviewers"]) == (False, [])
    [note] = row["not_counted"]
    assert note["reviewer"] == trailer and note["reason"].startswith(reason)
    assert cli(capsys, "release", "1.0.0", "--root", str(repo.root))[0] == 1
    assert repo.tags() == []


def test_mailmap_makes_two_addresses_one_author(
    tmp_path: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    repo = reviewed_repo(tmp_path / "r")
    repo.write(".mailmap", "Ann Author <ann@example.org> Annie <ann@home.example>\n")
    repo.commit("Map Ann's addresses", author=("Mo Maintainer", "mo@example.org"))
    revise(repo, "alpha", 60)
    repo.commit("Revise alpha\n\nReviewed-by: Annie <ann@home.example>")
    [note] = status(capsys, repo)["alpha"]["not_counted"]
    assert note["reason"] == "an author of this version, by email"
    # And the other way round: the author committed from the address .mailmap maps.
    repo.write(".mailmap", "Bob Builder <bob@example.org> <bob@laptop.local>\n")
    repo.commit("Map Bob's addresses", author=("Mo Maintainer", "mo@example.org"))
    revise(repo, "alpha", 61)
    repo.commit("Revise alpha again", author=("bobby", "bob@laptop.local"))
    code, _, err = cli(capsys, "review", "alpha", "--by", "Bob Builder <bob@example.org>",
                       "--root", str(repo.root))  # fmt: skip
    assert code == 1 and "is an author of alpha version 1 (by email)" in err
    repo.git("commit", "-q", "--allow-empty", "-m",
             "Review\n\nReviewed-by: Bob Builder <bob@example.org>\n"
             f"Reviewed-case: alpha@{status(capsys, repo)['alpha']['sha256']}")  # fmt: skip
    row = status(capsys, repo)["alpha"]
    assert row["authors"] == ["Ann Author <ann@example.org>", "Bob Builder <bob@example.org>"]
    assert row["not_counted"][0]["reason"] == "an author of this version, by email"
    # The .mailmap of the working tree changes nothing until it is committed.
    repo.write(".mailmap", "")
    assert status(capsys, repo)["alpha"]["not_counted"][0]["reason"].endswith("by email")


def test_after_a_no_ff_merge_the_author_is_who_wrote_the_branch_not_who_merged(
    tmp_path: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    """The issue's example: the merger was recorded as the author, and the real author counted
    as their own reviewer."""
    repo = reviewed_repo(tmp_path / "r", cases=("beta",))
    repo.git("switch", "-q", "-c", "bob-alpha")
    repo.write("cases/alpha.yaml", case_text("alpha", "Case alpha"))
    repo.commit("Add alpha", author=BOB)
    repo.git("switch", "-q", "main")
    merge_no_ff(repo, "bob-alpha", f"Merge alpha\n\nReviewed-by: {BOB[0]} <{BOB[1]}>", ANN)
    row = status(capsys, repo)["alpha"]
    assert row["authors"] == [f"{BOB[0]} <{BOB[1]}>"]
    assert row["not_counted"] == [
        {"reviewer": f"{BOB[0]} <{BOB[1]}>", "reason": "an author of this version, by email"}
    ]
    # The merger did not write it, so the merger may review it.
    code, _, err = cli(capsys, "review", "alpha", "--by", f"{ANN[0]} <{ANN[1]}>",
                       "--root", str(repo.root))  # fmt: skip
    assert code == 0, err
    assert status(capsys, repo)["alpha"]["reviewers"] == [f"{ANN[0]} <{ANN[1]}>"]
    cli(capsys, "review", "beta", "--by", f"{CARA[0]} <{CARA[1]}>", "--root", str(repo.root))
    assert cli(capsys, "release", "1.0.0", "--root", str(repo.root))[0] == 0
    assert manifest_case(repo, "1.0.0", "alpha")["authors"] == [{"name": BOB[0], "email": BOB[1]}]
    assert cli(capsys, "verify", "--root", str(repo.root))[0] == 0


def test_a_format_2_release_keeps_its_authors_and_reviewers_and_verifies(
    tmp_path: Path, capsys: pytest.CaptureFixture[str], monkeypatch: pytest.MonkeyPatch
) -> None:
    """Releases written before format 3 are recomputed by their own definitions."""
    from casebank.release.plan import plan_release

    repo = GitRepo.create(tmp_path / "r")
    repo.write("catalog.yaml", CATALOG)
    repo.write(".gitignore", ".casebank-cache/\n")
    repo.commit("Catalog")
    repo.git("switch", "-q", "-c", "bob-alpha")
    repo.write("cases/alpha.yaml", case_text("alpha"))
    repo.commit("Add alpha", author=BOB)
    repo.git("switch", "-q", "main")
    merge_no_ff(repo, "bob-alpha", "Merge alpha\n\nReviewed-by: Bob Builder <bob@example.org>",
                ANN)  # fmt: skip
    assert plan_release.__kwdefaults__ is not None
    monkeypatch.setitem(plan_release.__kwdefaults__, "manifest_format", 2)
    assert cli(capsys, "release", "1.0.0", "--root", str(repo.root))[0] == 0
    monkeypatch.undo()
    old = manifest_case(repo, "1.0.0", "alpha")
    assert old["authors"] == [{"name": ANN[0], "email": ANN[1]}]  # format 2: the merger
    assert old["reviewers"] == [{"name": BOB[0], "email": BOB[1]}]
    revise(repo, "alpha", 60)
    repo.commit(f"Revise alpha\n\nReviewed-by: {CARA[0]} <{CARA[1]}>")
    assert cli(capsys, "release", "1.1.0", "--root", str(repo.root))[0] == 0
    new = manifest_case(repo, "1.1.0", "alpha")
    assert new["authors"] == [{"name": BOB[0], "email": BOB[1]}, {"name": ANN[0], "email": ANN[1]}]
    assert cli(capsys, "verify", "--root", str(repo.root))[0] == 0


# --- the review command refuses what would not count ----------------------------------------


def test_review_refuses_what_would_not_count_and_changes_nothing(
    tmp_path: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    repo = reviewed_repo(tmp_path / "r", cases=("alpha", "alpha_two"))
    root = str(repo.root)
    before = repo.state()
    for by in ("me", "Cara Clinician", "<cara@example.org>", "Cara <cara>"):
        code, _, err = cli(capsys, "review", "alpha", "--by", by, "--root", root)
        assert code == 2 and "a review needs a name and an email" in err, by
    code, _, err = cli(capsys, "review", "alpha", "--by", f"{ANN[0]} <ann@other.org>",
                       "--root", root)  # fmt: skip
    assert code == 1 and "is an author of alpha version 1 (by name)" in err
    code, _, err = cli(capsys, "review", "alpah_two", "--by", f"{CARA[0]} <{CARA[1]}>",
                       "--root", root)  # fmt: skip
    assert code == 1 and "no case `alpah_two` on HEAD (did you mean `alpha_two`?)" in err
    code, _, err = cli(capsys, "review", "../x", "--by", f"{CARA[0]} <{CARA[1]}>", "--root", root)
    assert code == 2
    revise(repo, "alpha", 70)
    code, _, err = cli(capsys, "review", "alpha", "--by", f"{CARA[0]} <{CARA[1]}>", "--root", root)
    assert code == 1 and "alpha has uncommitted changes" in err
    repo.git("checkout", "-q", "--", "cases/alpha.yaml")
    assert repo.state() == before


def test_review_leaves_staged_work_staged_and_records_once(
    tmp_path: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    repo = reviewed_repo(tmp_path / "r")
    root = str(repo.root)
    repo.write("notes.txt", "staged, not part of the review\n")
    repo.git("add", "notes.txt")
    by = f"{CARA[0]} <{CARA[1]}>"
    assert cli(capsys, "review", "alpha", "--by", by, "--root", root)[0] == 0
    assert repo.git("show", "--name-only", "--format=", "HEAD").strip() == ""
    assert repo.git("status", "--porcelain").splitlines() == ["A  notes.txt"]
    head = repo.head()
    code, out, _ = cli(capsys, "review", "alpha", "--by", by, "--root", root)
    assert code == 0 and "is already reviewed by" in out and "nothing to record" in out
    assert repo.head() == head


def test_history_is_read_in_a_fixed_number_of_git_commands(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch, capsys: pytest.CaptureFixture[str]
) -> None:
    """Merges, branch commits, review commits and .mailmap: never one git call per commit or
    per case."""
    repo = reviewed_repo(tmp_path / "r", cases=("alpha", "beta"))
    repo.write(".mailmap", "Bob Builder <bob@example.org> <bob@laptop.local>\n")
    repo.commit("Mailmap")
    for number in range(6):
        repo.git("switch", "-q", "-c", f"b{number}")
        revise(repo, "alpha" if number % 2 else "beta", 60 + number)
        repo.commit(f"Change {number}", author=("bobby", "bob@laptop.local"))
        repo.git("switch", "-q", "main")
        merge_no_ff(repo, f"b{number}", f"Merge {number}", ANN)
        cli(capsys, "review", "alpha", "beta", "--by", f"{CARA[0]} <{CARA[1]}>",
            "--root", str(repo.root))  # fmt: skip
    calls: list[str] = []
    real = gitlayer._command

    def counted(args: Any) -> list[str]:
        calls.append(" ".join(args[:1]) if args[0] != "-c" else "check-mailmap")
        return real(args)

    # blobs are read through GitPython's object database, one persistent `git cat-file
    # --batch` process per repository object: count each process it starts
    processes: set[tuple[int, str]] = set()
    persistent = git.cmd.Git._get_persistent_cmd

    def started(self: git.cmd.Git, attr_name: str, cmd_name: str, *args: Any, **kwargs: Any) -> Any:
        if (id(self), attr_name) not in processes:
            processes.add((id(self), attr_name))
            calls.append(cmd_name.replace("_", "-"))
        return persistent(self, attr_name, cmd_name, *args, **kwargs)

    monkeypatch.setattr(gitlayer, "_command", counted)
    monkeypatch.setattr(git.cmd.Git, "_get_persistent_cmd", started)
    history = scan_history(repo.root, repo.head(), {repo.head()})
    snapshot = history.snapshots[repo.head()]
    # the line, its blobs, the review commits, the graph, the merged branches, and the
    # .mailmap (the git folder found by GitPython, without a process): six commands, however
    # many commits and merges
    assert sorted(calls) == sorted(["log", "cat-file", "log", "rev-list", "log", "check-mailmap"])
    assert {a.email for a in snapshot.cases["alpha"].content_authors} == {
        ANN[1],
        "bob@laptop.local",
    }
    assert snapshot.person(Author("bobby", "bob@laptop.local")).email == BOB[1]
    sign = snapshot.signoffs[("alpha", snapshot.cases["alpha"].sha256)]
    assert {s.reviewer.email for s in sign} == {CARA[1]} and all(s.after_the_fact for s in sign)


def test_review_status_text_shows_the_content_and_only_reviewers_who_count(
    tmp_path: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    repo = reviewed_repo(tmp_path / "r")
    revise(repo, "alpha", 60)
    repo.commit(f"Revise alpha\n\nReviewed-by: me\nReviewed-by: {CARA[0]} <{CARA[1]}>")
    code, out, _ = cli(capsys, "review-status", "--root", str(repo.root))
    assert code == 0
    lines = out.splitlines()
    assert lines[0].split() == ["CASE", "VERSION", "CONTENT", "STATUS", "AUTHORS", "REVIEWED", "BY"]
    assert re.match(
        r"alpha  1        [0-9a-f]{12}  reviewed  Ann Author  Cara Clinician$", lines[1]
    )
    assert lines[2].strip() == (
        "not counted: Reviewed-by: me (no email address; a review needs a name and an email: "
        "`Name <email>`)"
    )
