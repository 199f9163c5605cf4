"""Which ``--out`` a site may be written to. The command writes it whole, through a temporary
folder renamed into place (``workspace.write_folder_atomically``), so a build that fails leaves
the previous site as it was and no stray folder. Only a folder that ``casebank site`` built
itself (it holds ``MARKER``) is ever replaced, so a mistyped ``--out`` cannot delete someone's
files.
"""

from __future__ import annotations

from pathlib import Path

from casebank.errors import CasebankError

MARKER = ".casebank-site"
MARKER_TEXT = b"Built by `casebank site`; the whole folder is replaced by the next build.\n"


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
