"""A case's parts as a small tree of display nodes, which `site.html` turns into HTML for the
templates (each node names its ``kind``).

Nothing here decides who may see what: the caller hands in one audience's view
(``casebank.serve.views.view``). Every function reads defensively: a case that loads but does
not validate still renders, with a value of an unexpected shape shown as text.
"""

from __future__ import annotations

import re
from collections.abc import Mapping, Sequence
from dataclasses import dataclass
from typing import Any

from casebank.format import units
from casebank.format.results import ABNORMAL_FLAGS
from casebank.format.schema import FINDING_FIELDS

# Field names whose plain spelling would read badly.
LABELS = {
    "pmh": "Past medical history",
    "meds": "Medications",
    "history_of_present_illness": "History of present illness",
    "key_history_points": "Key history points",
    "must_ask": "Must ask",
    "nice_to_ask": "Nice to ask",
    "red_flags": "Red flags",
    "ground_truth": "Ground truth",
    "management_gold": "Management (gold standard)",
    "severity_or_stage": "Severity or stage",
    "results_generated_policy": "Results of unlisted tests",
    "acceptable_answers": "Acceptable answers",
    "critical_safety_errors": "Critical safety errors",
    "derived_from": "Derived from",
    "acknowledged_warnings": "Acknowledged warnings",
    "tone_presets": "Tones",
}
FLAG_LABELS = {
    "normal": "normal",
    "low": "low ↓",
    "high": "high ↑",
    "critical_low": "critical low ↓↓",
    "critical_high": "critical high ↑↑",
    "abnormal": "abnormal",
    "indeterminate": "indeterminate",
}
_SNAKE = re.compile(r"^[a-z][a-z0-9]*(_[a-z0-9]+)*$")


def label(key: object) -> str:
    """A field name as a heading: schema names spelt out, an author's own words kept."""
    text = str(key)
    if text in LABELS:
        return LABELS[text]
    if _SNAKE.match(text):
        text = text.replace("_", " ")
    return text[:1].upper() + text[1:]


@dataclass(frozen=True)
class Text:
    text: str
    kind: str = "text"


@dataclass(frozen=True)
class Measure:
    """A measured finding or result: its value with unit, range, flag and note."""

    value: str
    reference_range: str = ""
    flag: str = ""
    note: str = ""
    kind: str = "measure"


@dataclass(frozen=True)
class Flag:
    flag: str
    kind: str = "flag"


@dataclass(frozen=True)
class Items:
    items: tuple[Node, ...]
    kind: str = "items"


@dataclass(frozen=True)
class Fields:
    fields: tuple[tuple[str, Node], ...]
    kind: str = "fields"


@dataclass(frozen=True)
class Table:
    columns: tuple[str, ...]
    rows: tuple[tuple[Node, ...], ...]
    kind: str = "table"


Node = Text | Measure | Flag | Items | Fields | Table


def scalar(value: object) -> str:
    if value is None:
        return "—"
    if isinstance(value, bool):
        return "yes" if value else "no"
    if isinstance(value, float) and value.is_integer() and abs(value) < 1e15:
        return f"{value:.1f}"
    return str(value).strip()


def is_scalar(value: object) -> bool:
    return value is None or isinstance(value, (str, int, float, bool))


def to_node(value: Any) -> Node:
    """Any JSON-like value: a mapping as fields, a list of records as a table, else text."""
    if isinstance(value, Mapping):
        return Fields(tuple((label(k), to_node(v)) for k, v in value.items()))
    if isinstance(value, list):
        if value and all(
            isinstance(v, Mapping) and all(is_scalar(x) for x in v.values()) for v in value
        ):
            return _records(value)
        return Items(tuple(to_node(v) for v in value))
    return Text(scalar(value))


def _records(rows: Sequence[Mapping[str, Any]]) -> Table:
    keys: dict[str, None] = {}
    for row in rows:
        keys.update(dict.fromkeys(str(k) for k in row))
    return Table(
        tuple(label(k) for k in keys),
        tuple(tuple(Text(scalar(row.get(k, ""))) for k in keys) for row in rows),
    )


def reference_range(value: object) -> str:
    if isinstance(value, Mapping):
        low, high = value.get("low"), value.get("high")
        if low is not None and high is not None:
            return f"{scalar(low)}–{scalar(high)}"
        if low is not None:
            return f"≥{scalar(low)}"
        if high is not None:
            return f"≤{scalar(high)}"
        return ""
    return "" if value is None else scalar(value)


def with_unit(value: object, unit: object) -> str:
    """A value with its unit as people read it (`Cel` is shown as °C, `mm[Hg]` as mmHg)."""
    shown = scalar(value)
    if not isinstance(unit, (str, int, float)) or isinstance(unit, bool) or unit == "":
        return shown
    written = units.display(unit) if isinstance(unit, str) else scalar(unit)
    return f"{shown} {written}" if written else shown


def is_finding(value: object) -> bool:
    return (
        isinstance(value, Mapping)
        and "value" in value
        and all(key in FINDING_FIELDS for key in value)
    )


def measure(finding: Mapping[str, Any]) -> Measure:
    laterality = finding.get("laterality")
    note = scalar(finding["note"]) if finding.get("note") is not None else ""
    if laterality:
        note = f"{scalar(laterality)}; {note}" if note else scalar(laterality)
    flag = finding.get("flag")
    return Measure(
        with_unit(finding.get("value"), finding.get("unit")),
        reference_range(finding.get("reference_range")),
        str(flag) if isinstance(flag, str) else "",
        note,
    )


def exam_node(exam: Any) -> Node:
    """The physical examination: a narrative, or sections nested as deep as the case goes;
    a section made only of measured findings becomes a table."""
    if not isinstance(exam, Mapping):
        return to_node(exam)
    values = list(exam.values())
    if values and all(is_finding(v) for v in values):
        return Table(
            ("Finding", "Value", "Reference range", "Flag", "Note"),
            tuple(
                (Text(label(k)), Text(m.value), Text(m.reference_range), Flag(m.flag), Text(m.note))
                for k, v in exam.items()
                for m in (measure(v),)
            ),
        )
    return Fields(
        tuple((label(k), measure(v) if is_finding(v) else exam_node(v)) for k, v in exam.items())
    )


def is_abnormal(flag: object) -> bool:
    return isinstance(flag, str) and flag in ABNORMAL_FLAGS
