"""Validate a repository: read the files, load them, check them, collect one Result."""

from __future__ import annotations

import os
from collections import Counter
from collections.abc import Sequence
from concurrent.futures import ProcessPoolExecutor
from dataclasses import dataclass, field
from pathlib import Path

from casebank.cache import Cache, Entry, entry_key, fingerprint
from casebank.catalog import Catalog, build_catalog
from casebank.check import Checker
from casebank.errors import UsageError
from casebank.loader import LOADER_RULES, Document, load_document
from casebank.problem import Problem, Result, Severity
from casebank.repo import (
    CASE_SUFFIXES,
    CATALOG_FILE,
    case_files,
    case_id_from_path,
    is_case_path,
    relative_to_root,
)
from casebank.rules.identity import DUPLICATE_CASE_ID


@dataclass
class Validation(Result):
    """A Result that also counts the warnings cases acknowledged."""

    acknowledged: list[Problem] = field(default_factory=list)


@dataclass
class LoadedCatalog:
    catalog: Catalog | None
    problems: list[Problem]


def read_file(root: Path, relative: str) -> tuple[bytes | None, Problem | None]:
    try:
        return (root / relative).read_bytes(), None
    except OSError as exc:
        rule = LOADER_RULES["unreadable-file"]
        return None, Problem(
            file=relative,
            line=1,
            column=1,
            rule=rule.code,
            path="",
            message=f"cannot read the file: {exc.strerror or exc}",
            severity=Severity.ERROR,
            hint="check that it is a regular, readable file",
            name=rule.name,
        )


def load_catalog(root: Path) -> tuple[Document | None, list[Problem]]:
    raw, unreadable = read_file(root, CATALOG_FILE)
    if raw is None:
        assert unreadable is not None
        return None, [unreadable]
    loaded = load_document(CATALOG_FILE, raw)
    return loaded.document, loaded.problems


def check_catalog(root: Path) -> LoadedCatalog:
    """Load and check catalog.yaml. A refused catalog yields no Catalog (catalog rules skip)."""
    doc, problems = load_catalog(root)
    if doc is None:
        return LoadedCatalog(None, problems)
    catalog = build_catalog(doc.data)
    return LoadedCatalog(catalog, [*problems, *Checker(catalog).check_catalog(doc)])


def select_paths(
    root: Path, paths: Sequence[str], cwd: Path | None = None
) -> tuple[bool, list[str]]:
    """Turn command-line paths into (check the catalog?, repository-relative case files)."""
    here = cwd or Path.cwd()
    with_catalog = False
    selected: list[str] = []
    for raw in paths:
        path = (here / raw) if not Path(raw).is_absolute() else Path(raw)
        if not path.exists():
            raise UsageError(f"{raw}: no such file or folder")
        relative = relative_to_root(root, path)
        if path.is_dir():
            if relative == ".":
                return True, case_files(root)
            found = sorted(
                relative_to_root(root, p)
                for p in path.rglob("*")
                if p.is_file() and p.name.lower().endswith(CASE_SUFFIXES)
            )
            selected.extend(p for p in found if p != CATALOG_FILE)
            with_catalog = with_catalog or CATALOG_FILE in found
        elif relative == CATALOG_FILE:
            with_catalog = True
        else:
            selected.append(relative)
    return with_catalog, sorted(set(selected))


def validate_repository(
    root: Path,
    paths: Sequence[str] | None = None,
    *,
    use_cache: bool = True,
    jobs: int | None = None,
) -> Validation:
    """Check the catalog and every case (or only ``paths``, as given on the command line)."""
    if paths:
        with_catalog, files = select_paths(root, paths)
    else:
        with_catalog, files = True, case_files(root)
    return validate_files(root, files, with_catalog=with_catalog, use_cache=use_cache, jobs=jobs)


# Below this many files to check, starting worker processes costs more than it saves.
PARALLEL_MIN = 300


def validate_files(
    root: Path,
    files: Sequence[str],
    *,
    with_catalog: bool,
    use_cache: bool = True,
    jobs: int | None = None,
) -> Validation:
    result = Validation()
    loaded = check_catalog(root)
    if with_catalog or loaded.catalog is None:
        # A refused catalog is always reported: without it, case checks are incomplete.
        result.files_checked += 1 if with_catalog else 0
        result.extend(loaded.problems)
    catalog_raw, _ = read_file(root, CATALOG_FILE)
    cache = Cache.open(root, fingerprint(catalog_raw)) if use_cache else None
    pending: list[tuple[str, bytes, str]] = []
    for relative in files:
        result.files_checked += 1
        raw, unreadable = read_file(root, relative)
        if raw is None:
            assert unreadable is not None
            result.extend([unreadable])
            continue
        key = entry_key(relative, raw)
        hit = cache.get(key) if cache is not None else None
        if hit is None:
            pending.append((relative, raw, key))
        else:
            result.extend(hit[0])
            result.acknowledged.extend(hit[1])
    for (_, _, key), entry in zip(pending, check_all(loaded.catalog, pending, jobs), strict=True):
        result.extend(entry[0])
        result.acknowledged.extend(entry[1])
        if cache is not None:
            cache.put(key, entry)
    if cache is not None:
        cache.save()
    result.extend(duplicate_case_ids(root, files))
    return result


def check_all(
    catalog: Catalog | None, pending: Sequence[tuple[str, bytes, str]], jobs: int | None
) -> list[Entry]:
    """Check files, on several cores when there are enough of them to pay for the start-up."""
    workers = min(jobs or os.cpu_count() or 1, 8)
    if workers < 2 or len(pending) < PARALLEL_MIN:
        checker = Checker(catalog)
        return [check_case_bytes(checker, relative, raw) for relative, raw, _ in pending]
    size = max(50, len(pending) // (workers * 4))
    batches = [
        [(rel, raw) for rel, raw, _ in pending[i : i + size]] for i in range(0, len(pending), size)
    ]
    with ProcessPoolExecutor(
        max_workers=workers, initializer=_start_worker, initargs=(catalog,)
    ) as pool:
        return [entry for batch in pool.map(_check_batch, batches) for entry in batch]


_WORKER_CHECKER: Checker | None = None


def _start_worker(catalog: Catalog | None) -> None:
    global _WORKER_CHECKER
    _WORKER_CHECKER = Checker(catalog)


def _check_batch(batch: list[tuple[str, bytes]]) -> list[Entry]:
    assert _WORKER_CHECKER is not None
    return [check_case_bytes(_WORKER_CHECKER, relative, raw) for relative, raw in batch]


def check_case_bytes(checker: Checker, relative: str, raw: bytes) -> Entry:
    loaded = load_document(relative, raw)
    if loaded.document is None:
        return loaded.problems, []
    report = checker.check_case(loaded.document)
    return [*loaded.problems, *report.problems], report.acknowledged


def duplicate_case_ids(root: Path, checked: Sequence[str]) -> list[Problem]:
    """Files that differ only in extension claim the same id (mismatched ids are CB302)."""
    stems = Counter(case_id_from_path(p) for p in case_files(root))
    problems = []
    for relative in checked:
        case_id = case_id_from_path(relative)
        if stems[case_id] > 1:
            others = [
                p for p in case_files(root) if case_id_from_path(p) == case_id and p != relative
            ]
            problems.append(
                Problem(
                    file=relative,
                    line=1,
                    column=1,
                    rule=DUPLICATE_CASE_ID.code,
                    path="case_id",
                    message=f"case id `{case_id}` is also claimed by {', '.join(others)}",
                    severity=DUPLICATE_CASE_ID.severity,
                    hint="keep one file per case: delete or rename the other",
                    name=DUPLICATE_CASE_ID.name,
                )
            )
    return problems


def changed_since(root: Path, rev: str) -> tuple[bool, list[str]]:
    """(did the catalog change?, case files added or modified since ``rev``, untracked included).

    Two git commands whatever the repository's size, so the cost follows the change.
    """
    from casebank import git

    if git.resolve_commit(root, rev) is None:
        raise UsageError(f"--changed-since {rev}: no such revision")
    listed = git.run(root, ["diff", "--name-only", "-z", "--no-renames", rev, "--"])
    listed += git.run(root, ["ls-files", "--others", "--exclude-standard", "-z"])
    paths = {p for p in listed.decode("utf-8", "surrogateescape").split("\0") if p}
    present = sorted(p for p in paths if (root / p).is_file())
    return CATALOG_FILE in paths, [p for p in present if is_case_path(p)]
