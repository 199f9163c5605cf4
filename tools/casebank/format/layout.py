"""Where things live in a casebank repository, as repository-relative POSIX paths.

One case per file directly under ``cases/`` (``.yaml``, ``.yml`` or ``.json``); its attachments
under ``cases/<case_id>/attachments/``. Every command classifies paths with these functions,
so that validation, history and diff agree on what is a case.
"""

from __future__ import annotations

from pathlib import PurePosixPath

CATALOG_FILE = "catalog.yaml"
POLICY_FILE = "casebank.toml"
WITHDRAWALS_FILE = "withdrawals.yaml"
CASES_DIR = "cases"
ATTACHMENTS_DIR = "attachments"
CASE_SUFFIXES = (".yaml", ".yml", ".json")


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
