"""Markdown helpers shared by every generated table (reports, diffs, docs, dataset cards)."""

from __future__ import annotations


def cell(text: str) -> str:
    """Text safe inside one cell of a markdown table."""
    return text.replace("|", "\\|").replace("\n", " ")


def plural(n: int, word: str) -> str:
    return f"{n} {word}{'' if n == 1 else 's'}"
