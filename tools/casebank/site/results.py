"""The results table of a case page: one row per test (a panel's members below it), flags as
words, and each result over time (``series``) as a small chart with its values in a table."""

from __future__ import annotations

from collections.abc import Mapping
from dataclasses import dataclass
from typing import Any

from casebank.site.attachments import AttachmentLink
from casebank.site.charts import Point, series_chart
from casebank.site.nodes import is_abnormal, reference_range, scalar, with_unit

STATUS_LABELS = {"pending": "pending", "not_done": "not done", "unavailable": "unavailable"}


@dataclass(frozen=True)
class ResultRow:
    test: str
    depth: int  # 0 for a test, 1 for a member of a panel
    value: str
    reference_range: str = ""
    flag: str = ""
    note: str = ""
    series: str = ""  # the id of the test's "over time" block
    attachments: tuple[AttachmentLink, ...] = ()


@dataclass(frozen=True)
class SeriesRow:
    at: str
    member: str
    value: str
    reference_range: str
    flag: str
    note: str


@dataclass(frozen=True)
class Series:
    anchor: str
    test: str
    charts: tuple[tuple[str, str], ...]  # (what is drawn, inline SVG)
    rows: tuple[SeriesRow, ...]
    members: bool  # whether the rows name panel members


def attachment_link(name: str, served: Mapping[str, AttachmentLink]) -> AttachmentLink:
    """A result's attachment as the page serves it (``site.attachments``), or not attached."""
    return served.get(name) or AttachmentLink(name, note="not attached")


def _text(result: Mapping[str, Any], key: str) -> str:
    value = result.get(key)
    return "" if value is None else scalar(value)


def _value(result: Mapping[str, Any]) -> str:
    status = result.get("status")
    if isinstance(status, str) and status in STATUS_LABELS:
        shown = STATUS_LABELS[status]
        return (
            f"{shown}: {with_unit(result['value'], result.get('unit'))}"
            if "value" in result
            else shown
        )
    if "value" not in result:
        return ""
    return with_unit(result.get("value"), result.get("unit"))


def _row(
    test: str, result: Mapping[str, Any], depth: int, links: tuple[AttachmentLink, ...]
) -> ResultRow:
    flag = result.get("flag")
    return ResultRow(
        test=test,
        depth=depth,
        value=_value(result),
        reference_range=reference_range(result.get("reference_range")),
        flag=flag if isinstance(flag, str) else "",
        note=_text(result, "note"),
        attachments=links,
    )


def result_rows(
    results: Any, served: Mapping[str, AttachmentLink]
) -> tuple[list[ResultRow], list[Series]]:
    """The table's rows and the series blocks, in the case's order."""
    rows: list[ResultRow] = []
    blocks: list[Series] = []
    if not isinstance(results, Mapping):
        return rows, blocks
    for test, result in results.items():
        if not isinstance(result, Mapping):
            rows.append(ResultRow(str(test), 0, scalar(result)))
            continue
        names = result.get("attachments")
        links = tuple(
            attachment_link(str(n), served) for n in (names if isinstance(names, list) else [])
        )
        row = _row(str(test), result, 0, links)
        series = result.get("series")
        if isinstance(series, list) and series:
            block = _series(f"series-{len(blocks) + 1}", str(test), series)
            blocks.append(block)
            count = len(series)
            row = ResultRow(
                row.test,
                0,
                f"{count} results over time",
                note=row.note,
                series=block.anchor,
                attachments=links,
            )
        rows.append(row)
        components = result.get("components")
        if isinstance(components, Mapping):
            rows += [
                _row(str(name), member if isinstance(member, Mapping) else {"value": member}, 1, ())
                for name, member in components.items()
            ]
    return rows, blocks


def _series(anchor: str, test: str, entries: list[Any]) -> Series:
    rows: list[SeriesRow] = []
    drawn: dict[str, list[Point]] = {}
    members = False
    for entry in entries:
        if not isinstance(entry, Mapping):
            rows.append(SeriesRow("", "", scalar(entry), "", "", ""))
            continue
        at = _text(entry, "at")
        parts: list[tuple[str, Mapping[str, Any]]] = []
        if (
            "value" in entry
            or "status" in entry
            or not isinstance(entry.get("components"), Mapping)
        ):
            parts.append(("", entry))
        if isinstance(entry.get("components"), Mapping):
            members = True
            parts += [(str(n), m) for n, m in entry["components"].items() if isinstance(m, Mapping)]
        for member, result in parts:
            shown = _row(member, result, 0, ())
            rows.append(
                SeriesRow(at, member, shown.value, shown.reference_range, shown.flag, shown.note)
            )
            value = result.get("value")
            if isinstance(value, (int, float)) and not isinstance(value, bool):
                drawn.setdefault(member, []).append(
                    Point(at, float(value), shown.value, is_abnormal(result.get("flag")))
                )
    charts = tuple(
        (name or test, svg)
        for name, points in drawn.items()
        if (svg := series_chart(name or test, points)) is not None
    )
    return Series(anchor, test, charts, tuple(rows), members)
