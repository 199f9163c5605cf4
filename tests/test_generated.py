"""Generated files never drift: regenerate them and compare with the committed copies."""

from __future__ import annotations

from pathlib import Path

from casebank.docs import rules_markdown

ROOT = Path(__file__).resolve().parent.parent


def test_rules_reference_is_current() -> None:
    committed = (ROOT / "docs" / "rules.md").read_text(encoding="utf-8")
    assert committed == rules_markdown(), "docs/rules.md is stale: run `nox -s docs`"


def test_every_rule_documents_a_bad_and_a_good_example() -> None:
    from casebank.rules import all_rules

    for rule in all_rules():
        assert "Bad" in rule.doc and "Good" in rule.doc, rule.code
