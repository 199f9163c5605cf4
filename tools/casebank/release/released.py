"""A dataset release read back from git, every byte checked against its manifest.

What `export`, `score`, `judge-items` and the evaluation task read. The manifest is taken from
the release's tag (``vX.Y.Z:releases/X.Y.Z.json``) and must be byte-identical to HEAD's copy;
each case is read by the blob id its manifest names, and its content hash (attachments
included) recomputed and compared. Nothing comes from the working tree.

``canonical=True`` gives each case and the catalog as their canonical content (the RFC 8785
form parsed back: mapping keys in canonical order, ``11.0`` read as ``11``), exactly what an
export bundle holds, so what is served or scored from git and from a bundle is the same bytes.

Three git commands whatever the release's size: resolve the objects, list the attachment
folders of the source commit, and one batch reader of every blob (GitPython's persistent
``git cat-file``). ``open_release`` reads the cases one at a time, as they are asked for, so
memory stays flat for a reader that writes each out as it comes (export); ``load_release``
holds them all.
"""

from __future__ import annotations

import contextlib
import json
from collections.abc import Callable, Iterator, Mapping
from dataclasses import dataclass
from functools import partial
from pathlib import Path
from typing import Any, Protocol

import rfc8785

from casebank.errors import CasebankError, UsageError
from casebank.format.canonical import (
    CaseDigest,
    canonical_json,
    content_hash,
    digest_data,
    sha256_hex,
)
from casebank.format.layout import CASES_DIR, POLICY_FILE, case_part
from casebank.format.policy import Policy, load_policy
from casebank.parallel import POOL_FROM, map_chunks
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

_VERIFY = "run `casebank verify`; restore the release's manifest, tag and history from git"


class CaseMemory(Protocol):
    """Where a reader keeps cases' canonical JSON text by blob id, between runs (the command
    layer's cache folder). Nothing read from it is trusted: a case's text is used only when its
    SHA-256 is the content hash the manifest records; any other is parsed from git afresh."""

    def read(self) -> dict[str, bytes]: ...

    def write(self, texts: dict[str, bytes]) -> None: ...


class ReleasedCase:
    """One case version of a release: its manifest entry, its data, the bytes of its
    attachments, and what a reader asked to be ``derived`` from the data where it was parsed
    (in a worker process, for a large release; None when it asked for nothing).

    Made from ``text`` (its canonical JSON, already checked against the manifest's content
    hash) in place of data, the case is parsed on first use of ``data``: a reader that hands
    its cases to worker processes (score) has each parsed in the worker that needs it, not
    every one in the parent first."""

    __slots__ = ("_data", "_text", "attachments", "derived", "entry")

    def __init__(
        self,
        entry: CaseEntry,
        data: dict[str, Any] | None,
        attachments: Mapping[str, bytes],
        derived: Any = None,
        *,
        text: bytes | None = None,
    ) -> None:
        if data is None and text is None:
            raise ValueError("a released case needs its data or its canonical text")
        self.entry = entry
        self.attachments = attachments
        self.derived = derived
        self._data = data
        self._text = text

    @property
    def data(self) -> dict[str, Any]:
        if self._data is None:
            assert self._text is not None
            self._data = json.loads(self._text)
        return self._data

    @property
    def key(self) -> tuple[str, int]:
        return self.entry.case_id, self.entry.version

    def __repr__(self) -> str:
        return f"ReleasedCase({self.entry.case_id}@{self.entry.version})"


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
        return _withdrawal(self.manifest, self.withdrawn_later, case_id, version)

    @property
    def current(self) -> tuple[ReleasedCase, ...]:
        """The cases an evaluation uses: every one whose version this release does not
        withdraw (later withdrawals are reported, not applied, so a release reads the same
        forever)."""
        return tuple(c for c in self.cases if self.manifest.withdrawal(*c.key) is None)


@dataclass(frozen=True)
class ReleaseReader:
    """A release's manifest, catalog and policy, read and checked, with its cases still in
    git: ``cases()`` reads, parses and verifies them one at a time, in case_id order, so a
    reader that writes each case out as it comes (export) holds one case at a time."""

    root: Path
    manifest: Manifest
    manifest_raw: bytes
    catalog_raw: bytes
    catalog_data: dict[str, Any]
    policy: Policy
    withdrawn_later: tuple[Withdrawn, ...]
    attachment_blobs: Mapping[str, Mapping[str, str]]  # case_id -> {path: blob id}
    # The catalog's canonical JSON when it was read back from a reader's memory, not parsed:
    # then ``catalog_data`` is already its canonical content.
    catalog_canonical: bytes | None = None

    def withdrawal(self, case_id: str, version: int) -> Withdrawn | None:
        """Whether ``case_id@version`` is withdrawn: by this release or by a later one."""
        return _withdrawal(self.manifest, self.withdrawn_later, case_id, version)

    def cases(
        self,
        *,
        current: bool = False,
        derive: Callable[[dict[str, Any]], Any] | None = None,
        canonical: bool = False,
        remembered: Mapping[str, bytes] | None = None,
        fresh: dict[str, bytes] | None = None,
        lazy: bool = False,
    ) -> Iterator[ReleasedCase]:
        """Every case of the release (``current``: only those it does not withdraw), verified
        against the manifest as it is read; raises CasebankError at the first that is not.
        ``derive`` (a module-level function) runs on each case's data where it is parsed, in
        the worker processes of a large release, and its result is the case's ``derived``.

        ``canonical`` gives each case's data as its canonical content; with ``remembered``
        too (blob id -> canonical JSON, from a ``CaseMemory``; no ``derive``), a case whose
        remembered text hashes to the manifest's content hash is read back from it, not
        parsed from git, and the text of every case parsed goes into ``fresh``. With ``lazy``
        too, each case's data is parsed from that text only when it is first asked for
        (``ReleasedCase.data``)."""
        version = self.manifest.version
        entries = sorted(self.manifest.cases, key=lambda e: e.case_id)
        if current:
            entries = [e for e in entries if self.manifest.withdrawal(e.case_id, e.version) is None]
        if remembered is None or not canonical or derive is not None:
            remembered = {}
        hits: dict[str, tuple[bytes, str]] = {}  # blob -> (canonical JSON, its SHA-256)
        for e in entries:
            text = remembered.get(e.blob)
            sha = sha256_hex(text) if text is not None else ""
            if text is not None and content_hash(sha, e.attachments) == e.sha256:
                hits[e.blob] = (text, sha)
        misses = [e for e in entries if e.blob not in hits]
        blobs = _blobs(self.root, misses)
        jobs = ((e.path, raw) for e, (_, raw) in zip(misses, blobs, strict=True))
        # Parsing dominates; below a few hundred cases a worker pool costs more than it saves.
        parse = partial(_parse_chunk, derive=derive, canonical=canonical)
        parsed = iter(
            map_chunks(parse, jobs, size=50, start="fork", parallel=len(misses) >= POOL_FROM)
        )
        # The attachments (few, and small) in one batch: one reader, never one per case.
        folders = [self.attachment_blobs.get(e.case_id, {}) for e in entries]
        wanted = dict.fromkeys(oid for folder in folders for oid in folder.values())
        attached = dict(git.read_blobs(self.root, wanted)) if wanted else {}
        lazy = lazy and canonical and derive is None
        for entry, folder in zip(entries, folders, strict=True):
            hit = hits.get(entry.blob)
            files = {rel: attached[oid] for rel, oid in folder.items()}
            found: _Parsed
            if hit is not None:  # remembered (only ever canonical): its text, checked by hash
                found = (True, None, CaseDigest(hit[1], valid=True), None, hit[0])
            else:
                found = next(parsed)
            loaded, data, digest, derived, text = found
            _check_content(version, entry, loaded, digest, files)
            if canonical:
                assert text is not None  # a case that checks out has its canonical text
                if hit is None and fresh is not None and derive is None:
                    fresh[entry.blob] = text
                if lazy:
                    yield ReleasedCase(entry, None, files, text=text)
                    continue
                data = json.loads(text)
            assert data is not None
            yield ReleasedCase(entry, data, files, derived)


def _blobs(root: Path, entries: list[CaseEntry]) -> Iterator[tuple[str, bytes]]:
    """The entries' blobs, read as they are asked for."""
    return git.read_blobs(root, (e.blob for e in entries))


def _withdrawal(
    manifest: Manifest, later: tuple[Withdrawn, ...], case_id: str, version: int
) -> Withdrawn | None:
    found = manifest.withdrawal(case_id, version)
    if found is not None:
        return found
    for item in later:
        if (item.case_id, item.version) == (case_id, version):
            return item
    return None


def open_release(
    root: Path, version: str, remembered: Mapping[str, bytes] | None = None
) -> ReleaseReader:
    """Release ``version`` from git, its manifest, catalog and policy checked, its cases
    still to read; raises CasebankError naming what does not match. The catalog is read back
    from ``remembered`` (blob id -> canonical JSON) when the text there hashes to the
    manifest's ``catalog.sha256``, and parsed from git otherwise."""
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
    wanted = [manifest.catalog_blob, *([policy_blob[0]] if policy_blob else [])]
    contents = dict(git.read_blobs(root, dict.fromkeys(wanted)))
    catalog_raw = contents[manifest.catalog_blob]
    canonical = (remembered or {}).get(manifest.catalog_blob)
    if canonical is not None and sha256_hex(canonical) == manifest.catalog_sha256:
        catalog_data = json.loads(canonical)
    else:
        canonical = None
        from casebank.format.loader import load_document

        catalog = load_document("catalog.yaml", catalog_raw).document
        if catalog is None:
            raise CasebankError(f"release {version}: its catalog does not load", _VERIFY)
        catalog_data = catalog.data
    later = _later_withdrawals(root, head, manifest)
    policy = load_policy(contents[policy_blob[0]] if policy_blob else None)
    return ReleaseReader(
        root,
        manifest,
        manifest_raw,
        catalog_raw,
        catalog_data,
        policy,
        later,
        attachment_blobs,
        canonical,
    )


def load_release(
    root: Path,
    version: str,
    *,
    canonical: bool = False,
    memory: CaseMemory | None = None,
    lazy: bool = False,
) -> LoadedRelease:
    """Release ``version`` from git, verified, every case read (``open_release`` reads them
    one at a time); raises CasebankError naming what does not match.

    With ``canonical``, the cases' data and the catalog are their canonical content, as an
    export bundle holds them (``casebank.serve.bundle``); without, as the files are written.
    ``memory`` (canonical only) remembers the canonical JSON of the catalog and of each case
    for the next reader, which uses a text only when it hashes to what the manifest records
    (see ``ReleaseReader.cases``). ``lazy`` (canonical only) parses each case's data when it
    is first asked for, not here: for a reader whose worker processes use the data."""
    remembered = memory.read() if memory is not None and canonical else {}
    reader = open_release(root, version, remembered)
    fresh: dict[str, bytes] = {}
    cases = tuple(reader.cases(canonical=canonical, remembered=remembered, fresh=fresh, lazy=lazy))
    catalog_data = reader.catalog_data
    if canonical and reader.catalog_canonical is None:
        text = canonical_json(catalog_data)
        catalog_data = json.loads(text)
        if sha256_hex(text) == reader.manifest.catalog_sha256:
            fresh[reader.manifest.catalog_blob] = text
    if memory is not None and fresh:
        memory.write({**remembered, **fresh})
    return LoadedRelease(
        reader.manifest,
        reader.manifest_raw,
        reader.catalog_raw,
        catalog_data,
        cases,
        reader.policy,
        reader.withdrawn_later,
    )


def _listed(root: Path, head: str) -> list[Path]:
    return [
        Path(e.path)
        for e in git.list_tree(root, head, "releases")
        if e.path.endswith(".json") and e.path.count("/") == 1
    ]


# A case as parsed: whether it loads, its data, its digest, what was derived, its canonical text.
_Parsed = tuple[bool, dict[str, Any] | None, CaseDigest, Any, bytes | None]


def _parse_chunk(
    jobs: list[tuple[str, bytes]],
    derive: Callable[[dict[str, Any]], Any] | None = None,
    canonical: bool = False,
) -> list[_Parsed]:
    """Each case parsed and digested: whether it loads, its data, its digest, what ``derive``
    made of it. With ``canonical``, its canonical JSON in place of its data (made once: the
    content hash is the hash of that text, and the reader takes the data from it), so that a
    worker does not send back the same case twice."""
    from casebank.format.loader import load_document

    done = []
    for file, raw in jobs:
        loaded = load_document(file, raw)
        data = loaded.document.data if loaded.document is not None else None
        text = None
        if canonical and data is not None:
            with contextlib.suppress(rfc8785.CanonicalizationError):
                text = canonical_json(data)
        digest = digest_data(raw, data, text)
        derived = derive(data) if derive is not None and data is not None and digest.valid else None
        done.append((data is not None, None if canonical else data, digest, derived, text))
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
    loaded: bool,
    digest: CaseDigest,
    files: Mapping[str, bytes],
) -> None:
    where = f"release {version}: {entry.case_id}@{entry.version} ({entry.path})"
    if not loaded or not digest.valid:
        raise CasebankError(f"{where} does not load", _VERIFY)
    wrong = entry.mismatch(digest.sha256, files)
    if wrong == "attachments":
        raise CasebankError(f"{where}: its attachments are not the ones released", _VERIFY)
    if wrong == "content":
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
