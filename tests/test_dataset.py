"""The shipped dataset: every case valid under --strict, and the coverage the project promises.

A regression in the tool or in the data fails here, before a release can be cut.
"""

from __future__ import annotations

from collections import Counter
from pathlib import Path

import pytest

from casebank.check.validate import Options, validate_repository
from casebank.format.loader import load_document
from casebank.workspace import case_files

ROOT = Path(__file__).resolve().parent.parent


def test_the_whole_dataset_passes_strict_validation() -> None:
    result = validate_repository(ROOT, None, Options(cache=False))
    problems = [f"{p.file}:{p.line}: [{p.rule}] {p.message}" for p in result.sorted()]
    assert problems == []
    assert result.files_checked == len(case_files(ROOT)) + 1


@pytest.fixture(scope="module")
def cases() -> list[dict[str, object]]:
    loaded = [load_document(p, (ROOT / p).read_bytes()).document for p in case_files(ROOT)]
    assert all(doc is not None for doc in loaded)
    return [doc.data for doc in loaded if doc is not None]


def test_the_starter_set_is_broad(cases: list[dict[str, object]]) -> None:
    def field(case: dict[str, object], section: str, name: str) -> object:
        value = case[section]
        assert isinstance(value, dict)
        return value[name]

    assert len(cases) >= 40
    assert len({field(c, "metadata", "specialty") for c in cases}) >= 10
    difficulties = Counter(field(c, "metadata", "difficulty") for c in cases)
    assert min(difficulties[d] for d in ("easy", "medium", "hard")) >= 8, difficulties
    assert {field(c, "patient", "sex") for c in cases} >= {"female", "male"}
    ages = [field(c, "patient", "age") for c in cases]
    assert any(a < 18 for a in ages) and any(18 <= a < 65 for a in ages)  # type: ignore[operator]
    assert any(a >= 65 for a in ages)  # type: ignore[operator]
    diagnoses = {str(field(c, "ground_truth", "final_diagnosis")).casefold() for c in cases}
    assert len(diagnoses) >= 35


def test_the_catalog_is_full() -> None:
    from casebank.check.validate import check_catalog

    loaded = check_catalog(ROOT)
    assert loaded.catalog is not None and loaded.problems == []
    assert len(loaded.catalog.tests) >= 150
    kinds = Counter(t.kind for t in loaded.catalog.tests)
    assert {"lab", "imaging", "bedside", "microbiology", "procedure"} <= set(kinds)


def test_every_case_file_declares_the_editor_schema() -> None:
    for relative in case_files(ROOT):
        if relative.endswith((".yaml", ".yml")):
            first = (ROOT / relative).read_text(encoding="utf-8").splitlines()[0]
            assert first == "# yaml-language-server: $schema=../schema/case.schema.json", relative
