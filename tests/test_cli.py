"""The CLI in-process over temporary repositories: every format and every exit code."""

from __future__ import annotations

import json
from pathlib import Path

import pytest

from casebank.cli import main
from conftest import VALID_CASE, RepoMaker, edit
from conftest import run_cli as run

BROKEN = edit("  age: 54", "  age: fifty")
WARNING_ONLY = edit("tags: [chest_pain, cardiology]", "tags: [chestpain, cardiology]")


def test_clean_repository_exits_0(
    make_repo: RepoMaker, capsys: pytest.CaptureFixture[str], monkeypatch: pytest.MonkeyPatch
) -> None:
    root = make_repo()
    monkeypatch.chdir(root)
    code, out, _ = run(capsys, "validate", "--format", "text")
    assert code == 0
    assert out.strip() == "All clear: 2 files checked, no problems."


def test_errors_exit_1_with_text_report(
    make_repo: RepoMaker, capsys: pytest.CaptureFixture[str]
) -> None:
    root = make_repo({"valid_case.yaml": BROKEN})
    code, out, _ = run(capsys, "validate", "--root", str(root), "--format", "text")
    assert code == 1
    first, field_line, fix_line, total = out.splitlines()
    assert first.startswith("cases/valid_case.yaml:10:8: error [CB203 wrong-type] ")
    assert field_line == "    field: patient.age"
    assert fix_line.startswith("    fix: ")
    assert total == "1 error and 0 warnings in 2 files checked."


def test_warnings_pass_unless_strict(
    make_repo: RepoMaker, capsys: pytest.CaptureFixture[str]
) -> None:
    root = make_repo({"valid_case.yaml": WARNING_ONLY})
    assert run(capsys, "validate", "--root", str(root))[0] == 0
    assert run(capsys, "validate", "--root", str(root), "--strict")[0] == 1


def test_json_format_is_the_documented_object(
    make_repo: RepoMaker, capsys: pytest.CaptureFixture[str]
) -> None:
    root = make_repo({"valid_case.yaml": BROKEN})
    code, out, _ = run(capsys, "validate", "--root", str(root), "--format", "json")
    assert code == 1
    payload = json.loads(out)
    assert payload["files_checked"] == 2
    [problem] = payload["problems"]
    assert set(problem) == {"file", "line", "column", "path", "rule", "severity", "message", "hint"}
    assert (problem["file"], problem["line"], problem["rule"]) == (
        "cases/valid_case.yaml",
        10,
        "CB203",
    )


def test_github_format_annotates_and_writes_no_file(
    make_repo: RepoMaker,
    capsys: pytest.CaptureFixture[str],
    tmp_path: Path,
    monkeypatch: pytest.MonkeyPatch,
) -> None:
    summary = tmp_path / "summary.md"
    monkeypatch.setenv("GITHUB_STEP_SUMMARY", str(summary))
    root = make_repo({"valid_case.yaml": BROKEN})
    code, out, _ = run(capsys, "validate", "--root", str(root), "--format", "github")
    assert code == 1
    annotation = out.splitlines()[0]
    assert annotation.startswith(
        "::error file=cases/valid_case.yaml,line=10,col=8,title=CB203 wrong-type::patient.age: "
    )
    assert not summary.exists(), "reporters only format; CI appends the markdown format"


def test_markdown_format_is_the_job_summary_table(
    make_repo: RepoMaker, capsys: pytest.CaptureFixture[str]
) -> None:
    root = make_repo({"valid_case.yaml": BROKEN})
    code, out, _ = run(capsys, "validate", "--root", str(root), "--format", "markdown")
    assert code == 1
    assert out.startswith("## casebank validate\n")
    assert "| `cases/valid_case.yaml` | 10 | error | CB203 wrong-type |" in out


def test_github_escaping_of_newlines_percent_and_commas() -> None:
    from casebank.check.report import escape_data, escape_property

    assert escape_data("50%\nnext\r") == "50%25%0Anext%0D"
    assert escape_property("a,b:c") == "a%2Cb%3Ac"


def test_auto_format_picks_github_under_actions(
    make_repo: RepoMaker, capsys: pytest.CaptureFixture[str], monkeypatch: pytest.MonkeyPatch
) -> None:
    monkeypatch.setenv("GITHUB_ACTIONS", "true")
    monkeypatch.delenv("GITHUB_STEP_SUMMARY", raising=False)
    root = make_repo({"valid_case.yaml": BROKEN})
    _, out, _ = run(capsys, "validate", "--root", str(root))
    assert out.startswith("::error ")


def test_explicit_paths_check_only_those_files(
    make_repo: RepoMaker, capsys: pytest.CaptureFixture[str], monkeypatch: pytest.MonkeyPatch
) -> None:
    root = make_repo({"valid_case.yaml": VALID_CASE, "broken.yaml": BROKEN})
    monkeypatch.chdir(root / "cases")
    code, out, _ = run(capsys, "validate", "valid_case.yaml", "--format", "json")
    assert code == 0 and json.loads(out)["files_checked"] == 1
    code, out, _ = run(capsys, "validate", ".", "--format", "json")
    assert code == 1 and json.loads(out)["files_checked"] == 2


def test_yml_and_json_case_files_are_accepted(
    make_repo: RepoMaker, capsys: pytest.CaptureFixture[str]
) -> None:
    from casebank.format.loader import load_document

    loaded = load_document("x.yaml", VALID_CASE.encode())
    assert loaded.document is not None
    data = dict(loaded.document.data, case_id="json_case")
    root = make_repo(
        {
            "yml_case.yml": VALID_CASE.replace("case_id: valid_case", "case_id: yml_case"),
            "json_case.json": json.dumps(data, ensure_ascii=False, indent=2),
        }
    )
    code, out, _ = run(capsys, "validate", "--root", str(root), "--format", "json")
    assert json.loads(out)["problems"] == [] and code == 0


def test_two_files_claiming_one_case_id(
    make_repo: RepoMaker, capsys: pytest.CaptureFixture[str]
) -> None:
    root = make_repo({"valid_case.yaml": VALID_CASE, "valid_case.yml": VALID_CASE})
    code, out, _ = run(capsys, "validate", "--root", str(root), "--format", "json")
    rules = [(p["file"], p["rule"]) for p in json.loads(out)["problems"]]
    assert code == 1
    assert rules == [("cases/valid_case.yaml", "CB303"), ("cases/valid_case.yml", "CB303")]


def test_broken_catalog_is_reported_even_when_checking_one_case(
    make_repo: RepoMaker, capsys: pytest.CaptureFixture[str], monkeypatch: pytest.MonkeyPatch
) -> None:
    root = make_repo(catalog="tests: [\n")
    monkeypatch.chdir(root)
    code, out, _ = run(capsys, "validate", "cases/valid_case.yaml", "--format", "json")
    assert code == 1
    assert [p["file"] for p in json.loads(out)["problems"]] == ["catalog.yaml"]


def test_usage_errors_exit_2(make_repo: RepoMaker, capsys: pytest.CaptureFixture[str]) -> None:
    root = make_repo()
    assert run(capsys, "validate", "--root", str(root), "--format", "xml")[0] == 2
    code, _, err = run(capsys, "validate", "--root", str(root), str(root / "nope.yaml"))
    assert code == 2 and "no such file" in err
    assert run(capsys, "frobnicate")[0] == 2
    assert run(capsys)[0] == 2


def test_outside_a_repository_exits_1_with_advice(
    tmp_path: Path, capsys: pytest.CaptureFixture[str], monkeypatch: pytest.MonkeyPatch
) -> None:
    monkeypatch.chdir(tmp_path)
    code, _, err = run(capsys, "validate")
    assert code == 1 and "no casebank repository here" in err and "--root" in err


def test_internal_failure_exits_2_and_says_it_is_a_bug(
    make_repo: RepoMaker, capsys: pytest.CaptureFixture[str], monkeypatch: pytest.MonkeyPatch
) -> None:
    import casebank.commands.validate as command

    def explode(*_: object) -> None:
        raise RuntimeError("boom")

    monkeypatch.setattr(command, "validate_repository", explode)
    code, _, err = run(capsys, "validate", "--root", str(make_repo()))
    assert code == 2 and "internal error" in err


def test_rules_lists_every_rule(capsys: pytest.CaptureFixture[str]) -> None:
    code, out, _ = run(capsys, "rules", "--format", "json")
    rules = json.loads(out)
    assert code == 0
    assert {
        "code": "CB304",
        "name": "unknown-test",
        "severity": "error",
        "family": "references",
        "summary": "A test name that is not in the catalog (by name or alias).",
    } in rules
    codes = [r["code"] for r in rules]
    assert codes == sorted(set(codes))
    text_code, text, _ = run(capsys, "rules")
    assert text_code == 0 and len(text.splitlines()) == len(rules)


def test_version(capsys: pytest.CaptureFixture[str]) -> None:
    with pytest.raises(SystemExit) as exit_info:
        main(["--version"])
    assert exit_info.value.code == 0
    assert capsys.readouterr().out.startswith("casebank ")


def test_the_version_imports_no_command() -> None:
    """`casebank --version` prints at once: it imports no command (every command's imports,
    GitPython's among them, took half a second). A failure's traceback module is imported
    only for a failure's --debug."""
    import subprocess
    import sys

    probe = (
        "import sys\n"
        "from casebank.cli import main\n"
        "try:\n"
        "    main(['--version'])\n"
        "finally:\n"
        "    print(sorted(m for m in sys.modules if m.startswith('casebank.commands.')"
        " or m in ('git', 'traceback')))\n"
    )
    done = subprocess.run(
        [sys.executable, "-c", probe], capture_output=True, text=True, check=False
    )
    assert done.returncode == 0, done.stderr
    assert done.stdout.splitlines() == [done.stdout.splitlines()[0], "[]"]
    assert done.stdout.startswith("casebank ")


def test_an_unreadable_case_file_is_reported_not_fatal(
    make_repo: RepoMaker, capsys: pytest.CaptureFixture[str], monkeypatch: pytest.MonkeyPatch
) -> None:
    import errno

    root = make_repo({"valid_case.yaml": VALID_CASE, "locked.yaml": VALID_CASE})
    real_read_bytes = Path.read_bytes

    def read_bytes(self: Path) -> bytes:
        if self.name == "locked.yaml":  # as root, permissions cannot make a read fail
            raise PermissionError(errno.EACCES, "Permission denied", str(self))
        return real_read_bytes(self)

    monkeypatch.setattr(Path, "read_bytes", read_bytes)
    code, out, _ = run(capsys, "validate", "--root", str(root), "--format", "json", "--no-cache")
    problems = json.loads(out)["problems"]
    assert code == 1
    assert [(p["file"], p["line"], p["rule"]) for p in problems] == [
        ("cases/locked.yaml", 1, "CB114")
    ]
    assert problems[0]["message"] == "cannot read the file: Permission denied"
