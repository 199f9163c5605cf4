"""AgentClinic's files: JSON Lines of one record shape each, and which shape a file holds.

AgentClinic (Schmidgall et al., 2024; MIT licence) publishes two shapes of record:

- OSCE records (``agentclinic_medqa*.jsonl``): ``{"OSCE_Examination": {"Patient_Actor": ...,
  "Physical_Examination_Findings": ..., "Test_Results": ..., "Correct_Diagnosis": ...}}``;
- NEJM image records (``agentclinic_nejm*.jsonl``): ``{"question", "patient_info",
  "physical_exams", "answers": [{"text", "correct"}], "image_url"}``.

A file's shape is that of its first record of a known shape; a record of the other shape in it
is refused (one kind of record per file, as AgentClinic publishes them). A file with no record
of either shape is refused as a whole, in one message.
"""

from __future__ import annotations

from typing import IO, Any

from casebank.importers.base import FileShapeError, Record, RecordError, Refused
from casebank.importers.jsonlines import lines, parse_object
from casebank.importers.text import kind

NAME = "AgentClinic"
CITATION = "AgentClinic (Schmidgall et al., 2024, https://github.com/SamuelSchmidgall/AgentClinic)"
LICENCE = "MIT"
COMMAND = "casebank import agentclinic"
# What AgentClinic's measurement agent answers for a test a record does not list.
POLICY = (
    "AgentClinic answers NORMAL READINGS for a test the record does not list, which is "
    "normal_unless_listed; validation then names tests that would contradict a listed result, "
    "CB420"
)
OSCE = "OSCE_Examination"
OSCE_SHAPE = "osce"
NEJM_SHAPE = "nejm"
SHAPES = {
    OSCE_SHAPE: "OSCE",
    NEJM_SHAPE: "NEJM",
}
OSCE_HINT = (
    'each line holds one JSON object {"OSCE_Examination": {"Patient_Actor": {...}, '
    '"Physical_Examination_Findings": {...}, "Test_Results": {...}, "Correct_Diagnosis": "..."}}'
)
NEJM_HINT = (
    'each line holds one JSON object {"question": "...", "patient_info": "...", '
    '"physical_exams": "...", "answers": [{"text": "...", "correct": true}, ...], '
    '"image_url": "..."}'
)
_HINTS = {OSCE_SHAPE: OSCE_HINT, NEJM_SHAPE: NEJM_HINT}
_ANY_HINT = (
    "an AgentClinic file holds OSCE records (agentclinic_medqa*.jsonl: "
    '{"OSCE_Examination": {...}}) or NEJM records (agentclinic_nejm*.jsonl: '
    '{"question": ..., "answers": [...]}), one JSON object a line'
)

Parsed = list[tuple[int, dict[str, Any] | RecordError]]  # each line: its object, or its problem


def shape_of(record: dict[str, Any]) -> str | None:
    """Which AgentClinic record shape ``record`` has, by its keys; None for neither."""
    if OSCE in record:
        return OSCE_SHAPE
    if "question" in record and "answers" in record:
        return NEJM_SHAPE
    return None


def read(stream: IO[bytes]) -> list[Record | Refused]:
    """Every record of an AgentClinic file, read as the file's shape (see the module)."""
    parsed: Parsed = []
    for number, raw in lines(stream):
        try:
            parsed.append((number, parse_object(raw, _ANY_HINT)))
        except RecordError as exc:
            parsed.append((number, exc))
    shape = next(
        (s for _, r in parsed if isinstance(r, dict) and (s := shape_of(r)) is not None), None
    )
    if shape is None:
        raise _no_records(parsed)
    return [_record(number, item, shape) for number, item in parsed]


def _record(number: int, item: dict[str, Any] | RecordError, shape: str) -> Record | Refused:
    if isinstance(item, RecordError):
        hint = item.hint if item.hint != _ANY_HINT else _HINTS[shape]
        return Refused(number, str(item), hint)
    found = shape_of(item)
    if found == shape:
        problem = _osce_problem(item) if shape == OSCE_SHAPE else None
        return Refused(number, problem, OSCE_HINT) if problem else Record(number, item, shape)
    if found is not None:
        return Refused(
            number,
            f"an AgentClinic {SHAPES[found]} record in a file of {SHAPES[shape]} records",
            "keep one kind of record in a file, as AgentClinic publishes them: move this "
            "line to a file of its own and import that",
        )
    return Refused(number, _missing(item, shape), _HINTS[shape])


def _osce_problem(record: dict[str, Any]) -> str | None:
    osce = record[OSCE]
    if isinstance(osce, dict):
        return None
    return f"`{OSCE}` is a {kind(osce)} (the record's keys: {_keys(record)})"


def _missing(record: dict[str, Any], shape: str) -> str:
    if shape == OSCE_SHAPE:
        return f"`{OSCE}` is missing (the record's keys: {_keys(record)})"
    lacking = [k for k in ("question", "answers") if k not in record]
    return f"`{'` and `'.join(lacking)}` missing (the record's keys: {_keys(record)})"


def _lines(n: int) -> str:
    return "1 line holds" if n == 1 else f"{n} lines hold"


def _keys(record: dict[str, Any]) -> str:
    return ", ".join(sorted(record)[:6]) or "none"


def _no_records(parsed: Parsed) -> FileShapeError:
    if not parsed:
        return FileShapeError("the file holds no records", _ANY_HINT)
    number, first = parsed[0]
    holds = f": {first}" if isinstance(first, RecordError) else f" holds the keys {_keys(first)}"
    return FileShapeError(
        f"the file's {_lines(len(parsed))} no AgentClinic record (line {number}{holds})",
        _ANY_HINT + "; check that this is the file and the FORMAT you meant",
    )
