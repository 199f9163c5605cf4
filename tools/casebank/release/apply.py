"""Apply a planned release: the only code that writes a release, all or nothing.

Write ``releases/X.Y.Z.json`` and the changelog, commit, tag and optionally push; on any
failure, or an interrupt, put the repository back as it was.
"""

from __future__ import annotations

from dataclasses import dataclass, field
from pathlib import Path

from casebank.errors import CasebankError
from casebank.format.canonical import sha256_hex
from casebank.release import git
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


def apply_release(root: Path, prepared: Prepared, *, remote: str | None = None) -> str:
    """Write, commit, tag (and push to ``remote``); return the release commit.

    All or nothing: on any failure, or an interrupt, the tag is deleted, HEAD and the index are
    moved back and the written files are restored, then the error is raised again.
    """
    release = prepared.release
    undo = _Undo(root, prepared.head)
    try:
        undo.write(release.path, release.content)
        undo.write(CHANGELOG_FILE, prepared.changelog.encode("utf-8"))
        git.stage(root, [release.path, CHANGELOG_FILE])
        git.commit(root, commit_message(release))
        commit = git.resolve_commit(root, "HEAD")
        if commit is None or git.resolve_commit(root, f"{commit}^1") != prepared.head:
            raise CasebankError(
                "the release commit is not a child of the source commit",
                "a commit hook moved HEAD; release again without it",
            )
        git.create_tag(root, release.tag, tag_message(release), commit)
        undo.tag = release.tag
        if remote is not None:
            refs = [
                f"{commit}:refs/heads/{prepared.branch}",
                f"refs/tags/{release.tag}:refs/tags/{release.tag}",
            ]
            git.push(root, remote, refs)
        return commit
    except BaseException:
        undo.rollback()
        raise


@dataclass
class _Undo:
    """Everything apply_release changed, and how to change it back."""

    root: Path
    head: str
    tag: str | None = None
    files: dict[str, bytes | None] = field(default_factory=dict)  # path -> bytes before
    folders: list[Path] = field(default_factory=list)

    def write(self, relative: str, content: bytes) -> None:
        target = self.root / relative
        if not target.parent.exists():
            target.parent.mkdir(parents=True)
            self.folders.append(target.parent)
        self.files[relative] = target.read_bytes() if target.is_file() else None
        write_atomically(target, content)

    def rollback(self) -> None:
        failures = []
        for step in (self._tag, self._head, self._index, self._files):
            try:
                step()
            except Exception as exc:  # keep undoing the rest, then say what was left
                failures.append(str(exc))
        if failures:
            raise CasebankError(
                "the release failed and could not be fully undone: " + "; ".join(failures),
                "check `git status`, `git log -1` and `git tag` by hand",
            )

    def _tag(self) -> None:
        if self.tag is not None:
            git.delete_tag(self.root, self.tag)

    def _head(self) -> None:
        if git.resolve_commit(self.root, "HEAD") != self.head:
            git.move_head(self.root, self.head)

    def _index(self) -> None:
        if self.files:
            git.reset_index(self.root, self.head, list(self.files))

    def _files(self) -> None:
        for relative, before in self.files.items():
            target = self.root / relative
            if before is None:
                target.unlink(missing_ok=True)
            else:
                write_atomically(target, before)
        for folder in reversed(self.folders):
            if folder.is_dir() and not any(folder.iterdir()):
                folder.rmdir()
