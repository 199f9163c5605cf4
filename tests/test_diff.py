"""`casebank diff` on real temporary repositories: what a reviewer sees."""

from __future__ import annotations

import pytest

from casebank.cli import main
from casebank.release.diff import MISSING, FieldChange, field_changes
from gitrepo import GitRepo, case_text

pytestmark = pytest.mark.usefixtures("isolated_git")


def diff(capsys: pytest.CaptureFixture[str], repo: GitRepo, *argv: str) -> tuple[int, str]:
    code = main(["diff", "--root", str(repo.root), *argv])
    out, err = capsys.readouterr()
    assert err == ""
    return code, out


def test_field_changes_are_leaf_paths_with_old_and_new() -> None:
    old = {"a": {"b": 1, "c": [1, 2]}, "d": [{"x": "y"}], "gone": True}
    new = {"a": {"b": 2, "c": [1, 2, 3]}, "d": [{"x": "z"}, {"x": "w"}], "added": 1}
    assert field_changes(old, new) == [
        FieldChange("a.b", 1, 2),
        FieldChange("a.c", [1, 2], [1, 2, 3]),
        FieldChange("d[0].x", "y", "z"),
        FieldChange("d[1]", MISSING, {"x": "w"}),
        FieldChange("gone", True, MISSING),
        FieldChange("added", MISSING, 1),
    ]


def test_a_number_that_became_text_is_a_change() -> None:
    assert field_changes({"a": 1}, {"a": "1"}) == [FieldChange("a", 1, "1")]
    assert field_changes({"a": 1}, {"a": 1.0}) == [FieldChange("a", 1, 1.0)]


def test_working_tree_against_the_main_branch(
    repo: GitRepo, capsys: pytest.CaptureFixture[str]
) -> None:
    repo.write("cases/alpha.yaml", case_text("alpha", "Case alpha, retitled"))
    repo.write("cases/beta.yaml", case_text("beta", "Case beta", comment="only a comment"))
    repo.write("cases/delta.yaml", case_text("delta", "Case delta"))
    repo.delete("cases/gamma.yaml")
    code, out = diff(capsys, repo)
    assert code == 0
    assert "Added (1):\n  delta (cases/delta.yaml): version 1 at the next release" in out
    assert "Changed (1):\n  alpha (cases/alpha.yaml): version 1 at the next release" in out
    assert '      metadata.title: "Case alpha" → "Case alpha, retitled"' in out
    assert "Removed (1):\n  gamma (cases/gamma.yaml): never released" in out
    assert "beta" not in out  # a comment is not a change


def test_versions_follow_the_last_release(
    repo: GitRepo, capsys: pytest.CaptureFixture[str]
) -> None:
    assert main(["release", "1.0.0", "--root", str(repo.root)]) == 0
    capsys.readouterr()
    repo.write("cases/alpha.yaml", case_text("alpha", "Case alpha, retitled"))
    repo.delete("cases/gamma.yaml")
    code, out = diff(capsys, repo, "v1.0.0")
    assert code == 0
    assert "alpha (cases/alpha.yaml): version 1 → 2 at the next release" in out
    assert "gamma (cases/gamma.yaml): removed at the next release (last released version 1)" in out
    # edited back to the released content: no new version
    repo.write("cases/alpha.yaml", case_text("alpha", "Case alpha", comment="reworded"))
    _, out = diff(capsys, repo, "v1.0.0")
    assert "alpha" not in out


def test_two_revisions_and_a_move_to_json(
    repo: GitRepo, capsys: pytest.CaptureFixture[str]
) -> None:
    import json

    import yaml

    base = repo.head()
    data = yaml.safe_load(case_text("beta", "Case beta"))
    repo.delete("cases/beta.yaml")
    repo.write("cases/beta.json", json.dumps(data, indent=2))
    head = repo.commit("Move beta to JSON")
    code, out = diff(capsys, repo, base, head)
    assert code == 0
    assert (
        "Moved or reformatted, content unchanged (1):\n  beta (cases/beta.yaml → cases/beta.json)"
    ) in out


def test_markdown_for_the_job_summary(repo: GitRepo, capsys: pytest.CaptureFixture[str]) -> None:
    repo.write("cases/alpha.yaml", case_text("alpha", "Case | alpha"))
    code, out = diff(capsys, repo, "--format", "markdown")
    assert code == 0
    assert out.startswith("## casebank diff merge base")
    assert "### `alpha`: changed" in out
    assert '| `metadata.title` | "Case alpha" | "Case \\| alpha" |' in out


def test_an_unreadable_case_is_shown_not_fatal(
    repo: GitRepo, capsys: pytest.CaptureFixture[str]
) -> None:
    repo.write("cases/alpha.yaml", "title: [unclosed\n")
    code, out = diff(capsys, repo)
    assert code == 0 and "cannot be read: line 1: this sequence is never closed" in out
    assert "[CB101]" in out


def test_nothing_changed(repo: GitRepo, capsys: pytest.CaptureFixture[str]) -> None:
    assert diff(capsys, repo) == (
        0,
        f"casebank diff merge base ({repo.head()[:12]}) → working tree\nNo case changed.\n",
    )


def test_unknown_revision_is_a_usage_error(
    repo: GitRepo, capsys: pytest.CaptureFixture[str]
) -> None:
    assert main(["diff", "--root", str(repo.root), "no-such-branch"]) == 2


def test_no_main_branch_asks_for_a_base(repo: GitRepo, capsys: pytest.CaptureFixture[str]) -> None:
    repo.git("branch", "-m", "main", "trunk")
    assert main(["diff", "--root", str(repo.root)]) == 1
    assert "casebank diff BASE" in capsys.readouterr().err
