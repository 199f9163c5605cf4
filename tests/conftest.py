"""Shared helpers: check a YAML snippet in memory, find a line, build a repository on disk."""

from __future__ import annotations

from collections.abc import Callable
from pathlib import Path

import pytest

from casebank.check.engine import Checker
from casebank.check.problem import Problem
from casebank.format.catalog import build_catalog
from casebank.format.loader import load_document
from gitrepo import GitRepo, dataset, isolate_git

FIXTURES = Path(__file__).parent / "fixtures"
VALID_CASE = (FIXTURES / "valid_case.yaml").read_text(encoding="utf-8")
TEST_CATALOG = (FIXTURES / "catalog.yaml").read_text(encoding="utf-8")


def checker_for(catalog_text: str = TEST_CATALOG) -> Checker:
    loaded = load_document("catalog.yaml", catalog_text.encode())
    assert loaded.document is not None, loaded.problems
    return Checker(build_catalog(loaded.document.data))


_DEFAULT_CHECKER = checker_for()


def check_text(
    text: str, file: str = "cases/valid_case.yaml", checker: Checker | None = None
) -> list[Problem]:
    """Every problem the loader and the rules find in ``text`` (acknowledged ones excluded)."""
    report = (checker or _DEFAULT_CHECKER).check_file(file, text.encode("utf-8"))
    return sorted(report.problems)


def found(text: str, **kwargs: object) -> list[tuple[str, str, int]]:
    """(rule, path, line) of each problem: the exact triples tests assert on."""
    return [(p.rule, p.path, p.line) for p in check_text(text, **kwargs)]  # type: ignore[arg-type]


def line_of(text: str, needle: str, occurrence: int = 1) -> int:
    """1-based line of the ``occurrence``-th line containing ``needle``."""
    hits = [i for i, line in enumerate(text.splitlines(), 1) if needle in line]
    assert len(hits) >= occurrence, f"{needle!r} not in text"
    return hits[occurrence - 1]


def edit(old: str, new: str, text: str = VALID_CASE) -> str:
    """Replace one exact, unique piece of the valid case."""
    assert text.count(old) == 1, f"{old!r} occurs {text.count(old)} times"
    return text.replace(old, new)


RepoMaker = Callable[..., Path]


@pytest.fixture
def isolated_git(monkeypatch: pytest.MonkeyPatch, tmp_path: Path) -> None:
    """Git with a pinned identity and clock, and no access to the user's configuration."""
    isolate_git(monkeypatch, tmp_path / "home")
    monkeypatch.delenv("GITHUB_BASE_REF", raising=False)


@pytest.fixture
def repo(tmp_path: Path, isolated_git: None) -> GitRepo:
    """A committed repository with the test catalog and three cases: alpha, beta, gamma."""
    return dataset(tmp_path / "repo")


@pytest.fixture
def make_repo(tmp_path: Path) -> RepoMaker:
    """A repository on disk: catalog.yaml plus cases/<name> for each given case text."""

    def make(cases: dict[str, str] | None = None, catalog: str = TEST_CATALOG) -> Path:
        root = tmp_path / "repo"
        (root / "cases").mkdir(parents=True, exist_ok=True)
        (root / "catalog.yaml").write_text(catalog, encoding="utf-8")
        default = {"valid_case.yaml": VALID_CASE}
        for name, text in (default if cases is None else cases).items():
            (root / "cases" / name).write_text(text, encoding="utf-8")
        return root

    return make
