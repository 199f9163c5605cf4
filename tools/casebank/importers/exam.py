"""Examination findings from another format: sections as the cases write them, vital signs
measured, and a source's stand-in ("Not assessed", "N/A") a placeholder, never a finding."""

from __future__ import annotations

import re
from typing import Any

from casebank.format.catalog import fold
from casebank.format.scaffold import is_stand_in
from casebank.format.schema import EXAM_DEPTH
from casebank.importers import values
from casebank.importers.base import Log
from casebank.importers.draft import blank
from casebank.importers.results import drop_none, exact_number, unique
from casebank.importers.text import exam_label, flatten, join_path, prose

VITALS = frozenset(
    [
        *("vital signs", "vitals", "temperature", "temp", "blood pressure", "bp"),
        *("heart rate", "pulse", "pulse rate", "respiratory rate", "respiration rate"),
        *("respirations", "oxygen saturation", "spo2", "o2 saturation", "saturation"),
        *("weight", "height", "bmi", "body mass index", "head circumference"),
    ]
)
_FINDING = "physical_exam.*.value"


def stand_in_finding(text: str) -> str:
    """The placeholder for a finding the source gives only as a stand-in."""
    return blank(_FINDING, f"the source says only `{text}`; write the finding, or leave it out")


def sections(value: dict[str, Any], where: str, log: Log, depth: int = 1) -> dict[str, Any]:
    """Nested sections of findings, as deep as the format allows; deeper ones as text."""
    return _sections(value, where, log, depth, False)


def _sections(
    value: dict[str, Any], where: str, log: Log, depth: int, vital: bool
) -> dict[str, Any]:
    out: dict[str, Any] = {}
    for key, item in value.items():
        label = exam_label(key)
        here = join_path(where, key)
        is_vital = vital or fold(label) in VITALS
        if isinstance(item, dict) and depth < EXAM_DEPTH:
            found: Any = _sections(item, here, log, depth + 1, is_vital)
        elif isinstance(item, dict):
            found = flatten(item)
            log.notes.append(f"`{here}` nests deeper than {EXAM_DEPTH} levels: one text.")
        else:
            found = finding(item) if is_vital else _text_finding(item)
        if found:
            out[unique(out, label)] = found
    return out


def _text_finding(value: Any) -> str:
    text = prose(value)
    return stand_in_finding(text) if text and is_stand_in(text) else text


def finding(value: Any) -> Any:
    """A vital sign: a measured finding where the text is a measurement, else the text."""
    if exact_number(value) is not None:
        return {"value": value}
    text = prose(value)
    if not text:
        return None
    if is_stand_in(text):
        return stand_in_finding(text)
    pressure = values.blood_pressure(text)
    if pressure is not None:
        reading, flag = pressure
        unit = "mmHg" if re.search(r"mm\s*Hg", text) else None
        return drop_none(
            {"value": reading, "unit": unit, "flag": flag, "note": f"Source text: {text}"}
        )
    measured = values.measurement(text)
    if measured is None:
        return text
    return drop_none(
        {
            "value": measured.value,
            "unit": measured.unit,
            "flag": measured.flag,
            "note": f"Source text: {text}",
        }
    )
