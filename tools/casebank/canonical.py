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
from collections.abc import Mapping
from dataclasses import dataclass, field
from pathlib import PurePosixPath
from typing import Any

import rfc8785

from casebank.loader import load_document
from casebank.repo import CASES_DIR

ATTACHMENTS_DIR = "attachments"


def canonical_json(value: Any) -> bytes:
    """RFC 8785 bytes of JSON-like data (raises rfc8785.CanonicalizationError if impossible)."""
    return rfc8785.dumps(value)


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


def attachment_of(path: str) -> tuple[str, str] | None:
    """``cases/<id>/attachments/<rel>`` -> (id, rel); anything else -> None."""
    parts = PurePosixPath(path).parts
    if len(parts) >= 4 and parts[0] == CASES_DIR and parts[2] == ATTACHMENTS_DIR:
        return parts[1], "/".join(parts[3:])
    return None


@dataclass(frozen=True)
class CaseDigest:
    """What a release needs to know about one version of a case file.

    ``valid`` is False when the file cannot be parsed or canonicalised; ``sha256`` is then the
    hash of its raw bytes, so broken and fixed versions still count as different content.
    """

    sha256: str
    valid: bool
    sections: Mapping[str, str] = field(default_factory=dict)  # top-level key -> its hash
    title: str = ""
    specialty: str = ""
    difficulty: str = ""


def digest_case(file: str, raw: bytes) -> CaseDigest:
    """Parse one case file (``file`` decides YAML or JSON) and hash its canonical content."""
    loaded = load_document(file, raw)
    if loaded.document is None:
        return CaseDigest(sha256_hex(raw), valid=False)
    data = loaded.document.data
    try:
        sections = {key: data_hash(value) for key, value in data.items()}
        whole = data_hash(data)
    except rfc8785.CanonicalizationError:  # e.g. an integer beyond IEEE-754's exact range
        return CaseDigest(sha256_hex(raw), valid=False)
    metadata = data.get("metadata")
    meta = metadata if isinstance(metadata, dict) else {}
    return CaseDigest(
        sha256=whole,
        valid=True,
        sections=sections,
        title=_text(meta.get("title")),
        specialty=_text(meta.get("specialty")),
        difficulty=_text(meta.get("difficulty")),
    )


def digest_data_file(file: str, raw: bytes) -> str:
    """Canonical hash of a data file such as catalog.yaml (raw-bytes hash if it cannot load)."""
    loaded = load_document(file, raw)
    if loaded.document is None:
        return sha256_hex(raw)
    try:
        return data_hash(loaded.document.data)
    except rfc8785.CanonicalizationError:
        return sha256_hex(raw)


def _text(value: object) -> str:
    return value if isinstance(value, str) else ""
