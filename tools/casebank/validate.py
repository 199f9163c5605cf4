"""Validate a repository: read the files, load them, check them, collect one Result."""

from __future__ import annotations

import os
from collections.abc import Sequence
from dataclasses import dataclass, field
from pathlib import Path
from typing import TYPE_CHECKING

from casebank.cache import Cache, FileReport, entry_key, fingerprint
from casebank.canonical import CaseDigest, git_blob_id
from casebank.catalog import Catalog, build_catalog
from casebank.errors import UsageError
from casebank.loader import LOADER_RULES, load_document, loader_problem
from casebank.problem import Problem, Result
from casebank.repo import (
    CASE_SUFFIXES,
    CATALOG_FILE,
    case_files,
    case_id_from_path,
    is_case_path,
    relative_to_root,
)

if TYPE_CHECKING:  # the checker (and Cerberus) is imported only when a file must be checked
    from casebank.check import Checker


@dataclass
class Validation(Result):
    """A Result, the warnings cases acknowledged, and each case file's content digest.

    ``digests`` maps a case file to its git blob id and canonical digest, so that a release can
    reuse what validation already parsed instead of parsing the same files again.
    """

    acknowledged: list[Problem] = field(default_factory=list)
    digests: dict[str, tuple[str, CaseDigest]] = field(default_factory=dict)

    def add(self, relative: str, raw: bytes, report: FileReport) -> None:
        self.extend(report.problems)
        self.acknowledged.extend(report.acknowledged)
        if report.digest is not None:
            self.digests[relative] = (git_blob_id(raw), report.digest)


@dataclass
class LoadedCatalog:
    catalog: Catalog | None
    problems: list[Problem]


def read_file(root: Path, relative: str) -> tuple[bytes | None, Problem | None]:
    try:
        return (root / relative).read_bytes(), None
    except OSError as exc:
        return None, loader_problem(
            relative,
            "unreadable-file",
            (1, 1),
            f"cannot read the file: {exc.strerror or exc}",
            "check that it is a regular, readable file",
        )


def check_catalog(root: Path) -> LoadedCatalog:
    """Load and check catalog.yaml. A refused catalog yields no Catalog (catalog rules skip)."""
    raw, unreadable = read_file(root, CATALOG_FILE)
    if raw is None:
        assert unreadable is not None
        return LoadedCatalog(None, [unreadable])
    return check_catalog_bytes(raw)


def check_catalog_bytes(raw: bytes) -> LoadedCatalog:
    from casebank.check import Checker

    loaded = load_document(CATALOG_FILE, raw)
    if loaded.document is None:
        return LoadedCatalog(None, loaded.problems)
    catalog = build_catalog(loaded.document.data)
    return LoadedCatalog(
        catalog, [*loaded.problems, *Checker(catalog).check_catalog(loaded.document)]
    )


def build_catalog_bytes(raw: bytes | None) -> Catalog | None:
    """The catalog as a lookup, without checking it (that result may come from the cache)."""
    loaded = load_document(CATALOG_FILE, raw) if raw is not None else None
    return build_catalog(loaded.document.data) if loaded and loaded.document else None


# Loader problems that refuse a file (ambiguous-number is reported but the file still loads).
REFUSALS = {rule.code for rule in LOADER_RULES.values()} - {LOADER_RULES["ambiguous-number"].code}


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
    catalog_raw, unreadable = read_file(root, CATALOG_FILE)
    cache = Cache.open(root, fingerprint(catalog_raw)) if use_cache else None
    catalog_problems = _catalog_problems(cache, catalog_raw, unreadable)
    refused = catalog_raw is None or any(p.rule in REFUSALS for p in catalog_problems)
    if with_catalog or refused:
        # A refused catalog is always reported: without it, case checks are incomplete.
        result.files_checked += 1 if with_catalog else 0
        result.extend(catalog_problems)
    pending: list[tuple[str, bytes, str]] = []
    for relative in files:
        result.files_checked += 1
        raw, unreadable_case = read_file(root, relative)
        if raw is None:
            assert unreadable_case is not None
            result.extend([unreadable_case])
            continue
        key = entry_key(relative, raw)
        hit = cache.get(key) if cache is not None else None
        if hit is None:
            pending.append((relative, raw, key))
        else:
            result.add(relative, raw, hit)
    if pending:  # only now is the catalog needed as a lookup, and Cerberus at all
        catalog = None if refused else build_catalog_bytes(catalog_raw)
        for (relative, raw, key), report in zip(
            pending, check_all(catalog, pending, jobs), strict=True
        ):
            result.add(relative, raw, report)
            if cache is not None:
                cache.put(key, report)
    if cache is not None:
        cache.save()
    result.extend(duplicate_case_ids(root, files))
    return result


def _catalog_problems(
    cache: Cache | None, raw: bytes | None, unreadable: Problem | None
) -> list[Problem]:
    if raw is None:
        assert unreadable is not None
        return [unreadable]
    key = entry_key(CATALOG_FILE, raw)
    hit = cache.get(key) if cache is not None else None
    if hit is not None:
        return hit.problems
    problems = check_catalog_bytes(raw).problems
    if cache is not None:
        cache.put(key, FileReport(problems))
    return problems


def check_all(
    catalog: Catalog | None, pending: Sequence[tuple[str, bytes, str]], jobs: int | None
) -> list[FileReport]:
    """Check files, on several cores when there are enough of them to pay for the start-up."""
    from casebank.check import Checker

    workers = min(jobs or os.cpu_count() or 1, 8)
    if workers < 2 or len(pending) < PARALLEL_MIN:
        checker = Checker(catalog)
        return [check_case_bytes(checker, relative, raw) for relative, raw, _ in pending]
    size = max(50, len(pending) // (workers * 4))
    batches = [
        [(rel, raw) for rel, raw, _ in pending[i : i + size]] for i in range(0, len(pending), size)
    ]
    from concurrent.futures import ProcessPoolExecutor  # only large runs pay for the import

    with ProcessPoolExecutor(
        max_workers=workers, initializer=_start_worker, initargs=(catalog,)
    ) as pool:
        return [entry for batch in pool.map(_check_batch, batches) for entry in batch]


_WORKER_CHECKER: Checker | None = None


def _start_worker(catalog: Catalog | None) -> None:
    from casebank.check import Checker

    global _WORKER_CHECKER
    _WORKER_CHECKER = Checker(catalog)


def _check_batch(batch: list[tuple[str, bytes]]) -> list[FileReport]:
    assert _WORKER_CHECKER is not None
    return [check_case_bytes(_WORKER_CHECKER, relative, raw) for relative, raw in batch]


def check_case_bytes(checker: Checker, relative: str, raw: bytes) -> FileReport:
    from casebank.canonical import digest_data

    loaded = load_document(relative, raw)
    if loaded.document is None:
        return FileReport(loaded.problems, [], digest_data(raw, None))
    report = checker.check_case(loaded.document)
    return FileReport(
        [*loaded.problems, *report.problems],
        report.acknowledged,
        digest_data(raw, loaded.document.data),
    )


def duplicate_case_ids(root: Path, checked: Sequence[str]) -> list[Problem]:
    """Files that differ only in extension claim the same id (mismatched ids are CB302)."""
    by_id: dict[str, list[str]] = {}
    for relative in case_files(root):
        by_id.setdefault(case_id_from_path(relative), []).append(relative)
    problems = []
    for relative in checked:
        claimants = by_id.get(case_id_from_path(relative), [])
        if len(claimants) > 1:
            from casebank.rules.identity import DUPLICATE_CASE_ID

            others = ", ".join(p for p in claimants if p != relative)
            problems.append(
                Problem(
                    file=relative,
                    line=1,
                    column=1,
                    rule=DUPLICATE_CASE_ID.code,
                    path="case_id",
                    message=f"case id `{case_id_from_path(relative)}` is also claimed by {others}",
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
