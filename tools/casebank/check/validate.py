"""A validation run: read the files, load and check each one, collect one Result.

The engine (``casebank.check.engine``) checks what it is handed; this module is what hands it
the repository: it reads the catalog and the case files from disk, consults the cache, spreads a
large run over worker processes, and runs the repository pass. Its speed machinery comes from
the caller: ``cache`` (or None), ``jobs``, and ``annotate`` (a function kept with each file's
report, which is how a release reuses what validation parsed without validation knowing).
"""

from __future__ import annotations

from collections.abc import Sequence
from dataclasses import dataclass, field
from pathlib import Path
from typing import TYPE_CHECKING, Any, Protocol

from casebank.check.cache import Cache, entry_key, fingerprint
from casebank.check.problem import FileReport, Problem, Result
from casebank.errors import UsageError
from casebank.format.layout import (
    CASE_SUFFIXES,
    CATALOG_FILE,
    attachment_of,
    attachment_path,
    case_id_from_path,
)
from casebank.workspace import Listing, case_files, relative_to_root, scan_cases

# A warm run (every file's report in the cache) imports neither the loader (PyYAML), nor the
# engine and its rules (Cerberus), nor the process pool: they are imported where first needed.
if TYPE_CHECKING:
    from casebank.check.engine import Annotate, Checker
    from casebank.format.attachments import Verdict
    from casebank.format.catalog import Catalog


@dataclass
class Validation(Result):
    """A Result, the warnings cases acknowledged, and each case file's annotation."""

    acknowledged: list[Problem] = field(default_factory=list)
    annotations: dict[str, Any] = field(default_factory=dict)  # file -> the caller's annotation

    def add(self, relative: str, raw: bytes, report: FileReport) -> None:
        self.extend(report.problems)
        self.acknowledged.extend(report.acknowledged)
        if report.annotation is not None:
            self.annotations[relative] = report.annotation


@dataclass
class LoadedCatalog:
    catalog: Catalog | None
    problems: list[Problem]


class CatalogMemory(Protocol):
    """Where the catalog is remembered between runs (the commands keep it in the cache
    folder): a run that checks the catalog tells it, and a run whose catalog report comes from
    the cache reads the catalog from it instead of parsing the YAML again."""

    def catalog(self, raw: bytes) -> Catalog | None: ...

    def remember(self, raw: bytes, catalog: Catalog) -> None: ...


def read_file(root: Path, relative: str) -> tuple[bytes | None, Problem | None]:
    try:
        return (root / relative).read_bytes(), None
    except OSError as exc:
        from casebank.check.engine import stamp_issue
        from casebank.format.loader import load_issue

        issue = load_issue(
            relative,
            "unreadable-file",
            (1, 1),
            f"cannot read the file: {exc.strerror or exc}",
            "check that it is a regular, readable file",
        )
        return None, stamp_issue(relative, issue)


def check_catalog(root: Path) -> LoadedCatalog:
    """Load and check catalog.yaml. A refused catalog yields no Catalog (catalog rules skip)."""
    raw, unreadable = read_file(root, CATALOG_FILE)
    if raw is None:
        assert unreadable is not None
        return LoadedCatalog(None, [unreadable])
    return check_catalog_bytes(raw)


def check_catalog_bytes(raw: bytes) -> LoadedCatalog:
    from casebank.check.engine import Checker, stamp_issue
    from casebank.format.catalog import build_catalog
    from casebank.format.loader import load_document

    loaded = load_document(CATALOG_FILE, raw)
    notes = [stamp_issue(CATALOG_FILE, issue) for issue in loaded.issues]
    if loaded.document is None:
        return LoadedCatalog(None, notes)
    catalog = build_catalog(loaded.document.data)
    problems = [*notes, *Checker(catalog).check_catalog(loaded.document)]
    return LoadedCatalog(catalog, problems)


def build_catalog_bytes(raw: bytes | None, memory: CatalogMemory | None = None) -> Catalog | None:
    """The catalog as a lookup, without checking it (that result may come from the cache):
    through ``memory`` where there is one."""
    from casebank.format.catalog import catalog_if_it_loads

    if raw is None:
        return None
    return memory.catalog(raw) if memory is not None else catalog_if_it_loads(raw, CATALOG_FILE)


def is_refusal(problem: Problem) -> bool:
    """A loader problem that refuses the file (the loader says which: an ambiguous number is
    reported, and the file loads)."""
    from casebank.format.loader import REFUSALS

    return problem.name in REFUSALS


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


@dataclass(frozen=True)
class Options:
    """How to run: the cache (None for none), worker processes, the caller's annotation."""

    cache: bool = True
    write_cache: bool = True
    jobs: int | None = None
    annotate: Annotate | None = None
    catalog_memory: CatalogMemory | None = None  # used only where the cache is read and written


def validate_repository(
    root: Path, paths: Sequence[str] | None = None, options: Options | None = None
) -> Validation:
    """Check the catalog and every case (or only ``paths``, as given on the command line)."""
    if paths:
        with_catalog, files = select_paths(root, paths)
        return validate_files(root, files, with_catalog=with_catalog, options=options)
    return validate_files(root, None, with_catalog=True, options=options)


# Below this many files to check, starting worker processes costs more than it saves.
PARALLEL_MIN = 300


def validate_files(
    root: Path,
    files: Sequence[str] | None,
    *,
    with_catalog: bool,
    options: Options | None = None,
) -> Validation:
    """Check ``files`` (None: everything under cases/, the misplaced and linked files too)."""
    options = options or Options()
    result = Validation()
    listing = scan_cases(root)
    if files is None:
        files = listing.case_files
        strays = [*listing.misplaced, *listing.symlinks]
    else:
        files, strays = _sorted_out(listing, files)
    catalog_raw, unreadable = read_file(root, CATALOG_FILE)
    cache = None
    if options.cache:
        annotation = getattr(options.annotate, "__qualname__", "")
        key = fingerprint(catalog_raw, annotation)
        cache = Cache.open(root, key, writable=options.write_cache)
    memory = options.catalog_memory if options.cache and options.write_cache else None
    catalog_problems, checked = _catalog_problems(cache, catalog_raw, unreadable)
    if memory is not None and catalog_raw is not None and checked.catalog is not None:
        memory.remember(catalog_raw, checked.catalog)
    refused = catalog_raw is None or any(is_refusal(p) for p in catalog_problems)
    if with_catalog or refused:
        # A refused catalog is always reported: without it, case checks are incomplete.
        result.files_checked += 1 if with_catalog else 0
        result.extend(catalog_problems)
    pending: list[tuple[str, bytes, frozenset[str], str]] = []
    for relative in files:
        result.files_checked += 1
        raw, unreadable_case = read_file(root, relative)
        if raw is None:
            assert unreadable_case is not None
            result.extend([unreadable_case])
            continue
        attached = listing.attachments_of(relative)
        # The attachments present are part of what decides the file's problems.
        key = entry_key(relative, raw + b"\0" + "\0".join(sorted(attached)).encode())
        hit = cache.get(key) if cache is not None else None
        if hit is None:
            pending.append((relative, raw, attached, key))
        else:
            result.add(relative, raw, hit)
    if pending:  # only now is the catalog needed as a lookup, and Cerberus at all
        catalog = None if refused else checked.catalog or build_catalog_bytes(catalog_raw, memory)
        work = [(rel, raw, attached) for rel, raw, attached, _ in pending]
        reports = check_all(catalog, work, options)
        for (relative, raw, _, key), report in zip(pending, reports, strict=True):
            result.add(relative, raw, report)
            if cache is not None:
                cache.put(key, report)
    result.files_checked += len(strays)
    result.extend(_repository_problems(root, cache, listing, files, strays))
    if cache is not None:
        cache.save()
    return result


def _sorted_out(listing: Listing, given: Sequence[str]) -> tuple[list[str], list[str]]:
    """Given paths as case files to check (an attachment stands for its case) and strays."""
    known = set(listing.case_files)
    by_id = {case_id_from_path(f): f for f in listing.case_files}
    stray = set(listing.misplaced) | set(listing.symlinks)
    files: dict[str, None] = {}
    strays: list[str] = []
    for path in given:
        attached = attachment_of(path)
        if path in known:
            files[path] = None
        elif path in stray:
            strays.append(path)
        elif attached is not None and attached[0] in by_id:
            files[by_id[attached[0]]] = None
    return sorted(files), sorted(set(strays))


def _repository_problems(
    root: Path,
    cache: Cache | None,
    listing: Listing,
    checked: Sequence[str],
    strays: Sequence[str],
) -> list[Problem]:
    """The repository pass, cached under the names it depends on and the bytes of the
    attachments of the cases checked (what their type checks read)."""
    files = _attachment_bytes(root, listing, checked)
    names = [*listing.case_files, "", *checked, "", *strays, "", *sorted(listing.attachments)]
    names += ["", *(f"{path}\0{_digest(raw)}" for path, raw in sorted(files.items()))]
    key = entry_key("<repository>", "\0".join(names).encode("utf-8", "surrogateescape"))
    hit = cache.get(key) if cache is not None else None
    if hit is not None:
        return hit.problems
    from casebank.check.engine import RepositoryContext, check_repository

    context = RepositoryContext(
        listing.case_files,
        checked,
        misplaced=[f for f in strays if f not in listing.symlinks],
        symlinks=[f for f in strays if f in listing.symlinks],
        attachment_folders=sorted(listing.attachments),
        attachments=_verdicts(files),
    )
    problems = check_repository(context)
    if cache is not None:
        cache.put(key, FileReport(problems))
    return problems


def _attachment_bytes(
    root: Path, listing: Listing, checked: Sequence[str]
) -> dict[str, bytes | OSError]:
    """Each attachment of the cases checked (repository path -> bytes, or why unreadable)."""
    found: dict[str, bytes | OSError] = {}
    for case_id in sorted({case_id_from_path(f) for f in checked}):
        for name in listing.attachments.get(case_id, ()):
            path = attachment_path(case_id, name)
            try:
                found[path] = (root / path).read_bytes()
            except OSError as exc:
                found[path] = exc
    return found


def _digest(raw: bytes | OSError) -> str:
    import hashlib

    return hashlib.sha256(raw).hexdigest() if isinstance(raw, bytes) else f"unreadable {raw}"


def _verdicts(files: dict[str, bytes | OSError]) -> dict[str, dict[str, Verdict]]:
    """case id -> {name below attachments/: what the bytes are}."""
    from casebank.format.attachments import Verdict, check_attachment

    found: dict[str, dict[str, Verdict]] = {}
    for path, raw in files.items():
        located = attachment_of(path)
        assert located is not None
        case_id, name = located
        if isinstance(raw, bytes):
            verdict = check_attachment(name, raw)
        else:
            verdict = Verdict("", f"cannot read the file: {raw.strerror}", "check its permissions")
        found.setdefault(case_id, {})[name] = verdict
    return found


def _catalog_problems(
    cache: Cache | None, raw: bytes | None, unreadable: Problem | None
) -> tuple[list[Problem], LoadedCatalog]:
    """The catalog's problems (from the cache when it has them), and the catalog itself and
    its data when checking it loaded them, so that it is not parsed twice (a large catalog
    costs a second)."""
    if raw is None:
        assert unreadable is not None
        return [unreadable], LoadedCatalog(None, [])
    key = entry_key(CATALOG_FILE, raw)
    hit = cache.get(key) if cache is not None else None
    if hit is not None:
        return hit.problems, LoadedCatalog(None, [])
    checked = check_catalog_bytes(raw)
    if cache is not None:
        cache.put(key, FileReport(checked.problems))
    return checked.problems, checked


Work = tuple[str, bytes, frozenset[str]]  # a case file, its bytes, its attachments


def check_all(
    catalog: Catalog | None, pending: Sequence[Work], options: Options
) -> list[FileReport]:
    """Check files, on several cores when there are enough of them to pay for the start-up."""
    from casebank import parallel

    use_pool = len(pending) >= PARALLEL_MIN and (options.jobs is None or options.jobs > 1)
    return list(
        parallel.map_chunks(
            _check_batch,
            pending,
            size=max(50, len(pending) // (parallel.workers(options.jobs) * 4)),
            parallel=use_pool,
            jobs=options.jobs,
            initializer=_start_worker,
            initargs=(catalog, options.annotate),
            start="fork",  # validation runs no thread, so forking is safe and quick
        )
    )


_WORKER: tuple[Checker, Annotate | None] | None = None


def _start_worker(catalog: Catalog | None, annotate: Annotate | None) -> None:
    from casebank.check.engine import Checker

    global _WORKER
    _WORKER = (Checker(catalog), annotate)


def _check_batch(batch: list[Work]) -> list[FileReport]:
    assert _WORKER is not None
    checker, annotate = _WORKER
    return [checker.check_file(rel, raw, annotate, attached) for rel, raw, attached in batch]
