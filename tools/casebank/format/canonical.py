"""Canonical content: what a case *is*, independent of how its file is written.

A case's canonical form is its parsed data serialised by RFC 8785, the JSON Canonicalization
Scheme (JCS): UTF-8, object keys sorted by UTF-16 code units, no insignificant whitespace,
numbers in their shortest ECMAScript form (``2.40`` and ``2.4`` are the same number; so are
``1.0`` and ``1``). Comments, key order, quoting, indentation, YAML versus JSON: none of them
survive parsing, so none of them change the hash.

The content hash of a case, in lowercase hex:

- without attachments: ``SHA-256(JCS(case))``;
- with files under ``cases/<case_id>/attachments/``:
  ``SHA-256(JCS({"attachments": {REL: SHA-256(bytes of REL)}, "case": SHA-256(JCS(case))}))``
  where ``REL`` is the file's path below ``attachments/`` with ``/`` separators
  (``ecg/strip.png``) and every SHA-256 is written as 64 lowercase hex digits.

Any language with a JCS library (or a few lines of code) recomputes both; see docs/releases.md.
"""

from __future__ import annotations

import hashlib
import json
from collections.abc import Mapping
from dataclasses import asdict, dataclass
from typing import Any

import rfc8785

from casebank.format.layout import ATTACHMENTS_DIR

_MAX_EXACT = 2**53 - 1  # I-JSON: integers beyond this are not exact in IEEE-754 doubles


class _NeedsFullJcs(Exception):
    pass


def canonical_json(value: Any) -> bytes:
    """RFC 8785 bytes of JSON-like data (raises rfc8785.CanonicalizationError if impossible).

    Speed matters (every version of every case is hashed), so data whose ``json.dumps`` form is
    provably identical to JCS goes through the C encoder; anything else (floats outside the range
    where Python and ECMAScript print numbers alike, keys outside the Basic Multilingual Plane,
    where code point and UTF-16 order differ) goes through the reference implementation.
    """
    try:
        text = json.dumps(
            _json_ready(value),
            ensure_ascii=False,
            sort_keys=True,
            separators=(",", ":"),
            allow_nan=False,
        )
        return text.encode("utf-8")
    except (_NeedsFullJcs, UnicodeEncodeError, ValueError):
        return rfc8785.dumps(value)


def canonical_data(value: Any) -> Any:
    """``value`` as its canonical form reads back: mapping keys in canonical order, numbers as
    JSON parsers read their canonical text (``2.0`` is ``2``). What a release serves, from git
    or from an export bundle, so that the same content hash always serves the same bytes."""
    return json.loads(canonical_json(value))


def _json_ready(value: Any) -> Any:
    kind = type(value)
    if kind is str or kind is bool or value is None:
        return value
    if kind is int:
        if -_MAX_EXACT <= value <= _MAX_EXACT:
            return value
        raise _NeedsFullJcs
    if kind is float:
        if value.is_integer():
            if -_MAX_EXACT <= value <= _MAX_EXACT:
                return int(value)  # ECMAScript prints 2.0 as 2 (and -0.0 as 0)
            raise _NeedsFullJcs
        if 1e-4 <= abs(value) < 1e16:
            return value  # Python's repr and ECMAScript both print the shortest digits, fixed
        raise _NeedsFullJcs
    if kind is list:
        return [_json_ready(item) for item in value]
    if kind is dict:
        for key in value:
            if type(key) is not str or (not key.isascii() and max(key) > "\uffff"):
                raise _NeedsFullJcs
        return {key: _json_ready(item) for key, item in value.items()}
    raise _NeedsFullJcs


def sha256_hex(raw: bytes) -> str:
    return hashlib.sha256(raw).hexdigest()


def data_hash(value: Any) -> str:
    """SHA-256 of the canonical form of ``value``."""
    return sha256_hex(canonical_json(value))


def content_hash(case_sha256: str, attachments: Mapping[str, str]) -> str:
    """Combine the case's own hash with its attachments' hashes (see the module docstring)."""
    if not attachments:
        return case_sha256
    return data_hash({"attachments": dict(attachments), "case": case_sha256})


@dataclass(frozen=True)
class CaseDigest:
    """What a release needs to know about one version of a case file.

    ``valid`` is False when the file cannot be parsed or canonicalised; ``sha256`` is then the
    hash of its raw bytes, so broken and fixed versions still count as different content.
    """

    sha256: str
    valid: bool
    title: str = ""
    specialty: str = ""
    difficulty: str = ""
    source: str = ""  # provenance, as the case states it ("" where it does not)
    licence: str = ""
    derived_from: str = ""


def _load_case(file: str, raw: bytes) -> dict[str, Any] | None:
    from casebank.format.loader import load_document

    loaded = load_document(file, raw)
    return None if loaded.document is None else loaded.document.data


def digest_case(file: str, raw: bytes) -> CaseDigest:
    """Parse one case file (``file`` decides YAML or JSON) and hash its canonical content."""
    return digest_data(raw, _load_case(file, raw))


def digest_data(
    raw: bytes, data: dict[str, Any] | None, canonical: bytes | None = None
) -> CaseDigest:
    """The digest of a case already parsed (``data`` None when it could not be), from ``raw``;
    ``canonical``, where the caller has made it already, is ``canonical_json(data)``."""
    try:
        if data is None:
            whole = None
        else:
            whole = sha256_hex(canonical if canonical is not None else canonical_json(data))
    except rfc8785.CanonicalizationError:  # e.g. an integer beyond IEEE-754's exact range
        whole = None
    if data is None or whole is None:
        return CaseDigest(sha256_hex(raw), valid=False)
    metadata = data.get("metadata")
    meta = metadata if isinstance(metadata, dict) else {}
    provenance = data.get("provenance")
    origin = provenance if isinstance(provenance, dict) else {}
    return CaseDigest(
        sha256=whole,
        valid=True,
        source=_text(origin.get("source")),
        licence=_text(origin.get("licence")),
        derived_from=_text(origin.get("derived_from")),
        title=_text(meta.get("title")),
        specialty=_text(meta.get("specialty")),
        difficulty=_text(meta.get("difficulty")),
    )


def file_digest(file: str, raw: bytes, data: dict[str, Any] | None) -> dict[str, Any]:
    """A loaded case file's digest and git blob id, as plain data (what validation keeps with
    each file's report, so that a release need not parse the same bytes again)."""
    return {"blob": git_blob_id(raw), **asdict(digest_data(raw, data))}


def git_blob_id(raw: bytes) -> str:
    """The id git gives these bytes as a blob (what `git hash-object` prints)."""
    return hashlib.sha1(b"blob %d\0" % len(raw) + raw).hexdigest()


def section_hashes(file: str, raw: bytes) -> dict[str, str]:
    """The hash of each top-level section of a case ({} if it cannot be loaded)."""
    data = _load_case(file, raw)
    try:
        return {} if data is None else {key: data_hash(value) for key, value in data.items()}
    except rfc8785.CanonicalizationError:
        return {}


def changed_sections(
    before: Mapping[str, str], after: Mapping[str, str], attachments_changed: bool
) -> tuple[str, ...]:
    """Names of the top-level sections that differ (plus ``attachments``), sorted."""
    names = {key for key in {*before, *after} if before.get(key) != after.get(key)}
    if attachments_changed:
        names.add(ATTACHMENTS_DIR)
    return tuple(sorted(names))


def digest_data_file(file: str, raw: bytes) -> str:
    """Canonical hash of a data file such as catalog.yaml (raw-bytes hash if it cannot load)."""
    from casebank.format.loader import load_document

    loaded = load_document(file, raw)
    if loaded.document is None:
        return sha256_hex(raw)
    try:
        return data_hash(loaded.document.data)
    except rfc8785.CanonicalizationError:
        return sha256_hex(raw)


def _text(value: object) -> str:
    return value if isinstance(value, str) else ""
