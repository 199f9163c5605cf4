"""Shared helpers: check a YAML snippet in memory, find a line, build a repository on disk."""

from __future__ import annotations

import functools
import importlib.util
import os
import shutil
import signal
from collections.abc import Callable
from pathlib import Path
from types import ModuleType

import pytest
from hypothesis import settings

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


@functools.cache
def load_noxfile() -> ModuleType:
    """The project's noxfile as a module, loaded once per process (nox registers its sessions
    globally and warns when they are registered again). Needs nox."""
    path = Path(__file__).parents[1] / "noxfile.py"
    spec = importlib.util.spec_from_file_location("noxfile_under_test", path)
    assert spec is not None and spec.loader is not None
    module = importlib.util.module_from_spec(spec)
    spec.loader.exec_module(module)
    return module


def run_cli(capsys: pytest.CaptureFixture[str], *argv: str) -> tuple[int, str, str]:
    """``casebank ARGV...`` in process: its exit code, standard output and standard error."""
    from casebank.cli import main

    code = main(list(argv))
    out, err = capsys.readouterr()
    return code, out, err


# A runner may start the tests with SIGINT ignored (xdist's workers, some CI shells): the
# release-safety tests interrupt real releases, so the tests state the handler themselves.
signal.signal(signal.SIGINT, signal.default_int_handler)

# Hypothesis profiles: `ci` (the default under CI=true) draws half of each property test's
# nominal examples, derandomised so a failure reproduces; `dev` (the default elsewhere) a fifth,
# for a quick loop; `full` every nominal example. Choose with HYPOTHESIS_PROFILE=ci|dev|full.
_SHARE = {"ci": 0.5, "dev": 0.2, "full": 1.0}
for _name in _SHARE:
    settings.register_profile(_name, derandomize=_name == "ci", print_blob=True)
PROFILE = os.environ.get("HYPOTHESIS_PROFILE") or ("ci" if os.environ.get("CI") else "dev")
if PROFILE not in _SHARE:
    raise pytest.UsageError(f"HYPOTHESIS_PROFILE={PROFILE}: use one of {', '.join(_SHARE)}")
settings.load_profile(PROFILE)


def examples(nominal: int) -> int:
    """How many examples a property test with ``nominal`` examples draws in this profile."""
    return max(10, round(nominal * _SHARE[PROFILE]))


RepoMaker = Callable[..., Path]


@pytest.fixture
def isolated_git(monkeypatch: pytest.MonkeyPatch, tmp_path: Path) -> None:
    """Git with a pinned identity and clock, and no access to the user's configuration."""
    isolate_git(monkeypatch, tmp_path / "home")
    monkeypatch.delenv("GITHUB_BASE_REF", raising=False)


@pytest.fixture(scope="session")
def repo_templates(tmp_path_factory: pytest.TempPathFactory) -> dict[str, GitRepo]:
    """The repositories most tests start from, built once per test session (each test gets a
    copy): ``plain``, the three committed cases; ``released``, the same released as 1.0.0."""
    from casebank.cli import main

    base = tmp_path_factory.mktemp("templates")
    with pytest.MonkeyPatch.context() as patch:
        isolate_git(patch, base / "home")
        patch.delenv("GITHUB_BASE_REF", raising=False)
        plain = dataset(base / "plain")
        released = dataset(base / "released")
        assert main(["release", "1.0.0", "--root", str(released.root)]) == 0
    shutil.rmtree(released.root / ".casebank-cache", ignore_errors=True)
    return {"plain": plain, "released": released}


def _copy(template: GitRepo, root: Path) -> GitRepo:
    shutil.copytree(template.root, root, symlinks=True)
    return GitRepo(root, template.clock)


@pytest.fixture
def repo(tmp_path: Path, isolated_git: None, repo_templates: dict[str, GitRepo]) -> GitRepo:
    """A committed repository with the test catalog and three cases: alpha, beta, gamma."""
    return _copy(repo_templates["plain"], tmp_path / "repo")


@pytest.fixture
def released(tmp_path: Path, isolated_git: None, repo_templates: dict[str, GitRepo]) -> GitRepo:
    """The three-case repository released as 1.0.0 (tag, manifest, changelog)."""
    return _copy(repo_templates["released"], tmp_path / "repo")


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
