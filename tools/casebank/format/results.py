"""Reading a case's results: every result, panel member and time point, and what each says.

One walk over ``investigations.results`` that the rules, the results oracle, the export and the
site share: a result may be one value, a panel of member results, or a series of timed results
(each of which may be a panel), and it may carry a status other than final.
"""

from __future__ import annotations

import re
from collections.abc import Iterator, Mapping
from typing import Any, NamedTuple, TypeGuard

from casebank.format.document import Path

RESULTS: Path = ("investigations", "results")
# The flags that mark a result abnormal: the schema's RESULT_FLAGS are these, ``normal`` and
# ``indeterminate`` (one home: the schema builds its list from this one).
ABNORMAL_FLAGS = ["low", "high", "critical_low", "critical_high", "abnormal"]


class ResultEntry(NamedTuple):
    """One result as written: a listed test, a panel member, or a point of a series. A named
    tuple, not a dataclass: a full-size case holds about fifty, and every run reads them."""

    path: Path
    name: str  # the test's name as written (a results key, or a component key)
    entry: Mapping[str, Any]
    kind: str  # lab_value, qualitative, text_report, panel (or the unknown type as written)
    panel: str | None = None  # the key of the panel this is a member of
    at: str | None = None  # the time of a series point

    @property
    def status(self) -> str:
        status = self.entry.get("status")
        return status if isinstance(status, str) else "final"

    @property
    def top(self) -> str:
        """The results key this entry sits under."""
        return str(self.path[len(RESULTS)])


def _is_number(value: Any) -> TypeGuard[int | float]:
    return isinstance(value, (int, float)) and not isinstance(value, bool)


def _component_kind(entry: Mapping[str, Any]) -> str:
    kind = entry.get("type")
    if isinstance(kind, str):
        return kind
    return "qualitative" if isinstance(entry.get("value"), str) else "lab_value"


def _members(
    parent: Mapping[str, Any], path: Path, panel: str, at: str | None
) -> Iterator[ResultEntry]:
    components = parent.get("components")
    if not isinstance(components, dict):
        return
    for member, sub in components.items():
        if isinstance(sub, dict):
            yield ResultEntry(
                (*path, "components", member), member, sub, _component_kind(sub), panel, at
            )


def result_entries(data: Mapping[str, Any]) -> list[ResultEntry]:
    """Every result, panel member and series point, in document order."""
    investigations = data.get("investigations") if isinstance(data, dict) else None
    results = investigations.get("results") if isinstance(investigations, dict) else None
    if not isinstance(results, dict):
        return []
    found: list[ResultEntry] = []
    for name, entry in results.items():
        if not isinstance(entry, dict):
            continue
        path: Path = (*RESULTS, name)
        kind = entry.get("type")
        kind = kind if isinstance(kind, str) else ""
        found.append(ResultEntry(path, name, entry, kind))
        found.extend(_members(entry, path, name, None))
        series = entry.get("series")
        for i, point in enumerate(series if isinstance(series, list) else []):
            if not isinstance(point, dict):
                continue
            at = point.get("at") if isinstance(point.get("at"), str) else f"point {i + 1}"
            point_path = (*path, "series", i)
            found.append(ResultEntry(point_path, name, point, kind, None, at))
            found.extend(_members(point, point_path, name, at))
    return found


_NUMBER = r"[-+]?\d+(?:\.\d+)?"
_RANGE = re.compile(rf"^\s*({_NUMBER})\s*(?:[–—-]|to)\s*({_NUMBER})\s*$")
_BOUND = re.compile(rf"^\s*(<=|>=|[<>≤≥])\s*({_NUMBER})\s*$")


def parse_reference_range(value: Any) -> tuple[float | None, float | None] | None:
    """(low, high) from `a–b`, `a-b`, `<b`, `≤b`, `>a`, `≥a` or {low, high}; None if unreadable."""
    if isinstance(value, dict):
        low, high = value.get("low"), value.get("high")
        if (low is None and high is None) or not all(
            v is None or _is_number(v) for v in (low, high)
        ):
            return None
        return (None if low is None else float(low), None if high is None else float(high))
    if not isinstance(value, str):
        return None
    match = _RANGE.match(value)
    if match:
        return float(match.group(1)), float(match.group(2))
    match = _BOUND.match(value)
    if match:
        bound = float(match.group(2))
        return (None, bound) if match.group(1) in ("<", "<=", "≤") else (bound, None)
    return None


# Qualitative results that mean "nothing abnormal", compared on whole folded text.
NORMAL_WORDS = frozenset(
    [
        "negative",
        "normal",
        "not detected",
        "none detected",
        "none seen",
        "no growth",
        "non-reactive",
        "nonreactive",
        "absent",
        "nil",
        "clear",
        "within normal limits",
        "within the reference range",
        "no abnormality detected",
        "unremarkable",
    ]
)


# A qualitative result of one of these words says it is abnormal ("Positive", "Elevated").
ABNORMAL_WORDS = frozenset(
    [
        "positive",
        "detected",
        "reactive",
        "abnormal",
        "elevated",
        "raised",
        "high",
        "low",
        "increased",
        "decreased",
        "reduced",
    ]
)


_NOT_WORD = re.compile(r"[^\w\s-]")


def _plain(text: str) -> str:
    return " ".join(_NOT_WORD.sub(" ", text.casefold()).split())


def judgement(entry: Mapping[str, Any]) -> str:
    """``normal``, ``abnormal`` or ``unknown``: what a result says, from its flag, its value
    against its range, or (qualitative) its words. A narrative without a flag is unknown: a
    reader cannot tell from the form alone, so grounding treats it as possibly abnormal."""
    flag = entry.get("flag")
    if flag in ABNORMAL_FLAGS:
        return "abnormal"
    if flag == "normal":
        return "normal"
    parts = [entry.get("components"), entry.get("series")]
    judged = [judgement(sub) for group in parts if group for sub in _subresults(group)]
    if judged:
        if "abnormal" in judged:
            return "abnormal"
        return "normal" if all(j == "normal" for j in judged) else "unknown"
    value = entry.get("value")
    if _is_number(value):
        bounds = parse_reference_range(entry.get("reference_range"))
        if bounds is None:
            return "unknown"
        low, high = bounds
        outside = (low is not None and value < low) or (high is not None and value > high)
        return "abnormal" if outside else "normal"
    if isinstance(value, str):
        plain = _plain(value)
        if plain in NORMAL_WORDS:
            return "normal"
        if plain in ABNORMAL_WORDS:
            return "abnormal"
    return "unknown"


def _subresults(group: Any) -> Iterator[Mapping[str, Any]]:
    items = group.values() if isinstance(group, dict) else group if isinstance(group, list) else []
    for item in items:
        if isinstance(item, dict):
            yield item


# Words that stand in for a result without being one (a status belongs in `status`).
PLACEHOLDER_RESULTS = frozenset(
    [
        "pending",
        "pending result",
        "result pending",
        "results pending",
        "awaited",
        "awaiting",
        "awaiting result",
        "awaiting results",
        "to follow",
        "tbc",
        "tba",
        "tbd",
        "to be confirmed",
        "not done",
        "not performed",
        "not tested",
        "not available",
        "unavailable",
        "n/a",
        "na",
        "n a",
        "not applicable",
        "unknown",
        "not known",
        "not specified",
        "unspecified",
        "not recorded",
        "not reported",
        "no result",
        "none given",
        "see notes",
        "-",
        "--",
        "?",
        "x",
        "xx",
        "xxx",
    ]
)


def is_placeholder_result(text: str) -> bool:
    """True for text such as "Pending", "N/A" or "Not specified" where a result belongs."""
    folded = " ".join(text.casefold().strip().strip(".").split())
    return folded in PLACEHOLDER_RESULTS or _plain(text) in PLACEHOLDER_RESULTS
