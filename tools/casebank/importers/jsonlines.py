"""Reading JSON Lines from an outside source safely: one object a line, or what is wrong with it.

A line is refused, never half-read, when it is larger than a case may be, nests too deep, holds
too many values, is not UTF-8, holds duplicate keys, NaN or an infinite number, or a control
character the case loader would refuse. A line longer than the limit is skipped in chunks,
never held in memory whole.
"""

from __future__ import annotations

from collections.abc import Iterator
from typing import IO, Any

from casebank.format import strictjson
from casebank.format.loader import MAX_FILE_BYTES
from casebank.format.text import FORBIDDEN_IN_TEXT
from casebank.importers.base import RecordError
from casebank.importers.text import join_path, kind

MAX_RECORD_BYTES = MAX_FILE_BYTES  # a record becomes one case file, which the loader caps
MAX_DEPTH = 16  # objects and lists inside a record; real records nest 5 deep
MAX_VALUES = 5000  # values in one record; real records hold fewer than 200
MAX_INTEGER = 10**40 - 1  # larger than exact integers: such values are kept as text
_CHUNK = 1 << 16
# The characters the case loader refuses in a value (casebank.format.text): a draft must not
# hold them.
_CONTROL = FORBIDDEN_IN_TEXT


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
        record = strictjson.loads(text, max_depth=MAX_DEPTH, max_integer=MAX_INTEGER)
    except strictjson.JSONProblem as problem:
        raise _json_refusal(problem, shape_hint) from None
    if not isinstance(record, dict):
        raise RecordError(f"the record is a JSON {kind(record)}, not an object", shape_hint)
    _check_values(record, shape_hint)
    return record


def _json_refusal(problem: strictjson.JSONProblem, shape_hint: str) -> RecordError:
    """What the strict reader refused, in the importer's words."""
    subject = problem.subject[:40] + ("…" if len(problem.subject) > 40 else "")
    if problem.kind == "depth":
        return RecordError(f"the record nests deeper than {MAX_DEPTH} levels", shape_hint)
    if problem.kind == "duplicate-key":
        return RecordError(
            f"the key `{subject}` appears twice in one object", "keep one of the two entries"
        )
    if problem.kind == "constant":
        return RecordError(
            f"`{subject}` is not a number a case can hold", "write the value as text"
        )
    if problem.kind == "number":
        return RecordError(f"the number `{subject}` is too large", "write the value as text")
    return RecordError(
        f"not valid JSON: {problem.message} (column {problem.column})",
        "each line must hold one complete JSON object; check quotes, commas and brackets "
        "near that column",
    )


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
