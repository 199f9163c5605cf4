"""What the site is built from: plain, frozen data, gathered by ``commands/site.py``."""

from __future__ import annotations

from collections.abc import Mapping
from dataclasses import dataclass, field
from typing import TYPE_CHECKING, Any

if TYPE_CHECKING:
    from casebank.format.catalog import Catalog


@dataclass(frozen=True)
class FieldDiff:
    """One changed field between two versions, with both values already shown as text."""

    path: str
    before: str
    after: str


@dataclass(frozen=True)
class Event:
    """One line of a case's history: a release that added, changed or removed it, or the
    working tree's changes not released yet (``release`` is None)."""

    release: str | None
    event: str  # added | changed | re-added | removed | unreleased
    version: int | None
    date: str = ""
    commit: str = ""
    authors: tuple[str, ...] = ()
    reviewers: tuple[str, ...] = ()
    changes: tuple[FieldDiff, ...] = ()
    note: str = ""


@dataclass(frozen=True)
class Attachment:
    name: str  # the path below cases/<case_id>/attachments/
    content: bytes


@dataclass(frozen=True)
class SiteCase:
    case_id: str
    path: str  # the case file, repository-relative
    data: Mapping[str, Any]
    version: int | None = None  # the released version shown (None: not released as shown)
    content_hash: str | None = None
    state: str = ""  # how the shown content stands against the releases, in words
    unreleased: bool = False  # the working tree's content differs from its last release
    attachments: tuple[Attachment, ...] = ()
    history: tuple[Event, ...] = ()
    authors: tuple[str, ...] = ()
    reviewers: tuple[str, ...] = ()
    credited_in: str | None = None  # the release whose manifest credits the people above
    provenance: Mapping[str, str] = field(default_factory=dict)  # as that manifest records it
    withdrawn: str = ""  # why the version shown was withdrawn ("" when it was not)


@dataclass(frozen=True)
class ReleasedCase:
    """A case in a release's change lists."""

    case_id: str
    title: str
    version: int  # the version added, changed to, or last released before removal
    from_version: int | None = None  # for a change
    sections: tuple[str, ...] = ()  # for a change: the top-level sections that changed


@dataclass(frozen=True)
class Withdrawal:
    case_id: str
    version: int
    reason: str
    release: str  # the release whose manifest first carried it


@dataclass(frozen=True)
class SiteRelease:
    version: str
    previous: str | None
    created: str
    source_commit: str
    cases: int
    added: tuple[ReleasedCase, ...] = ()
    changed: tuple[ReleasedCase, ...] = ()
    removed: tuple[ReleasedCase, ...] = ()
    withdrawn: tuple[Withdrawal, ...] = ()  # withdrawals this release carries first


@dataclass(frozen=True)
class SiteInput:
    title: str  # the dataset's name
    label: str  # what is shown: "Release 1.2.0", "Working tree"
    release: str | None  # the release shown, or None for the working tree
    cases: tuple[SiteCase, ...]
    releases: tuple[SiteRelease, ...] = ()  # oldest first
    licence: str = ""  # the dataset's licence (SPDX), the default of a case that states none
    notes: tuple[str, ...] = ()  # shown on the index
    catalog: Catalog | None = None  # the shown content's catalog: the tests' cost and burden
