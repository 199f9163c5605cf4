"""Where a casebank repository is, and which of its files are cases."""

from __future__ import annotations

import os
import tempfile
from pathlib import Path

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
    folder, slash, name = relative.partition("/")
    return (
        folder == CASES_DIR
        and slash == "/"
        and "/" not in name
        and not name.startswith(".")
        and name.lower().endswith(CASE_SUFFIXES)
    )


def case_id_from_path(relative: str) -> str:
    """The case id a file name promises: ``cases/chest_pain_001.yaml`` -> ``chest_pain_001``."""
    return relative.rsplit("/", 1)[-1].rsplit(".", 1)[0]


def case_files(root: Path) -> list[str]:
    """Repository-relative POSIX paths of every case file, sorted."""
    try:
        entries = list(os.scandir(root / CASES_DIR))
    except (FileNotFoundError, NotADirectoryError):
        return []
    found = (f"{CASES_DIR}/{e.name}" for e in entries if e.is_file())
    return sorted(p for p in found if is_case_path(p))


def write_atomically(target: Path, content: bytes) -> None:
    """Write through a unique temporary file in the same folder, then rename it into place:
    readers see the old file or the new one, never half of it, and a failure leaves no stray file.
    """
    fd, temporary = tempfile.mkstemp(dir=target.parent, prefix=f".{target.name}.", suffix=".tmp")
    try:
        with os.fdopen(fd, "wb") as sink:
            sink.write(content)
            sink.flush()
            os.fsync(sink.fileno())
        os.replace(temporary, target)
    finally:
        Path(temporary).unlink(missing_ok=True)


def relative_to_root(root: Path, path: Path) -> str:
    """A path as reports show it: relative to the root, with forward slashes."""
    resolved = path.resolve()
    try:
        return resolved.relative_to(root).as_posix()
    except ValueError:
        raise UsageError(f"{path} is outside the repository at {root}") from None
