"""Case states and their history, from one pass over git.

One streamed ``git log --first-parent --raw -z`` lists, for every commit on the first-parent line
of a tip (merges included, diffed against their first parent), which case files, attachments and
catalog blobs changed. One ``git cat-file --batch`` process then reads each distinct blob once,
and a replay of the log, oldest first, yields:

- the state of every case at the requested commits (its file, blob, attachments, content hash);
- the **last content change** of a case at a commit S: the most recent commit on S's first-parent
  line, S included, after which the case's content hash differs from the hash before it (a case
  that appears, or re-appears, counts as changed; comments and formatting never do);
- its **authors** at S: the author and every ``Co-authored-by`` trailer of each such commit, in
  order of first appearance, one entry per email address (compared case-insensitively; a trailer
  without an address is keyed by its name). A merge commit counts as the change it brings to the
  first-parent line, so it credits the merge's author: squash merges credit the pull request.
  That is how manifests up to format 2 record authors; from format 3 a change is credited to
  the people who made it (``ContentChange.made_by``): for a merge, the authors of the merged
  branch's commits that changed the case, not the person who merged;
- the **sign-offs** of each case's content hash at S (``Snapshot.signoffs``): the Reviewed-by
  trailers of a commit that gave the case that content (the squash-merge path), and those of a
  later review commit whose ``Reviewed-case: CASE@SHA256`` trailers name it (``casebank
  review``), on the line or on a branch merged into it;
- the ``.mailmap`` at S, by which identities are compared (``Snapshot.people``).

The merged branches' commits and the review commits come from one more ``git log`` each, and
the commit graph from one ``git rev-list``: none of them when the line has no merge and no
commit that could be a review (a Reviewed-by trailer without a change), so a history of
squash merges is still one ``git log``. Identities are mapped in one ``git check-mailmap`` per
distinct ``.mailmap``, none without one.

Identity is the case id, which is the file name without extension. Renames are not detected
(``--no-renames``): moving ``cases/x.yaml`` to ``cases/x.json`` keeps the id and, if the parsed
data is the same, the content; renaming to ``cases/y.yaml`` ends case x and starts case y. Only
regular files count; should two files claim one id at once, the first path in sort order does.
"""

from __future__ import annotations

import re
from collections.abc import Collection, Iterable, Mapping, Sequence
from dataclasses import dataclass, field, replace
from pathlib import Path

from casebank.format.canonical import (
    CaseDigest,
    changed_sections,
    content_hash,
    digest_case,
    digest_data_file,
    section_hashes,
    sha256_hex,
)
from casebank.format.layout import (
    CASES_DIR,
    CATALOG_FILE,
    POLICY_FILE,
    WITHDRAWALS_FILE,
    attachment_of,
    case_id_from_path,
    case_part,
    is_case_path,
    is_json,
)
from casebank.format.policy import Policy, load_policy
from casebank.parallel import map_chunks
from casebank.release import git, withdrawals
from casebank.release.manifest import RELEASES_DIR, Author, CaseEntry, Manifest, latest_entries

_CASES_PREFIX = f"{CASES_DIR}/"
_NAME_EMAIL = re.compile(r"^\s*(.*?)\s*<([^<>]*)>\s*$")


@dataclass(frozen=True)
class ContentChange:
    """A commit after which a case's content hash differs from before it."""

    commit: str
    sha256: str  # the case's content hash after the commit
    authors: tuple[Author, ...]  # the commit's author and co-authors (a merge: the merger)
    reviewers: tuple[Author, ...]  # from the commit's Reviewed-by trailers
    # Who made the change (format 3): the commit's authors, or for a merge, the authors of the
    # merged branch's commits that changed the case.
    made_by: tuple[Author, ...] = ()


@dataclass(frozen=True)
class SignOff:
    """Someone's sign-off of one exact content of a case, as the commit wrote it."""

    reviewer: Author  # parsed from the trailer (name or email may be empty)
    written: str  # the trailer's value, as written
    commit: str
    after_the_fact: bool  # a review commit (Reviewed-case), not a trailer on the change


@dataclass(frozen=True)
class CaseSnapshot:
    """One case at one commit, with the history facts a manifest records."""

    case_id: str
    path: str
    blob: str
    digest: CaseDigest
    attachments: Mapping[str, str]  # path below attachments/ -> SHA-256 of the bytes
    sha256: str  # the content hash (case plus attachments)
    last_changed_commit: str
    last_changed_time: int
    authors: tuple[Author, ...]
    changes: tuple[ContentChange, ...] = ()  # every content change on the line, oldest first
    content_authors: tuple[Author, ...] = ()  # as ``authors``, from ``made_by`` (format 3)


@dataclass(frozen=True)
class Snapshot:
    commit: str
    time: int  # committer time of the commit
    cases: Mapping[str, CaseSnapshot]
    catalog_blob: str | None
    catalog_sha256: str | None
    # The repository-level files a release reads (withdrawals.yaml, casebank.toml, .mailmap):
    # path -> blob.
    files: Mapping[str, str] = field(default_factory=dict)
    # (case id, content hash) -> every sign-off of that content reachable from the commit.
    signoffs: Mapping[tuple[str, str], tuple[SignOff, ...]] = field(default_factory=dict)
    # Identities as .mailmap (at this commit) maps them; an identity not listed is itself.
    people: Mapping[Author, Author] = field(default_factory=dict)

    def person(self, someone: Author) -> Author:
        return self.people.get(someone, someone)


# Below this many blobs, starting worker processes costs more than it saves.
PARALLEL_FROM = 2000
_Request = tuple[str, tuple[tuple[str, str], ...], bytes]  # blob, (kind, path) wanted, bytes


class Digests:
    """Facts about blobs, each blob read and parsed at most once (cached by blob id)."""

    def __init__(self, root: Path) -> None:
        self.root = root
        self._cases: dict[tuple[str, bool], CaseDigest] = {}
        self._bytes: dict[str, str] = {}
        self._data: dict[str, str] = {}
        self._sections: dict[tuple[str, bool], Mapping[str, str]] = {}

    def seed_cases(self, known: Iterable[tuple[str, str, CaseDigest]]) -> None:
        """Digests already computed elsewhere, by (blob id, path): validation parses the
        working tree anyway, and a blob id names exactly those bytes."""
        for oid, path, digest in known:
            self._cases[(oid, is_json(path))] = digest

    def case(self, oid: str, path: str) -> CaseDigest:
        return self._cases[(oid, is_json(path))]

    def attachment(self, oid: str) -> str:
        return self._bytes[oid]

    def data_file(self, oid: str) -> str:
        return self._data[oid]

    def sections(self, oid: str, path: str) -> Mapping[str, str]:
        return self._sections[(oid, is_json(path))]

    def fetch(
        self,
        cases: Iterable[tuple[str, str]] = (),
        attachments: Iterable[str] = (),
        data_files: Iterable[tuple[str, str]] = (),
        sections: Iterable[tuple[str, str]] = (),
    ) -> None:
        """Read every blob not yet known, all in one ``cat-file --batch`` process."""
        wanted: dict[str, list[tuple[str, str]]] = {}
        for kind, pairs, known in (
            ("case", cases, self._cases),
            ("sections", sections, self._sections),
        ):
            for oid, path in pairs:
                if (oid, is_json(path)) not in known:
                    wanted.setdefault(oid, []).append((kind, path))
        for oid in attachments:
            if oid not in self._bytes:
                wanted.setdefault(oid, []).append(("bytes", ""))
        for oid, path in data_files:
            if oid not in self._data:
                wanted.setdefault(oid, []).append(("data", path))
        if not wanted:
            return
        requests = (
            (oid, tuple(wanted[oid]), raw) for oid, raw in git.read_blobs(self.root, list(wanted))
        )
        for oid, results in map_chunks(
            _digest_blobs, requests, parallel=len(wanted) >= PARALLEL_FROM
        ):
            for kind, path, value in results:
                self._store(oid, kind, path, value)

    def _store(self, oid: str, kind: str, path: str, value: object) -> None:
        if kind == "case":
            assert isinstance(value, CaseDigest)
            self._cases[(oid, is_json(path))] = value
        elif kind == "sections":
            assert isinstance(value, dict)
            self._sections[(oid, is_json(path))] = value
        elif kind == "bytes":
            self._bytes[oid] = str(value)
        else:
            self._data[oid] = str(value)


def _digest_blobs(requests: list[_Request]) -> list[tuple[str, list[tuple[str, str, object]]]]:
    """Worker side: the facts asked for about each blob (module-level, so it pickles)."""
    done = []
    for oid, kinds, raw in requests:
        results: list[tuple[str, str, object]] = []
        for kind, path in kinds:
            if kind == "case":
                results.append((kind, path, digest_case(path, raw)))
            elif kind == "sections":
                results.append((kind, path, section_hashes(path, raw)))
            elif kind == "bytes":
                results.append((kind, path, sha256_hex(raw)))
            else:
                results.append((kind, path, digest_data_file(path, raw)))
        done.append((oid, results))
    return done


MAILMAP_FILE = ".mailmap"
TOP_FILES = (WITHDRAWALS_FILE, POLICY_FILE, MAILMAP_FILE)


def _relevant(path: str) -> bool:
    """A repository file a release reads: the catalog, the top files, and what
    ``layout.case_part`` says belongs to a case (the working tree's scan asks the same)."""
    if path == CATALOG_FILE or path in TOP_FILES:
        return True
    return path.startswith(_CASES_PREFIX) and case_part(path) is not None


def parse_co_author(value: str) -> Author:
    match = _NAME_EMAIL.match(value)
    if match is None:
        return Author(value.strip(), "")
    return Author(match.group(1), match.group(2).strip())


def commit_authors(record: git.CommitRecord) -> list[Author]:
    return [
        Author(record.author_name, record.author_email),
        *(parse_co_author(value) for value in record.co_authors),
    ]


def _author_key(author: Author) -> str:
    return author.email.lower() if author.email else author.name


@dataclass
class History:
    """The result of one pass: the first-parent line and the snapshots asked for."""

    chain: list[str]
    snapshots: dict[str, Snapshot]
    digests: Digests


def scan_history(
    root: Path, tip: str, snapshot_at: Collection[str], digests: Digests | None = None
) -> History:
    """Walk the first-parent history of ``tip`` once; snapshot the commits in ``snapshot_at``."""
    digests = digests or Digests(root)
    records = list(git.first_parent_log(root, tip, _relevant))
    _fetch_all(digests, records)
    merged = _Merged.read(root, tip, records)
    replay = _Replay(digests, merged)
    snapshots: dict[str, Snapshot] = {}
    for record in records:
        replay.apply(record)
        if record.sha in snapshot_at:
            snapshots[record.sha] = replay.snapshot(record)
    return History([r.sha for r in records], _with_people(root, snapshots), digests)


@dataclass
class _Merged:
    """What reaches the first-parent line other than as a change of its own: the commits of
    merged branches (by the merge that brought them) and the review commits (by the commit of
    the line that brought them: itself, or the merge of its branch)."""

    branch_commits: dict[str, list[git.CommitRecord]] = field(default_factory=dict)
    reviews: dict[str, list[git.ReviewRecord]] = field(default_factory=dict)

    @classmethod
    def read(cls, root: Path, tip: str, records: list[git.CommitRecord]) -> _Merged:
        found = cls()
        merges = [r for r in records if len(r.parents) > 1]
        # A review commit is a Reviewed-by without a change of its own, on the line or on a
        # merged branch; a line with neither needs no more git than its one log.
        reviewing = any(r.reviewers and not _changes_a_case(r) for r in records)
        if not merges and not reviewing:
            return found
        reviews = git.review_log(root, tip)
        changing = [m for m in merges if _changes_a_case(m)]
        if not changing and not (merges and reviews):  # each commit is on the line
            for review in reviews:
                found.reviews.setdefault(review.sha, []).append(review)
            return found
        brought = _brought_by([r.sha for r in records], git.parents(root, tip))
        for review in reviews:
            found.reviews.setdefault(brought.get(review.sha, review.sha), []).append(review)
        if changing:
            tips = [p for m in changing for p in m.parents[1:]]
            for commit in git.branch_log(root, tips, [changing[0].parents[0]], _relevant):
                by = brought.get(commit.sha)
                if by is not None and by != commit.sha:
                    found.branch_commits.setdefault(by, []).append(commit)
        return found

    def made_by(self, record: git.CommitRecord, case_id: str) -> list[Author]:
        """Who made ``record``'s change to ``case_id``: the commit's own authors, or, for a
        merge, the authors of its branch's commits that changed the case (oldest first); the
        merge's author only when none did (the merge itself resolved the change)."""
        if len(record.parents) < 2:
            return commit_authors(record)
        branch = sorted(self.branch_commits.get(record.sha, ()), key=lambda c: c.committed)
        people = [
            author
            for commit in branch
            if any(_case_of(c.path) == case_id for c in commit.changes)
            for author in commit_authors(commit)
        ]
        return people or commit_authors(record)


def _brought_by(line: list[str], graph: Mapping[str, tuple[str, ...]]) -> dict[str, str]:
    """For every commit reachable from the line's last commit: the commit of the line (oldest
    first) that first reaches it. Each commit is visited once, whatever the number of merges."""
    brought: dict[str, str] = {}
    for commit in line:
        stack = [commit]
        while stack:
            here = stack.pop()
            if here in brought:
                continue
            brought[here] = commit
            stack.extend(p for p in graph.get(here, ()) if p not in brought)
    return brought


def _changes_a_case(record: git.CommitRecord) -> bool:
    return any(_case_of(c.path) for c in record.changes)


def _case_of(path: str) -> str | None:
    """The case a path under cases/ belongs to (its file or an attachment), else None."""
    if not path.startswith(_CASES_PREFIX):
        return None
    attached = attachment_of(path)
    if attached is not None:
        return attached[0]
    return case_id_from_path(path) if is_case_path(path) else None


_REVIEWED = re.compile(r"^\s*([a-z0-9_]+)@([0-9a-f]{64})\s*$")


def reviewed_contents(review: git.ReviewRecord) -> list[tuple[str, str]]:
    """The (case id, content hash) pairs a review commit names; malformed values name none."""
    found = []
    for value in review.reviewed:
        match = _REVIEWED.match(value)
        if match is not None:
            found.append((match.group(1), match.group(2)))
    return found


def _with_people(root: Path, snapshots: dict[str, Snapshot]) -> dict[str, Snapshot]:
    """Each snapshot with its identities mapped by the .mailmap at its commit: one
    ``git check-mailmap`` per distinct .mailmap, none where there is no .mailmap."""
    by_blob: dict[str, list[str]] = {}
    for commit, snapshot in snapshots.items():
        blob = snapshot.files.get(MAILMAP_FILE)
        if blob is not None:
            by_blob.setdefault(blob, []).append(commit)
    done = dict(snapshots)
    for blob, commits in by_blob.items():
        people = {a for c in commits for a in _identities(snapshots[c]) if a.email}
        contacts = sorted(f"{a.name} <{a.email}>" for a in people if "\n" not in str(a))
        mapped = git.check_mailmap(root, blob, contacts)
        table = {}
        for person in people:
            answer = mapped.get(f"{person.name} <{person.email}>")
            canonical = parse_co_author(answer) if answer else person
            if canonical != person:
                table[person] = canonical
        for commit in commits:
            done[commit] = replace(snapshots[commit], people=table)
    return done


def _identities(snapshot: Snapshot) -> Iterable[Author]:
    for case in snapshot.cases.values():
        yield from case.content_authors
        for change in case.changes:
            yield from change.made_by
    for signoffs in snapshot.signoffs.values():
        yield from (s.reviewer for s in signoffs)


def _fetch_all(digests: Digests, records: list[git.CommitRecord]) -> None:
    cases: dict[tuple[str, str], None] = {}
    attachments: dict[str, None] = {}
    data_files: dict[tuple[str, str], None] = {}
    for record in records:
        for change in record.changes:
            if change.new_mode not in git.REGULAR_MODES:
                continue
            if change.path == CATALOG_FILE:
                data_files[(change.new_oid, change.path)] = None
            elif change.path in TOP_FILES:
                continue  # read by whoever needs them, from the snapshot's blob ids
            elif is_case_path(change.path):
                cases[(change.new_oid, change.path)] = None
            else:
                attachments[change.new_oid] = None
    digests.fetch(cases, attachments, data_files)


@dataclass
class _Replay:
    """The state of the tree's cases while the log is replayed, oldest commit first."""

    digests: Digests
    merged: _Merged = field(default_factory=_Merged)
    files: dict[str, dict[str, str]] = field(default_factory=dict)  # id -> {path: blob}
    attachments: dict[str, dict[str, str]] = field(default_factory=dict)  # id -> {rel: blob}
    catalog: str | None = None
    top: dict[str, str] = field(default_factory=dict)  # TOP_FILES path -> blob
    hashes: dict[str, str] = field(default_factory=dict)
    last_change: dict[str, tuple[str, int]] = field(default_factory=dict)
    authors: dict[str, dict[str, Author]] = field(default_factory=dict)
    content_authors: dict[str, dict[str, Author]] = field(default_factory=dict)
    changes: dict[str, list[ContentChange]] = field(default_factory=dict)
    signoffs: dict[tuple[str, str], list[SignOff]] = field(default_factory=dict)

    def apply(self, record: git.CommitRecord) -> None:
        touched: set[str] = set()
        for change in record.changes:
            blob = change.new_oid if change.new_mode in git.REGULAR_MODES else None
            touched.update(self._set(change.path, blob))
        credited: list[Author] | None = None
        for case_id in sorted(touched):
            new = self._hash(case_id)
            if new is None:
                self.hashes.pop(case_id, None)
                continue
            if self.hashes.get(case_id) == new:
                continue
            self.hashes[case_id] = new
            self.last_change[case_id] = (record.sha, record.committed)
            credited = credited or commit_authors(record)
            made_by = self.merged.made_by(record, case_id)
            for table, people in ((self.authors, credited), (self.content_authors, made_by)):
                known = table.setdefault(case_id, {})
                for author in people:
                    known.setdefault(_author_key(author), author)
            reviewers = tuple(parse_co_author(value) for value in record.reviewers)
            self.changes.setdefault(case_id, []).append(
                ContentChange(record.sha, new, tuple(credited), reviewers, tuple(made_by))
            )
            self._sign(case_id, new, record.sha, record.reviewers, after_the_fact=False)
        for review in self.merged.reviews.get(record.sha, ()):
            for case_id, sha256 in reviewed_contents(review):
                self._sign(case_id, sha256, review.sha, review.reviewers, after_the_fact=True)

    def _sign(
        self, case_id: str, sha256: str, commit: str, values: Iterable[str], *, after_the_fact: bool
    ) -> None:
        found = self.signoffs.setdefault((case_id, sha256), [])
        for value in values:
            found.append(SignOff(parse_co_author(value), value, commit, after_the_fact))

    def _set(self, path: str, blob: str | None) -> list[str]:
        if path == CATALOG_FILE:
            self.catalog = blob
            return []
        if path in TOP_FILES:
            if blob is None:
                self.top.pop(path, None)
            else:
                self.top[path] = blob
            return []
        attached = attachment_of(path)
        if attached is not None:
            case_id, key = attached
            folder = self.attachments.setdefault(case_id, {})
        else:
            case_id, key = case_id_from_path(path), path
            folder = self.files.setdefault(case_id, {})
        if blob is None:
            folder.pop(key, None)
        else:
            folder[key] = blob
        return [case_id]

    def _chosen(self, case_id: str) -> tuple[str, str] | None:
        files = self.files.get(case_id)
        if not files:
            return None
        path = min(files)
        return path, files[path]

    def _attachment_hashes(self, case_id: str) -> dict[str, str]:
        found = self.attachments.get(case_id, {})
        return {rel: self.digests.attachment(blob) for rel, blob in sorted(found.items())}

    def _hash(self, case_id: str) -> str | None:
        chosen = self._chosen(case_id)
        if chosen is None:
            return None
        path, blob = chosen
        return content_hash(self.digests.case(blob, path).sha256, self._attachment_hashes(case_id))

    def snapshot(self, record: git.CommitRecord) -> Snapshot:
        cases = {}
        for case_id in sorted(self.hashes):
            chosen = self._chosen(case_id)
            assert chosen is not None
            path, blob = chosen
            commit, time = self.last_change[case_id]
            cases[case_id] = CaseSnapshot(
                case_id=case_id,
                path=path,
                blob=blob,
                digest=self.digests.case(blob, path),
                attachments=self._attachment_hashes(case_id),
                sha256=self.hashes[case_id],
                last_changed_commit=commit,
                last_changed_time=time,
                authors=tuple(self.authors[case_id].values()),
                changes=tuple(self.changes.get(case_id, ())),
                content_authors=tuple(self.content_authors[case_id].values()),
            )
        catalog_sha = None if self.catalog is None else self.digests.data_file(self.catalog)
        signoffs = {key: tuple(found) for key, found in self.signoffs.items() if found}
        return Snapshot(
            record.sha,
            record.committed,
            cases,
            self.catalog,
            catalog_sha,
            dict(self.top),
            signoffs,
        )


@dataclass(frozen=True)
class StoredManifest:
    """A file under releases/ at some commit, as bytes (parse it with ``manifest.loads``)."""

    path: str
    blob: str
    raw: bytes

    @property
    def version(self) -> str:
        return Path(self.path).name.removesuffix(".json")


def stored_manifests(root: Path, treeish: str) -> list[StoredManifest]:
    """Every ``releases/*.json`` file in ``treeish``, read in one batch, sorted by path."""
    entries = [
        e
        for e in git.list_tree(root, treeish, RELEASES_DIR)
        if e.object_type == "blob" and e.path.count("/") == 1 and e.path.endswith(".json")
    ]
    contents = dict(git.read_blobs(root, [e.oid for e in entries]))
    return sorted(
        (StoredManifest(e.path, e.oid, contents[e.oid]) for e in entries), key=lambda m: m.path
    )


@dataclass(frozen=True)
class ReleasedVersion:
    """One event in a case's released life: it was added, changed, re-added or removed."""

    release: str
    event: str  # "added" | "changed" | "re-added" | "removed"
    version: int
    entry: CaseEntry | None  # None when removed
    sections: tuple[str, ...] = ()


def released_events(manifests: Sequence[Manifest]) -> dict[str, list[ReleasedVersion]]:
    """For every case, the releases (oldest first) in which it appeared, changed or
    disappeared: one pass over the manifests' change lists (asking case by case would scan
    every change list once per case, quadratic in the size of the dataset). The site's
    history of every case and ``released_versions`` of one both read it."""
    events: dict[str, list[ReleasedVersion]] = {}
    for manifest in manifests:
        added = {a.case_id for a in manifest.added}
        changed = {c.case_id: c for c in manifest.changed}
        for case_id in sorted(added | set(changed)):
            entry = manifest.case(case_id)
            if entry is None:
                continue
            seen = events.setdefault(case_id, [])
            if case_id in added:
                kind = "re-added" if seen else "added"
                seen.append(ReleasedVersion(manifest.version, kind, entry.version, entry))
            else:
                sections = changed[case_id].sections
                seen.append(
                    ReleasedVersion(manifest.version, "changed", entry.version, entry, sections)
                )
        for removed in manifest.removed:
            events.setdefault(removed.case_id, []).append(
                ReleasedVersion(manifest.version, "removed", removed.last_version, None)
            )
    return events


def released_versions(manifests: Iterable[Manifest], case_id: str) -> list[ReleasedVersion]:
    """The releases (oldest first) in which ``case_id`` appeared, changed or disappeared."""
    return released_events(list(manifests)).get(case_id, [])


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


@dataclass(frozen=True)
class ReleaseInputs:
    """The repository files a release reads besides cases and the catalog, as of its commit."""

    policy: Policy
    withdrawals: list[withdrawals.Request]


def release_inputs(root: Path, snapshot: Snapshot) -> ReleaseInputs:
    """casebank.toml and withdrawals.yaml at ``snapshot`` (one batch read), parsed; a malformed
    file raises CasebankError naming it."""
    wanted = {path: blob for path, blob in snapshot.files.items()}
    contents = dict(git.read_blobs(root, list(wanted.values())))
    raw = {path: contents[blob] for path, blob in wanted.items()}
    return ReleaseInputs(
        load_policy(raw.get(POLICY_FILE)), withdrawals.parse(raw.get(WITHDRAWALS_FILE))
    )
