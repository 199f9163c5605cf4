"""Where things live in a casebank repository, as repository-relative POSIX paths.

One case per file directly under ``cases/`` (``.yaml``, ``.yml`` or ``.json``); its attachments
under ``cases/<case_id>/attachments/``. Every command classifies paths with these functions,
so that validation, history, releases, diff and the site agree on what is a case: above all
:func:`case_part`, the one answer to "which files belong to a case", for a working tree and for
a commit alike.
"""

from __future__ import annotations

from pathlib import PurePosixPath

CATALOG_FILE = "catalog.yaml"
POLICY_FILE = "casebank.toml"
WITHDRAWALS_FILE = "withdrawals.yaml"
CASES_DIR = "cases"
ATTACHMENTS_DIR = "attachments"
CASE_SUFFIXES = (".yaml", ".yml", ".json")
# What casebank remembers between runs (validation verdicts, a loaded catalog, released cases):
# never committed; it holds its own .gitignore.
CACHE_DIR = ".casebank-cache"


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


# Placeholders and the files an operating system leaves behind: never part of a case, wherever
# they are and whether or not they are committed.
IGNORED_NAMES = frozenset({".gitkeep", ".keep", ".DS_Store", "Thumbs.db", "desktop.ini"})


def is_ignored(relative: str) -> bool:
    return relative.rsplit("/", 1)[-1] in IGNORED_NAMES


def case_part(relative: str) -> tuple[str, str] | None:
    """What a repository path is of a case: ``(case_id, "")`` for its case file,
    ``(case_id, name below attachments/)`` for one of its attachments, None for anything else
    (``.gitkeep`` and the like included). A commit's regular files and a working tree's are
    classified by this one function."""
    if is_ignored(relative):
        return None
    if is_case_path(relative):
        return case_id_from_path(relative), ""
    return attachment_of(relative)


def is_json(relative: str) -> bool:
    return relative.lower().endswith(".json")


def case_id_from_path(relative: str) -> str:
    """The case id a file name promises: ``cases/chest_pain_001.yaml`` -> ``chest_pain_001``."""
    return relative.rsplit("/", 1)[-1].rsplit(".", 1)[0]


def attachment_of(relative: str) -> tuple[str, str] | None:
    """``cases/<id>/attachments/<rel>`` -> (id, rel); anything else -> None."""
    parts = PurePosixPath(relative).parts
    if len(parts) >= 4 and parts[0] == CASES_DIR and parts[2] == ATTACHMENTS_DIR:
        return parts[1], "/".join(parts[3:])
    return None


def attachment_path(case_id: str, rel: str) -> str:
    """The repository path of attachment ``rel`` of ``case_id``."""
    return f"{CASES_DIR}/{case_id}/{ATTACHMENTS_DIR}/{rel}"
