"""Plan a dataset release: a pure function from the previous releases and a snapshot.

``plan_release`` turns what ``casebank.release.prepare`` read into a ``Release`` value without
touching anything; ``casebank.release.apply`` is the only part that writes. Same inputs, same
Release: that is what makes ``--dry-run`` honest and ``verify`` possible.
"""

from __future__ import annotations

from collections.abc import Iterable, Mapping, Sequence
from dataclasses import dataclass, field
from functools import cached_property

from casebank.format.layout import CATALOG_FILE
from casebank.format.policy import DEFAULT_LICENCE
from casebank.release import withdrawals
from casebank.release.changelog import render_section
from casebank.release.history import CaseSnapshot, ContentChange, Snapshot
from casebank.release.manifest import (
    MANIFEST_FORMAT,
    Added,
    Author,
    CaseEntry,
    Changed,
    Manifest,
    Removed,
    dumps,
    format_version,
    latest_entries,
    manifest_path,
    parse_version,
    rfc3339,
    tag_name,
    version_key,
)

FIRST_VERSION = "1.0.0"


@dataclass(frozen=True)
class Release:
    """What a release will write: its manifest and its changelog section."""

    manifest: Manifest
    unchanged: tuple[str, ...]
    changelog_section: str
    reviews: tuple[VersionReview, ...] = ()  # one per added or changed case

    @property
    def unreviewed(self) -> tuple[str, ...]:
        """Added or changed cases whose new version has no reviewer who is not its author."""
        return tuple(r.case_id for r in self.reviews if not r.independent)

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
class VersionReview:
    """Who wrote and who reviewed a new case version (from the commits that made it)."""

    case_id: str
    version: int
    authors: tuple[Author, ...]
    reviewers: tuple[Author, ...]
    unreviewed_commits: tuple[str, ...]  # commits of the version no one but its authors reviewed

    @property
    def independent(self) -> bool:
        """Every commit that made the version has a reviewer who is not one of its authors
        (a change pushed after the review is not reviewed)."""
        return not self.unreviewed_commits


@dataclass(frozen=True)
class Classification:
    added: list[str] = field(default_factory=list)
    changed: list[str] = field(default_factory=list)
    removed: list[str] = field(default_factory=list)
    unchanged: list[str] = field(default_factory=list)


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


def suggest_version(
    previous: Sequence[Manifest], snapshot: Snapshot, taken: Sequence[str] = ()
) -> str:
    """Major when cases were removed, minor when added, patch otherwise, above every release
    and every version tag (``taken``), so that `release` accepts what `--suggest` proposes."""
    versions = [m.version for m in previous] + [v for v in taken if parse_version(v)]
    if not versions:
        return FIRST_VERSION
    major, minor, patch = max(version_key(v) for v in versions)
    found = classify(previous, snapshot)
    if found.removed:
        return format_version((major + 1, 0, 0))
    if found.added:
        return format_version((major, minor + 1, 0))
    return format_version((major, minor, patch + 1))


def is_major_step(version: str, previous: Sequence[Manifest]) -> bool:
    """Whether ``version`` is a new major version after the last release."""
    return not previous or version_key(version)[0] > version_key(previous[-1].version)[0]


def plan_release(
    version: str,
    previous: Sequence[Manifest],
    snapshot: Snapshot,
    sections: Mapping[str, tuple[str, ...]],
    *,
    schema_version: str,
    schema_sha256: str,
    removal_reason: str = "",
    withdrawal_requests: Sequence[withdrawals.Request] = (),
    licence: str = DEFAULT_LICENCE,
    manifest_format: int = MANIFEST_FORMAT,
) -> Release:
    """The release ``version`` of ``snapshot``, after the releases ``previous`` (oldest first).

    Pure: same inputs, same Release. ``sections`` names, for each case whose content changed
    since its last release, the top-level sections that changed (see ``section_changes``).
    ``withdrawal_requests`` are the entries of withdrawals.yaml at the snapshot, ``licence``
    the dataset's licence from casebank.toml there; ``manifest_format`` is 1 only to recompute
    a release written in that format.
    """
    prior = latest_entries(previous)
    found = classify(previous, snapshot)
    shas = {(e.case_id, e.version): e.sha256 for m in previous for e in m.cases}
    entries = []
    reviews = []
    for case_id, case in sorted(snapshot.cases.items()):
        before = prior.get(case_id)
        if before is None:  # first release of this case
            number, first = 1, version
        elif before.sha256 == case.sha256:  # same content: same version, even after a removal
            number, first = before.version, before.first_release
        else:  # a re-added case continues its numbering
            number, first = before.version + 1, before.first_release
        made = version_commits(case, shas.get((case_id, number - 1)))
        reviewers = _people(c.reviewers for c in made)
        if before is None or before.sha256 != case.sha256:
            alone = tuple(c.commit for c in made if not _independent(c))
            reviews.append(
                VersionReview(case_id, number, _people(c.authors for c in made), reviewers, alone)
            )
        entries.append(_entry(case_id, snapshot, number, first, reviewers, licence))
    by_id = {entry.case_id: entry for entry in entries}
    last = previous[-1] if previous else None
    manifest = Manifest(
        format=manifest_format,
        licence=licence if manifest_format >= 2 else "",
        withdrawn=withdrawals.carried(version, withdrawal_requests, previous)
        if manifest_format >= 2
        else (),
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
    return Release(
        manifest,
        tuple(found.unchanged),
        render_section(manifest, removal_reason),
        tuple(reviews),
    )


def version_commits(case: CaseSnapshot, previous_sha: str | None) -> tuple[ContentChange, ...]:
    """The content changes that made the case's current version: those after its content was
    last the previous version's (``previous_sha``), up to the one that gave its current
    content. All of them for a first version."""
    changes = case.changes
    end = max((i for i, c in enumerate(changes) if c.sha256 == case.sha256), default=-1)
    start = 0
    if previous_sha is not None:
        start = 1 + max(
            (i for i, c in enumerate(changes[: end + 1]) if c.sha256 == previous_sha), default=-1
        )
    return changes[start : end + 1]


def _independent(change: ContentChange) -> bool:
    authors = {_key(a) for a in change.authors}
    return any(_key(r) not in authors for r in change.reviewers)


def _key(person: Author) -> str:
    return person.email.casefold() or " ".join(person.name.casefold().split())


def _people(groups: Iterable[Iterable[Author]]) -> tuple[Author, ...]:
    found: dict[str, Author] = {}
    for group in groups:
        for person in group:
            found.setdefault(_key(person), person)
    return tuple(sorted(found.values()))


def _entry(
    case_id: str,
    snapshot: Snapshot,
    number: int,
    first: str,
    reviewers: tuple[Author, ...],
    licence: str,
) -> CaseEntry:
    case = snapshot.cases[case_id]
    digest = case.digest
    provenance = {"source": digest.source or "original", "licence": digest.licence or licence}
    if digest.derived_from:
        provenance["derived_from"] = digest.derived_from
    return CaseEntry(
        reviewers=reviewers,
        provenance=provenance,
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
