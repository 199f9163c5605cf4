"""Release manifests: the data, its byte-exact JSON form, and release version numbers.

A manifest is written once, by ``casebank release``, and never edited. Its bytes are a pure
function of its data: UTF-8 JSON with keys sorted, two-space indentation, lists in a fixed order
(cases and change lists by ``case_id``) and one trailing newline. Times are RFC 3339 in UTC with
second precision (``2025-03-01T12:00:00Z``), taken from git, never from the clock.
"""

from __future__ import annotations

import json
import re
from collections.abc import Mapping, Sequence
from dataclasses import dataclass, field
from datetime import datetime, timezone
from functools import cached_property
from typing import Any

from casebank.errors import CasebankError
from casebank.format import strictjson
from casebank.format.canonical import content_hash, sha256_hex
from casebank.format.identifiers import attachment_name_problem, colliding_names, is_case_id

# Format 2 added reviewers and provenance per case, withdrawals, and the dataset's licence.
# Format 3 keeps the layout and changes who is named: authors are the people who made the
# changes (for a merge, its branch's authors, not the merger) and reviewers those who signed off
# the version's exact content without being its authors, both as .mailmap maps them.
# Releases stay in the format they were written in: verify recomputes each in its own format.
MANIFEST_FORMAT = 3
# The dataset's name in every manifest. A constant: a folder or remote name is not stable.
DATASET_NAME = "casebank"
RELEASES_DIR = "releases"
CHANGELOG_FILE = "CHANGELOG.md"

Version = tuple[int, int, int]
_SEMVER = re.compile(r"^(0|[1-9][0-9]*)\.(0|[1-9][0-9]*)\.(0|[1-9][0-9]*)$")


def parse_version(text: str) -> Version | None:
    """``"1.2.3"`` -> (1, 2, 3). Only plain X.Y.Z (no pre-release or build suffix)."""
    match = _SEMVER.match(text)
    if match is None:
        return None
    major, minor, patch = (int(part) for part in match.groups())
    return major, minor, patch


def format_version(version: Version) -> str:
    return ".".join(str(part) for part in version)


def version_key(text: str) -> Version:
    parsed = parse_version(text)
    if parsed is None:
        raise ValueError(f"not a release version: {text!r}")
    return parsed


def tag_name(version: str) -> str:
    return f"v{version}"


def manifest_path(version: str) -> str:
    return f"{RELEASES_DIR}/{version}.json"


def rfc3339(timestamp: int) -> str:
    """Seconds since the epoch -> ``YYYY-MM-DDTHH:MM:SSZ``."""
    return datetime.fromtimestamp(timestamp, tz=timezone.utc).strftime("%Y-%m-%dT%H:%M:%SZ")


@dataclass(frozen=True, order=True)
class Author:
    name: str
    email: str

    def __str__(self) -> str:
        return f"{self.name} <{self.email}>" if self.email else self.name


@dataclass(frozen=True)
class CaseEntry:
    """One case as released."""

    case_id: str
    version: int
    sha256: str
    path: str
    blob: str
    attachments: Mapping[str, str]  # path below attachments/ -> SHA-256 of its bytes
    first_release: str
    last_changed_commit: str
    last_changed_date: str
    authors: tuple[Author, ...]
    title: str
    specialty: str
    difficulty: str
    # Format 2: who reviewed this version (Reviewed-by trailers on the commits that made it),
    # and where the case comes from (source, licence, derived_from; "" where not stated).
    reviewers: tuple[Author, ...] = ()
    provenance: Mapping[str, str] = field(default_factory=dict)

    def mismatch(self, case_sha256: str, files: Mapping[str, bytes]) -> str | None:
        """What of a copy of this version does not match it: ``"attachments"`` (not the files
        released), ``"content"`` (not the content hash), or None. ``case_sha256`` is the
        SHA-256 of the copy's canonical case, ``files`` its attachments by path."""
        hashes = {rel: sha256_hex(raw) for rel, raw in files.items()}
        if hashes != dict(self.attachments):
            return "attachments"
        if content_hash(case_sha256, hashes) != self.sha256:
            return "content"
        return None


@dataclass(frozen=True)
class Withdrawn:
    """A released case version withdrawn as wrong, from the release that first carried it."""

    case_id: str
    version: int
    reason: str
    release: str


@dataclass(frozen=True)
class Added:
    case_id: str
    version: int


@dataclass(frozen=True)
class Changed:
    case_id: str
    from_version: int
    to_version: int
    sections: tuple[str, ...]  # top-level sections whose content changed ("attachments" too)


@dataclass(frozen=True)
class Removed:
    case_id: str
    last_version: int


@dataclass(frozen=True)
class Manifest:
    version: str
    previous_version: str | None
    source_commit: str
    created: str
    schema_version: str
    schema_sha256: str
    catalog_path: str
    catalog_blob: str
    catalog_sha256: str
    cases: tuple[CaseEntry, ...]
    added: tuple[Added, ...] = ()
    changed: tuple[Changed, ...] = ()
    removed: tuple[Removed, ...] = ()
    dataset: str = DATASET_NAME
    format: int = MANIFEST_FORMAT
    withdrawn: tuple[Withdrawn, ...] = ()  # format 2
    licence: str = ""  # format 2: the dataset's licence (SPDX), from casebank.toml
    _index: dict[str, CaseEntry] = field(
        default_factory=dict, init=False, repr=False, compare=False
    )

    def case(self, case_id: str) -> CaseEntry | None:
        if not self._index:
            self._index.update((entry.case_id, entry) for entry in self.cases)
        return self._index.get(case_id)

    @cached_property
    def counts(self) -> dict[str, int]:
        counts = {
            "cases": len(self.cases),
            "added": len(self.added),
            "changed": len(self.changed),
            "removed": len(self.removed),
            "unchanged": len(self.cases) - len(self.added) - len(self.changed),
        }
        if self.format >= 2:
            counts["withdrawn"] = len(self.withdrawn)
        return counts

    def withdrawal(self, case_id: str, version: int) -> Withdrawn | None:
        """The withdrawal of ``case_id@version`` this manifest carries, if any."""
        for item in self.withdrawn:
            if (item.case_id, item.version) == (case_id, version):
                return item
        return None


def to_data(manifest: Manifest) -> dict[str, Any]:
    data = _base_data(manifest)
    if manifest.format >= 2:
        data["licence"] = manifest.licence
        data["withdrawn"] = [
            {"case_id": w.case_id, "version": w.version, "reason": w.reason, "release": w.release}
            for w in sorted(manifest.withdrawn, key=lambda w: (w.case_id, w.version))
        ]
    return data


def _base_data(manifest: Manifest) -> dict[str, Any]:
    return {
        "manifest_format": manifest.format,
        "dataset": manifest.dataset,
        "version": manifest.version,
        "previous_version": manifest.previous_version,
        "source_commit": manifest.source_commit,
        "created": manifest.created,
        "schema": {"version": manifest.schema_version, "sha256": manifest.schema_sha256},
        "catalog": {
            "path": manifest.catalog_path,
            "blob": manifest.catalog_blob,
            "sha256": manifest.catalog_sha256,
        },
        "counts": manifest.counts,
        "cases": [
            _case_data(c, manifest.format) for c in sorted(manifest.cases, key=lambda c: c.case_id)
        ],
        "added": [
            {"case_id": a.case_id, "version": a.version}
            for a in sorted(manifest.added, key=lambda a: a.case_id)
        ],
        "changed": [
            {
                "case_id": c.case_id,
                "from_version": c.from_version,
                "to_version": c.to_version,
                "sections": list(c.sections),
            }
            for c in sorted(manifest.changed, key=lambda c: c.case_id)
        ],
        "removed": [
            {"case_id": r.case_id, "last_version": r.last_version}
            for r in sorted(manifest.removed, key=lambda r: r.case_id)
        ],
    }


def _case_data(entry: CaseEntry, format: int) -> dict[str, Any]:
    data = {
        "case_id": entry.case_id,
        "version": entry.version,
        "sha256": entry.sha256,
        "path": entry.path,
        "blob": entry.blob,
        "attachments": dict(entry.attachments),
        "first_release": entry.first_release,
        "last_changed": {"commit": entry.last_changed_commit, "date": entry.last_changed_date},
        "authors": [{"name": a.name, "email": a.email} for a in entry.authors],
        "title": entry.title,
        "specialty": entry.specialty,
        "difficulty": entry.difficulty,
    }
    if format >= 2:
        data["reviewers"] = [{"name": a.name, "email": a.email} for a in entry.reviewers]
        data["provenance"] = dict(entry.provenance)
    return data


def dumps(manifest: Manifest) -> bytes:
    """The manifest's exact bytes."""
    text = json.dumps(to_data(manifest), indent=2, sort_keys=True, ensure_ascii=False)
    return (text + "\n").encode("utf-8")


_RESTORE_HINT = "manifests are written by `casebank release`; restore it from git"


class _Malformed(Exception):
    pass


def loads(raw: bytes, file: str) -> Manifest:
    """Read a manifest; a file that is not one raises CasebankError naming ``file``."""
    try:
        data = strictjson.load_bytes(raw)
        return _manifest(_Obj(data, ""))
    except strictjson.JSONProblem as exc:
        raise CasebankError(
            f"{file}: not valid JSON (line {exc.line}, column {exc.column}: {exc})", _RESTORE_HINT
        ) from None
    except _Malformed as exc:
        raise CasebankError(f"{file}: not a casebank manifest: {exc}", _RESTORE_HINT) from None


class _Obj:
    """Typed access to one JSON object, with the path for error messages."""

    def __init__(self, data: object, where: str) -> None:
        if not isinstance(data, dict):
            raise _Malformed(f"{where or 'the top level'} is not an object")
        self.data, self.where = data, where

    def _get(self, key: str, kind: type | tuple[type, ...]) -> Any:
        value = self.data.get(key)
        if not isinstance(value, kind) or (isinstance(value, bool) and kind is int):
            raise _Malformed(f"`{self.where}{key}` is missing or has the wrong type")
        return value

    def text(self, key: str) -> str:
        return str(self._get(key, str))

    def case_id(self, key: str = "case_id") -> str:
        value = self.text(key)
        if not is_case_id(value):
            raise _Malformed(f"`{self.where}{key}` is not a valid case id")
        return value

    def attachments(self, key: str) -> dict[str, str]:
        """A case's attachments (name -> SHA-256), each name under the identifier policy."""
        found = self.obj(key)
        names = {name: found.text(name) for name in found.data}
        for name in names:
            problem = attachment_name_problem(name)
            if problem:
                raise _Malformed(f"`{found.where}` names an attachment that is refused: {problem}")
        if colliding_names(names):
            raise _Malformed(f"`{found.where}` names two attachments that are one file")
        return names

    def optional_text(self, key: str) -> str | None:
        value = self.data.get(key)
        return None if value is None else self.text(key)

    def number(self, key: str) -> int:
        return int(self._get(key, int))

    def obj(self, key: str) -> _Obj:
        return _Obj(self._get(key, dict), f"{self.where}{key}.")

    def objects(self, key: str) -> list[_Obj]:
        return [
            _Obj(item, f"{self.where}{key}[{i}].") for i, item in enumerate(self._get(key, list))
        ]


def _manifest(top: _Obj) -> Manifest:
    schema, catalog = top.obj("schema"), top.obj("catalog")
    format = top.number("manifest_format")
    if not 1 <= format <= MANIFEST_FORMAT:
        raise _Malformed(
            f"manifest format {format} is not one this casebank reads (1 to {MANIFEST_FORMAT}); "
            "upgrade casebank"
        )
    later = format >= 2
    return Manifest(
        format=format,
        licence=top.text("licence") if later else "",
        withdrawn=tuple(
            Withdrawn(w.case_id(), w.number("version"), w.text("reason"), w.text("release"))
            for w in top.objects("withdrawn")
        )
        if later
        else (),
        dataset=top.text("dataset"),
        version=top.text("version"),
        previous_version=top.optional_text("previous_version"),
        source_commit=top.text("source_commit"),
        created=top.text("created"),
        schema_version=schema.text("version"),
        schema_sha256=schema.text("sha256"),
        catalog_path=catalog.text("path"),
        catalog_blob=catalog.text("blob"),
        catalog_sha256=catalog.text("sha256"),
        cases=tuple(_case(c, later) for c in top.objects("cases")),
        added=tuple(Added(a.case_id(), a.number("version")) for a in top.objects("added")),
        changed=tuple(
            Changed(
                c.case_id(),
                c.number("from_version"),
                c.number("to_version"),
                tuple(str(s) for s in c._get("sections", list)),
            )
            for c in top.objects("changed")
        ),
        removed=tuple(
            Removed(r.case_id(), r.number("last_version")) for r in top.objects("removed")
        ),
    )


def _case(case: _Obj, later: bool) -> CaseEntry:
    changed = case.obj("last_changed")
    provenance = case.obj("provenance") if later else None
    return CaseEntry(
        reviewers=_authors(case, "reviewers") if later else (),
        provenance={k: provenance.text(k) for k in provenance.data} if provenance else {},
        case_id=case.case_id(),
        version=case.number("version"),
        sha256=case.text("sha256"),
        path=case.text("path"),
        blob=case.text("blob"),
        attachments=case.attachments("attachments"),
        first_release=case.text("first_release"),
        last_changed_commit=changed.text("commit"),
        last_changed_date=changed.text("date"),
        authors=_authors(case, "authors"),
        title=case.text("title"),
        specialty=case.text("specialty"),
        difficulty=case.text("difficulty"),
    )


def _authors(case: _Obj, key: str) -> tuple[Author, ...]:
    return tuple(Author(a.text("name"), a.text("email")) for a in case.objects(key))


def latest_entries(previous: Sequence[Manifest]) -> dict[str, CaseEntry]:
    """Each case's entry in the newest release that contained it (removed cases included)."""
    latest: dict[str, CaseEntry] = {}
    for manifest in previous:
        latest.update((entry.case_id, entry) for entry in manifest.cases)
    return latest
