"""Generated files: those that follow the code never drift; those that follow the dataset are
refreshed for the contributor (by the release path and CI's refresh pull request), never a test
failure of theirs."""

from __future__ import annotations

import shutil
from pathlib import Path

import pytest

from casebank.check.rulesdoc import rules_markdown
from casebank.cli import main
from casebank.commands.coverage import README, START
from casebank.commands.generate import (
    COMMIT_SUBJECT,
    JSON_SCHEMA_FILE,
    code_files,
    dataset_files,
)
from gitrepo import GitRepo, case_text, dataset

ROOT = Path(__file__).resolve().parent.parent


def test_rules_reference_is_current() -> None:
    committed = (ROOT / "docs" / "rules.md").read_text(encoding="utf-8")
    assert committed == rules_markdown(), "docs/rules.md is stale: run `nox -s docs`"


def test_every_rule_documents_a_bad_and_a_good_example() -> None:
    from casebank.check.engine import all_rules

    for rule in all_rules():
        assert "Bad" in rule.doc and "Good" in rule.doc, rule.code


def test_files_generated_from_the_code_are_current() -> None:
    for relative, content in code_files().items():
        committed = (ROOT / relative).read_text(encoding="utf-8")
        assert committed == content, f"{relative} is stale: run `nox -s docs` and commit"


def test_the_two_kinds_of_generated_file_are_told_apart() -> None:
    following = set(dataset_files(ROOT))
    assert following == {README, JSON_SCHEMA_FILE}
    assert not following & set(code_files())


def _copy(tmp_path: Path) -> Path:
    """A repository holding the shipped catalog, two cases and a README with the markers."""
    root = tmp_path / "r"
    (root / "cases").mkdir(parents=True)
    shutil.copy(ROOT / "catalog.yaml", root / "catalog.yaml")
    for name in ("chest_pain_001.yaml", "acute_cholecystitis_001.yaml"):
        shutil.copy(ROOT / "cases" / name, root / "cases" / name)
    readme = (ROOT / README).read_text(encoding="utf-8")
    (root / README).write_text(readme, encoding="utf-8")
    return root


def test_generate_check_fails_on_drift_from_the_code(tmp_path: Path) -> None:
    root = _copy(tmp_path)
    assert main(["generate", "--root", str(root)]) == 0
    assert main(["generate", "--root", str(root), "--check"]) == 0
    (root / "docs" / "schema.md").write_text("edited by hand\n", encoding="utf-8")
    assert main(["generate", "--root", str(root), "--check"]) == 1


def test_a_new_case_leaves_generate_check_passing_and_says_what_follows(
    tmp_path: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    """The issue's trap: one valid case added in the web editor made `nox -s tests` fail."""
    root = _copy(tmp_path)
    assert main(["generate", "--root", str(root)]) == 0
    shutil.copy(ROOT / "cases" / "asthma_exacerbation_001.yaml", root / "cases")
    capsys.readouterr()
    assert main(["generate", "--root", str(root), "--check"]) == 0
    out = capsys.readouterr().out
    assert "the files generated from the code are up to date" in out
    assert f"note: {README} follows the dataset" in out and "nothing to do in this change" in out
    assert main(["coverage", "--root", str(root), "--check"]) == 1  # a maintainer can ask
    assert main(["generate", "--root", str(root), "--check", "--dataset"]) == 0


def test_coverage_write_is_idempotent(tmp_path: Path) -> None:
    root = _copy(tmp_path)
    assert main(["coverage", "--root", str(root), "--write"]) == 0
    once = (root / README).read_bytes()
    assert main(["coverage", "--root", str(root), "--write"]) == 0
    assert (root / README).read_bytes() == once
    assert main(["coverage", "--root", str(root), "--check"]) == 0
    text = once.decode("utf-8")
    assert text.count(START) == 1 and "2 cases, 2 specialties" in text
    assert main(["generate", "--root", str(root), "--dataset"]) == 0
    assert (root / README).read_bytes() == once


@pytest.mark.usefixtures("isolated_git")
def test_the_release_path_commits_the_refreshed_files_alone(
    tmp_path: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    repo = dataset(tmp_path / "r")
    repo.write(README, f"# cases\n\n{START}\nstale\n<!-- coverage:end -->\n")
    assert main(["generate", "--root", str(repo.root), "--dataset"]) == 0
    repo.commit("Readme and schema")
    repo.write("cases/delta.yaml", case_text("delta", "Case delta"))
    repo.commit("Add delta, from the web editor")
    repo.write("notes.txt", "a maintainer's own staged work\n")
    repo.git("add", "notes.txt")
    before = repo.head()
    capsys.readouterr()
    assert main(["generate", "--root", str(repo.root), "--dataset", "--commit"]) == 0
    assert f"committed {README} as" in capsys.readouterr().out
    assert repo.git("rev-parse", "HEAD^").strip() == before
    assert repo.git("log", "-1", "--format=%s").strip() == COMMIT_SUBJECT
    assert repo.git("diff-tree", "--no-commit-id", "--name-only", "-r", "HEAD").split() == [README]
    assert "4 cases" in (repo.root / README).read_text("utf-8")
    assert repo.git("status", "--porcelain").splitlines() == ["A  notes.txt"]  # left as it was
    # Run again: nothing to refresh, no commit.
    assert main(["generate", "--root", str(repo.root), "--dataset", "--commit"]) == 0
    assert "nothing to commit" in capsys.readouterr().out
    assert repo.git("rev-parse", "HEAD^").strip() == before


@pytest.mark.usefixtures("isolated_git")
def test_a_refresh_never_commits_someone_s_uncommitted_edit(
    tmp_path: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    repo = dataset(tmp_path / "r")
    repo.write(README, f"# cases\n\n{START}\nstale\n<!-- coverage:end -->\n")
    repo.commit("Readme")
    repo.write(README, f"# cases, edited\n\n{START}\nstale\n<!-- coverage:end -->\n")
    before = repo.state()
    assert main(["generate", "--root", str(repo.root), "--dataset", "--commit"]) == 1
    assert "README.md has uncommitted changes" in capsys.readouterr().err
    assert repo.state() == before


@pytest.mark.usefixtures("isolated_git")
def test_a_refused_commit_puts_the_files_back(
    tmp_path: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    repo = dataset(tmp_path / "r")
    repo.write(README, f"# cases\n\n{START}\nstale\n<!-- coverage:end -->\n")
    repo.commit("Readme")
    hook = repo.root / ".git" / "hooks" / "pre-commit"
    hook.write_text("#!/bin/sh\necho 'refused by a hook' >&2\nexit 1\n", encoding="utf-8")
    hook.chmod(0o755)
    before = repo.state()
    assert main(["generate", "--root", str(repo.root), "--dataset", "--commit"]) == 1
    assert "refused by a hook" in capsys.readouterr().err
    assert repo.state() == before


def test_the_shipped_readme_table_is_refreshed_by_the_release_path() -> None:
    """What keeps README's table current, now that no test fails on it: `nox -s release`
    refreshes and commits before releasing, and CI proposes the refresh after each push."""
    from test_workflows import nox_calls, steps

    release = nox_calls("release")
    assert release[0] == ["casebank", "generate", "--dataset", "--commit"]
    assert release[1][:2] == ["casebank", "release"]
    [step] = [s for s in steps("release.yml", "release") if "nox -s release" in s.get("run", "")]
    assert "--push" in step["run"]
    [propose] = [s for s in steps("refresh.yml", "refresh") if "nox -s refresh" in s.get("run", "")]
    assert "--propose" in propose["run"] and "GH_TOKEN" in propose["env"]
    refresh = nox_calls("refresh")
    assert ["casebank", "generate", "--dataset", "--commit"] in refresh
    assert refresh[-1][:8] == ["gh", "pr", "create", "--head", "*", "--base", "*", "--title"]


@pytest.mark.usefixtures("isolated_git")
def test_a_refresh_commits_in_a_shallow_clone_and_is_refused_outside_git(
    tmp_path: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    """CI's refresh job checks out one commit (a shallow clone): that is enough to commit."""
    repo = dataset(tmp_path / "r")
    repo.write(README, f"# cases\n\n{START}\nstale\n<!-- coverage:end -->\n")
    repo.commit("Readme")
    repo.commit("Another commit")
    clone = tmp_path / "shallow"
    repo.git("clone", "-q", "--depth", "1", f"file://{repo.root}", str(clone))
    assert GitRepo(clone).git("rev-parse", "--is-shallow-repository").strip() == "true"
    assert main(["generate", "--root", str(clone), "--dataset", "--commit"]) == 0
    assert GitRepo(clone).git("log", "-1", "--format=%s").strip() == COMMIT_SUBJECT
    plain = tmp_path / "plain"
    plain.mkdir()
    shutil.copy(ROOT / "catalog.yaml", plain / "catalog.yaml")
    (plain / README).write_text(f"{START}\n<!-- coverage:end -->\n", encoding="utf-8")
    capsys.readouterr()
    assert main(["generate", "--root", str(plain), "--dataset", "--commit"]) == 1
    assert "is not a git repository with a commit" in capsys.readouterr().err
