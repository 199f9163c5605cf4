"""What `casebank site` shows, read from the working tree or from a release in git.

The site side only renders; this module reads. Without ``--release`` the cases come from the
working tree (each loaded with the total loader; a file that cannot be read is left out with a
warning) and their history from the releases committed on HEAD. With ``--release X.Y.Z`` every
case is the blob its manifest names, its attachments the blobs of the release's source commit,
each checked against the manifest's hashes. Either way git runs a fixed number of times, never
once per case or per commit: the manifests, one ``ls-tree``, one batched ``cat-file``.
"""

from __future__ import annotations

import sys
from collections.abc import Collection, Iterable, Mapping, Sequence
from dataclasses import dataclass, field, replace
from pathlib import Path
from typing import Any

import rfc8785

from casebank.format.attachments import check_attachment
from casebank.format.canonical import data_hash, sha256_hex
from casebank.format.catalog import Catalog, build_catalog
from casebank.format.identifiers import CASE_ID_WORDS, attachment_name_problem, is_case_id
from casebank.format.layout import (
    POLICY_FILE,
    attachment_path,
    case_id_from_path,
    case_part,
)
from casebank.format.loader import load_document
from casebank.format.policy import DEFAULT_LICENCE, load_policy
from casebank.parallel import fork_pays, map_chunks
from casebank.release import git
from casebank.release.diff import MISSING, CaseState, diff_cases, show_value
from casebank.release.history import ReleasedVersion, released_events
from casebank.release.manifest import (
    DATASET_NAME,
    Author,
    CaseEntry,
    Manifest,
    latest_entries,
    version_key,
)
from casebank.release.prepare import previous_manifests, require_head
from casebank.release.released import ReleasedCase as ReleasedContent
from casebank.release.released import load_release
from casebank.site.model import (
    Attachment,
    Event,
    FieldDiff,
    ReleasedCase,
    SiteCase,
    SiteInput,
    SiteRelease,
    Withdrawal,
)
from casebank.workspace import scan_cases

SHOWN_LIMIT = 600  # characters of a changed value shown in a diff


def warn(message: str) -> None:
    print(f"casebank site: warning: {message}", file=sys.stderr)


def names(people: Iterable[Author]) -> tuple[str, ...]:
    """People as the site shows them: by name (addresses stay in the manifests)."""
    return tuple(dict.fromkeys(p.name or p.email for p in people))


# --- the working tree -----------------------------------------------------------------------


@dataclass(frozen=True)
class _Loaded:
    path: str
    data: dict[str, Any]
    attachments: dict[str, bytes]
    data_sha256: str = ""  # of the data's canonical form, where the file was parsed

    def state(self) -> CaseState:
        hashes = {name: sha256_hex(raw) for name, raw in sorted(self.attachments.items())}
        return CaseState(self.path, self.data, hashes, data_sha256=self.data_sha256)


def working_site(root: Path, changed_since: str | None = None) -> SiteInput:
    """The working tree's cases, with the history of the releases committed on HEAD."""
    loaded, skipped = _load_tree(root)
    notes = []
    if changed_since is not None:
        wanted = _changed(root, changed_since)
        loaded = {c: case for c, case in loaded.items() if c in wanted}
        count = f"{len(loaded)} case{'' if len(loaded) == 1 else 's'}"
        notes.append(f"A preview of the {count} changed since {changed_since}.")
    if skipped:
        notes.append(
            f"{skipped} case file(s) could not be read and are left out; "
            "`casebank validate` says why."
        )
    manifests = _committed_manifests(root)
    policy_file = root / POLICY_FILE
    policy = load_policy(policy_file.read_bytes() if policy_file.is_file() else None)
    history = _History.read(root, manifests, set(loaded))
    cases = tuple(history.working_case(case_id, case) for case_id, case in sorted(loaded.items()))
    label = "Working tree" + (f", changed since {changed_since}" if changed_since else "")
    return SiteInput(
        title=policy.name,
        label=label,
        release=None,
        cases=cases,
        releases=tuple(site_releases(manifests)),
        licence=policy.licence,
        notes=tuple(notes),
        catalog=_catalog(root),
    )


def _catalog(root: Path) -> Catalog | None:
    """The working tree's catalog, for the tests' cost and burden (None if it does not load),
    read back from what `validate` or `results` remembered where it can be."""
    from casebank.commands.memory import RememberedCatalog

    path = root / "catalog.yaml"
    return RememberedCatalog(root).catalog(path.read_bytes()) if path.is_file() else None


def _load_tree(root: Path) -> tuple[dict[str, _Loaded], int]:
    listing = scan_cases(root)
    loaded: dict[str, _Loaded] = {}
    skipped = 0
    parsed = _parse_all(root, listing.case_files)
    for relative in listing.case_files:
        case_id = case_id_from_path(relative)
        if not is_case_id(case_id):  # its pages could not even be named
            warn(f"{relative}: left out, its name is not a valid case id ({CASE_ID_WORDS})")
            skipped += 1
            continue
        if case_id in loaded:
            warn(f"{relative}: left out, {loaded[case_id].path} has the same case id")
            skipped += 1
            continue
        found, why, sha = parsed[relative]
        data = _read_case(relative, found, why)
        if data is None:
            skipped += 1
            continue
        attachments = _read_attachments(root, case_id, listing.attachments.get(case_id, ()))
        loaded[case_id] = _Loaded(relative, data, attachments, sha)
    return loaded, skipped


def _read_attachments(root: Path, case_id: str, names: Iterable[str]) -> dict[str, bytes]:
    found = {}
    for name in sorted(names):
        path = attachment_path(case_id, name)
        try:
            found[name] = (root / path).read_bytes()
        except OSError as exc:
            warn(f"{path}: left out, it cannot be read ({exc.strerror}); check its permissions")
            continue
        problem = attachment_name_problem(name) or check_attachment(name, found[name]).problem
        if problem:  # the page says so too; the site never publishes it
            warn(f"{path}: not published, {problem}; run `casebank validate`")
    return found


def _parse_all(
    root: Path, relatives: Sequence[str]
) -> dict[str, tuple[dict[str, Any] | None, str, str]]:
    """Every case file read and parsed (in worker processes for a large tree): its data and
    the SHA-256 of its canonical form, or None and what to warn; the warnings are given in
    order by ``_read_case``."""
    jobs: list[tuple[str, bytes | None, str]] = []
    for relative in relatives:
        try:
            jobs.append((relative, (root / relative).read_bytes(), ""))
        except OSError as exc:
            why = f"{relative}: left out, it cannot be read ({exc.strerror}); check its permissions"
            jobs.append((relative, None, why))
    # From parallel.POOL_FROM case files on, parsed in forked worker processes.
    done = map_chunks(_parse_chunk, jobs, size=50, start="fork", parallel=fork_pays(len(jobs)))
    return {job[0]: result for job, result in zip(jobs, done, strict=True)}


def _parse_chunk(
    jobs: list[tuple[str, bytes | None, str]],
) -> list[tuple[dict[str, Any] | None, str, str]]:
    return [
        _parse_case(relative, raw) if raw is not None else (None, why, "")
        for relative, raw, why in jobs
    ]


def _parse_case(relative: str, raw: bytes) -> tuple[dict[str, Any] | None, str, str]:
    result = load_document(relative, raw)
    if result.document is None or not isinstance(result.document.data, dict):
        issue = result.issues[0] if result.issues else None
        where = f"{relative}:{issue.line}:{issue.column}" if issue else relative
        what = issue.message if issue else "it is not a mapping of fields"
        return None, f"{where}: left out, {what}; run `casebank validate {relative}`", ""
    try:  # what the case's page shows as its content hash (made here: it costs a parse)
        sha = data_hash(result.document.data)
    except rfc8785.CanonicalizationError:
        sha = ""  # made again where it is shown, as any other hash that fails
    return result.document.data, "", sha


def _read_case(relative: str, data: dict[str, Any] | None, why: str) -> dict[str, Any] | None:
    """The case's data, or None after saying why it is left out."""
    if data is None:
        warn(why)
    return data


def _changed(root: Path, revision: str) -> set[str]:
    git.check_repository(root)
    _, files = git.changed_files(root, revision)
    return {part[0] for f in files if (part := case_part(f)) is not None}


def _committed_manifests(root: Path) -> list[Manifest]:
    """The releases committed on HEAD; none outside a git repository (said once)."""
    head = git.resolve_commit(root, "HEAD")
    if head is None:
        warn(f"{root} has no git history: the site shows no releases")
        return []
    git.refuse_shallow(root)  # the history of released versions reads older objects
    return previous_manifests(root, head)


# --- a release ------------------------------------------------------------------------------


def released_site(root: Path, release: str) -> SiteInput:
    """The cases exactly as released in ``release``, read from git alone and verified by the
    one reader of a release (``load_release``, as export, score and the harness use)."""
    loaded = load_release(root, release)
    chosen = loaded.manifest
    manifests = previous_manifests(root, require_head(root))
    upto = [m for m in manifests if version_key(m.version) <= version_key(release)]
    history = _History.read(root, upto, parsed={c.entry.blob: c.data for c in loaded.cases})
    cases = tuple(history.released_case(case, chosen) for case in loaded.cases)
    return SiteInput(
        title=chosen.dataset or DATASET_NAME,
        label=f"Release {release}",
        release=release,
        cases=cases,
        releases=tuple(site_releases(upto)),
        licence=chosen.licence or DEFAULT_LICENCE,
        catalog=build_catalog(loaded.catalog_data),
    )


# --- history --------------------------------------------------------------------------------


@dataclass
class _History:
    """Every released version of the cases shown, read in one batch of blobs."""

    manifests: list[Manifest]
    blobs: dict[str, bytes]
    released: dict[str, list[ReleasedVersion]] = field(default_factory=dict)
    latest: dict[str, CaseEntry] = field(default_factory=dict)
    parsed: dict[str, dict[str, Any] | None] = field(default_factory=dict)  # by blob, once

    @classmethod
    def read(
        cls,
        root: Path,
        manifests: list[Manifest],
        only: Collection[str] | None = None,
        parsed: Mapping[str, dict[str, Any]] | None = None,
    ) -> _History:
        """Read the blob of every released version (of the cases in ``only``, if given) that
        is not already ``parsed``, in one batch."""
        known: dict[str, dict[str, Any] | None] = dict(parsed or {})
        wanted = dict.fromkeys(
            e.blob
            for m in manifests
            for e in m.cases
            if (only is None or e.case_id in only) and e.blob not in known
        )
        blobs = dict(git.read_blobs(root, list(wanted))) if wanted else {}
        history = cls(manifests, blobs, released_events(manifests), latest_entries(manifests))
        history.parsed = known
        return history

    def data(self, entry: CaseEntry) -> dict[str, Any] | None:
        if entry.blob not in self.parsed:
            loaded = load_document(entry.path, self.blobs[entry.blob]).document
            data = loaded.data if loaded is not None else None
            self.parsed[entry.blob] = data if isinstance(data, dict) else None
        return self.parsed[entry.blob]

    def state(self, entry: CaseEntry) -> CaseState:
        return CaseState(entry.path, self.data(entry), dict(entry.attachments))

    def events(self, case_id: str) -> list[Event]:
        events: list[Event] = []
        before: CaseEntry | None = None
        for item in self.released.get(case_id, ()):
            events.append(self._event(case_id, item, before))
            before = item.entry or before
        return events

    def _event(self, case_id: str, item: ReleasedVersion, before: CaseEntry | None) -> Event:
        entry = item.entry
        if entry is None:
            return Event(item.release, item.event, item.version)
        changes = () if before is None else field_diffs(self.state(before), self.state(entry))
        return Event(
            release=item.release,
            event=item.event,
            version=item.version,
            date=entry.last_changed_date,
            commit=entry.last_changed_commit,
            authors=names(entry.authors),
            reviewers=names(entry.reviewers),
            changes=changes,
            note=self.withdrawal(case_id, item.version),
        )

    def withdrawal(self, case_id: str, version: int) -> str:
        """Why ``case_id@version`` was withdrawn, as the newest manifest carries it."""
        found = self.manifests[-1].withdrawal(case_id, version) if self.manifests else None
        return f"withdrawn in release {found.release}: {found.reason}" if found else ""

    def working_case(self, case_id: str, case: _Loaded) -> SiteCase:
        entry = self.latest.get(case_id)
        events = self.events(case_id)
        state = case.state()
        current = state.content_hash()  # from the hash made where the file was parsed
        shown = SiteCase(
            case_id=case_id,
            path=case.path,
            data=case.data,
            content_hash=current,
            state="not released yet",
            attachments=_attachments(case.attachments),
            history=tuple(events),
        )
        if entry is None:
            return shown
        released = self._where(entry)
        if current == entry.sha256:
            words = f"as released in {released}"
        else:
            words = f"changed since release {released}: v{entry.version + 1} at the next release"
            changes = field_diffs(self.state(entry), state)
            events.append(Event(None, "unreleased changes", None, changes=changes))
        return replace(
            shown,
            version=entry.version,
            state=words,
            unreleased=current != entry.sha256,
            history=tuple(events),
            withdrawn=self.withdrawal(case_id, entry.version),
            **self._people(entry, released),
        )

    def released_case(self, case: ReleasedContent, manifest: Manifest) -> SiteCase:
        entry = case.entry
        return SiteCase(
            case_id=entry.case_id,
            path=entry.path,
            data=case.data,
            version=entry.version,
            content_hash=entry.sha256,
            state=f"released in {self._where(entry)}",
            attachments=tuple(
                Attachment(name, case.attachments[name]) for name in sorted(case.attachments)
            ),
            history=tuple(self.events(entry.case_id)),
            withdrawn=self.withdrawal(entry.case_id, entry.version),
            **self._people(entry, manifest.version),
        )

    def _where(self, entry: CaseEntry) -> str:
        """The first release that carried this version."""
        for manifest in self.manifests:
            found = manifest.case(entry.case_id)
            if found is not None and found.version == entry.version:
                return manifest.version
        return entry.first_release

    @staticmethod
    def _people(entry: CaseEntry, release: str) -> dict[str, Any]:
        return {
            "authors": names(entry.authors),
            "reviewers": names(entry.reviewers),
            "credited_in": release,
            "provenance": dict(entry.provenance),
        }


def _attachments(files: Mapping[str, bytes]) -> tuple[Attachment, ...]:
    return tuple(Attachment(name, raw) for name, raw in sorted(files.items()))


def field_diffs(before: CaseState, after: CaseState) -> tuple[FieldDiff, ...]:
    """Field-level changes from one state of a case to another, as the site shows them."""
    found = diff_cases({"case": before}, {"case": after}, {})
    if not found:
        return ()
    return tuple(FieldDiff(c.path, _shown(c.old), _shown(c.new)) for d in found for c in d.changes)


def _shown(value: Any) -> str:
    return show_value(value, SHOWN_LIMIT) if value is not MISSING else "(absent)"


# --- releases -------------------------------------------------------------------------------


def site_releases(manifests: Sequence[Manifest]) -> list[SiteRelease]:
    """Each release's change lists, with titles (a removed case's from its last release)."""
    pages = []
    earlier: dict[str, CaseEntry] = {}  # each case's entry in the latest release before this one
    for manifest in manifests:
        title = {e.case_id: e.title for e in manifest.cases}
        pages.append(
            SiteRelease(
                version=manifest.version,
                previous=manifest.previous_version,
                created=manifest.created,
                source_commit=manifest.source_commit,
                cases=len(manifest.cases),
                added=tuple(
                    ReleasedCase(a.case_id, title.get(a.case_id, ""), a.version)
                    for a in sorted(manifest.added, key=lambda a: a.case_id)
                ),
                changed=tuple(
                    ReleasedCase(
                        c.case_id,
                        title.get(c.case_id, ""),
                        c.to_version,
                        c.from_version,
                        c.sections,
                    )
                    for c in sorted(manifest.changed, key=lambda c: c.case_id)
                ),
                removed=tuple(
                    ReleasedCase(
                        r.case_id,
                        earlier[r.case_id].title if r.case_id in earlier else "",
                        r.last_version,
                    )
                    for r in sorted(manifest.removed, key=lambda r: r.case_id)
                ),
                withdrawn=tuple(
                    Withdrawal(w.case_id, w.version, w.reason, w.release)
                    for w in sorted(manifest.withdrawn, key=lambda w: (w.case_id, w.version))
                    if w.release == manifest.version
                ),
            )
        )
        earlier.update((entry.case_id, entry) for entry in manifest.cases)
    return pages
