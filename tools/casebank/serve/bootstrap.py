"""The percentile bootstrap of a mean, as the scorer publishes it (docs/scoring.md).

2,000 resamples drawn with Python's Mersenne Twister seeded with 20260101, each resample ``n``
indices ``floor(random() * n)`` (what ``random.choices`` draws), its mean the sum of the drawn
values in draw order over ``n``; the interval is the 50th and 1,950th of the sorted means. The
draws depend only on ``n``, so every metric of the same length is computed from one pass of
draws. numpy, where it is installed, draws and sums the same numbers (the generator's state is
handed over, and a cumulative sum adds in order, as Python's ``sum`` does before 3.12); the
tests check that both give the same interval.
"""

from __future__ import annotations

import math
import random
import sys
from collections.abc import Sequence
from typing import Any

SAMPLES = 2000
SEED = 20260101
LOW, HIGH = int(0.025 * SAMPLES), int(0.975 * SAMPLES) - 1
_CHUNK = 4_000_000  # draws held at once by the numpy path (32 MB of doubles)


def intervals(columns: Sequence[Sequence[float]], fast: bool = True) -> list[list[float] | None]:
    """The 95% interval of the mean of each column; all columns have one length (None under
    two values)."""
    n = len(columns[0]) if columns else 0
    if any(len(c) != n for c in columns):
        raise ValueError("every column of one bootstrap has the same length")
    if n < 2:
        return [None for _ in columns]
    numpy = _numpy() if fast else None
    means = _means_numpy(numpy, columns, n) if numpy is not None else _means(columns, n)
    out: list[list[float] | None] = []
    for column in means:
        ordered = sorted(column)
        out.append([round(ordered[LOW], 6), round(ordered[HIGH], 6)])
    return out


def interval(values: Sequence[float]) -> list[float] | None:
    return intervals([values])[0]


def _means(columns: Sequence[Sequence[float]], n: int) -> list[list[float]]:
    rng = random.Random(SEED)
    draw, floor, size = rng.random, math.floor, float(n)
    means: list[list[float]] = [[] for _ in columns]
    for _ in range(SAMPLES):
        picked = [floor(draw() * size) for _ in range(n)]
        for column, out in zip(columns, means, strict=True):
            out.append(sum([column[i] for i in picked]) / n)
    return means


def _numpy() -> Any:
    """numpy, where it sums as Python does (in order: Python before 3.12); else None."""
    if sys.version_info >= (3, 12):
        return None  # Python's sum compensates from 3.12 on; numpy's cumulative sum does not
    try:
        import numpy
    except ImportError:
        return None
    return numpy


def _means_numpy(np: Any, columns: Sequence[Sequence[float]], n: int) -> list[list[float]]:
    state = random.Random(SEED).getstate()[1]
    generator = np.random.RandomState()
    generator.set_state(("MT19937", np.array(state[:-1], dtype=np.uint32), state[-1], 0, 0.0))
    values = [np.asarray(c, dtype=np.float64) for c in columns]
    means: list[list[float]] = [[] for _ in columns]
    rows = max(1, _CHUNK // n)
    done = 0
    while done < SAMPLES:
        count = min(rows, SAMPLES - done)
        picked = np.floor(generator.random_sample((count, n)) * float(n)).astype(np.intp)
        for column, out in zip(values, means, strict=True):
            out.extend((np.cumsum(column[picked], axis=1)[:, -1] / n).tolist())
        done += count
    return means
