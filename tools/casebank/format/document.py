"""A loaded file: its data, and where each value and key stands in the source text."""

from __future__ import annotations

import re
from collections.abc import Iterator, Mapping
from dataclasses import dataclass, field
from typing import Any

PathPart = str | int
Path = tuple[PathPart, ...]
Mark = tuple[int, int]  # 1-based line and column

_IDENTIFIER = re.compile(r"^[A-Za-z_][A-Za-z0-9_-]*$")


def format_path(path: Path) -> str:
    """Render a document path as authors read it: ``investigations.expected.must_order[1]``.

    Keys that are not plain names (test names such as ``Chest X-ray``) are quoted so the
    path stays unambiguous: ``investigations.results["Chest X-ray"].unit``.
    """
    out: list[str] = []
    for part in path:
        if isinstance(part, int):
            out.append(f"[{part}]")
        elif _IDENTIFIER.match(part):
            out.append(f".{part}" if out else part)
        else:
            escaped = part.replace("\\", "\\\\").replace('"', '\\"')
            out.append(f'["{escaped}"]')
    return "".join(out)


@dataclass
class Document:
    """A loaded file: its data, and where each value and key stands in the source."""

    file: str
    data: dict[str, Any]
    positions: dict[Path, Mark] = field(default_factory=dict, repr=False)
    key_positions: dict[Path, Mark] = field(default_factory=dict, repr=False)
    # Plain scalars that YAML read as something other than text: path -> source text.
    plain_non_text: dict[Path, str] = field(default_factory=dict, repr=False)
    # Plain scalars that YAML 1.1 read as text although they look like numbers (`1e3`).
    plain_number_like: dict[Path, str] = field(default_factory=dict, repr=False)
    # The text the data was read from (None: data built some other way).
    source: str | None = field(default=None, repr=False, compare=False)

    def may_hold(self, fragment: str) -> bool:
        """False when no text or key of the data can contain ``fragment``: the source does not,
        and holds no backslash. Without an escape, YAML only removes characters from what is
        written (quotes, indentation, a folded line's break becomes a space), so a fragment
        with no space or line break in it is in the data only if it is in the source."""
        source = self.source
        return source is None or "\\" in source or fragment in source

    def locate(self, path: Path, *, at_key: bool = False) -> Mark:
        """Line and column for ``path``; a missing field points at its nearest parent key."""
        if at_key and path in self.key_positions:
            return self.key_positions[path]
        if path in self.positions:
            return self.positions[path]
        for cut in range(len(path) - 1, 0, -1):
            parent = path[:cut]
            if parent in self.key_positions:
                return self.key_positions[parent]
            if parent in self.positions:
                return self.positions[parent]
        return (1, 1)


def texts_at(value: Any, at: Path = ()) -> Iterator[tuple[Path, str]]:
    """Every text inside ``value`` (mappings and lists walked), with its document path."""
    if isinstance(value, str):
        yield at, value
    elif isinstance(value, Mapping):
        for key, item in value.items():
            yield from texts_at(item, (*at, key))
    elif isinstance(value, list):
        for i, item in enumerate(value):
            yield from texts_at(item, (*at, i))


def words_of(value: Any) -> Iterator[str]:
    """Every text, key and number inside ``value``, as text (what a reader of it sees)."""
    if isinstance(value, str):
        yield value
    elif isinstance(value, (int, float)) and not isinstance(value, bool):
        yield str(value)
    elif isinstance(value, Mapping):
        for key, item in value.items():
            yield str(key)
            yield from words_of(item)
    elif isinstance(value, list):
        for item in value:
            yield from words_of(item)
