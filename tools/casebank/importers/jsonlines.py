"""Reading JSON Lines from an outside source safely: one object a line, or what is wrong with it.

A line is refused, never half-read, when it is larger than a case may be, nests too deep, holds
too many values, is not UTF-8, holds duplicate keys, NaN or an infinite number, or a control
character the case loader would refuse. A line longer than the limit is skipped in chunks,
never held in memory whole.
"""

from __future__ import annotations

import json
import re
from collections.abc import Iterator
from typing import IO, Any

from casebank.format.loader import MAX_FILE_BYTES
from casebank.importers.base import RecordError
from casebank.importers.text import join_path, kind

MAX_RECORD_BYTES = MAX_FILE_BYTES  # a record becomes one case file, which the loader caps
MAX_DEPTH = 16  # objects and lists inside a record; real records nest 5 deep
MAX_VALUES = 5000  # values in one record; real records hold fewer than 200
_CHUNK = 1 << 16
# C0 and C1 controls (but tab, newline and carriage return), lone surrogates and YAML
# non-characters: the case loader refuses them, so a draft must not hold them.
_CONTROL = re.compile("[\x00-\x08\x0b\x0c\x0e-\x1f\x7f\x80-\x84\x86-\x9f\ud800-\udfff\ufffe\uffff]")


def lines(stream: IO[bytes]) -> Iterator[tuple[int, bytes]]:
    """Each non-blank line (1-based number, bytes); a line longer than a record may be is cut
    at the limit (its record is then refused) and the rest of it skipped in chunks."""
    limit = MAX_RECORD_BYTES + 1
    number = 0
    while True:
        raw = stream.readline(limit)
        if not raw:
            return
        number += 1
        if len(raw) == limit and not raw.endswith(b"\n"):
            while (rest := stream.readline(_CHUNK)) and not rest.endswith(b"\n"):
                pass
        if raw.strip():
            yield number, raw


def parse_object(raw: bytes, shape_hint: str) -> dict[str, Any]:
    """One line as a JSON object; RecordError says what is wrong and how to fix it
    (``shape_hint`` says what a record of the format looks like)."""
    if len(raw) > MAX_RECORD_BYTES:
        raise RecordError(
            f"the record is {len(raw):,} bytes, more than the {MAX_RECORD_BYTES:,} a case may hold",
            "split the record, or shorten its text",
        )
    try:
        text = raw.decode("utf-8").lstrip("\ufeff")
    except UnicodeDecodeError as exc:
        raise RecordError(
            f"the line is not valid UTF-8 (byte {exc.start + 1})", "save the file as UTF-8"
        ) from None
    try:
        record = json.loads(
            text,
            object_pairs_hook=_no_duplicate_keys,
            parse_constant=_no_constant,
            parse_float=_finite,
        )
    except RecursionError:
        raise RecordError(f"the record nests deeper than {MAX_DEPTH} levels", shape_hint) from None
    except json.JSONDecodeError as exc:
        raise RecordError(
            f"not valid JSON: {exc.msg} (column {exc.colno})",
            "each line must hold one complete JSON object; check quotes, commas and brackets "
            "near that column",
        ) from None
    if not isinstance(record, dict):
        raise RecordError(f"the record is a JSON {kind(record)}, not an object", shape_hint)
    _check_values(record, shape_hint)
    return record


def _no_duplicate_keys(pairs: list[tuple[str, Any]]) -> dict[str, Any]:
    out: dict[str, Any] = {}
    for key, value in pairs:
        if key in out:
            raise RecordError(
                f"the key `{key}` appears twice in one object", "keep one of the two entries"
            )
        out[key] = value
    return out


def _no_constant(name: str) -> None:
    raise RecordError(f"`{name}` is not a number a case can hold", "write the value as text")


def _finite(text: str) -> float:
    value = float(text)
    if value != value or value in (float("inf"), float("-inf")):
        raise RecordError(f"the number `{text}` is too large", "write the value as text")
    return value


def _check_values(record: dict[str, Any], shape_hint: str) -> None:
    """Depth, size and characters, in one pass without recursion."""
    stack: list[tuple[Any, str, int]] = [(record, "", 0)]
    count = 0
    while stack:
        value, where, depth = stack.pop()
        count += 1
        if count > MAX_VALUES:
            raise RecordError(f"the record holds more than {MAX_VALUES} values", shape_hint)
        if depth > MAX_DEPTH:
            raise RecordError(f"`{where}` nests deeper than {MAX_DEPTH} levels", shape_hint)
        texts = [value] if isinstance(value, str) else []
        if isinstance(value, dict):
            texts.extend(value)
            stack.extend((v, join_path(where, k), depth + 1) for k, v in value.items())
        elif isinstance(value, list):
            stack.extend((v, f"{where}[{i}]", depth + 1) for i, v in enumerate(value))
        for text in texts:
            bad = _CONTROL.search(text)
            if bad is not None:
                raise RecordError(
                    f"`{where or 'the record'}` holds the invisible control character "
                    f"U+{ord(bad.group()):04X}",
                    "remove it (it cannot be written to a case file)",
                )
