"""What an importer is: the `Importer` protocol, and the data an import passes around.

An importer reads one outside format. It splits a file into records (:meth:`Importer.read`),
names each record's case (:meth:`Importer.case_stem`) and turns it into draft case data
(:meth:`Importer.convert`). It reads and writes nothing itself: the `import` command opens the
file, gives each draft a free case id, writes the drafts and prints the report.
"""

from __future__ import annotations

from dataclasses import dataclass, field
from typing import IO, Any, Protocol

from casebank.errors import CasebankError
from casebank.format.catalog import Catalog


class RecordError(CasebankError):
    """A record that cannot be converted: what is wrong (naming the field) and how to fix it."""


class FileShapeError(CasebankError):
    """A file whose records are of no shape the importer reads: one message for the whole file
    (the command names the file), rather than the same one for every record."""


@dataclass(frozen=True)
class Record:
    """One record of a file, parsed."""

    line: int  # where it starts in the file, 1-based
    data: Any
    shape: str  # which of the importer's record shapes it is ("osce", "nejm")


@dataclass(frozen=True)
class Refused:
    """A part of the file that is no record: what is wrong with it and how to fix it."""

    line: int
    error: str
    hint: str


@dataclass(frozen=True)
class Job:
    """What converting one record needs besides the record."""

    case_id: str
    catalog: Catalog
    source: str  # where the record is, for its citation: "agentclinic_medqa.jsonl line 12"
    licence: str  # the source's SPDX licence, for provenance


@dataclass(frozen=True)
class Unresolved:
    """A test name the draft could not give a catalog name, and what it was written as."""

    field: str  # where in the record: Test_Results.Stool_Test.Culture
    name: str  # the name as read: "Culture"
    written_as: str  # the placeholder key in the draft
    reason: str  # "not in the catalog", "not in the catalog; did you mean `Troponin`?"


@dataclass(frozen=True)
class Match:
    """A test name the draft writes as a catalog name."""

    field: str
    name: str  # as read
    test: str  # the catalog's name
    inferred: bool = False  # read as a near spelling or in context: for the author to check


@dataclass
class Log:
    """What the importer decided while converting one record, gathered by every reader."""

    notes: list[str] = field(default_factory=list)  # for the author, in provenance.notes
    unresolved: list[Unresolved] = field(default_factory=list)
    matches: list[Match] = field(default_factory=list)


@dataclass
class Conversion:
    """One draft: its data, and what the importer decided on the way, for the report."""

    case_id: str
    data: dict[str, Any]
    notes: list[str] = field(default_factory=list)  # what the importer decided, for review
    unresolved: list[Unresolved] = field(default_factory=list)
    matches: list[Match] = field(default_factory=list)  # names written as catalog names

    @classmethod
    def of(cls, case_id: str, data: dict[str, Any], log: Log) -> Conversion:
        return cls(case_id, data, log.notes, log.unresolved, log.matches)

    @property
    def resolved(self) -> int:
        return len(self.matches)


class Importer(Protocol):
    """One outside format, as `casebank import FORMAT` uses it (importers/registry.py)."""

    title: str  # the source's name, in each draft's header: "AgentClinic"
    summary: str  # what it reads, one line for --help
    licence: str  # the source's SPDX licence: the default of --licence

    def read(self, name: str, stream: IO[bytes]) -> list[Record | Refused]:
        """Every record of the file ``name``, in order, or what is wrong with each part that
        is none; raises :class:`FileShapeError` when no record is of a shape it reads."""
        ...

    def case_stem(self, record: Record) -> str:
        """The start of the record's case id (the command adds ``_001``, ``_002``, ... to keep
        ids free); :class:`RecordError` when the record gives nothing to name it by."""
        ...

    def convert(self, record: Record, job: Job) -> Conversion:
        """The draft case for one record; :class:`RecordError` when it cannot be converted."""
        ...
