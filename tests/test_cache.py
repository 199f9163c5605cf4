"""The cache and the worker pool change how fast validation is, never what it reports."""

from __future__ import annotations

import contextlib
import io
import json
import os
import subprocess
from pathlib import Path

import pytest

import casebank.check.cache
import casebank.check.validate
from casebank.check.cache import CACHE_FILE
from casebank.cli import main
from casebank.format.layout import CACHE_DIR
from conftest import VALID_CASE, RepoMaker, edit
from gitrepo import GitRepo

WITH_ERROR = edit("  age: 54", "  age: fifty").replace("case_id: valid_case", "case_id: broken")
WITH_WARNING = edit("tags: [chest_pain, cardiology]", "tags: [chestpain]").replace(
    "case_id: valid_case", "case_id: warned"
)
ACKNOWLEDGED = edit(
    "with sweating and nausea.", "with sweating and nausea. He fears a STEMI."
).replace("case_id: valid_case", "case_id: acked") + (
    "acknowledged_warnings:\n  - rule: CB408\n"
    '    reason: "He had a STEMI before and says so; that is realistic."\n'
)
CASES = {
    "valid_case.yaml": VALID_CASE,
    "broken.yaml": WITH_ERROR,
    "warned.yaml": WITH_WARNING,
    "acked.yaml": ACKNOWLEDGED,
}


def report(root: Path, *extra: str) -> tuple[int, dict[str, object]]:
    out = io.StringIO()
    with contextlib.redirect_stdout(out):
        code = main(["validate", "--root", str(root), "--format", "json", *extra])
    return code, json.loads(out.getvalue())


def test_cached_and_uncached_runs_report_the_same(make_repo: RepoMaker) -> None:
    root = make_repo(CASES)
    uncached = report(root, "--no-cache")
    assert not (root / CACHE_DIR).exists(), "--no-cache must not write a cache"
    cold = report(root)
    assert (root / CACHE_DIR / CACHE_FILE).is_file()
    warm = report(root)
    assert uncached == cold == warm
    assert uncached[0] == 1 and len(uncached[1]["problems"]) == 2  # type: ignore[arg-type]


def test_a_warm_run_really_uses_the_cache(
    make_repo: RepoMaker, monkeypatch: pytest.MonkeyPatch
) -> None:
    root = make_repo(CASES)
    report(root)

    def must_not_run(*_: object) -> None:
        raise AssertionError("a warm run with nothing changed must not check any file")

    monkeypatch.setattr(casebank.check.validate, "check_all", must_not_run)
    assert report(root) == report(root)


def test_an_edited_file_is_checked_again(make_repo: RepoMaker) -> None:
    root = make_repo(CASES)
    report(root)
    (root / "cases" / "valid_case.yaml").write_text(
        edit("  age: 54", "  age: 230"), encoding="utf-8"
    )
    assert report(root) == report(root, "--no-cache")
    assert "CB207" in json.dumps(report(root)[1])


def test_a_catalog_change_invalidates_every_entry(make_repo: RepoMaker) -> None:
    root = make_repo(CASES)
    assert report(root)[0] == 1
    catalog = (root / "catalog.yaml").read_text(encoding="utf-8")
    (root / "catalog.yaml").write_text(
        catalog.replace("  - name: Troponin\n", "  - name: Troponin T\n"), encoding="utf-8"
    )
    after = report(root)
    assert after == report(root, "--no-cache")
    assert "CB304" in json.dumps(after[1])  # `Troponin` is no longer a catalog name


def test_a_tool_upgrade_invalidates_the_cache(
    make_repo: RepoMaker, monkeypatch: pytest.MonkeyPatch
) -> None:
    root = make_repo(CASES)
    truth = report(root, "--no-cache")
    report(root)
    # Forge a cache that hides every problem, as an older casebank with a weaker rule might
    # have written; under the same fingerprint it would be believed...
    path = root / CACHE_DIR / CACHE_FILE
    stored = json.loads(path.read_text(encoding="utf-8"))
    stored["entries"] = {k: {**v, "p": [], "a": []} for k, v in stored["entries"].items()}
    path.write_text(json.dumps(stored), encoding="utf-8")
    assert report(root)[1]["problems"] == []
    # ...but a different tool version or source is a different fingerprint: nothing is reused.
    monkeypatch.setattr(casebank, "__version__", "99.0.0")
    assert report(root) == truth
    monkeypatch.undo()
    monkeypatch.setattr(casebank.check.cache, "_source_digest", lambda: "edited rules")
    path.write_text(json.dumps(stored), encoding="utf-8")
    assert report(root) == truth


@pytest.mark.parametrize("garbage", [b"", b"{", b"[]", b'{"format": 1, "key": 3}', b"\xff"])
def test_a_corrupt_cache_is_ignored(make_repo: RepoMaker, garbage: bytes) -> None:
    root = make_repo(CASES)
    truth = report(root, "--no-cache")
    (root / CACHE_DIR).mkdir()
    (root / CACHE_DIR / CACHE_FILE).write_bytes(garbage)
    assert report(root) == truth


def test_worker_processes_report_the_same(
    make_repo: RepoMaker, monkeypatch: pytest.MonkeyPatch
) -> None:
    many = {
        f"case_{i:03d}.yaml": (WITH_ERROR if i % 7 == 0 else VALID_CASE).replace(
            "case_id: broken" if i % 7 == 0 else "case_id: valid_case", f"case_id: case_{i:03d}"
        )
        for i in range(40)
    }
    root = make_repo(many)
    monkeypatch.setattr(casebank.check.validate, "PARALLEL_MIN", 1)
    serial = report(root, "--no-cache", "--jobs", "1")
    parallel = report(root, "--no-cache", "--jobs", "2")
    assert serial == parallel and serial[0] == 1


def test_jobs_must_be_positive(make_repo: RepoMaker) -> None:
    assert main(["validate", "--root", str(make_repo()), "--jobs", "0"]) == 2


# --- --changed-since ----------------------------------------------------------------------

GIT_ENV = {
    "GIT_AUTHOR_NAME": "Test",
    "GIT_AUTHOR_EMAIL": "test@example.invalid",
    "GIT_COMMITTER_NAME": "Test",
    "GIT_COMMITTER_EMAIL": "test@example.invalid",
    "GIT_AUTHOR_DATE": "2026-01-01T00:00:00Z",
    "GIT_COMMITTER_DATE": "2026-01-01T00:00:00Z",
    "GIT_CONFIG_GLOBAL": os.devnull,
    "GIT_CONFIG_NOSYSTEM": "1",
}


def git(root: Path, *args: str) -> None:
    subprocess.run(
        ["git", *args], cwd=root, check=True, capture_output=True, env={**os.environ, **GIT_ENV}
    )


def committed_repo(make_repo: RepoMaker) -> Path:
    root = make_repo(
        {
            f"case_{i}.yaml": VALID_CASE.replace("case_id: valid_case", f"case_id: case_{i}")
            for i in range(5)
        }
    )
    git(root, "init", "-q", "-b", "main")
    git(root, "add", ".")
    git(root, "commit", "-q", "-m", "base")
    return root


def test_changed_since_checks_only_changed_and_new_cases(make_repo: RepoMaker) -> None:
    root = committed_repo(make_repo)
    (root / "cases" / "case_1.yaml").write_text(
        edit("  age: 54", "  age: fifty").replace("case_id: valid_case", "case_id: case_1"),
        encoding="utf-8",
    )
    (root / "cases" / "case_9.yaml").write_text(
        VALID_CASE.replace("case_id: valid_case", "case_id: case_9"), encoding="utf-8"
    )
    (root / "cases" / "case_2.yaml").unlink()
    code, payload = report(root, "--changed-since", "HEAD")
    assert code == 1
    assert payload["files_checked"] == 2
    assert {p["file"] for p in payload["problems"]} == {"cases/case_1.yaml"}  # type: ignore


def test_changed_since_checks_everything_when_the_catalog_changed(make_repo: RepoMaker) -> None:
    root = committed_repo(make_repo)
    with (root / "catalog.yaml").open("a", encoding="utf-8") as catalog:
        catalog.write(
            "  - name: Serum lactate\n    kind: lab\n"
            "    result_types: [lab_value]\n    unit: mmol/L\n"
        )
    code, payload = report(root, "--changed-since", "HEAD")
    assert (code, payload["files_checked"]) == (0, 6)


def test_changed_since_with_nothing_changed(make_repo: RepoMaker) -> None:
    root = committed_repo(make_repo)
    assert report(root, "--changed-since", "HEAD") == (0, {"files_checked": 0, "problems": []})


def test_changed_since_an_unknown_revision_is_a_usage_error(make_repo: RepoMaker) -> None:
    root = committed_repo(make_repo)
    assert main(["validate", "--root", str(root), "--changed-since", "no-such-rev"]) == 2


def _catalog_loads(monkeypatch: pytest.MonkeyPatch) -> list[str]:
    """The files the loader is asked to load from now on (validation and the catalog's memory
    import the loader where they need it)."""
    import casebank.format.loader

    loads: list[str] = []
    real = casebank.format.loader.load_document

    def counting(file: str, raw: bytes) -> object:
        loads.append(file)
        return real(file, raw)

    monkeypatch.setattr(casebank.format.loader, "load_document", counting)
    return loads


def test_validation_remembers_the_catalog_for_the_commands_that_serve(
    make_repo: RepoMaker, monkeypatch: pytest.MonkeyPatch, capsys: pytest.CaptureFixture[str]
) -> None:
    """A run that checks the catalog remembers what it loaded as: the first `results` after
    `validate` reads it back instead of parsing the YAML. --no-cache remembers nothing."""
    from casebank.commands.memory import CATALOG_CACHE

    root = make_repo(CASES)
    report(root, "--no-cache")
    assert not (root / CACHE_DIR).exists()
    report(root)
    assert (root / CACHE_DIR / CATALOG_CACHE).is_file()
    argv = ["results", "valid_case", "Troponin", "ECG", "--root", str(root), "--format", "json"]
    loads = _catalog_loads(monkeypatch)
    assert main(argv) == 0
    remembered = capsys.readouterr().out
    assert "catalog.yaml" not in loads
    (root / CACHE_DIR / CATALOG_CACHE).unlink()
    assert main(argv) == 0
    assert capsys.readouterr().out == remembered
    assert "catalog.yaml" in loads


def test_a_run_whose_catalog_report_is_cached_reads_the_catalog_back(
    make_repo: RepoMaker, monkeypatch: pytest.MonkeyPatch
) -> None:
    """An edited case under an unchanged catalog: the catalog's problems come from the cache
    and the catalog itself from its memory, not from its YAML; a corrupt memory is loaded
    afresh, and reports the same."""
    from casebank.commands.memory import CATALOG_CACHE

    root = make_repo(CASES)
    report(root)
    (root / "cases" / "valid_case.yaml").write_text(
        edit("  age: 54", "  age: 230"), encoding="utf-8"
    )
    truth = report(root, "--no-cache")
    loads = _catalog_loads(monkeypatch)
    assert report(root) == truth
    assert loads == ["cases/valid_case.yaml"]
    (root / "cases" / "valid_case.yaml").write_text(VALID_CASE, encoding="utf-8")
    (root / CACHE_DIR / CATALOG_CACHE).write_text('{"key": "0", "data": []}', encoding="utf-8")
    assert report(root) == report(root, "--no-cache")
    assert "catalog.yaml" in loads


def _heavy_imports(root: Path, argv: list[str], code: int = 0) -> list[str]:
    """Which of PyYAML, Cerberus and the loader ``casebank ARGV`` imports, run in a fresh
    interpreter (where it must exit with ``code``)."""
    import sys

    probe = (
        "import sys\n"
        "from casebank.cli import main\n"
        f"assert main({argv!r}) == {code}\n"
        "print(sorted(m for m in ('yaml', 'cerberus', 'casebank.format.loader') "
        "if m in sys.modules))\n"
    )
    done = subprocess.run(
        [sys.executable, "-c", probe], capture_output=True, text=True, check=True, cwd=root
    )
    return [m for m in done.stdout.splitlines()[-1].strip("[]").split(", ") if m]


def test_a_warm_run_imports_neither_the_loader_nor_cerberus(make_repo: RepoMaker) -> None:
    """What makes a warm run a tenth of a cold one: nothing it does not need is imported."""
    root = make_repo(CASES)
    report(root)
    argv = ["validate", "--root", str(root), "--format", "json"]
    assert _heavy_imports(root, argv, code=1) == []  # broken.yaml has an error


def test_results_remembers_the_case_it_served(
    make_repo: RepoMaker, monkeypatch: pytest.MonkeyPatch, capsys: pytest.CaptureFixture[str]
) -> None:
    """A harness asks one case again and again: `results` remembers what the case loaded as
    and reads it back. An edited case is loaded afresh (its new answer, never the old one), a
    corrupt memory is loaded afresh and answers the same, and a case that no longer loads is
    refused with the loader's place, not served from memory."""
    from casebank.commands.memory import SERVED_CACHE

    root = make_repo(CASES)
    argv = ["results", "valid_case", "Troponin", "--root", str(root), "--format", "json"]
    loads = _catalog_loads(monkeypatch)
    assert main(argv) == 0
    first = capsys.readouterr().out
    assert "cases/valid_case.yaml" in loads
    memory = root / CACHE_DIR / SERVED_CACHE.format("valid_case.yaml")
    assert json.loads(memory.read_text(encoding="utf-8"))["data"]["case_id"] == "valid_case"
    loads.clear()
    assert main(argv) == 0
    assert capsys.readouterr().out == first
    assert loads == []
    case = root / "cases" / "valid_case.yaml"
    case.write_text(VALID_CASE.replace("value: 2.4", "value: 3.7"), encoding="utf-8")
    assert main(argv) == 0
    edited = capsys.readouterr().out
    assert "3.7" in edited and "2.4" not in edited
    assert loads == ["cases/valid_case.yaml"]
    memory.write_text("{not json", encoding="utf-8")
    assert main(argv) == 0
    assert capsys.readouterr().out == edited
    case.write_text(VALID_CASE + "  : [unclosed\n", encoding="utf-8")
    assert main(argv) == 1
    assert "cases/valid_case.yaml:" in capsys.readouterr().err


def test_a_remembered_load_is_keyed_by_the_pyyaml_it_was_loaded_with(
    monkeypatch: pytest.MonkeyPatch, tmp_path: Path
) -> None:
    """The key holds PyYAML's version without importing PyYAML: another PyYAML (another
    ``yaml/__init__.py``) is another key, so nothing loaded by the old one is read back."""
    import importlib.machinery
    import importlib.util

    from casebank.commands.memory import loaded_key

    before = loaded_key(b"tests: []\n")
    other = tmp_path / "__init__.py"
    other.write_text("__version__ = '99.0'\n", encoding="utf-8")
    real = importlib.util.find_spec

    def other_yaml(name: str, *args: object) -> object:
        if name == "yaml":
            return importlib.machinery.ModuleSpec("yaml", None, origin=str(other))
        return real(name, *args)  # type: ignore[arg-type]

    monkeypatch.setattr(importlib.util, "find_spec", other_yaml)
    assert loaded_key(b"tests: []\n") != before
    monkeypatch.undo()
    assert loaded_key(b"tests: []\n") == before


def test_a_warm_results_imports_neither_the_loader_nor_pyyaml(make_repo: RepoMaker) -> None:
    """A remembered case and catalog are read back as JSON: PyYAML's import (a fifth of a
    warm `results`) and the loader's are not paid."""
    root = make_repo(CASES)
    argv = ["results", "valid_case", "Troponin", "ECG", "--root", str(root)]
    assert main(argv) == 0
    assert _heavy_imports(root, argv) == []


def test_a_second_score_of_a_release_imports_neither_the_loader_nor_pyyaml(
    released: GitRepo, capsys: pytest.CaptureFixture[str]
) -> None:
    """The release's cases and its catalog are remembered by the first score, so the second
    reads no YAML at all: the loader and PyYAML stay unimported."""
    subs = released.root / "subs.jsonl"
    row = {"case_id": "alpha", "version": 1, "diagnosis": "Inferior STEMI", "tests": ["ECG"]}
    row["plan"] = ["Aspirin 300 mg chewed", "Primary PCI"]
    subs.write_text(json.dumps(row) + "\n", encoding="utf-8")
    argv = ["score", str(subs), "--release", "1.0.0", "--root", str(released.root)]
    argv += ["--format", "json"]
    assert main(argv) == 0
    first = json.loads(capsys.readouterr().out)
    assert [c["case_id"] for c in first["cases"]] == ["alpha"]
    assert _heavy_imports(released.root, argv) == []


def test_the_site_reads_the_catalog_validation_remembered(
    make_repo: RepoMaker, monkeypatch: pytest.MonkeyPatch
) -> None:
    """The site's catalog (for each test's cost and burden) is the one validation remembered,
    the same as the catalog loaded afresh; a catalog that does not load is none."""
    from casebank.commands import site_input
    from casebank.format.catalog import load_catalog

    root = make_repo(CASES)
    report(root)
    loads = _catalog_loads(monkeypatch)
    remembered = site_input._catalog(root)
    assert "catalog.yaml" not in loads
    assert remembered == load_catalog((root / "catalog.yaml").read_bytes())
    (root / "catalog.yaml").write_text("tests: [unclosed\n", encoding="utf-8")
    assert site_input._catalog(root) is None


def _index_builds(monkeypatch: pytest.MonkeyPatch) -> list[int]:
    """How many spellings each name index built from now on keyed (a restored one keys none)."""
    import casebank.format.names

    builds: list[int] = []
    real = casebank.format.names.NameIndex.__init__

    def counting(self: object, spellings: object) -> None:
        spelled = list(spellings)  # type: ignore[call-overload]
        if spelled:
            builds.append(len(spelled))
        real(self, spelled)  # type: ignore[arg-type]

    monkeypatch.setattr(casebank.format.names.NameIndex, "__init__", counting)
    return builds


def test_results_remembers_the_catalogs_name_index(
    make_repo: RepoMaker, monkeypatch: pytest.MonkeyPatch, capsys: pytest.CaptureFixture[str]
) -> None:
    """A loose name ("troponin levels") needs the catalog's name index, which keys every
    spelling: `results` remembers it and the next run reads it back, answering the same. A
    changed catalog is another index (its new alias answers; the old memory is never read),
    and a corrupt memory is built afresh and answers the same."""
    from casebank.commands.memory import NAMES_CACHE

    root = make_repo(CASES)
    argv = ["results", "valid_case", "troponin levels", "heart muscle enzymes"]
    argv += ["--root", str(root), "--format", "json"]
    builds = _index_builds(monkeypatch)
    assert main(argv) == 0
    first = capsys.readouterr().out
    assert len(builds) == 1
    assert '"test": "Troponin"' in first and '"source": "unknown_test"' in first
    memory = root / CACHE_DIR / NAMES_CACHE
    assert memory.is_file()
    assert main(argv) == 0
    assert capsys.readouterr().out == first
    assert len(builds) == 1
    catalog = root / "catalog.yaml"
    catalog.write_text(
        catalog.read_text(encoding="utf-8").replace(
            '"hs-troponin", "Troponin I"', '"hs-troponin", "Troponin I", "Heart muscle enzyme"'
        ),
        encoding="utf-8",
    )
    assert main(argv) == 0
    changed = capsys.readouterr().out
    assert len(builds) == 2
    assert '"source": "unknown_test"' not in changed
    memory.write_text('{"key": "0", "data": {"by_key": []}}', encoding="utf-8")
    assert main(argv) == 0
    assert capsys.readouterr().out == changed
    assert len(builds) == 3
    stored = json.loads(memory.read_text(encoding="utf-8"))
    stored["data"]["by_key"] = [1]  # under the right key, but not an index
    memory.write_text(json.dumps(stored), encoding="utf-8")
    assert main(argv) == 0
    assert capsys.readouterr().out == changed
    assert len(builds) == 4


def test_a_run_without_the_cache_computes_no_digest(
    make_repo: RepoMaker, monkeypatch: pytest.MonkeyPatch
) -> None:
    """A file's digest is kept in the cache for a later release; a run that writes no cache
    computes none (it was about a tenth of a `validate --no-cache`), and reports the same."""
    import functools

    import casebank.commands.validate
    from casebank.format.canonical import file_digest as real

    digests: list[str] = []

    @functools.wraps(real)
    def counting(relative: str, raw: bytes, data: object) -> object:
        digests.append(relative)
        return real(relative, raw, data)  # type: ignore[arg-type]

    monkeypatch.setattr(casebank.commands.validate, "file_digest", counting)
    root = make_repo(CASES)
    uncached = report(root, "--no-cache")
    assert digests == []
    assert report(root) == uncached
    assert sorted(digests) == sorted(f"cases/{name}" for name in CASES)


def test_the_release_memory_reads_back_what_it_wrote_and_skips_what_is_not_a_line(
    tmp_path: Path,
) -> None:
    """Released cases' texts are remembered one ``BLOB TEXT`` line each, under the loader's
    key: read back as written; a line with no text, a blank line or a last line with no line
    feed is no entry (or the entry it is); a memory under another key is empty."""
    from casebank.commands.memory import CASES_CACHE, RememberedCases, loaded_key

    memory = RememberedCases(tmp_path)
    texts = {"a" * 40: b'{"case_id":"alpha"}', "b" * 40: b'{"x":"y z"}'}
    memory.write(texts)
    assert memory.read() == texts
    path = tmp_path / CACHE_DIR / CASES_CACHE
    key = loaded_key(b"").encode()
    path.write_bytes(key + b"\n" + b"c" * 40 + b"\n\n" + b"d" * 40 + b" \n" + b"e" * 40 + b" {}")
    assert memory.read() == {"e" * 40: b"{}"}
    path.write_bytes(b"another key\n" + b"a" * 40 + b" {}\n")
    assert memory.read() == {}
    path.write_bytes(key)
    assert memory.read() == {}
