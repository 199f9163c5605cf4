"""Withdrawals: released case versions found wrong, recorded without rewriting history.

``casebank withdraw CASE_ID@VERSION --reason TEXT`` appends an entry to ``withdrawals.yaml`` at
the repository root; it is committed like any change. The next release reads the file from its
source commit and carries each new entry in its manifest (``withdrawn``, with the release that
first carried it); later manifests carry every earlier withdrawal unchanged, so a withdrawal
is permanent, and manifests already released are never touched.

    withdrawals:
      - case_id: chest_pain_001
        version: 3
        reason: "The troponin threshold was wrong (ng/mL for ng/L); fixed in version 4."
"""

from __future__ import annotations

import json
from collections.abc import Mapping, Sequence
from dataclasses import dataclass

from casebank.errors import CasebankError
from casebank.format.document import Document
from casebank.format.layout import WITHDRAWALS_FILE
from casebank.format.loader import load_document
from casebank.release.manifest import Manifest, Withdrawn

MIN_REASON = 10
_HEADER = (
    "# Released case versions withdrawn as wrong. Written by `casebank withdraw`; each entry\n"
    "# is carried by the next release's manifest and by every manifest after it.\n"
)
_HINT = "each entry is `{case_id: <id>, version: <number>, reason: <why, 10+ characters>}`"


@dataclass(frozen=True)
class Request:
    """One entry of withdrawals.yaml, with the line it stands on."""

    case_id: str
    version: int
    reason: str
    line: int = 0


def parse(raw: bytes | None, file: str = WITHDRAWALS_FILE) -> list[Request]:
    """The entries of withdrawals.yaml (none when there is no file); a malformed file raises
    CasebankError naming the file, the line and the field."""
    if raw is None:
        return []
    loaded = load_document(file, raw)
    if loaded.document is None:
        issue = loaded.issues[0]
        raise CasebankError(f"{file}:{issue.line}: {issue.message}", issue.hint or _HINT)
    doc = loaded.document
    entries = doc.data.get("withdrawals")
    unknown = sorted(set(doc.data) - {"withdrawals"})
    if unknown:
        raise CasebankError(
            f"{file}:{_line(doc, (unknown[0],))}: `{unknown[0]}` is not a field of {file}",
            "the file holds one list, `withdrawals:`",
        )
    if entries is None:
        return []
    if not isinstance(entries, list):
        raise CasebankError(f"{file}:{_line(doc, ('withdrawals',))}: not a list", _HINT)
    found: list[Request] = []
    seen: dict[tuple[str, int], int] = {}
    for i, entry in enumerate(entries):
        at = _line(doc, ("withdrawals", i))
        if not isinstance(entry, dict) or set(entry) != {"case_id", "version", "reason"}:
            raise CasebankError(f"{file}:{at}: withdrawal {i + 1} is not an entry", _HINT)
        case_id, version, reason = entry["case_id"], entry["version"], entry["reason"]
        if not isinstance(case_id, str) or not case_id:
            raise CasebankError(f"{file}:{at}: `case_id` of withdrawal {i + 1} is not text", _HINT)
        if not isinstance(version, int) or isinstance(version, bool) or version < 1:
            raise CasebankError(
                f"{file}:{at}: `version` of withdrawal {i + 1} is not a version number", _HINT
            )
        if not isinstance(reason, str) or len(reason.strip()) < MIN_REASON:
            raise CasebankError(
                f"{file}:{at}: the reason for withdrawing {case_id}@{version} is missing or "
                "too short",
                f"say in {MIN_REASON} characters or more why the version is wrong",
            )
        if (case_id, version) in seen:
            raise CasebankError(
                f"{file}:{at}: {case_id}@{version} is withdrawn twice "
                f"(first on line {seen[(case_id, version)]})",
                "keep one entry",
            )
        seen[(case_id, version)] = at
        found.append(Request(case_id, version, reason.strip(), at))
    return found


def _line(doc: Document, path: tuple[str | int, ...]) -> int:
    return doc.locate(path, at_key=True)[0]


def released_versions(previous: Sequence[Manifest]) -> dict[str, set[int]]:
    """Every version of every case that some release carried."""
    found: dict[str, set[int]] = {}
    for manifest in previous:
        for entry in manifest.cases:
            found.setdefault(entry.case_id, set()).add(entry.version)
    return found


def problems(
    requests: Sequence[Request], previous: Sequence[Manifest]
) -> list[tuple[Request, str]]:
    """What is wrong with ``requests`` against the releases before: a version no release
    carried cannot be withdrawn (an unreleased change is simply fixed)."""
    released = released_versions(previous)
    found = []
    for request in requests:
        if request.version not in released.get(request.case_id, set()):
            versions = sorted(released.get(request.case_id, set()))
            known = (
                f"released versions: {', '.join(map(str, versions))}"
                if versions
                else "the case was never released"
            )
            found.append(
                (request, f"{request.case_id}@{request.version} was never released ({known})")
            )
    return found


def carried(
    version: str, requests: Sequence[Request], previous: Sequence[Manifest]
) -> tuple[Withdrawn, ...]:
    """The withdrawals the manifest of release ``version`` carries: every one an earlier
    manifest carried, unchanged, then each new released request, first carried here."""
    before: dict[tuple[str, int], Withdrawn] = {}
    for manifest in previous:
        for item in manifest.withdrawn:
            before.setdefault((item.case_id, item.version), item)
    released = released_versions(previous)
    for request in requests:
        key = (request.case_id, request.version)
        if key not in before and request.version in released.get(request.case_id, set()):
            before[key] = Withdrawn(request.case_id, request.version, request.reason, version)
    return tuple(sorted(before.values(), key=lambda w: (w.case_id, w.version)))


def render(requests: Sequence[Request]) -> bytes:
    """withdrawals.yaml holding ``requests``, in a stable, readable form."""
    lines = [_HEADER.rstrip("\n"), "withdrawals:"]
    for r in requests:
        lines += [
            f"  - case_id: {r.case_id}",
            f"    version: {r.version}",
            f"    reason: {json.dumps(r.reason, ensure_ascii=False)}",
        ]
    return ("\n".join(lines) + "\n").encode("utf-8")


def withdrawn_index(manifest: Manifest) -> Mapping[tuple[str, int], Withdrawn]:
    return {(w.case_id, w.version): w for w in manifest.withdrawn}
