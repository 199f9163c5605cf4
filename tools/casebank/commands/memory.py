"""What the commands remember between runs in the cache folder: the catalog as built and its
name index, served working-tree cases' loaded data, and released cases' canonical texts. Light
to import, and so is every key: a warm validation or `results` imports neither the loader nor
PyYAML."""

from __future__ import annotations

from dataclasses import dataclass
from pathlib import Path
from typing import TYPE_CHECKING, Any

from casebank.format.layout import CACHE_DIR, CATALOG_FILE

if TYPE_CHECKING:
    from casebank.format.catalog import Catalog

CATALOG_CACHE = "catalog.json"
NAMES_CACHE = "names.json"
# A served working-tree case's loaded data: SERVED_CACHE.format(file name), one file per case.
SERVED_CACHE = "served-{}.json"
# What decides the data a file loads as: the loader and the modules it reads with.
_LOADER_MODULES = ("loader.py", "strictjson.py", "text.py", "document.py")


def loaded_key(raw: bytes) -> str:
    """The SHA-256 of ``raw``, of the loader's code and of the PyYAML and Python it runs on:
    what a file loaded as stays what it loads as while this key holds. Computed without
    importing the loader or PyYAML (whose import is a fifth of a warm `results`): PyYAML by
    its ``__init__.py``, which holds its version."""
    import hashlib
    import sys
    from importlib.util import find_spec

    digest = hashlib.sha256(raw)
    _add_code(digest, _LOADER_MODULES)
    spec = find_spec("yaml")
    yaml_init = spec.origin if spec is not None else None
    digest.update(b"\0" + (Path(yaml_init).read_bytes() if yaml_init else b"no PyYAML"))
    digest.update(f"\0{sys.version}".encode())
    return digest.hexdigest()


def _with_code(key: str, modules: tuple[str, ...]) -> str:
    """``key`` and the code of ``modules`` (under casebank/format/), hashed together: the key
    of what that code builds from what ``key`` names."""
    import hashlib

    digest = hashlib.sha256(key.encode())
    _add_code(digest, modules)
    return digest.hexdigest()


def _add_code(digest: Any, modules: tuple[str, ...]) -> None:
    folder = Path(__file__).resolve().parent.parent / "format"
    for name in modules:
        digest.update(b"\0" + (folder / name).read_bytes())


# What decides a catalog built from its file's loaded data, and its name index: their code.
_CATALOG_MODULES = ("catalog.py",)
_NAMES_MODULES = ("names.py", "catalog.py")


@dataclass(frozen=True)
class RememberedCatalog:
    """The catalog, remembered in the cache folder (``catalog.stored_catalog``) under the
    SHA-256 of its bytes, of the loader's code and of the code that builds it: the catalog is
    most of the start-up of a one-case command (about 0.3 s to load and build, 0.02–0.03 s
    to read back). Whatever loads the catalog remembers it (validation too, so the first
    `results` after `validate` reads it back). A missing, stale, unreadable or malformed
    memory is loading the catalog afresh."""

    root: Path

    def catalog(self, raw: bytes) -> Catalog | None:
        """The catalog in ``raw``: read back from the memory, else loaded and remembered; None
        where it does not load (validation reports why)."""
        from casebank.format.catalog import build_catalog, restored_catalog

        loaded = loaded_key(raw)
        key = _with_code(loaded, _CATALOG_MODULES)
        stored = _recall(self._path, key)
        try:
            if stored is not None:
                return self._with_names(restored_catalog(stored), loaded)
        except (KeyError, TypeError, ValueError, AttributeError):
            pass  # a memory that is not a stored catalog: load the catalog afresh
        from casebank.format.loader import load_document

        document = load_document(CATALOG_FILE, raw).document
        if document is None:
            return None
        catalog = build_catalog(document.data)
        self._store(key, catalog)
        return self._with_names(catalog, loaded)

    def remember(self, raw: bytes, catalog: Catalog) -> None:
        """Remember ``catalog``, built from ``raw`` (by a caller that has built it already)."""
        self._store(_with_code(loaded_key(raw), _CATALOG_MODULES), catalog)

    def _store(self, key: str, catalog: Catalog) -> None:
        from casebank.format.catalog import stored_catalog

        _remember(self._path, key, stored_catalog(catalog))

    @property
    def _path(self) -> Path:
        return self.root / CACHE_DIR / CATALOG_CACHE

    def _with_names(self, catalog: Catalog, loaded: str) -> Catalog:
        catalog.name_memory = RememberedNames(self.root, loaded)
        return catalog


@dataclass(frozen=True)
class RememberedNames:
    """A catalog's name index (``names.NameIndex``), remembered in the cache folder under the
    catalog's key and the code that builds the index. Building it keys every spelling of the
    catalog, about 0.15 s here: most of a `results` that orders a test by a loose name ("x-ray
    of chest"). ``names.index_of`` recalls it before building, and remembers what it builds. A
    missing, stale or malformed memory is building the index afresh."""

    root: Path
    catalog_key: str  # the loaded_key of the catalog's bytes

    def recall(self) -> Any:
        from casebank.format.names import NameIndex

        data = _recall(self._path, _with_code(self.catalog_key, _NAMES_MODULES))
        try:
            return NameIndex.restored(data) if data is not None else None
        except ValueError:
            return None  # not an index: build it afresh

    def remember(self, index: Any) -> None:
        _remember(self._path, _with_code(self.catalog_key, _NAMES_MODULES), index.stored())

    @property
    def _path(self) -> Path:
        return self.root / CACHE_DIR / NAMES_CACHE


@dataclass(frozen=True)
class RememberedCase:
    """A working-tree case's loaded data, remembered as the catalog is, for `results` and
    `view`: a harness asks one case for its results again and again, and a remembered case is
    read back as JSON without importing the loader or PyYAML. ``file`` is its name under
    ``cases/`` (an id checked by ``require_case_id`` and a suffix: a safe file name)."""

    root: Path
    file: str

    def data(self, raw: bytes) -> Any:
        """What ``raw`` loads as: read back, else loaded (raising the loader's error where it
        does not load) and remembered."""
        key = loaded_key(raw)
        path = self.root / CACHE_DIR / SERVED_CACHE.format(self.file)
        data = _recall(path, key)
        if data is None:
            from casebank.format.layout import CASES_DIR
            from casebank.format.loader import load_data

            data = load_data(f"{CASES_DIR}/{self.file}", raw)
            _remember(path, key, data)
        return data


def _recall(path: Path, key: str) -> dict[str, Any] | None:
    """The data remembered at ``path`` under ``key``; None where it is missing, stale,
    unreadable or not a mapping."""
    import json

    try:
        stored = json.loads(path.read_text(encoding="utf-8"))
    except (OSError, ValueError):
        return None
    if not isinstance(stored, dict) or stored.get("key") != key:
        return None
    data = stored.get("data")
    return data if isinstance(data, dict) else None


CASES_CACHE = "release-cases.txt"


@dataclass(frozen=True)
class RememberedCases:
    """Released cases' and catalogs' canonical JSON by blob id, in the cache folder under the
    loader's code (``release.released.CaseMemory``): what lets a second score, judge-items or
    harness run of a release parse nothing. The release reader trusts nothing it reads here:
    it uses a text only when its SHA-256 is what the manifest records (a case's content hash,
    the catalog's ``catalog.sha256``), and parses the blob otherwise. One line for the key,
    then one ``BLOB TEXT`` line a case or catalog (canonical JSON holds no newline: read and
    hashed as bytes, never decoded twice). A missing, stale or unreadable file is an empty
    memory."""

    root: Path

    def read(self) -> dict[str, bytes]:
        try:
            raw = (self.root / CACHE_DIR / CASES_CACHE).read_bytes()
        except OSError:
            return {}
        start = raw.find(b"\n") + 1
        if not start or raw[: start - 1] != loaded_key(b"").encode():
            return {}
        # Each text sliced out once, with no list of lines beside it (at 10,000 full-size
        # cases the file is 170 MB).
        texts: dict[str, bytes] = {}
        while start < len(raw):
            end = raw.find(b"\n", start)
            end = len(raw) if end < 0 else end
            space = raw.find(b" ", start, end)
            if space >= 0 and space + 1 < end:
                texts[raw[start:space].decode("latin-1")] = raw[space + 1 : end]
            start = end + 1
        return texts

    def write(self, texts: dict[str, bytes]) -> None:
        content = bytearray(loaded_key(b"").encode() + b"\n")
        for blob, text in texts.items():  # one growing buffer, not a list of lines and a join
            content += blob.encode()
            content += b" "
            content += text
            content += b"\n"
        _remember_bytes(self.root / CACHE_DIR / CASES_CACHE, content)


def _remember(path: Path, key: str, data: dict[str, Any]) -> None:
    import json

    try:
        text = json.dumps({"key": key, "data": data}, ensure_ascii=False, separators=(",", ":"))
        content = text.encode("utf-8")
    except (TypeError, ValueError):  # not the loader's JSON data: nothing to remember
        return
    _remember_bytes(path, content)


def _remember_bytes(path: Path, content: bytes | bytearray) -> None:
    """Write ``path`` in the cache folder (made, with its .gitignore, where it is missing);
    a cache that cannot be written is no failure."""
    from casebank.errors import WriteError
    from casebank.workspace import write_atomically

    folder = path.parent
    try:
        folder.mkdir(exist_ok=True)
        ignore = folder / ".gitignore"
        if not ignore.exists():  # as the validation cache does: never committed
            write_atomically(ignore, b"# Written by casebank: the cache is never committed.\n*\n")
        write_atomically(path, content)
    except (OSError, WriteError):
        pass  # a read-only checkout still serves; it just does not remember
