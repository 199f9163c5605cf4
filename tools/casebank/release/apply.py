"""Apply a planned release: the only code that writes a release, all or nothing.

Write ``releases/X.Y.Z.json`` and the changelog, commit, tag and optionally push. Before the
first write the release is journalled (``casebank.release.journal``), so that whatever stops
it (an error, SIGTERM, SIGHUP, Ctrl-C, SIGKILL, a power cut) it is either undone at once, or
finished or undone by the next ``casebank release`` or ``casebank verify``. A failure says its
cause first, then what was undone.
"""

from __future__ import annotations

import signal
from collections.abc import Iterator
from contextlib import contextmanager
from dataclasses import dataclass, field
from pathlib import Path
from types import FrameType

from casebank.errors import CasebankError
from casebank.format.canonical import sha256_hex
from casebank.release import git
from casebank.release.journal import Journal, checkpoint
from casebank.release.manifest import CHANGELOG_FILE
from casebank.release.plan import Release
from casebank.release.prepare import Prepared
from casebank.workspace import write_atomically


def commit_message(release: Release) -> str:
    counts = release.manifest.counts
    return (
        f"Release dataset {release.version}\n\n"
        f"{counts['cases']} cases: {counts['added']} added, {counts['changed']} changed, "
        f"{counts['removed']} removed, {counts['unchanged']} unchanged.\n"
        f"Manifest: {release.path}\n"
    )


def tag_message(release: Release) -> str:
    return (
        f"casebank dataset {release.version}\n\n"
        f"Manifest: {release.path} (sha256 {sha256_hex(release.content)})\n"
    )


class Interrupted(BaseException):
    """A signal (SIGINT, SIGTERM, SIGHUP) asked the release to stop."""

    def __init__(self, signum: int) -> None:
        super().__init__(signal.Signals(signum).name)
        self.signum = signum


# SIGINT too, explicitly: a process started with SIGINT ignored (a background job, some CI
# runners) never gets Python's KeyboardInterrupt, and Ctrl-C would then be lost, not undone.
_SIGNALS = (signal.SIGINT, signal.SIGTERM, signal.SIGHUP)


@contextmanager
def _stopped_by_signals() -> Iterator[None]:
    """While applying, SIGINT, SIGTERM and SIGHUP stop the release by raising Interrupted,
    whatever handler (or SIG_IGN) the process started with."""

    def stop(signum: int, _frame: FrameType | None) -> None:
        raise Interrupted(signum)

    previous = {s: signal.signal(s, stop) for s in _SIGNALS}
    try:
        yield
    finally:
        for s, handler in previous.items():
            signal.signal(s, handler)


@contextmanager
def _deaf() -> Iterator[None]:
    """While undoing, signals wait: an undo cut short is worse than a slightly late stop."""
    previous = {s: signal.signal(s, signal.SIG_IGN) for s in _SIGNALS}
    try:
        yield
    finally:
        for s, handler in previous.items():
            signal.signal(s, handler)


def apply_release(root: Path, prepared: Prepared, *, remote: str | None = None) -> str:
    """Write, commit, tag (and push to ``remote``); return the release commit."""
    release = prepared.release
    if git.resolve_commit(root, "HEAD") != prepared.head:
        raise CasebankError(
            "HEAD moved while the release was being prepared",
            "release again: the plan is made from the commit HEAD is on",
        )
    journal = Journal(
        release.version,
        release.tag,
        prepared.head,
        prepared.branch,
        commit_message(release),
        tag_message(release),
    )
    undo = _Undo(root, journal)
    try:
        with _stopped_by_signals():
            return _apply(root, prepared, undo, remote)
    except BaseException as exc:
        with _deaf():
            done = undo.rollback()
        if isinstance(exc, (KeyboardInterrupt, Interrupted)):
            raise KeyboardInterrupt(f"the release {release.version} stopped; {done}") from exc
        raise CasebankError(f"the release {release.version} failed: {_cause(exc)}", done) from exc


def _apply(root: Path, prepared: Prepared, undo: _Undo, remote: str | None) -> str:
    release, journal = prepared.release, undo.journal
    journal.files = {path: (root / path).is_file() for path in (release.path, CHANGELOG_FILE)}
    folder = release.path.rsplit("/", 1)[0]
    journal.folders = [] if (root / folder).exists() else [folder]
    journal.save(root)
    checkpoint(root, "journal")
    undo.write(release.path, release.content)
    checkpoint(root, "manifest")
    undo.write(CHANGELOG_FILE, prepared.changelog.encode("utf-8"))
    checkpoint(root, "changelog")
    git.stage(root, [release.path, CHANGELOG_FILE])
    undo.staged = True
    checkpoint(root, "stage")
    git.commit(root, journal.message)
    commit = git.resolve_commit(root, "HEAD")
    if commit is None or git.resolve_commit(root, f"{commit}^1") != prepared.head:
        raise CasebankError(
            "the release commit is not a child of the source commit",
            "a commit hook moved HEAD; release again without it",
        )
    journal.commit = commit
    journal.save(root)
    checkpoint(root, "commit")
    git.create_tag(root, release.tag, journal.tag_message, commit)
    undo.tag = release.tag
    journal.tagged = True
    journal.save(root)
    checkpoint(root, "tag")
    if remote is not None:
        refs = [
            f"{commit}:refs/heads/{prepared.branch}",
            f"refs/tags/{release.tag}:refs/tags/{release.tag}",
        ]
        git.push(root, remote, refs)
        checkpoint(root, "push")
    Journal.remove(root)
    return commit


def _cause(exc: BaseException) -> str:
    if isinstance(exc, Interrupted):
        return f"interrupted by {exc}"
    if isinstance(exc, KeyboardInterrupt):
        return "interrupted (Ctrl-C)"
    if isinstance(exc, OSError):
        where = f"{Path(exc.filename).name}: " if exc.filename else ""
        return f"cannot write {where}{exc.strerror or exc}".rstrip(": ")
    return str(exc) or type(exc).__name__


@dataclass
class _Undo:
    """Everything the release changed so far, and how to change it back."""

    root: Path
    journal: Journal
    tag: str | None = None
    staged: bool = False
    written: dict[str, bytes | None] = field(default_factory=dict)  # path -> bytes before
    folders: list[Path] = field(default_factory=list)

    def write(self, relative: str, content: bytes) -> None:
        target = self.root / relative
        if not target.parent.exists():
            target.parent.mkdir(parents=True)
            self.folders.append(target.parent)
        before = target.read_bytes() if target.is_file() else None
        write_atomically(target, content)
        self.written[relative] = before  # only once it is really written

    def rollback(self) -> str:
        """Undo what was done; say what was undone (and what could not be, if anything)."""
        undone: list[str] = []
        failed: list[str] = []
        for step in (self._tag, self._head, self._index, self._files):
            try:
                undone.extend(step())
            except Exception as exc:  # keep undoing the rest, then say what was left
                failed.append(f"{step.__name__.strip('_')}: {exc}")
        if not failed:
            Journal.remove(self.root)
        summary = "undone: " + ("; ".join(undone) if undone else "nothing had been written")
        if failed:
            return (
                f"{summary}. NOT undone ({'; '.join(failed)}): the journal in .git records the "
                "release, and the next `casebank release` finishes or undoes it"
            )
        return summary + "; the repository is as it was"

    def _tag(self) -> list[str]:
        if self.tag is None:
            return []
        git.delete_tag(self.root, self.tag)
        return [f"tag {self.tag} deleted"]

    def _head(self) -> list[str]:
        if git.resolve_commit(self.root, "HEAD") == self.journal.source:
            return []
        git.move_head(self.root, self.journal.source)
        return [f"branch moved back to {self.journal.source[:12]}"]

    def _index(self) -> list[str]:
        if not self.staged:
            return []
        git.reset_index(self.root, self.journal.source, list(self.journal.files))
        return ["index restored"]

    def _files(self) -> list[str]:
        done = []
        for relative, before in self.written.items():
            target = self.root / relative
            if before is None:
                target.unlink(missing_ok=True)
                done.append(f"{relative} removed")
            else:
                write_atomically(target, before)
                done.append(f"{relative} restored")
        for folder in reversed(self.folders):
            if folder.is_dir() and not any(folder.iterdir()):
                folder.rmdir()
                done.append(f"{folder.name}/ removed")
        return done
