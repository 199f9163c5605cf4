"""Generated files never drift: regenerate them and compare with the committed copies."""

from __future__ import annotations

from pathlib import Path

from casebank.check.rulesdoc import rules_markdown

ROOT = Path(__file__).resolve().parent.parent


def test_rules_reference_is_current() -> None:
    committed = (ROOT / "docs" / "rules.md").read_text(encoding="utf-8")
    assert committed == rules_markdown(), "docs/rules.md is stale: run `nox -s docs`"


def test_every_rule_documents_a_bad_and_a_good_example() -> None:
    from casebank.check.engine import all_rules

    for rule in all_rules():
        assert "Bad" in rule.doc and "Good" in rule.doc, rule.code


def test_generated_files_are_current() -> None:
    from casebank.commands.generate import generated_files

    for relative, content in generated_files(ROOT).items():
        committed = (ROOT / relative).read_text(encoding="utf-8")
        assert committed == content, f"{relative} is stale: run `nox -s docs` and commit"


def test_generate_check_fails_on_drift(tmp_path: Path) -> None:
    import shutil

    from casebank.cli import main

    shutil.copy(ROOT / "catalog.yaml", tmp_path / "catalog.yaml")
    assert main(["generate", "--root", str(tmp_path)]) == 0
    assert main(["generate", "--root", str(tmp_path), "--check"]) == 0
    (tmp_path / "docs" / "schema.md").write_text("edited by hand\n", encoding="utf-8")
    assert main(["generate", "--root", str(tmp_path), "--check"]) == 1


def test_readme_coverage_table_is_current() -> None:
    from casebank.commands.coverage import README, readme_with_table

    committed = (ROOT / README).read_text(encoding="utf-8")
    assert committed == readme_with_table(ROOT), "run `casebank coverage --write` and commit"
