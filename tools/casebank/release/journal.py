"""What makes a release safe against a second release, a signal, a kill or a power cut.

- **The lock** (``.git/casebank-release.lock``): one release at a time per repository. It holds
  the owner's process id, host and start time; a second release refuses at once and says who
  holds it. A lock whose process is gone (killed) is stale and is taken over.
- **The journal** (``.git/casebank-release.journal``): before its first write, a release records
  what it is about to do (the version, the source commit, the files it writes and whether they
  existed); after committing and after tagging it records that too. Each write is atomic and
  flushed to disk. A release that finishes or undoes itself removes its journal.
- **Recovery**: the next ``casebank release`` or ``casebank verify`` that finds a journal (and
  no live owner) finishes the release when its commit was made (by creating the missing tag),
  or undoes it when it was not (restoring the files and the index), and says which.

Both files live in git's own folder, so neither shows in ``git status`` nor can be committed.
"""

from __future__ import annotations

import json
import os
import socket
import time
from collections.abc import Iterator
from contextlib import contextmanager
from dataclasses import asdict, dataclass, field
from pathlib import Path

from casebank.errors import CasebankError
from casebank.format import strictjson
from casebank.release import git
from casebank.workspace import write_atomically

LOCK_FILE = "casebank-release.lock"
JOURNAL_FILE = "casebank-release.journal"


@dataclass
class Journal:
    version: str
    tag: str
    source: str  # the commit the release is cut from
    branch: str | None
    message: str  # the release commit's message
    tag_message: str
    files: dict[str, bool] = field(default_factory=dict)  # path -> existed before
    folders: list[str] = field(default_factory=list)  # folders the release created
    commit: str | None = None  # the release commit, once made
    tagged: bool = False

    def save(self, root: Path) -> None:
        text = json.dumps(asdict(self), indent=2, sort_keys=True)
        write_atomically(journal_path(root), text.encode("utf-8"))

    @classmethod
    def load(cls, root: Path) -> Journal | None:
        path = journal_path(root)
        try:
            data = strictjson.load_bytes(path.read_bytes())
            return cls(**data)
        except FileNotFoundError:
            return None
        except (ValueError, TypeError) as exc:
            raise CasebankError(
                f"the release journal {path} cannot be read ({exc})",
                "inspect `git status`, `git log -1` and `git tag`, then delete the journal",
            ) from None

    @staticmethod
    def remove(root: Path) -> None:
        journal_path(root).unlink(missing_ok=True)


def journal_path(root: Path) -> Path:
    return git.git_dir(root) / JOURNAL_FILE


def lock_path(root: Path) -> Path:
    return git.git_dir(root) / LOCK_FILE


def checkpoint(root: Path, step: str) -> None:
    """A seam: the release calls it at each step (journal, manifest, changelog, stage, commit,
    tag, push) and it does nothing. The release-safety tests replace it (tests/faults.py) to
    kill or pause a release exactly there."""


def _alive(pid: int) -> bool:
    try:
        os.kill(pid, 0)
    except ProcessLookupError:
        return False
    except PermissionError:
        return True
    return True


@contextmanager
def release_lock(root: Path, what: str) -> Iterator[None]:
    """Hold the repository's release lock while the body runs (refuse if another holds it)."""
    path = lock_path(root)
    owner = {
        "pid": os.getpid(),
        "host": socket.gethostname(),
        "since": int(time.time()),
        "what": what,
    }
    for _ in range(2):
        try:
            fd = os.open(path, os.O_WRONLY | os.O_CREAT | os.O_EXCL, 0o644)
        except FileExistsError:
            holder = _holder(path)
            if holder is not None and _held(holder):
                started = holder.get("since", 0)
                since = time.strftime(
                    "%Y-%m-%d %H:%M:%S",
                    time.localtime(started if isinstance(started, (int, float)) else 0),
                )
                raise CasebankError(
                    f"another release is running in this repository: {holder.get('what', '?')} "
                    f"(process {holder.get('pid')} on {holder.get('host')}, since {since})",
                    f"wait for it to finish; if that process is gone, delete {path}",
                ) from None
            path.unlink(missing_ok=True)  # stale: its process is gone
            continue
        with os.fdopen(fd, "w", encoding="utf-8") as out:
            json.dump(owner, out)
        break
    else:  # pragma: no cover - two stale takeovers raced
        raise CasebankError(f"cannot take the release lock {path}", "try again")
    try:
        yield
    finally:
        path.unlink(missing_ok=True)


def _holder(path: Path) -> dict[str, object] | None:
    try:
        data = strictjson.load_bytes(path.read_bytes())
    except (OSError, ValueError):
        return None
    return data if isinstance(data, dict) else None


def _held(holder: dict[str, object]) -> bool:
    pid = holder.get("pid")
    if not isinstance(pid, int):
        return False
    if holder.get("host") != socket.gethostname():
        return True  # another machine's process: we cannot tell, so we do not take it
    return _alive(pid)


def recover(root: Path) -> str | None:
    """Finish or undo an interrupted release; say which (None: there was none)."""
    journal = Journal.load(root)
    if journal is None:
        return None
    head = git.resolve_commit(root, "HEAD")
    tagged = git.resolve_commit(root, f"refs/tags/{journal.tag}")
    made = journal.commit or _release_commit(root, head, journal)
    if tagged is not None and made is not None and tagged == made:
        Journal.remove(root)
        return f"the interrupted release {journal.version} had finished (tag {journal.tag})"
    if made is not None and tagged is None:
        git.create_tag(root, journal.tag, journal.tag_message, made)
        Journal.remove(root)
        return (
            f"finished the interrupted release {journal.version}: its commit {made[:12]} was "
            f"made, so the missing tag {journal.tag} was created"
            + ("" if journal.branch is None else "; push both when ready")
        )
    if head == journal.source:
        undone = _undo_files(root, journal)
        Journal.remove(root)
        return f"undid the interrupted release {journal.version}: nothing had been committed; " + (
            ", ".join(undone) if undone else "no file had been written"
        )
    raise CasebankError(
        f"an interrupted release {journal.version} left a journal, but HEAD has moved since "
        f"(now {str(head)[:12]}, the release began on {journal.source[:12]})",
        f"put the branch back on {journal.source[:12]} (or finish by hand), then delete "
        f"{journal_path(root)}",
    )


def _release_commit(root: Path, head: str | None, journal: Journal) -> str | None:
    """HEAD, if it is the release commit: a child of the source with the release's message."""
    if head is None or head == journal.source:
        return None
    if git.resolve_commit(root, f"{head}^1") != journal.source:
        return None
    return head if git.commit_message(root, head) == journal.message else None


def _undo_files(root: Path, journal: Journal) -> list[str]:
    undone: list[str] = []
    existed = [p for p, before in journal.files.items() if before]
    blobs = git.resolve_objects(root, [f"{journal.source}:{p}" for p in existed])
    contents = dict(git.read_blobs(root, [o[0] for o in blobs.values() if o is not None]))
    for relative, before in journal.files.items():
        target = root / relative
        if before:
            found = blobs.get(f"{journal.source}:{relative}")
            if found is not None:
                write_atomically(target, contents[found[0]])
                undone.append(f"{relative} restored")
        elif target.exists():
            target.unlink()
            undone.append(f"{relative} removed")
    if journal.files:
        git.reset_index(root, journal.source, list(journal.files))
    for folder in reversed(journal.folders):
        path = root / folder
        if path.is_dir() and not any(path.iterdir()):
            path.rmdir()
            undone.append(f"{folder}/ removed")
    return undone
