"""Plan a dataset release: a pure function from the previous releases and a snapshot.

``plan_release`` turns what ``casebank.release.prepare`` read into a ``Release`` value without
touching anything; ``casebank.release.apply`` is the only part that writes. Same inputs, same
Release: that is what makes ``--dry-run`` honest and ``verify`` possible.
"""

from __future__ import annotations

import re
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
    # Every case's version and its review, changed or not (what `casebank review` checks).
    case_reviews: Mapping[str, VersionReview] = field(default_factory=dict)

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
class NotCounted:
    """A sign-off that does not make the version reviewed, and why."""

    reviewer: str  # as the trailer wrote it
    reason: str


@dataclass(frozen=True)
class VersionReview:
    """Who wrote a case version and who signed off its exact content.

    The version's authors made the commits that made it (for a merge, its branch's commits);
    a reviewer is someone with a name and an email who signed off the version's content hash
    (a Reviewed-by trailer on a commit that gave the case this content, or a review commit
    naming ``case@hash``) and is none of the authors, by name or by email, after .mailmap.
    """

    case_id: str
    version: int
    sha256: str
    authors: tuple[Author, ...]
    reviewers: tuple[Author, ...]  # the sign-offs that count, as .mailmap maps them
    not_counted: tuple[NotCounted, ...] = ()

    @property
    def independent(self) -> bool:
        """The version's exact content is signed off by someone who is not its author."""
        return bool(self.reviewers)


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
    case_reviews: dict[str, VersionReview] = {}
    for case_id, case in sorted(snapshot.cases.items()):
        before = prior.get(case_id)
        if before is None:  # first release of this case
            number, first = 1, version
        elif before.sha256 == case.sha256:  # same content: same version, even after a removal
            number, first = before.version, before.first_release
        else:  # a re-added case continues its numbering
            number, first = before.version + 1, before.first_release
        made = version_commits(case, shas.get((case_id, number - 1)))
        review = review_version(case_id, number, made, snapshot)
        case_reviews[case_id] = review
        if before is None or before.sha256 != case.sha256:
            reviews.append(review)
        entries.append(
            _entry(case_id, snapshot, number, first, review, made, licence, manifest_format)
        )
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
        case_reviews,
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


_EMAIL = re.compile(r"^[^@\s<>]+@[^@\s<>]+$")
IDENTITY_HINT = "a review needs a name and an email: `Name <email>`"


def identity_problem(person: Author) -> str | None:
    """Why ``person`` cannot sign off (no name, no email address), or None."""
    if not person.email:
        return "no email address"
    if not _EMAIL.match(person.email):
        return f"`{person.email}` is not an email address"
    if not person.name.strip():
        return "no name"
    return None


def review_version(
    case_id: str, version: int, made: Sequence[ContentChange], snapshot: Snapshot
) -> VersionReview:
    """The review of a case version made by the changes ``made`` (pure: the snapshot carries
    the sign-offs and the .mailmap)."""
    case = snapshot.cases[case_id]
    raw = [a for c in made for a in (c.made_by or c.authors)]
    authors = _people(snapshot.person(a) for a in raw)
    own = _Identities([*raw, *authors])
    counted: list[Author] = []
    not_counted: dict[tuple[str, str], None] = {}
    for signoff in snapshot.signoffs.get((case_id, case.sha256), ()):
        person = snapshot.person(signoff.reviewer)
        problem = identity_problem(signoff.reviewer)
        if problem is not None:
            not_counted[(signoff.written, f"{problem}; {IDENTITY_HINT}")] = None
        elif (how := own.match(signoff.reviewer, person)) is not None:
            not_counted[(signoff.written, f"an author of this version, {how}")] = None
        else:
            counted.append(person)
    for change in made:  # reviews of earlier content of this version: they explain, never count
        if change.sha256 == case.sha256:
            continue
        for signoff in snapshot.signoffs.get((case_id, change.sha256), ()):
            reason = f"reviewed {change.sha256[:12]}, earlier content, not this version's"
            not_counted[(signoff.written, reason)] = None
    return VersionReview(
        case_id,
        version,
        case.sha256,
        authors,
        _people(counted),
        tuple(NotCounted(who, why) for who, why in not_counted),
    )


def authored_by(review: VersionReview, *forms: Author) -> str | None:
    """Whether someone (in any of the forms given: as written, as .mailmap maps them) is an
    author of the version: "by email", "by name", or None."""
    return _Identities(review.authors).match(*forms)


class _Identities:
    """The version's authors' names and emails, raw and as .mailmap maps them, folded."""

    def __init__(self, people: Iterable[Author]) -> None:
        listed = list(people)
        self.names = {_name(p) for p in listed if _name(p)}
        self.emails = {_email(p) for p in listed if p.email}

    def match(self, *forms: Author) -> str | None:
        """How a reviewer (in any of its forms) is one of the authors: "by email", "by name"."""
        if any(_email(f) in self.emails for f in forms if f.email):
            return "by email"
        if any(_name(f) in self.names for f in forms if _name(f)):
            return "by name"
        return None


def _name(person: Author) -> str:
    return " ".join(person.name.casefold().split())


def _email(person: Author) -> str:
    return person.email.strip().casefold()


def _key(person: Author) -> str:
    return person.email.casefold() or " ".join(person.name.casefold().split())


def _people(people: Iterable[Author]) -> tuple[Author, ...]:
    """One entry per person (by email, else by name), sorted."""
    found: dict[str, Author] = {}
    for person in people:
        found.setdefault(_key(person), person)
    return tuple(sorted(found.values()))


def _entry(
    case_id: str,
    snapshot: Snapshot,
    number: int,
    first: str,
    review: VersionReview,
    made: Sequence[ContentChange],
    licence: str,
    manifest_format: int,
) -> CaseEntry:
    case = snapshot.cases[case_id]
    digest = case.digest
    provenance = {"source": digest.source or "original", "licence": digest.licence or licence}
    if digest.derived_from:
        provenance["derived_from"] = digest.derived_from
    if manifest_format >= 3:  # people as .mailmap maps them; reviewers who count
        authors = _first_seen(snapshot.person(a) for a in case.content_authors)
        reviewers = review.reviewers
    else:  # as format 1 and 2 recorded them: raw identities, every trailer on the changes
        authors, reviewers = case.authors, _people(a for c in made for a in c.reviewers)
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
        authors=authors,
        title=case.digest.title,
        specialty=case.digest.specialty,
        difficulty=case.digest.difficulty,
    )


def _first_seen(people: Iterable[Author]) -> tuple[Author, ...]:
    """In order of first appearance, one entry per email (else name), the first spelling kept."""
    found: dict[str, Author] = {}
    for person in people:
        found.setdefault(_key(person), person)
    return tuple(found.values())


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
