"""The one strict JSON reader: every JSON casebank reads goes through it (case files,
submissions and judgements, importers' JSON Lines, manifests, its own journal).

Python's ``json`` module accepts what no two readers agree on, and fails in ways that are not
a message. Here:

- a duplicate key is refused (``json`` silently keeps the last one, which once turned a
  verdict into a critical error);
- ``NaN``, ``Infinity`` and numbers too large to be a double are refused, and so is an integer
  beyond 2**53 - 1 in size (I-JSON: not exact as a double); a 5,001-digit number is a problem
  with its line and column, never Python's digit-limit error;
- nesting deeper than ``max_depth`` is refused before parsing, in a pass without recursion,
  never a RecursionError;
- JSON Lines are split on line feeds only: U+2028, U+2029 and U+0085 are characters JSON allows
  inside strings (``json.dumps(..., ensure_ascii=False)`` writes them), not line breaks.

Every refusal is a :class:`JSONProblem` with a kind, a message, and the line and column.
"""

from __future__ import annotations

import json
import math
import re
from collections.abc import Callable, Iterator
from dataclasses import dataclass
from typing import Any

MAX_DEPTH = 32  # objects and arrays inside one another; no casebank file nests half as deep
MAX_EXACT_INTEGER = 2**53 - 1

# A string (so that the brackets inside it are not counted), or a bracket.
_TOKEN = re.compile(r'"[^"\\]*(?:\\.[^"\\]*)*"|[\[\]{}]', re.DOTALL)
_NESTING = {"[": 1, "{": 1, "]": -1, "}": -1}
_STRUCTURE = b'[]{}"'
_NOT_STRUCTURE = bytes(c for c in range(256) if c not in _STRUCTURE)


class JSONProblem(ValueError):
    """JSON that casebank refuses: ``kind`` is syntax, encoding, duplicate-key, number,
    constant or depth; line and column are 1-based; ``subject`` is the key, number or
    constant refused (for a caller that words its own message)."""

    def __init__(
        self, kind: str, message: str, line: int = 1, column: int = 1, subject: str = ""
    ) -> None:
        super().__init__(message)
        self.kind, self.message, self.line, self.column = kind, message, line, column
        self.subject = subject


class _Refused(Exception):
    """Raised inside a ``json`` hook: the problem, and the literal to find in the text."""

    def __init__(self, kind: str, message: str, literal: str) -> None:
        super().__init__(message)
        self.kind, self.message, self.literal = kind, message, literal


def _position(text: str, offset: int) -> tuple[int, int]:
    line = text.count("\n", 0, offset) + 1
    return line, offset - (text.rfind("\n", 0, offset) + 1) + 1


def _within_depth(raw: bytes, max_depth: int) -> bool:
    """Whether ``raw`` nests at most ``max_depth`` deep, at the speed of bytes operations: the
    escaped backslashes and quotes go, then everything but brackets and quotes, then what is
    between quotes; each pass then removes the innermost ``[]`` and ``{}``. False also for
    unbalanced brackets, which the precise scan then tells from depth."""
    marks = raw.replace(b"\\\\", b"").replace(b'\\"', b"").translate(None, _NOT_STRUCTURE)
    marks = b"".join(marks.split(b'"')[::2])  # what lies between quotes is inside a string
    for _ in range(max_depth):
        shorter = marks.replace(b"[]", b"").replace(b"{}", b"")
        if shorter == marks:
            break
        marks = shorter
    return not marks


def _check_depth(text: str, max_depth: int) -> None:
    if _within_depth(text.encode("utf-8", "surrogatepass"), max_depth):
        return
    depth = 0  # rare: find the bracket that goes too deep, for its line and column
    for token in _TOKEN.finditer(text):
        depth += _NESTING.get(token.group(0), 0)
        if depth > max_depth:
            line, column = _position(text, token.start())
            raise JSONProblem(
                "depth", f"objects and arrays nest more than {max_depth} levels deep", line, column
            )


def _pairs(pairs: list[tuple[str, Any]]) -> dict[str, Any]:
    found = dict(pairs)
    if len(found) == len(pairs):
        return found
    seen: set[str] = set()
    key = next(k for k, _ in pairs if k in seen or seen.add(k))  # type: ignore[func-returns-value]
    raise _Refused(
        "duplicate-key",
        f"the key {json.dumps(key, ensure_ascii=False)} appears twice in one object, "
        "and JSON readers disagree about which of the two they keep",
        key,
    )


def _integers(bound: int) -> Callable[[str], int]:
    digits = len(str(bound))

    def integer(literal: str) -> int:
        # The length first: int() of thousands of digits is Python's digit-limit error.
        if len(literal.lstrip("-")) > digits or abs(int(literal)) > bound:
            shown = literal if len(literal) <= 24 else f"{literal[:20]}… ({len(literal):,} digits)"
            raise _Refused(
                "number",
                f"the integer {shown} is too large to be read exactly (at most {bound:,} in size)",
                literal,
            )
        return int(literal)

    return integer


_EXACT = _integers(MAX_EXACT_INTEGER)


def _float(literal: str) -> float:
    value = float(literal)
    if not math.isfinite(value):
        raise _Refused("number", f"the number {literal[:24]} is too large to be a number", literal)
    return value


def _constant(name: str) -> None:
    raise _Refused("constant", f"`{name}` is not a number JSON allows", name)


def loads(text: str, *, max_depth: int = MAX_DEPTH, max_integer: int = MAX_EXACT_INTEGER) -> Any:
    """``text`` as data, or JSONProblem (see the module docstring). A reader that keeps
    integers beyond 2**53 as text (an importer) may raise ``max_integer``; some bound stays."""
    _check_depth(text, max_depth)
    try:
        return json.loads(
            text,
            object_pairs_hook=_pairs,
            parse_int=_EXACT if max_integer == MAX_EXACT_INTEGER else _integers(max_integer),
            parse_float=_float,
            parse_constant=_constant,
        )
    except json.JSONDecodeError as exc:
        raise JSONProblem("syntax", exc.msg, exc.lineno, exc.colno) from None
    except _Refused as refused:
        line, column = _position(text, _find(text, refused))
        raise JSONProblem(refused.kind, refused.message, line, column, refused.literal) from None


def _find(text: str, refused: _Refused) -> int:
    """Where the refused literal stands: a number or constant where it first stands as a
    token, a duplicate key where it stands as a key the second time (near enough: the hook
    that refuses it does not know where it is)."""
    literal = re.escape(refused.literal)
    if refused.kind == "duplicate-key":
        quoted = re.escape(json.dumps(refused.literal, ensure_ascii=False))
        keys = [m.start() for m in re.finditer(quoted + r"\s*:", text)]
        return keys[1] if len(keys) > 1 else (keys[0] if keys else 0)
    found = re.search(r"(?<![\w.+-])" + literal + r"(?![\w.])", text)
    return found.start() if found else 0


def load_bytes(raw: bytes, *, max_depth: int = MAX_DEPTH) -> Any:
    """UTF-8 ``raw`` (a byte-order mark allowed) as data, or JSONProblem."""
    return loads(_decode(raw), max_depth=max_depth)


def _decode(raw: bytes) -> str:
    try:
        return raw.decode("utf-8").removeprefix("\ufeff")
    except UnicodeDecodeError as exc:
        line = raw.count(b"\n", 0, exc.start) + 1
        column = exc.start - (raw.rfind(b"\n", 0, exc.start) + 1) + 1
        raise JSONProblem("encoding", "not UTF-8 text", line, column) from None


@dataclass(frozen=True)
class Line:
    """One non-blank line of a JSON Lines file: its number and value, or its problem."""

    number: int
    value: Any = None
    problem: JSONProblem | None = None


def lines(raw: bytes, *, max_depth: int = MAX_DEPTH, max_length: int = 0) -> Iterator[Line]:
    """Each non-blank line of a JSON Lines file, split on line feeds only. A line longer than
    ``max_length`` bytes (when given) is a problem, not parsed."""
    for number, chunk in enumerate(raw.split(b"\n"), 1):
        if not chunk.strip():
            continue
        if max_length and len(chunk) > max_length:
            problem = JSONProblem("syntax", f"the line is longer than {max_length:,} bytes")
            yield Line(number, problem=problem)
            continue
        try:
            yield Line(number, load_bytes(chunk, max_depth=max_depth))
        except JSONProblem as problem:
            yield Line(number, problem=problem)
