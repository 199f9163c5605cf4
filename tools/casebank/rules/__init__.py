"""Every rule casebank checks, one family per module. Importing this package registers them."""

from __future__ import annotations

from casebank.rules import (  # noqa: F401  (imported for their registrations)
    acknowledgements,
    catalog_entries,
    content,
    identity,
    loading,
    placeholders,
    references,
    results,
    schema,
    scoring,
    vocabulary,
)
from casebank.rules.base import REGISTRY, Rule, rule_named

__all__ = ["REGISTRY", "Rule", "all_rules", "rule_named"]


def all_rules() -> list[Rule]:
    """Every rule, by code."""
    return sorted(REGISTRY.values(), key=lambda r: r.code)
