"""Reading the case that `view` and `results` serve: from the working tree, or as released."""

from __future__ import annotations

from dataclasses import dataclass
from pathlib import Path
from typing import Any

from casebank.errors import CasebankError, UsageError
from casebank.format.catalog import (
    CASE_ID_CUTOFF,
    Catalog,
    did_you_mean,
    load_catalog,
)
from casebank.format.identifiers import require_case_id
from casebank.format.layout import CASE_SUFFIXES, CASES_DIR, CATALOG_FILE
from casebank.format.loader import load_data


@dataclass(frozen=True)
class Served:
    data: dict[str, Any]
    catalog: Catalog
    version: int | None = None
    content_hash: str | None = None
    release: str | None = None


def load_served(root: Path, case_id: str, release: str | None) -> Served:
    require_case_id(case_id)  # before it becomes part of a path
    if release is None:
        return _working_tree(root, case_id)
    return _released(root, case_id, release)


def _working_tree(root: Path, case_id: str) -> Served:
    for suffix in CASE_SUFFIXES:
        path = root / CASES_DIR / f"{case_id}{suffix}"
        if path.is_file():
            data = load_data(f"{CASES_DIR}/{path.name}", path.read_bytes())
            catalog = load_catalog((root / CATALOG_FILE).read_bytes(), CATALOG_FILE)
            return Served(data, catalog)
    known = [p.stem for p in (root / CASES_DIR).glob("*") if p.name.endswith(CASE_SUFFIXES)]
    close = did_you_mean(case_id, known, CASE_ID_CUTOFF)
    raise CasebankError(
        f"there is no case `{case_id}` in {CASES_DIR}/{close}",
        "give a case id (the file name without extension), e.g. chest_pain_001",
    )


def _released(root: Path, case_id: str, release: str) -> Served:
    from casebank.release import git
    from casebank.release.manifest import parse_version
    from casebank.release.prepare import previous_manifests, require_head

    if parse_version(release) is None:
        raise UsageError(f"--release {release!r}: expected X.Y.Z")
    manifests = {m.version: m for m in previous_manifests(root, require_head(root))}
    manifest = manifests.get(release)
    if manifest is None:
        known = ", ".join(manifests) or "none yet"
        raise CasebankError(f"there is no release {release}", f"releases: {known}")
    entry = manifest.case(case_id)
    if entry is None:
        raise CasebankError(
            f"case {case_id} is not in release {release}"
            + did_you_mean(case_id, (e.case_id for e in manifest.cases), CASE_ID_CUTOFF),
            "`casebank history CASE_ID` lists the releases that contain it",
        )
    blobs = dict(git.read_blobs(root, [entry.blob, manifest.catalog_blob]))
    data = load_data(entry.path, blobs[entry.blob])
    catalog = load_catalog(blobs[manifest.catalog_blob], CATALOG_FILE)
    return Served(data, catalog, entry.version, entry.sha256, release)
