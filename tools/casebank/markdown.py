"""Markdown helpers shared by everything casebank writes as Markdown (the changelog, the pull
request summary, the validation summary, the dataset card, the docs).

Text that comes from a case, a file name or a person goes through :func:`text` (or
:func:`code` for a literal), so that it reads as the words written and never as Markdown: no
heading, list, link, image, HTML, emphasis or table cell of its own, and no line of its own.
"""

from __future__ import annotations

import re

# Every character that can start or end an inline construct in CommonMark or GitHub's Markdown
# (code, links and images, autolinks and HTML, emphasis, strikethrough, table cells, maths,
# entities) is written with a backslash, which CommonMark reads as the character itself. An
# underscore inside a word (snake_case) and `&` that starts no entity are left as they are,
# since neither is ever markup.
_INLINE = re.compile(r"[\\`*\[\]<~|$]|(?<![^\W_])_|_(?![^\W_])|&(?=#?\w+;)")
# What would start a block (a heading, a quote, a list item) if the text began a line.
_BLOCK_START = re.compile(r"^(?:[#>+=-]|\d+[.)])")
_BREAKS = re.compile(r"\s*[\r\n\x0b\x0c\x1c-\x1e\x85\u2028\u2029]+\s*")


def _escape(match: re.Match[str]) -> str:
    return "\\" + match.group(0)


def text(value: str) -> str:
    """``value`` as literal Markdown text on one line."""
    flat = _INLINE.sub(_escape, _BREAKS.sub(" ", value).strip())
    return _BLOCK_START.sub(lambda m: m.group(0)[:-1] + "\\" + m.group(0)[-1], flat)


def code(value: str) -> str:
    """``value`` as a code span on one line, safe in a table cell: fenced with more backticks
    than it holds in a row (backslashes do not escape inside code), pipes escaped for GFM."""
    flat = _BREAKS.sub(" ", value).strip()
    longest = max((len(run) for run in re.findall(r"`+", flat)), default=0)
    fence = "`" * (longest + 1)
    padded = f" {flat} " if flat.startswith("`") or flat.endswith("`") or not flat else flat
    return fence + padded.replace("|", "\\|") + fence


def cell(value: str) -> str:
    """Text safe inside one cell of a Markdown table."""
    return text(value)


def plural(n: int, word: str) -> str:
    return f"{n} {word}{'' if n == 1 else 's'}"
