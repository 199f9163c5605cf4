"""Test-name matching measured on real outside data: 535 test names from the AgentClinic OSCE
datasets (MIT licence), each labelled with the catalog test it means in its context
(tests/data/test-names.yaml). A wrong match is worse than none, so the bar is: no name is ever
matched to a different test, no heading is matched to a test, and at least 90% of the names
that mean a catalog test are matched to it."""

from __future__ import annotations

from pathlib import Path
from typing import Any

import pytest
import yaml

from casebank.format.catalog import Catalog, build_catalog
from casebank.format.loader import load_document
from casebank.format.names import resolve_in

ROOT = Path(__file__).resolve().parent.parent
CORPUS: list[dict[str, Any]] = yaml.safe_load(
    (ROOT / "tests/data/test-names.yaml").read_text(encoding="utf-8")
)


@pytest.fixture(scope="module")
def catalog() -> Catalog:
    loaded = load_document("catalog.yaml", (ROOT / "catalog.yaml").read_bytes())
    assert loaded.document is not None
    return build_catalog(loaded.document.data)


def test_every_label_names_a_catalog_test(catalog: Catalog) -> None:
    unknown = [e["means"] for e in CORPUS if e.get("means") and catalog.resolve(e["means"]) is None]
    assert unknown == []


def test_no_name_is_ever_matched_to_a_different_test(catalog: Catalog) -> None:
    wrong = []
    for entry in CORPUS:
        if not entry.get("means"):
            continue
        found = resolve_in(entry["name"], entry.get("within"), catalog)
        allowed = {catalog.resolve(entry["means"]).name, *entry.get("also", [])}  # type: ignore[union-attr]
        if found is not None and found.name not in allowed:
            wrong.append(f"{entry['name']!r} in {entry.get('within')!r} -> {found.name}")
    assert wrong == []


def test_headings_and_attributes_match_no_test(catalog: Catalog) -> None:
    matched = [
        f"{e['name']!r} -> {found.name}"
        for e in CORPUS
        if e.get("kind") == "container"
        and (found := resolve_in(e["name"], e.get("within"), catalog)) is not None
    ]
    assert matched == []


def test_nine_in_ten_real_names_are_matched(catalog: Catalog) -> None:
    meant = [e for e in CORPUS if e.get("means")]
    matched = [e for e in meant if resolve_in(e["name"], e.get("within"), catalog) is not None]
    share = len(matched) / len(meant)
    assert share >= 0.90, f"{len(matched)} of {len(meant)} names matched ({share:.1%})"
