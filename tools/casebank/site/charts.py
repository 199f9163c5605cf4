"""Charts as inline SVG, drawn here in Python: no charting library, no script, no network.

Every chart is an image with a text alternative (``role="img"`` and a title), and the page
beside it holds the same numbers as a table, so nothing is said by colour or shape alone.
Coordinates are rounded to one decimal, so the same data gives the same bytes everywhere.
"""

from __future__ import annotations

from collections.abc import Callable, Mapping, Sequence
from dataclasses import dataclass
from html import escape

# Colours with at least 4.5:1 contrast against white, for bars and the text on them.
DIFFICULTY_COLOURS = {"easy": "#2e7d32", "medium": "#8a5a00", "hard": "#6a1b9a"}
OTHER_COLOUR = "#555555"
LINE_COLOUR = "#0b5394"
ABNORMAL_COLOUR = "#b00020"

_LABEL_WIDTH = 170
_BAR_WIDTH = 300
_ROW = 22
_TOP = 34


def _n(value: float) -> str:
    text = f"{value:.1f}"
    return text[:-2] if text.endswith(".0") else text


def coverage_chart(
    counts: Mapping[tuple[str, str], int], specialties: Sequence[str], levels: Sequence[str]
) -> str:
    """Cases by specialty (one bar each) and difficulty (the bar's segments)."""
    totals = {s: sum(counts.get((s, level), 0) for level in levels) for s in specialties}
    widest = max(totals.values(), default=0) or 1
    height = _TOP + _ROW * len(specialties) + 8
    width = _LABEL_WIDTH + _BAR_WIDTH + 48
    parts = [
        f'<svg class="chart coverage-chart" role="img" aria-labelledby="coverage-chart-title" '
        f'viewBox="0 0 {width} {height}" width="{width}" height="{height}" '
        f'xmlns="http://www.w3.org/2000/svg">',
        f'<title id="coverage-chart-title">{_coverage_summary(totals, counts, levels)}</title>',
        *_legend(levels),
    ]
    for row, specialty in enumerate(specialties):
        parts += _bar(row, specialty, counts, levels, totals[specialty], widest)
    parts.append("</svg>")
    return "\n".join(parts)


def _coverage_summary(
    totals: Mapping[str, int], counts: Mapping[tuple[str, str], int], levels: Sequence[str]
) -> str:
    by_level = ", ".join(
        f"{sum(counts.get((s, level), 0) for s in totals)} {level}" for level in levels
    )
    return escape(
        f"Cases by specialty and difficulty: {sum(totals.values())} cases in "
        f"{len(totals)} specialties ({by_level})."
    )


def _legend(levels: Sequence[str]) -> list[str]:
    parts = []
    for i, level in enumerate(levels):
        x = _LABEL_WIDTH + i * 90
        colour = DIFFICULTY_COLOURS.get(level, OTHER_COLOUR)
        parts.append(
            f'<rect x="{x}" y="6" width="14" height="14" fill="{colour}"/>'
            f'<text x="{x + 20}" y="18" class="legend">{escape(level)}</text>'
        )
    return parts


def _bar(
    row: int,
    specialty: str,
    counts: Mapping[tuple[str, str], int],
    levels: Sequence[str],
    total: int,
    widest: int,
) -> list[str]:
    y = _TOP + row * _ROW
    name = escape(specialty.replace("_", " "))
    parts = [f'<text x="{_LABEL_WIDTH - 8}" y="{y + 13}" text-anchor="end">{name}</text>']
    x = float(_LABEL_WIDTH)
    for level in levels:
        count = counts.get((specialty, level), 0)
        if not count:
            continue
        width = _BAR_WIDTH * count / widest
        colour = DIFFICULTY_COLOURS.get(level, OTHER_COLOUR)
        label = escape(f"{specialty.replace('_', ' ')}, {level}: {count}")
        parts.append(
            f'<rect x="{_n(x)}" y="{y}" width="{_n(width)}" height="17" fill="{colour}">'
            f"<title>{label}</title></rect>"
        )
        if width >= 16:
            parts.append(
                f'<text x="{_n(x + width / 2)}" y="{y + 13}" text-anchor="middle" '
                f'class="on-bar">{count}</text>'
            )
        x += width
    parts.append(f'<text x="{_n(x + 6)}" y="{y + 13}">{total}</text>')
    return parts


@dataclass(frozen=True)
class Point:
    label: str  # when, in the case's words
    value: float
    text: str  # the value as shown, with its unit
    abnormal: bool


_SPARK_WIDTH = 280
_SPARK_HEIGHT = 72
_PAD = 10
_AXIS = 64  # room on the left for the highest and lowest value


def series_chart(name: str, points: Sequence[Point]) -> str | None:
    """A small line chart of a result over time; None when fewer than two values are numbers.
    The highest and lowest values are written on the left, so the chart reads without colour."""
    if len(points) < 2:
        return None
    low, high = min(p.value for p in points), max(p.value for p in points)
    step = (_SPARK_WIDTH - _AXIS - 2 * _PAD) / (len(points) - 1)

    def y(value: float) -> float:
        if high == low:
            return _SPARK_HEIGHT / 2
        return _SPARK_HEIGHT - _PAD - (value - low) / (high - low) * (_SPARK_HEIGHT - 2 * _PAD)

    xy = [(_AXIS + _PAD + i * step, y(p.value)) for i, p in enumerate(points)]
    summary = escape(f"{name} over time: " + "; ".join(f"{p.label}: {p.text}" for p in points))
    parts = [
        f'<svg class="chart series-chart" role="img" aria-label="{summary}" '
        f'viewBox="0 0 {_SPARK_WIDTH} {_SPARK_HEIGHT}" width="{_SPARK_WIDTH}" '
        f'height="{_SPARK_HEIGHT}" xmlns="http://www.w3.org/2000/svg">',
        f'<line x1="{_AXIS}" y1="{_PAD}" x2="{_AXIS}" y2="{_SPARK_HEIGHT - _PAD}" '
        'stroke="#6b6f73" stroke-width="1"/>',
        *_axis_labels(low, high, y),
        f'<polyline fill="none" stroke="{LINE_COLOUR}" stroke-width="2" points="'
        + " ".join(f"{_n(a)},{_n(b)}" for a, b in xy)
        + '"/>',
    ]
    parts += [_mark(a, b, point) for (a, b), point in zip(xy, points, strict=True)]
    parts.append("</svg>")
    return "\n".join(parts)


def _axis_labels(low: float, high: float, y: Callable[[float], float]) -> list[str]:
    shown = [high] if high == low else [high, low]
    return [
        f'<text x="{_AXIS - 6}" y="{_n(y(v) + 4)}" text-anchor="end" class="axis">'
        f"{_value(v)}</text>"
        for v in shown
    ]


def _value(value: float) -> str:
    return str(int(value)) if value.is_integer() else f"{value:g}"


def _mark(a: float, b: float, point: Point) -> str:
    """A circle for a value in range, a square (in another colour) for one outside it."""
    tip = f"<title>{escape(point.label)}: {escape(point.text)}</title>"
    if point.abnormal:
        return (
            f'<rect x="{_n(a - 4)}" y="{_n(b - 4)}" width="8" height="8" '
            f'fill="{ABNORMAL_COLOUR}">{tip}</rect>'
        )
    return f'<circle cx="{_n(a)}" cy="{_n(b)}" r="4" fill="{LINE_COLOUR}">{tip}</circle>'
