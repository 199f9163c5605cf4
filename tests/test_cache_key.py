"""The validation cache's key covers everything that decides a verdict: every code and data file
of the package (not only format/ and check/: the rules run the results oracle in serve/ and read
format/units.json) and the versions of the libraries involved. Each is changed on a real copy
of the package, and the warm cache must miss."""

from __future__ import annotations

import json
import shutil
from pathlib import Path

import pytest

from casebank.check import cache
from casebank.check.cache import CACHE_FILE
from casebank.cli import main
from casebank.format.canonical import file_digest
from casebank.format.layout import CACHE_DIR
from conftest import VALID_CASE, RepoMaker


@pytest.fixture
def package(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> Path:
    """A copy of the installed package that the cache key is computed from."""
    copy = tmp_path / "casebank"
    shutil.copytree(cache.PACKAGE, copy, ignore=shutil.ignore_patterns("__pycache__"))
    monkeypatch.setattr(cache, "PACKAGE", copy)
    return copy


def stored_key(root: Path) -> str:
    return str(json.loads((root / CACHE_DIR / CACHE_FILE).read_text("utf-8"))["key"])


def key_now(root: Path) -> str:
    """The key `casebank validate` would use now (it keeps each file's digest: the annotation)."""
    return cache.fingerprint((root / "catalog.yaml").read_bytes(), file_digest.__qualname__)


@pytest.mark.parametrize(
    "changed",
    [
        "serve/oracle.py",  # the results oracle the grounding rules run
        "serve/views.py",
        "format/units.json",  # data, not code
        "harness/grounding.py",
        "site/templates/case.html.j2",
    ],
)
def test_a_change_anywhere_in_the_package_is_a_miss(
    package: Path, make_repo: RepoMaker, capsys: pytest.CaptureFixture[str], changed: str
) -> None:
    root = make_repo({"valid_case.yaml": VALID_CASE})
    assert main(["validate", "--root", str(root)]) == 0
    before = stored_key(root)
    cached = cache.Cache.open(root, before)
    assert cached.entries, "the first run filled the cache"
    target = package / changed
    target.write_bytes(target.read_bytes() + b"\n")
    after = key_now(root)
    assert after != before
    assert cache.Cache.open(root, after).entries == {}  # a miss: nothing is reused
    assert main(["validate", "--root", str(root)]) == 0
    assert stored_key(root) == after
    capsys.readouterr()


def test_an_unchanged_package_is_a_hit(package: Path, make_repo: RepoMaker) -> None:
    root = make_repo({"valid_case.yaml": VALID_CASE})
    assert main(["validate", "--root", str(root)]) == 0
    assert key_now(root) == stored_key(root)


@pytest.mark.parametrize("library", cache.VERDICT_LIBRARIES)
def test_another_version_of_a_library_is_a_miss(
    make_repo: RepoMaker, monkeypatch: pytest.MonkeyPatch, library: str
) -> None:
    root = make_repo({"valid_case.yaml": VALID_CASE})
    assert main(["validate", "--root", str(root)]) == 0
    installed = cache.library_versions()
    assert f"{library}==" in installed and "missing" not in installed
    upgraded = installed.replace(f"{library}==", f"{library}==99.")
    monkeypatch.setattr(cache, "library_versions", lambda: upgraded)
    assert key_now(root) != stored_key(root)
