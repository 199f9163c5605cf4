"""Reading the case that `view` and `results` serve: from the working tree, as released in git,
or from an export bundle.

A release is served as its canonical content (``canonical_data``: what the bundle's ``case`` and
``catalog.json`` hold), so `--release X.Y.Z` from git and `--bundle DIR` give the same bytes;
the working tree is served as its files are written."""

from __future__ import annotations

import argparse
from dataclasses import dataclass
from pathlib import Path
from typing import TYPE_CHECKING, Any

from casebank.commands.memory import RememberedCase, RememberedCases, RememberedCatalog
from casebank.errors import CasebankError, UsageError
from casebank.format.catalog import (
    CASE_ID_CUTOFF,
    Catalog,
    build_catalog,
    did_you_mean,
    load_catalog,
)
from casebank.format.identifiers import require_case_id
from casebank.format.layout import CASE_SUFFIXES, CASES_DIR, CATALOG_FILE

if TYPE_CHECKING:
    from casebank.release.released import LoadedRelease


@dataclass(frozen=True)
class Served:
    """A case to serve with its catalog; for a released case, its version, content hash and
    release."""

    data: dict[str, Any]
    catalog: Catalog
    version: int | None = None
    content_hash: str | None = None
    release: str | None = None


def add_source_options(parser: argparse.ArgumentParser) -> None:
    """`--release X.Y.Z` or `--bundle DIR`, at most one: where the served case comes from."""
    where = parser.add_mutually_exclusive_group()
    where.add_argument(
        "--release", metavar="X.Y.Z", help="the case as released in X.Y.Z (default: working tree)"
    )
    where.add_argument(
        "--bundle",
        type=Path,
        metavar="DIR",
        help="the case as an export bundle holds it, checked first (no repository needed)",
    )


def add_release_options(parser: argparse.ArgumentParser, what: str) -> None:
    """`--release X.Y.Z` or `--bundle DIR`, exactly one: the release ``what`` reads."""
    where = parser.add_mutually_exclusive_group(required=True)
    where.add_argument("--release", metavar="X.Y.Z", help=f"the release {what}, read from git")
    where.add_argument(
        "--bundle",
        type=Path,
        metavar="DIR",
        help=f"the release {what}, from its export bundle, checked first (no repository needed)",
    )


def release_from(args: argparse.Namespace, *, lazy: bool = False) -> LoadedRelease:
    """The release `--bundle` or `--release` names, as its canonical content (the same from a
    bundle as from git). ``lazy``: from git, each case's data is parsed when first used
    (``ReleasedCase.data``), so forked workers parse the cases they score."""
    from casebank.parallel import lasting

    with lasting():  # the release lives as long as the command
        if args.bundle is not None:
            from casebank.serve.bundle import load_bundle

            return load_bundle(args.bundle)
        from casebank.release.released import load_release
        from casebank.workspace import find_root

        root = find_root(args.root)
        memory = RememberedCases(root)
        return load_release(root, args.release, canonical=True, memory=memory, lazy=lazy)


def release_catalog(args: argparse.Namespace, loaded: LoadedRelease) -> Catalog:
    """The catalog of the release `release_from` read: from git, remembered as built
    (:func:`catalog_of`; the catalog built from a file's data is the one built from its
    canonical content: every number is read as a float, and a test holds the two equal);
    from a bundle, built."""
    if args.bundle is not None:
        return build_catalog(loaded.catalog_data)
    from casebank.workspace import find_root

    return catalog_of(find_root(args.root), loaded.catalog_raw)


def served_from(args: argparse.Namespace) -> Served:
    """The case `args` names, from the bundle, the release, or the working tree."""
    if args.bundle is not None:
        return load_bundled(args.bundle, args.case)
    from casebank.workspace import find_root

    return load_served(find_root(args.root), args.case, args.release)


def load_bundled(folder: Path, case_id: str) -> Served:
    """``case_id`` from export bundle ``folder``, after the whole bundle is verified."""
    from casebank.serve.bundle import load_bundle

    require_case_id(case_id)
    loaded = load_bundle(folder)
    found = {c.entry.case_id: c for c in loaded.current}
    case = found.get(case_id)
    if case is None:
        raise CasebankError(
            f"case {case_id} is not in the bundle {folder} (release {loaded.manifest.version})"
            + did_you_mean(case_id, found, CASE_ID_CUTOFF),
            "the bundle's cases.jsonl lists its case ids",
        )
    entry = case.entry
    catalog = build_catalog(loaded.catalog_data)
    return Served(case.data, catalog, entry.version, entry.sha256, loaded.manifest.version)


def load_served(root: Path, case_id: str, release: str | None) -> Served:
    require_case_id(case_id)  # before it becomes part of a path
    if release is None:
        return _working_tree(root, case_id)
    return _released(root, case_id, release)


def _working_tree(root: Path, case_id: str) -> Served:
    for suffix in CASE_SUFFIXES:
        path = root / CASES_DIR / f"{case_id}{suffix}"
        if path.is_file():
            data = RememberedCase(root, path.name).data(path.read_bytes())
            catalog = catalog_of(root, (root / CATALOG_FILE).read_bytes())
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
    from casebank.format.canonical import canonical_data
    from casebank.format.loader import load_data

    blobs = dict(git.read_blobs(root, [entry.blob, manifest.catalog_blob]))
    data = canonical_data(load_data(entry.path, blobs[entry.blob]))
    catalog_data = load_data(CATALOG_FILE, blobs[manifest.catalog_blob])
    catalog = build_catalog(canonical_data(catalog_data))
    return Served(data, catalog, entry.version, entry.sha256, release)


# --- the catalog, remembered -----------------------------------------------------------------


def catalog_of(root: Path, raw: bytes) -> Catalog:
    """The catalog in ``raw``, remembered as built in the cache folder
    (:class:`RememberedCatalog`); a catalog that does not load raises, naming the place and
    how to see why."""
    catalog = RememberedCatalog(root).catalog(raw)
    return catalog if catalog is not None else load_catalog(raw, CATALOG_FILE)
