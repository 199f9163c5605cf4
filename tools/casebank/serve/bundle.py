"""An export bundle read back, with no git: a release served from the folder alone.

``load_bundle(folder)`` is what ``casebank results --bundle``, ``view --bundle``,
``score --bundle``, ``judge-items --bundle`` and the inspect task's ``-T bundle=DIR`` read. It
returns the same ``LoadedRelease`` that ``load_release`` reads from git, so everything served
from it (the oracle's answers, the scorer's keys) is computed by the same code from the same
data. Before anything is read it checks, in order:

1. ``SHA256SUMS``: every file it lists is there, a regular file with that SHA-256; every file
   of the folder is listed (only the export's ``.casebank-export`` marker is not); nothing is a
   symbolic link. All the files that do not match are named in one message.
2. ``manifest.json`` is a casebank manifest; ``catalog.json`` is canonical JSON (RFC 8785)
   whose SHA-256 is the manifest's ``catalog.sha256``.
3. Each record of ``cases.jsonl`` (or ``cases.parquet``) is a case version the manifest holds
   and does not withdraw, its ``case`` recomputes the manifest's content hash with the files
   under ``attachments/<case_id>/``, and the whole record is exactly what ``casebank export``
   writes for that version (so ``patient`` is the patient view of ``case``); every version the
   release serves has its record.

Step 1 catches a file changed or added after the export; steps 2 and 3 catch a bundle whose
``SHA256SUMS`` was rewritten to match its edits, since the manifest's hashes bind every case
and the catalog. The manifest itself is vouched for by the release's published
``SHA256SUMS`` asset and its git tag (docs/export.md).
"""

from __future__ import annotations

import json
import re
from collections.abc import Iterator, Mapping, Sequence
from pathlib import Path
from typing import Any

from casebank.errors import CasebankError, SetupError
from casebank.format.canonical import canonical_json, sha256_hex
from casebank.format.policy import Policy
from casebank.release.manifest import CaseEntry, Manifest, loads
from casebank.release.released import LoadedRelease, ReleasedCase
from casebank.serve.export import CATALOG_FILE, COLUMNS, MANIFEST_FILE, SUMS_FILE, record

MARKER = ".casebank-export"  # workspace.output_marker("export"): written beside, never listed
DATA_FILES = ("cases.jsonl", "cases.parquet")
_LINE = re.compile(r"^([0-9a-f]{64}) [ *](.+)$")
_SHOWN = 20  # most mismatches named in one message
_REEXPORT = (
    "the bundle is not as exported: download it again, or export it again from the repository "
    "(`casebank export --release X.Y.Z --out DIR`); never edit a bundle's files"
)


def load_bundle(folder: Path) -> LoadedRelease:
    """The release in export bundle ``folder``, verified; raises CasebankError naming the file
    and what does not match."""
    folder = _folder(folder)
    files = verify_sums(folder)
    for name in (MANIFEST_FILE, CATALOG_FILE):
        if name not in files:
            raise CasebankError(f"{folder / name}: missing from the bundle", _missing_hint(name))
    manifest = loads(files[MANIFEST_FILE], str(folder / MANIFEST_FILE))
    catalog = _catalog(folder, files[CATALOG_FILE], manifest)
    data_file = _data_file(folder, files)
    rows = list(_rows(folder / data_file, files[data_file]))
    cases = _cases(folder, data_file, rows, manifest, files)
    return LoadedRelease(
        manifest,
        files[MANIFEST_FILE],
        files[CATALOG_FILE],
        catalog,
        cases,
        Policy(),  # casebank.toml is not in a bundle; nothing served or scored reads it
        (),  # later withdrawals live in later manifests, which a bundle does not hold
    )


def _folder(folder: Path) -> Path:
    """The bundle's folder (a symbolic link to one is followed; links inside are refused)."""
    if not folder.is_dir():
        what = "not a folder" if folder.exists() else "not there"
        raise CasebankError(
            f"--bundle {folder}: {what}",
            "give the folder `casebank export` wrote (it holds SHA256SUMS)",
        )
    return folder


def verify_sums(folder: Path) -> dict[str, bytes]:
    """Every file SHA256SUMS lists (relative POSIX path -> bytes), each checked against it."""
    sums_path = folder / SUMS_FILE
    if not sums_path.is_file() or sums_path.is_symlink():
        raise CasebankError(
            f"{sums_path}: missing, so {folder} is not an export bundle",
            "give the folder `casebank export` wrote (it holds cases.jsonl, catalog.json, "
            "manifest.json, README.md and SHA256SUMS); if its SHA256SUMS is lost, download "
            "it again or export it again (`casebank export --release X.Y.Z --out DIR`)",
        )
    listed = _listed(sums_path)
    problems: list[str] = []
    files: dict[str, bytes] = {}
    for rel, expected in listed.items():
        path = folder / rel
        if path.is_symlink() or (path.exists() and not path.is_file()):
            problems.append(f"{path}: not a regular file (SHA256SUMS lists it as one)")
            continue
        try:
            raw = path.read_bytes()
        except FileNotFoundError:
            problems.append(f"{path}: listed in SHA256SUMS but missing")
            continue
        except OSError as exc:
            problems.append(f"{path}: cannot be read ({exc.strerror})")
            continue
        found = sha256_hex(raw)
        if found != expected:
            problems.append(
                f"{path}: changed since the export (SHA-256 {found[:16]}…, "
                f"SHA256SUMS says {expected[:16]}…)"
            )
            continue
        files[rel] = raw
    for rel in _present(folder):
        if rel not in listed and rel not in (SUMS_FILE, MARKER):
            problems.append(f"{folder / rel}: not listed in SHA256SUMS (added after the export)")
    if problems:
        shown = problems[:_SHOWN]
        if len(problems) > _SHOWN:
            shown.append(f"... and {len(problems) - _SHOWN} more")
        raise CasebankError(
            f"{folder}: {len(problems)} file(s) do not match SHA256SUMS:\n  " + "\n  ".join(shown),
            _REEXPORT,
        )
    return files


def _listed(sums_path: Path) -> dict[str, str]:
    try:
        text = sums_path.read_bytes().decode("utf-8")
    except UnicodeDecodeError:
        raise CasebankError(f"{sums_path}: not UTF-8 text", _REEXPORT) from None
    listed: dict[str, str] = {}
    for number, line in enumerate(text.splitlines(), start=1):
        match = _LINE.match(line)
        where = f"{sums_path}:{number}"
        if match is None:
            raise CasebankError(
                f"{where}: not a `sha256sum` line (64 lowercase hex digits, two spaces, a path)",
                _REEXPORT,
            )
        digest, rel = match.groups()
        if not _safe(rel):
            raise CasebankError(
                f"{where}: {rel!r} is not a path inside the bundle (relative, `/`-separated, "
                "no `..`)",
                _REEXPORT,
            )
        if rel in listed:
            raise CasebankError(f"{where}: {rel} is listed twice", _REEXPORT)
        listed[rel] = digest
    return listed


def _safe(rel: str) -> bool:
    parts = rel.split("/")
    return (
        "\\" not in rel
        and not rel.startswith("/")
        and all(p not in ("", ".", "..") for p in parts)
        and rel != SUMS_FILE
    )


def _present(folder: Path) -> Iterator[str]:
    """Every file and symbolic link below ``folder`` (symbolic links are never followed)."""
    for path in sorted(folder.rglob("*")):
        if path.is_symlink() or path.is_file():
            yield path.relative_to(folder).as_posix()


def _missing_hint(name: str) -> str:
    if name == CATALOG_FILE:
        return (
            "bundles exported before they carried the release's catalog cannot be served: "
            "export it again with this casebank (`casebank export --release X.Y.Z --out DIR`)"
        )
    return _REEXPORT


def _catalog(folder: Path, raw: bytes, manifest: Manifest) -> dict[str, Any]:
    path = folder / CATALOG_FILE
    try:
        data = json.loads(raw.decode("utf-8"))
    except (UnicodeDecodeError, ValueError) as exc:
        raise CasebankError(f"{path}: not JSON ({exc})", _REEXPORT) from None
    if not isinstance(data, dict) or canonical_json(data) != raw:
        raise CasebankError(f"{path}: not the catalog in canonical JSON (RFC 8785)", _REEXPORT)
    if sha256_hex(raw) != manifest.catalog_sha256:
        raise CasebankError(
            f"{path}: not the catalog of release {manifest.version} (its SHA-256 is not "
            "`catalog.sha256` of manifest.json)",
            _REEXPORT,
        )
    return data


def _data_file(folder: Path, files: Mapping[str, bytes]) -> str:
    held = [name for name in DATA_FILES if name in files]
    if len(held) != 1:
        raise CasebankError(
            f"{folder}: holds {' and '.join(held) if held else 'neither cases.jsonl nor'}"
            + ("" if held else " cases.parquet")
            + " (a bundle holds exactly one cases file)",
            _REEXPORT,
        )
    return held[0]


def _rows(path: Path, raw: bytes) -> Iterator[tuple[int, Any]]:
    """(line or row number, record) for each record of the cases file."""
    if path.suffix == ".parquet":
        yield from enumerate(_parquet(path, raw), start=1)
        return
    try:
        text = raw.decode("utf-8")
    except UnicodeDecodeError:
        raise CasebankError(f"{path}: not UTF-8 text", _REEXPORT) from None
    for number, line in enumerate(text.splitlines(), start=1):
        try:
            yield number, json.loads(line)
        except ValueError as exc:
            raise CasebankError(f"{path}:{number}: not a JSON record ({exc})", _REEXPORT) from None


def _parquet(path: Path, raw: bytes) -> list[Any]:
    try:
        import pyarrow as pa
        import pyarrow.parquet as pq
    except ImportError:
        raise SetupError(
            f"{path}: reading a Parquet bundle needs pyarrow",
            'install it in the clone: python3 -m pip install -e ".[export]"',
        ) from None
    try:
        table = pq.read_table(pa.BufferReader(raw))
    except (pa.ArrowException, OSError) as exc:
        raise CasebankError(f"{path}: not a Parquet file ({exc})", _REEXPORT) from None
    return list(table.to_pylist())


def _cases(
    folder: Path,
    data_file: str,
    rows: Sequence[tuple[int, Any]],
    manifest: Manifest,
    files: Mapping[str, bytes],
) -> tuple[ReleasedCase, ...]:
    attachments = _attachments(folder, files)
    cases: dict[str, ReleasedCase] = {}
    for number, row in rows:
        where = f"{folder / data_file}:{number}"
        case = _case(where, row, manifest, attachments)
        if case.entry.case_id in cases:
            raise CasebankError(f"{where}: {case.entry.case_id} has a second record", _REEXPORT)
        cases[case.entry.case_id] = case
    served = [e for e in manifest.cases if manifest.withdrawal(e.case_id, e.version) is None]
    missing = [e.case_id for e in served if e.case_id not in cases]
    if missing:
        raise CasebankError(
            f"{folder / data_file}: no record of {', '.join(missing)} (release "
            f"{manifest.version} serves it)",
            _REEXPORT,
        )
    orphans = sorted(set(attachments) - set(cases))
    if orphans:
        raise CasebankError(
            f"{folder / 'attachments' / orphans[0]}: attachments of a case with no record",
            _REEXPORT,
        )
    return tuple(cases[e.case_id] for e in sorted(served, key=lambda e: e.case_id))


def _attachments(folder: Path, files: Mapping[str, bytes]) -> dict[str, dict[str, bytes]]:
    found: dict[str, dict[str, bytes]] = {}
    for rel, raw in files.items():
        parts = rel.split("/", 2)
        if parts[0] != "attachments":
            continue
        if len(parts) < 3:
            raise CasebankError(
                f"{folder / rel}: not below attachments/<case_id>/", "remove it; " + _REEXPORT
            )
        found.setdefault(parts[1], {})[parts[2]] = raw
    return found


def _case(
    where: str, row: Any, manifest: Manifest, attachments: Mapping[str, Mapping[str, bytes]]
) -> ReleasedCase:
    if not isinstance(row, dict) or set(row) != set(COLUMNS):
        raise CasebankError(
            f"{where}: not a bundle record (its fields are {', '.join(COLUMNS)})", _REEXPORT
        )
    case_id, version = row["case_id"], row["version"]
    entry = manifest.case(case_id) if isinstance(case_id, str) else None
    if entry is None or entry.version != version:
        raise CasebankError(
            f"{where}: {case_id}@{version} is not a case version of release {manifest.version}",
            _REEXPORT,
        )
    if manifest.withdrawal(entry.case_id, entry.version) is not None:
        raise CasebankError(
            f"{where}: {case_id}@{version} is withdrawn by release {manifest.version}", _REEXPORT
        )
    if not isinstance(row["case"], str):
        raise CasebankError(f"{where}: `case` is not a JSON text", _REEXPORT)
    files = dict(attachments.get(entry.case_id, {}))
    _check_hash(where, entry, row["case"], files)
    data = json.loads(row["case"])
    case = ReleasedCase(entry, data, files)
    expected = record(manifest.version, case)
    wrong = [name for name in COLUMNS if row[name] != expected[name]]
    if wrong:
        raise CasebankError(
            f"{where}: {', '.join(f'`{w}`' for w in wrong)} of {case_id}@{version} "
            "is not what the release holds",
            _REEXPORT,
        )
    return case


def _check_hash(where: str, entry: CaseEntry, text: str, files: Mapping[str, bytes]) -> None:
    wrong = entry.mismatch(sha256_hex(text.encode("utf-8")), files)
    if wrong == "attachments":
        raise CasebankError(
            f"{where}: the files below attachments/{entry.case_id}/ are not the ones release "
            "manifest.json lists for it",
            _REEXPORT,
        )
    if wrong == "content":
        raise CasebankError(
            f"{where}: `case` of {entry.case_id}@{entry.version} does not have the content hash "
            "manifest.json gives it",
            _REEXPORT,
        )
