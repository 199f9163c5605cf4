"""Writing an imported case as an author would: block YAML, sections apart, unicode kept.

The data already holds the fields in the order of the case template (the schema's order); this
module only decides how each value looks: mappings and lists in block style, one blank line
between top-level sections, text of several lines as a literal block (``|``) and long text as a
folded one (``>``), so that a draft reads like the cases beside it.
"""

from __future__ import annotations

from collections.abc import Mapping
from typing import Any

import yaml

WIDTH = 96  # the line length of the hand-written cases
_FOLD_AT = 80


class _Dumper(yaml.SafeDumper):
    """Indents list items under their key, as the hand-written cases do."""

    def increase_indent(self, flow: bool = False, indentless: bool = False) -> None:
        super().increase_indent(flow, False)

    def choose_scalar_style(self) -> str:
        # Double quotes where quotes are needed, as the hand-written cases use them.
        style = super().choose_scalar_style()
        return '"' if style == "'" else style


def _text(dumper: yaml.SafeDumper, value: str) -> yaml.ScalarNode:
    """Long text, or text of paragraphs, as a folded block; PyYAML falls back to quotes
    where a block cannot hold the text exactly (leading spaces, trailing blanks)."""
    lines = value.split("\n")
    style = None
    if len(value) > _FOLD_AT or len(lines) > 1:
        short_lines = len(lines) > 1 and all(len(line) <= _FOLD_AT for line in lines)
        foldable = all(line == line.strip() for line in lines) and "\n\n\n" not in value
        style = "|" if short_lines or not foldable else ">"
    return dumper.represent_scalar("tag:yaml.org,2002:str", value, style=style)


_Dumper.add_representer(str, _text)


def render_case(data: Mapping[str, Any], header: str) -> str:
    """The case as YAML text, after ``header`` (comment lines, each starting with ``#``)."""
    parts = [header.rstrip("\n")]
    for key, value in data.items():
        parts.append(
            yaml.dump(
                {key: value},
                Dumper=_Dumper,
                sort_keys=False,
                allow_unicode=True,
                default_flow_style=False,
                width=WIDTH,
            ).rstrip("\n")
        )
    return "\n\n".join(parts) + "\n"
