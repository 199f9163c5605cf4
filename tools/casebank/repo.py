"""Where a casebank repository is, and which of its files are cases."""

from __future__ import annotations

from pathlib import Path, PurePosixPath

from casebank.errors import CasebankError, UsageError

CATALOG_FILE = "catalog.yaml"
CASES_DIR = "cases"
CASE_SUFFIXES = (".yaml", ".yml", ".json")


def find_root(explicit: Path | None = None, start: Path | None = None) -> Path:
    """The repository root: ``explicit`` if given, else the nearest folder holding catalog.yaml."""
    if explicit is not None:
        root = explicit.resolve()
        if not (root / CATALOG_FILE).is_file():
            raise UsageError(f"--root {explicit}: no {CATALOG_FILE} there")
        return root
    here = (start or Path.cwd()).resolve()
    for folder in (here, *here.parents):
        if (folder / CATALOG_FILE).is_file():
            return folder
    raise CasebankError(
        f"no casebank repository here: no {CATALOG_FILE} in {here} or any folder above it",
        "run casebank inside the repository, or pass --root DIR",
    )


def is_case_path(relative: str) -> bool:
    """True for ``cases/<case_id>.<yaml|yml|json>`` (attachments and nested files are not cases)."""
    parts = PurePosixPath(relative).parts
    return (
        len(parts) == 2
        and parts[0] == CASES_DIR
        and parts[1].lower().endswith(CASE_SUFFIXES)
        and not parts[1].startswith(".")
    )


def case_id_from_path(relative: str) -> str:
    """The case id a file name promises: ``cases/chest_pain_001.yaml`` -> ``chest_pain_001``."""
    name = PurePosixPath(relative).name
    return name.rsplit(".", 1)[0]


def case_files(root: Path) -> list[str]:
    """Repository-relative POSIX paths of every case file, sorted."""
    folder = root / CASES_DIR
    if not folder.is_dir():
        return []
    found = [f"{CASES_DIR}/{p.name}" for p in folder.iterdir() if p.is_file()]
    return sorted(p for p in found if is_case_path(p))


def relative_to_root(root: Path, path: Path) -> str:
    """A path as reports show it: relative to the root, with forward slashes."""
    resolved = path.resolve()
    try:
        return resolved.relative_to(root).as_posix()
    except ValueError:
        raise UsageError(f"{path} is outside the repository at {root}") from None
