"""A dataset release read back from git, every byte checked against its manifest.

What `export`, `score`, `judge-items` and the evaluation task read. The manifest is taken from
the release's tag (``vX.Y.Z:releases/X.Y.Z.json``) and must be byte-identical to HEAD's copy;
each case is read by the blob id its manifest names, and its content hash (attachments
included) recomputed and compared. Nothing comes from the working tree.

``canonical=True`` gives each case and the catalog as their canonical content (the RFC 8785
form parsed back: mapping keys in canonical order, ``11.0`` read as ``11``), exactly what an
export bundle holds, so what is served or scored from git and from a bundle is the same bytes.

Three git commands whatever the release's size: resolve the objects, list the attachment
folders of the source commit, and one batch read of every blob.
"""

from __future__ import annotations

from collections.abc import Mapping
from dataclasses import dataclass
from pathlib import Path
from typing import Any

from casebank.errors import CasebankError, UsageError
from casebank.format.canonical import (
    CaseDigest,
    canonical_data,
    content_hash,
    digest_data,
    sha256_hex,
)
from casebank.format.layout import CASES_DIR, POLICY_FILE, case_part
from casebank.format.loader import load_document
from casebank.format.policy import Policy, load_policy
from casebank.parallel import map_chunks
from casebank.release import git
from casebank.release.manifest import (
    CaseEntry,
    Manifest,
    Withdrawn,
    loads,
    manifest_path,
    parse_version,
    tag_name,
)

_POOL_FROM = 400
_VERIFY = "run `casebank verify`; restore the release's manifest, tag and history from git"


@dataclass(frozen=True)
class ReleasedCase:
    entry: CaseEntry
    data: dict[str, Any]
    attachments: Mapping[str, bytes]  # path below attachments/ -> bytes

    @property
    def key(self) -> tuple[str, int]:
        return self.entry.case_id, self.entry.version


@dataclass(frozen=True)
class LoadedRelease:
    manifest: Manifest
    manifest_raw: bytes  # the manifest's exact bytes
    catalog_raw: bytes
    catalog_data: dict[str, Any]
    cases: tuple[ReleasedCase, ...]  # by case_id; withdrawn versions included, see below
    policy: Policy  # casebank.toml at the release's source commit
    # Withdrawals of this release's case versions that later releases carry.
    withdrawn_later: tuple[Withdrawn, ...] = ()

    def withdrawal(self, case_id: str, version: int) -> Withdrawn | None:
        """Whether ``case_id@version`` is withdrawn: by this release or by a later one."""
        found = self.manifest.withdrawal(case_id, version)
        if found is not None:
            return found
        for item in self.withdrawn_later:
            if (item.case_id, item.version) == (case_id, version):
                return item
        return None

    @property
    def current(self) -> tuple[ReleasedCase, ...]:
        """The cases an evaluation uses: every one whose version this release does not
        withdraw (later withdrawals are reported, not applied, so a release reads the same
        forever)."""
        return tuple(c for c in self.cases if self.manifest.withdrawal(*c.key) is None)


def load_release(root: Path, version: str, *, canonical: bool = False) -> LoadedRelease:
    """Release ``version`` from git, verified; raises CasebankError naming what does not match.

    With ``canonical``, the cases' data and the catalog are their canonical content, as an
    export bundle holds them (``casebank.serve.bundle``); without, as the files are written."""
    if parse_version(version) is None:
        raise UsageError(f"--release {version!r}: expected X.Y.Z")
    git.check_repository(root)
    head = git.resolve_commit(root, "HEAD")
    if head is None:
        raise CasebankError("the repository has no commits yet", "there is no release to read")
    path, tag = manifest_path(version), tag_name(version)
    names = [f"{tag}^{{commit}}:{path}", f"{head}:{path}"]
    objects = git.resolve_objects(root, names)
    at_tag, at_head = objects[names[0]], objects[names[1]]
    if at_tag is None:
        known = sorted(p.name.removesuffix(".json") for p in _listed(root, head))
        raise CasebankError(
            f"there is no release {version} (no tag {tag} holding {path})",
            f"releases: {', '.join(known) or 'none yet'}",
        )
    if at_head is None or at_head[0] != at_tag[0]:
        raise CasebankError(
            f"{path} on HEAD is not the manifest tagged {tag}"
            + (" (missing)" if at_head is None else " (edited after the release)"),
            _VERIFY,
        )
    [(_, manifest_raw)] = list(git.read_blobs(root, [at_tag[0]]))
    manifest = loads(manifest_raw, path)
    if manifest.version != version:
        raise CasebankError(f"{path} says it is release {manifest.version}", _VERIFY)
    attachment_blobs = _attachment_blobs(root, manifest)
    policy_name = f"{manifest.source_commit}:{POLICY_FILE}"
    policy_blob = git.resolve_objects(root, [policy_name])[policy_name]
    wanted = [manifest.catalog_blob, *(e.blob for e in manifest.cases)]
    wanted += [policy_blob[0]] if policy_blob else []
    wanted += [oid for folder in attachment_blobs.values() for oid in folder.values()]
    contents = dict(git.read_blobs(root, dict.fromkeys(wanted)))
    catalog_raw = contents[manifest.catalog_blob]
    catalog = load_document("catalog.yaml", catalog_raw).document
    if catalog is None:
        raise CasebankError(f"release {version}: its catalog does not load", _VERIFY)
    jobs = [(e.path, contents[e.blob]) for e in manifest.cases]
    # Parsing dominates; below a few hundred cases a worker pool costs more than it saves.
    parsed = map_chunks(_parse_chunk, jobs, start="fork", parallel=len(jobs) > _POOL_FROM)
    cases = []
    for entry, (data, digest) in zip(manifest.cases, parsed, strict=True):
        files = {rel: contents[oid] for rel, oid in attachment_blobs.get(entry.case_id, {}).items()}
        _check_content(version, entry, data, digest, files)
        assert data is not None
        cases.append(ReleasedCase(entry, data, files))
    later = _later_withdrawals(root, head, manifest)
    policy = load_policy(contents[policy_blob[0]] if policy_blob else None)
    catalog_data = catalog.data
    if canonical:
        cases = [ReleasedCase(c.entry, canonical_data(c.data), c.attachments) for c in cases]
        catalog_data = canonical_data(catalog_data)
    return LoadedRelease(
        manifest,
        manifest_raw,
        catalog_raw,
        catalog_data,
        tuple(sorted(cases, key=lambda c: c.entry.case_id)),
        policy,
        later,
    )


def _listed(root: Path, head: str) -> list[Path]:
    return [
        Path(e.path)
        for e in git.list_tree(root, head, "releases")
        if e.path.endswith(".json") and e.path.count("/") == 1
    ]


def _parse_chunk(
    jobs: list[tuple[str, bytes]],
) -> list[tuple[dict[str, Any] | None, CaseDigest]]:
    done = []
    for file, raw in jobs:
        loaded = load_document(file, raw)
        data = loaded.document.data if loaded.document is not None else None
        done.append((data, digest_data(raw, data)))
    return done


def _attachment_blobs(root: Path, manifest: Manifest) -> dict[str, dict[str, str]]:
    """case_id -> {path below attachments/: blob id}, for the cases that have attachments."""
    if not any(e.attachments for e in manifest.cases):
        return {}
    found: dict[str, dict[str, str]] = {}
    for item in git.list_tree(root, manifest.source_commit, CASES_DIR):
        part = case_part(item.path) if item.mode in git.REGULAR_MODES else None
        if part is not None and part[1]:
            found.setdefault(part[0], {})[part[1]] = item.oid
    return found


def _check_content(
    version: str,
    entry: CaseEntry,
    data: dict[str, Any] | None,
    digest: CaseDigest,
    files: Mapping[str, bytes],
) -> None:
    where = f"release {version}: {entry.case_id}@{entry.version} ({entry.path})"
    if data is None or not digest.valid:
        raise CasebankError(f"{where} does not load", _VERIFY)
    hashes = {rel: sha256_hex(raw) for rel, raw in files.items()}
    if hashes != dict(entry.attachments):
        raise CasebankError(f"{where}: its attachments are not the ones released", _VERIFY)
    if content_hash(digest.sha256, hashes) != entry.sha256:
        raise CasebankError(f"{where}: its content hash is not the manifest's", _VERIFY)


def _later_withdrawals(root: Path, head: str, manifest: Manifest) -> tuple[Withdrawn, ...]:
    """Withdrawals of this release's versions carried by the newest manifest on HEAD."""
    newest = max(
        (p for p in _listed(root, head) if parse_version(p.stem) is not None),
        key=lambda p: parse_version(p.stem) or (0, 0, 0),
        default=None,
    )
    if newest is None or newest.stem == manifest.version:
        return ()
    [(_, raw)] = list(git.read_blobs(root, [f"{head}:{newest.as_posix()}"]))
    latest = loads(raw, newest.as_posix())
    mine = {(e.case_id, e.version) for e in manifest.cases}
    return tuple(
        w
        for w in latest.withdrawn
        if (w.case_id, w.version) in mine and manifest.withdrawal(w.case_id, w.version) is None
    )
