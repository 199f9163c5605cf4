"""Cut a dataset release: check, plan (pure), apply (the only writer, all or nothing).

``prepare_release`` reads everything a release depends on (the previous manifests on HEAD, the
tags, one history pass) and refuses early; ``plan_release`` turns that into a ``Release`` value
without touching anything; ``apply_release`` writes ``releases/X.Y.Z.json`` and the changelog,
commits, tags and optionally pushes, and on any failure puts the repository back as it was.
"""

from __future__ import annotations

from collections.abc import Mapping, Sequence
from dataclasses import dataclass, field
from functools import cached_property
from pathlib import Path
from typing import TYPE_CHECKING

from casebank import git
from casebank.canonical import changed_sections
from casebank.changelog import insert_section, render_section
from casebank.errors import CasebankError, UsageError
from casebank.history import Digests, Snapshot, scan_history, stored_manifests
from casebank.manifest import (
    CHANGELOG_FILE,
    Added,
    CaseEntry,
    Changed,
    Manifest,
    Removed,
    dumps,
    format_version,
    loads,
    manifest_path,
    parse_version,
    rfc3339,
    tag_name,
    version_key,
)
from casebank.repo import CATALOG_FILE, write_atomically

if TYPE_CHECKING:
    from casebank.validate import Validation

FIRST_VERSION = "1.0.0"


@dataclass(frozen=True)
class Release:
    """What a release will write: its manifest and its changelog section."""

    manifest: Manifest
    unchanged: tuple[str, ...]
    changelog_section: str

    @property
    def version(self) -> str:
        return self.manifest.version

    @property
    def path(self) -> str:
        return manifest_path(self.manifest.version)

    @property
    def tag(self) -> str:
        return tag_name(self.manifest.version)

    @cached_property
    def content(self) -> bytes:
        """The manifest's exact bytes."""
        return dumps(self.manifest)


@dataclass(frozen=True)
class Classification:
    added: list[str] = field(default_factory=list)
    changed: list[str] = field(default_factory=list)
    removed: list[str] = field(default_factory=list)
    unchanged: list[str] = field(default_factory=list)


def latest_entries(previous: Sequence[Manifest]) -> dict[str, CaseEntry]:
    """Each case's entry in the newest release that contained it (removed cases included)."""
    latest: dict[str, CaseEntry] = {}
    for manifest in previous:
        latest.update((entry.case_id, entry) for entry in manifest.cases)
    return latest


def classify(previous: Sequence[Manifest], snapshot: Snapshot) -> Classification:
    """Sort the snapshot's cases against the last release: added, changed, removed, unchanged."""
    result = Classification()
    last = previous[-1] if previous else None
    for case_id, case in sorted(snapshot.cases.items()):
        before = last.case(case_id) if last else None
        if before is None:
            result.added.append(case_id)
        elif before.sha256 != case.sha256:
            result.changed.append(case_id)
        else:
            result.unchanged.append(case_id)
    if last is not None:
        result.removed.extend(e.case_id for e in last.cases if e.case_id not in snapshot.cases)
    return result


def suggest_version(previous: Sequence[Manifest], snapshot: Snapshot) -> str:
    """Major when cases were removed, minor when added, patch otherwise."""
    if not previous:
        return FIRST_VERSION
    major, minor, patch = version_key(previous[-1].version)
    found = classify(previous, snapshot)
    if found.removed:
        return format_version((major + 1, 0, 0))
    if found.added:
        return format_version((major, minor + 1, 0))
    return format_version((major, minor, patch + 1))


def plan_release(
    version: str,
    previous: Sequence[Manifest],
    snapshot: Snapshot,
    sections: Mapping[str, tuple[str, ...]],
    *,
    schema_version: str,
    schema_sha256: str,
) -> Release:
    """The release ``version`` of ``snapshot``, after the releases ``previous`` (oldest first).

    Pure: same inputs, same Release. ``sections`` names, for each case whose content changed
    since its last release, the top-level sections that changed (see ``section_changes``).
    """
    prior = latest_entries(previous)
    found = classify(previous, snapshot)
    entries = []
    for case_id, case in sorted(snapshot.cases.items()):
        before = prior.get(case_id)
        if before is None:  # first release of this case
            number, first = 1, version
        elif before.sha256 == case.sha256:  # same content: same version, even after a removal
            number, first = before.version, before.first_release
        else:  # a re-added case continues its numbering
            number, first = before.version + 1, before.first_release
        entries.append(_entry(case_id, snapshot, number, first))
    by_id = {entry.case_id: entry for entry in entries}
    last = previous[-1] if previous else None
    manifest = Manifest(
        version=version,
        previous_version=last.version if last else None,
        source_commit=snapshot.commit,
        created=rfc3339(snapshot.time),
        schema_version=schema_version,
        schema_sha256=schema_sha256,
        catalog_path=CATALOG_FILE,
        catalog_blob=snapshot.catalog_blob or "",
        catalog_sha256=snapshot.catalog_sha256 or "",
        cases=tuple(entries),
        added=tuple(Added(c, by_id[c].version) for c in found.added),
        changed=tuple(
            Changed(c, prior[c].version, by_id[c].version, tuple(sections.get(c, ())))
            for c in found.changed
        ),
        removed=tuple(Removed(c, prior[c].version) for c in found.removed),
    )
    return Release(manifest, tuple(found.unchanged), render_section(manifest))


def _entry(case_id: str, snapshot: Snapshot, number: int, first: str) -> CaseEntry:
    case = snapshot.cases[case_id]
    return CaseEntry(
        case_id=case_id,
        version=number,
        sha256=case.sha256,
        path=case.path,
        blob=case.blob,
        attachments=dict(case.attachments),
        first_release=first,
        last_changed_commit=case.last_changed_commit,
        last_changed_date=rfc3339(case.last_changed_time),
        authors=case.authors,
        title=case.digest.title,
        specialty=case.digest.specialty,
        difficulty=case.digest.difficulty,
    )


# --- reading what a release depends on (effects: git reads only) ---------------------------


@dataclass(frozen=True)
class Prepared:
    release: Release
    head: str
    branch: str | None
    changelog: str  # the whole new CHANGELOG.md


def previous_manifests(root: Path, treeish: str) -> list[Manifest]:
    """The manifests under releases/ in ``treeish``, oldest version first."""
    manifests = []
    for stored in stored_manifests(root, treeish):
        if parse_version(stored.version) is None:
            raise CasebankError(
                f"{stored.path}: not named after a release version (X.Y.Z.json)",
                "releases/ holds only manifests written by `casebank release`",
            )
        manifest = loads(stored.raw, stored.path)
        if manifest.version != stored.version:
            raise CasebankError(
                f"{stored.path} says it is release {manifest.version}",
                "restore the manifest from git; run `casebank verify`",
            )
        manifests.append(manifest)
    return sorted(manifests, key=lambda m: version_key(m.version))


def require_head(root: Path) -> str:
    git.check_repository(root)
    head = git.resolve_commit(root, "HEAD")
    if head is None:
        raise CasebankError(
            "the repository has no commits yet", "commit the cases and the catalog first"
        )
    return head


def check_new_version(version: str, previous: Sequence[Manifest], tags: Sequence[str]) -> None:
    """Refuse a version that is malformed, already used, or not above every earlier release."""
    wanted = parse_version(version)
    if wanted is None:
        raise UsageError(f"{version!r} is not a release version: use MAJOR.MINOR.PATCH, e.g. 1.2.0")
    earlier = {m.version for m in previous}
    earlier.update(t[1:] for t in tags if t.startswith("v") and parse_version(t[1:]))
    if version in earlier:
        raise CasebankError(
            f"release {version} already exists",
            "pick a higher version (`casebank release --suggest` proposes one)",
        )
    newer = [v for v in earlier if version_key(v) > wanted]
    if newer:
        latest = max(newer, key=version_key)
        raise CasebankError(
            f"release {version} is not above the latest release {latest}",
            "versions only go up: pick a version above it",
        )


def check_clean(root: Path) -> None:
    dirty = git.status(root)
    if dirty:
        shown = ", ".join(entry[3:] for entry in dirty[:5]) + (" ..." if len(dirty) > 5 else "")
        raise CasebankError(
            f"the working tree is not clean ({len(dirty)} changed or untracked files: {shown})",
            "commit or remove them first, then release",
        )


def check_valid(root: Path) -> Validation:
    from casebank.validate import validate_repository  # heavy, so imported only here

    result = validate_repository(root)
    if result.errors:
        first = result.sorted()[0]
        raise CasebankError(
            f"validation found {result.errors} error(s), e.g. {first.file}:{first.line}: "
            f"{first.message}",
            "run `casebank validate` and fix every error before releasing",
        )
    return result


def current_state(
    root: Path, head: str, previous: Sequence[Manifest], digests: Digests | None = None
) -> tuple[Snapshot, dict[str, tuple[str, ...]]]:
    """The snapshot of HEAD (one history pass) and the sections changed in changed cases."""
    history = scan_history(root, head, {head}, digests)
    snapshot = history.snapshots[head]
    return snapshot, section_changes(history.digests, previous, snapshot)


def section_changes(
    digests: Digests, previous: Sequence[Manifest], snapshot: Snapshot
) -> dict[str, tuple[str, ...]]:
    """For each case whose content changed since its last release: the sections that changed.

    Only these cases' old and new files are parsed again (one batch), not the whole dataset.
    """
    prior = latest_entries(previous)
    changed = {
        c: (prior[c], case)
        for c, case in snapshot.cases.items()
        if c in prior and prior[c].sha256 != case.sha256
    }
    digests.fetch(
        sections=[
            pair
            for before, now in changed.values()
            for pair in ((before.blob, before.path), (now.blob, now.path))
        ]
    )
    return {
        case_id: changed_sections(
            digests.sections(before.blob, before.path),
            digests.sections(now.blob, now.path),
            dict(before.attachments) != dict(now.attachments),
        )
        for case_id, (before, now) in changed.items()
    }


def prepare_release(root: Path, version: str, *, push: bool = False) -> Prepared:
    """Check every precondition, then plan. Reads only; raises on the first refusal."""
    check_new_version(version, [], [])  # the version's syntax first: a usage error needs no git
    head = require_head(root)
    previous = previous_manifests(root, head)
    check_new_version(version, previous, [t.name for t in git.list_tags(root)])
    check_clean(root)
    branch = git.current_branch(root)
    if push and branch is None:
        raise CasebankError(
            "HEAD is detached: --push needs a branch to push",
            "check out the branch to release from",
        )
    # Validation parses every case in the (clean) working tree; the history pass then reuses
    # those digests for the blobs at HEAD, so each file is parsed once.
    validation = check_valid(root)
    digests = Digests(root)
    digests.seed_cases((oid, path, digest) for path, (oid, digest) in validation.digests.items())
    snapshot, sections = current_state(root, head, previous, digests)
    _check_releasable(snapshot)
    from casebank.schema import SCHEMA_VERSION, schema_fingerprint

    release = plan_release(
        version,
        previous,
        snapshot,
        sections,
        schema_version=SCHEMA_VERSION,
        schema_sha256=schema_fingerprint(),
    )
    existing = root / CHANGELOG_FILE
    text = existing.read_text(encoding="utf-8") if existing.is_file() else None
    changelog = insert_section(text, release.changelog_section, version)
    return Prepared(release, head, branch, changelog)


def _check_releasable(snapshot: Snapshot) -> None:
    if not snapshot.cases:
        raise CasebankError("there are no cases to release", "add cases under cases/ first")
    broken = sorted(c.path for c in snapshot.cases.values() if not c.digest.valid)
    if broken:
        raise CasebankError(
            f"cannot compute the canonical content of {', '.join(broken)}",
            "run `casebank validate` on these files",
        )
    if snapshot.catalog_blob is None:
        raise CasebankError(f"{CATALOG_FILE} is not committed", f"commit {CATALOG_FILE} first")


# --- applying: the only writer -------------------------------------------------------------


def commit_message(release: Release) -> str:
    counts = release.manifest.counts
    return (
        f"Release dataset {release.version}\n\n"
        f"{counts['cases']} cases: {counts['added']} added, {counts['changed']} changed, "
        f"{counts['removed']} removed, {counts['unchanged']} unchanged.\n"
        f"Manifest: {release.path}\n"
    )


def tag_message(release: Release) -> str:
    from casebank.canonical import sha256_hex

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


def render_plan(release: Release, *, unchanged: bool = True) -> str:
    """The --dry-run table: one row per case, added / changed / removed (/ unchanged)."""
    manifest = release.manifest
    rows = [("STATUS", "CASE", "VERSION", "DETAIL")]
    entries = {e.case_id: e for e in manifest.cases}
    rows += [("added", a.case_id, str(a.version), entries[a.case_id].title) for a in manifest.added]
    rows += [
        ("changed", c.case_id, f"{c.from_version} -> {c.to_version}", ", ".join(c.sections))
        for c in manifest.changed
    ]
    rows += [("removed", r.case_id, str(r.last_version), "") for r in manifest.removed]
    if unchanged:
        rows += [("unchanged", c, str(entries[c].version), "") for c in release.unchanged]
    widths = [max(len(row[i]) for row in rows) for i in range(3)]
    lines = [
        f"{r[0]:<{widths[0]}}  {r[1]:<{widths[1]}}  {r[2]:<{widths[2]}}  {r[3]}".rstrip()
        for r in rows
    ]
    counts = manifest.counts
    head = (
        f"release {manifest.version} (previous: {manifest.previous_version or 'none'}) "
        f"of commit {manifest.source_commit[:12]}, {manifest.created}"
    )
    tail = (
        f"{counts['cases']} cases: {counts['added']} added, {counts['changed']} changed, "
        f"{counts['removed']} removed, {counts['unchanged']} unchanged"
    )
    return "\n".join([head, "", *lines, "", tail])
