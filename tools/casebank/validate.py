"""Validate a repository: read the files, load them, check them, collect one Result."""

from __future__ import annotations

from collections import Counter
from collections.abc import Sequence
from dataclasses import dataclass, field
from pathlib import Path

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


def validate_repository(root: Path, paths: Sequence[str] | None = None) -> Validation:
    """Check the catalog and every case (or only ``paths``, as given on the command line)."""
    if paths:
        with_catalog, files = select_paths(root, paths)
    else:
        with_catalog, files = True, case_files(root)
    return validate_files(root, files, with_catalog=with_catalog)


def validate_files(root: Path, files: Sequence[str], *, with_catalog: bool) -> Validation:
    result = Validation()
    loaded = check_catalog(root)
    if with_catalog or loaded.catalog is None:
        # A refused catalog is always reported: without it, case checks are incomplete.
        result.files_checked += 1 if with_catalog else 0
        result.extend(loaded.problems)
    checker = Checker(loaded.catalog)
    for relative in files:
        result.files_checked += 1
        problems, acknowledged = check_case_file(checker, root, relative)
        result.extend(problems)
        result.acknowledged.extend(acknowledged)
    result.extend(duplicate_case_ids(root, files))
    return result


def check_case_file(
    checker: Checker, root: Path, relative: str
) -> tuple[list[Problem], list[Problem]]:
    raw, unreadable = read_file(root, relative)
    if raw is None:
        assert unreadable is not None
        return [unreadable], []
    return check_case_bytes(checker, relative, raw)


def check_case_bytes(
    checker: Checker, relative: str, raw: bytes
) -> tuple[list[Problem], list[Problem]]:
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
