"""The repository on disk: where its root is, which files it holds, and how files are written.

Every write casebank makes goes through :func:`write_atomically`, so a reader sees the old file
or the new one, never half of one, and a failure leaves no stray file.
"""

from __future__ import annotations

import contextlib
import os
from collections.abc import Callable, Iterable, Iterator
from dataclasses import dataclass, field
from pathlib import Path, PurePosixPath

from casebank.errors import CasebankError, UsageError, WriteError
from casebank.format.layout import (
    CASE_SUFFIXES,
    CASES_DIR,
    CATALOG_FILE,
    case_id_from_path,
    case_part,
    is_ignored,
)


def find_root(explicit: Path | None = None, start: Path | None = None) -> Path:
    """The repository root: ``explicit`` if given, else the nearest folder holding catalog.yaml."""
    if explicit is not None:
        root = explicit.resolve()
        if not (root / CATALOG_FILE).is_file():
            raise UsageError(f"--root {explicit}: no {CATALOG_FILE} there")
        return root
    here = (start or Path.cwd()).resolve()
    for folder in (here, *here.parents):
        if (folder / CATALOG_FILE).is_file():
            return folder
    raise CasebankError(
        f"no casebank repository here: no {CATALOG_FILE} in {here} or any folder above it",
        "run casebank inside the repository, or pass --root DIR",
    )


@dataclass(frozen=True)
class Listing:
    """Everything under cases/, sorted into what it is (repository-relative POSIX paths)."""

    case_files: list[str] = field(default_factory=list)
    attachments: dict[str, list[str]] = field(default_factory=dict)  # case id -> paths below
    misplaced: list[str] = field(default_factory=list)  # neither a case nor an attachment
    symlinks: list[str] = field(default_factory=list)  # never followed, always refused

    def attachments_of(self, case_file: str) -> frozenset[str]:
        return frozenset(self.attachments.get(case_id_from_path(case_file), ()))


def scan_cases(root: Path) -> Listing:
    """Walk cases/ once, without following links. A case file sits directly in cases/; its
    attachments under cases/<case_id>/attachments/; anything else is misplaced."""
    listing = Listing()
    top = root / CASES_DIR
    if not top.is_dir() or top.is_symlink():
        if top.is_symlink():
            listing.symlinks.append(CASES_DIR)
        return listing
    for folder, dirs, files in os.walk(top, followlinks=False):
        here = Path(folder).relative_to(root).as_posix()
        for name in sorted(dirs):
            if (Path(folder) / name).is_symlink():
                listing.symlinks.append(f"{here}/{name}")
        dirs[:] = sorted(d for d in dirs if not (Path(folder) / d).is_symlink())
        for name in sorted(files):
            _classify(listing, Path(folder) / name, f"{here}/{name}")
    listing.case_files.sort()
    return listing


def _classify(listing: Listing, path: Path, relative: str) -> None:
    part = case_part(relative)
    if path.is_symlink():
        listing.symlinks.append(relative)
    elif not path.is_file() or is_ignored(relative):
        return
    elif part is not None and not part[1]:
        listing.case_files.append(relative)
    elif part is not None:
        listing.attachments.setdefault(part[0], []).append(part[1])
    elif path.name.startswith(".") and not path.name.lower().endswith(CASE_SUFFIXES):
        return  # a hidden editor or tool file (.swp, .orig)
    else:
        listing.misplaced.append(relative)


def case_files(root: Path) -> list[str]:
    """Repository-relative POSIX paths of every case file, sorted."""
    return scan_cases(root).case_files


def _umask() -> int:
    mask = os.umask(0)
    os.umask(mask)
    return mask


def _write_synced(fd: int, content: bytes | bytearray, mode: int) -> None:
    """Write to the open file ``fd``, set its mode, flush it to the disk and close it."""
    with os.fdopen(fd, "wb") as sink:
        sink.write(content)
        sink.flush()
        os.fchmod(sink.fileno(), mode)
        os.fsync(sink.fileno())


def write_atomically(target: Path, content: bytes | bytearray, *, exclusive: bool = False) -> None:
    """Write through a unique temporary file in the same folder, then rename it into place
    (``exclusive``: link it there, which fails if the file exists, so nothing that appeared
    meanwhile is ever overwritten).

    The new file gets the mode of the file it replaces, or, for a new file, 0666 less the
    umask, as any program's new file would (a temporary file alone would be 0600). A failure
    (a full disk, a read-only folder) leaves the old file as it was and no temporary file, and
    is a WriteError naming ``target``.
    """
    try:
        try:
            mode = target.stat().st_mode & 0o7777
        except FileNotFoundError:
            mode = 0o666 & ~_umask()
        import tempfile  # here: it imports shutil and random, which a reading command never needs

        fd, temporary = tempfile.mkstemp(
            dir=target.parent, prefix=f".{target.name}.", suffix=".tmp"
        )
        try:
            _write_synced(fd, content, mode)
            if exclusive:
                os.link(temporary, target)
            else:
                os.replace(temporary, target)
        finally:
            Path(temporary).unlink(missing_ok=True)
    except FileExistsError:
        raise CasebankError(f"{target} exists already", "choose another name") from None
    except OSError as exc:
        raise WriteError(target, exc) from None


# --- folders a command writes: one policy for export, site and import -------------------------

# The file that marks a folder as written by a casebank command (``.casebank-export``,
# ``.casebank-site``): only a folder holding the command's marker is ever replaced.
_MARKER_TEXT = "Written by `casebank {command}`; the next `casebank {command}` replaces it whole.\n"


def output_marker(command: str) -> str:
    """The name of the file that marks a folder ``casebank <command>`` wrote."""
    return f".casebank-{command}"


def check_output_folder(
    out: Path, command: str, *, root: Path, replace: bool = False, whole: bool = True
) -> Path:
    """Refuse an ``--out`` that is not this command's to write, before anything is built;
    return it as an absolute path.

    Never the repository, a folder holding it, the home folder or a folder holding that; never
    a symbolic link (which would make "this folder" mean two places) or a file. A command that
    writes its folder ``whole`` (export, site) replaces a folder that is not empty only if the
    folder holds the command's marker, and only with ``replace``, so a mistyped ``--out``
    cannot delete anyone's files; one that adds files to it (import) needs no marker.
    """
    out = out.absolute()
    given = f"--out {out}"
    if out.is_symlink():
        raise CasebankError(
            f"{given} is a symbolic link (to {os.readlink(out)})",
            f"give the folder it points to ({out.resolve()}) itself, or a new folder",
        )
    _refuse_protected(out.resolve(), given, root)
    if out.exists() and not out.is_dir():
        raise CasebankError(f"{given} is a file, not a folder", "give a new or empty folder")
    if not whole or not out.is_dir() or not any(out.iterdir()):
        return out
    marker = output_marker(command)
    if not (out / marker).is_file():
        raise CasebankError(
            f"{given} is a folder with files that `casebank {command}` did not write",
            f"give a new or empty folder; casebank replaces only a folder holding {marker}, "
            "which it writes in every folder it creates",
        )
    if not replace:
        raise CasebankError(
            f"{given} holds an earlier `casebank {command}`",
            "pass --force to replace it, or give a new folder",
        )
    return out


def _refuse_protected(resolved: Path, given: str, root: Path) -> None:
    protected = {"the repository": root.resolve(), "your home folder": Path.home().resolve()}
    for what, folder in protected.items():
        if folder == resolved or resolved in folder.parents:
            which = what if folder == resolved else f"a folder holding {what}"
            raise CasebankError(
                f"{given} is {which} ({folder})",
                "give a new folder of its own, e.g. a subfolder such as dist/",
            )


def write_folder_atomically(
    target: Path,
    files: Iterable[tuple[str, bytes]],
    *,
    command: str,
    root: Path,
    replace: bool,
) -> int:
    """Create the folder ``target`` holding ``files`` (relative POSIX path, bytes), each
    written as it comes, and the command's marker, all or nothing (see
    :func:`build_folder_atomically`); return how many files were written, the marker left
    out."""
    written = 0

    def write_all(folder: FolderWriter) -> None:
        nonlocal written
        made = iter(files)
        try:
            for relative, content in made:
                folder.write(relative, content)
                written += 1
        finally:  # a maker that stops early (a failed write) stops its workers now
            close = getattr(made, "close", None)
            if close is not None:
                close()

    build_folder_atomically(target, write_all, command=command, root=root, replace=replace)
    return written


class FolderWriter:
    """The temporary folder a builder writes into: whole files (``write``), or a file written
    in pieces as they are made (``stream``), each file new, flushed to the disk and closed.
    A failure to write is a WriteError naming the file; what the builder itself raises (an
    OSError in reading what it writes, say) is left as it is."""

    def __init__(self, building: Path, target: Path) -> None:
        self._building = building
        self._target = target
        self._mode = 0o666 & ~_umask()
        self.where = target  # the file being written, for the error that names it

    def _open(self, relative: str) -> int:
        safe = _inside(relative)
        path = self._building / safe
        self.where = self._target / safe
        path.parent.mkdir(parents=True, exist_ok=True)
        return os.open(path, os.O_WRONLY | os.O_CREAT | os.O_EXCL, self._mode)

    def write(self, relative: str, content: bytes) -> None:
        try:
            _write_synced(self._open(relative), content, self._mode)
        except OSError as exc:
            raise WriteError(self.where, exc) from None
        self.where = self._target

    @contextlib.contextmanager
    def stream(self, relative: str) -> Iterator[StreamedFile]:
        """A file to write in pieces; its SHA-256 and size are kept as it is written."""
        try:
            fd = self._open(relative)
        except OSError as exc:
            raise WriteError(self.where, exc) from None
        sink = StreamedFile(fd, self.where)
        try:
            yield sink
            sink.flush()
        except BaseException:
            os.close(fd)
            raise
        try:
            _write_synced(fd, b"", self._mode)  # the mode, the sync and the close of every file
        except OSError as exc:
            raise WriteError(self.where, exc) from None
        self.where = self._target


class StreamedFile:
    """A binary file written through a buffer, hashed as it goes (``sha256``, ``size``)."""

    _BUFFER = 1 << 20

    def __init__(self, fd: int, where: Path) -> None:
        import hashlib

        self._fd = fd
        self._where = where  # the file, for the error that names it
        self._pending: list[bytes] = []
        self._buffered = 0
        self._hash = hashlib.sha256()
        self.size = 0

    def write(self, data: bytes) -> int:
        self._hash.update(data)
        self.size += len(data)
        self._pending.append(data)
        self._buffered += len(data)
        if self._buffered >= self._BUFFER:
            self.flush()
        return len(data)

    def flush(self) -> None:
        view = memoryview(b"".join(self._pending))
        self._pending, self._buffered = [], 0
        try:
            while view:
                view = view[os.write(self._fd, view) :]
        except OSError as exc:
            raise WriteError(self._where, exc) from None

    @property
    def sha256(self) -> str:
        return self._hash.hexdigest()


def build_folder_atomically(
    target: Path,
    build: Callable[[FolderWriter], None],
    *,
    command: str,
    root: Path,
    replace: bool,
) -> None:
    """Create the folder ``target`` with what ``build`` writes into it, and the command's
    marker, all or nothing: everything is written into a temporary folder beside it, then
    renamed into place. ``target`` must pass :func:`check_output_folder`; an empty folder is
    replaced, a non-empty one only with ``replace`` and the marker (it is moved aside, the new
    folder renamed in, then the old one deleted). A failure to write is a WriteError naming
    the file, and leaves ``target`` as it was and no temporary folder."""
    target = check_output_folder(target, command, root=root, replace=replace)
    occupied = target.is_dir() and any(target.iterdir())
    marker = output_marker(command)
    marker_text = _MARKER_TEXT.format(command=command).encode()

    def build_marked(folder: FolderWriter) -> None:
        build(folder)
        folder.write(marker, marker_text)

    created = _make_parents(target.parent)
    try:
        _replace_folder(target, build_marked, occupied)
    except BaseException:
        for folder in created:  # the parents this write made, now empty again
            with contextlib.suppress(OSError):
                folder.rmdir()
        raise


def _make_parents(folder: Path) -> list[Path]:
    """Create ``folder`` and its missing parents; return the ones created, deepest first."""
    missing = [p for p in (folder, *folder.parents) if not p.exists()]
    try:
        folder.mkdir(parents=True, exist_ok=True)
    except OSError as exc:
        raise WriteError(folder, exc) from None
    return missing


def _replace_folder(target: Path, build: Callable[[FolderWriter], None], occupied: bool) -> None:
    import shutil
    import tempfile

    try:
        building = Path(
            tempfile.mkdtemp(dir=target.parent, prefix=f".{target.name}.", suffix=".tmp")
        )
    except OSError as exc:
        raise WriteError(target.parent, exc) from None
    old: Path | None = None
    try:
        build(FolderWriter(building, target))  # its writes' failures name their file
        try:
            os.chmod(building, 0o777 & ~_umask())
            if occupied:
                old = Path(
                    tempfile.mkdtemp(dir=target.parent, prefix=f".{target.name}.", suffix=".old")
                )
                os.rmdir(old)
                os.rename(target, old)
            elif target.is_dir():
                os.rmdir(target)
            os.rename(building, target)
        except OSError as exc:
            raise WriteError(target, exc) from None
    except BaseException:
        if old is not None and not target.exists():
            os.rename(old, target)  # put the previous folder back
            old = None
        raise
    finally:
        shutil.rmtree(building, ignore_errors=True)
        if old is not None:
            shutil.rmtree(old, ignore_errors=True)


def _inside(relative: str) -> Path:
    """A relative POSIX path that stays inside the folder being written, as a Path."""
    parts = PurePosixPath(relative).parts
    if not parts or relative.startswith("/") or any(p in ("", ".", "..") for p in parts):
        raise CasebankError(f"refusing to write {relative!r}", "rename the file")
    return Path(*parts)


def relative_to_root(root: Path, path: Path) -> str:
    """A path as reports show it: relative to the root, with forward slashes."""
    resolved = path.resolve()
    try:
        return resolved.relative_to(root).as_posix()
    except ValueError:
        raise UsageError(f"{path} is outside the repository at {root}") from None


def write_generated(root: Path, files: dict[str, str]) -> None:
    """Write each generated file (repository-relative path -> content) atomically, and all of
    them or none: when one cannot be written, the ones already written get their old content
    back (or go, if they are new) before the error is raised."""
    written: list[tuple[Path, bytes | None]] = []
    try:
        for relative, content in files.items():
            target = root / relative
            old = target.read_bytes() if target.is_file() else None
            if old == content.encode("utf-8"):
                continue
            target.parent.mkdir(parents=True, exist_ok=True)
            write_atomically(target, content.encode("utf-8"))
            written.append((target, old))
            print(f"wrote {relative}")
    except BaseException:
        for target, old in reversed(written):
            if old is None:
                target.unlink(missing_ok=True)
            else:
                write_atomically(target, old)
        raise


def stale_generated(root: Path, files: dict[str, str]) -> list[str]:
    """The generated files whose committed copy is missing or differs from ``files``."""
    return [
        relative
        for relative, content in files.items()
        if not (root / relative).is_file()
        or (root / relative).read_text(encoding="utf-8") != content
    ]
