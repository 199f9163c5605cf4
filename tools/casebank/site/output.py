"""Writing the built site: into a temporary folder beside ``--out``, then renamed into place.

A build that fails leaves the previous site as it was and no stray folder; a reader sees the
old site or the new one. Only a folder that ``casebank site`` built itself (it holds
``MARKER``) is ever replaced, so a mistyped ``--out`` cannot delete someone's files.
"""

from __future__ import annotations

import os
import shutil
import tempfile
from collections.abc import Mapping
from pathlib import Path, PurePosixPath

from casebank.errors import CasebankError

MARKER = ".casebank-site"
MARKER_TEXT = b"Built by `casebank site`; the whole folder is replaced by the next build.\n"


def _umask() -> int:
    mask = os.umask(0)
    os.umask(mask)
    return mask


def check_target(out: Path) -> None:
    """Refuse an ``--out`` that is not ours to replace."""
    if out.is_symlink():
        raise CasebankError(
            f"--out {out} is a symbolic link", "give the folder itself, or a new folder"
        )
    if out.exists() and not out.is_dir():
        raise CasebankError(f"--out {out} is a file, not a folder", "give a folder for the site")
    if out.is_dir() and any(out.iterdir()) and not (out / MARKER).is_file():
        raise CasebankError(
            f"--out {out} is a folder with files that `casebank site` did not build",
            f"give a new or empty folder; only a folder holding {MARKER} is replaced",
        )


def _safe(relative: str) -> Path:
    parts = PurePosixPath(relative).parts
    if not parts or relative.startswith("/") or any(p in ("", ".", "..") for p in parts):
        raise CasebankError(f"refusing to write {relative!r} into the site", "rename the file")
    return Path(*parts)


def write_site(out: Path, files: Mapping[str, bytes]) -> None:
    """Write every file (site-relative POSIX path -> bytes), replacing ``out`` as a whole."""
    check_target(out)
    out.parent.mkdir(parents=True, exist_ok=True)
    building = Path(tempfile.mkdtemp(dir=out.parent, prefix=f".{out.name}.", suffix=".tmp"))
    retired: Path | None = None
    try:
        for relative in sorted(files):
            target = building / _safe(relative)
            target.parent.mkdir(parents=True, exist_ok=True)
            target.write_bytes(files[relative])
        (building / MARKER).write_bytes(MARKER_TEXT)
        os.chmod(building, 0o777 & ~_umask())  # mkdtemp's folder is private to its owner
        if out.exists():
            retired = Path(tempfile.mkdtemp(dir=out.parent, prefix=f".{out.name}.", suffix=".old"))
            os.replace(out, retired / "site")
        os.replace(building, out)
    except BaseException:
        shutil.rmtree(building, ignore_errors=True)
        if retired is not None and (retired / "site").exists() and not out.exists():
            os.replace(retired / "site", out)  # put the previous site back
        raise
    finally:
        if retired is not None:
            shutil.rmtree(retired, ignore_errors=True)
