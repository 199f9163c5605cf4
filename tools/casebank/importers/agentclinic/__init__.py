"""AgentClinic (Schmidgall et al., 2024; MIT licence): OSCE and NEJM image records as drafts.

``records`` reads a file and tells its shape; ``osce`` and ``nejm`` convert one record each.
docs/importing.md has where each part of a record goes.
"""

from __future__ import annotations

from typing import IO

from casebank.importers.base import Conversion, Job, Record, Refused
from casebank.importers.draft import id_stem

from . import nejm, osce, records


class AgentClinic:
    """The `agentclinic` importer (see ``casebank.importers.base.Importer``)."""

    title = records.NAME
    summary = "AgentClinic's OSCE records (agentclinic_medqa*.jsonl) or NEJM image records"
    licence = records.LICENCE

    def read(self, name: str, stream: IO[bytes]) -> list[Record | Refused]:
        return records.read(stream)

    def case_stem(self, record: Record) -> str:
        if record.shape == records.OSCE_SHAPE:
            return id_stem(osce.diagnosis(record))
        return id_stem(nejm.diagnosis(record))

    def convert(self, record: Record, job: Job) -> Conversion:
        if record.shape == records.OSCE_SHAPE:
            return osce.convert(record, job)
        return nejm.convert(record, job)


IMPORTER = AgentClinic()
