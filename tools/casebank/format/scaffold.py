"""The scaffold `casebank new` writes: every required field, generated from the schema tree.

Nothing here restates the format. Each field becomes a placeholder built from its own schema
entry: text fields get ``"TODO: <description>, e.g. <example>"``, fields with a fixed set of
values get ``null`` and a comment listing them, numbers get ``null`` and their description.
Optional fields appear only where the schema asks for them (``meta.scaffold``), and a field
whose ``meta.scaffold`` holds a value is written with exactly that value. Validation then points
at every blank (rule CB418 for TODO text, CB205 for null), so an author is walked through the
case field by field.
"""

from __future__ import annotations

import json
from collections.abc import Iterator, Mapping
from typing import Any

from casebank.format.layout import CASES_DIR
from casebank.format.walk import Field, case_tree

HEADER = """\
# yaml-language-server: $schema=../schema/case.schema.json
# A new case. Replace every TODO and null; `casebank validate {path}` points at each one left.
# Field reference: docs/schema.md. Checks: docs/rules.md. How to contribute: CONTRIBUTING.md.
"""
PLACEHOLDER = "TODO"


def case_template(case_id: str) -> str:
    """A new case's text; also committed as docs/case-template.yaml for the web editor."""
    lines = list(_mapping(case_tree(), 0, {"case_id": case_id}))
    return HEADER.format(path=f"{CASES_DIR}/{case_id}.yaml") + "\n".join(lines) + "\n"


def _wanted(node: Field) -> bool:
    return node.required or "scaffold" in node.meta


def _mapping(node: Field, indent: int, given: Mapping[str, Any]) -> Iterator[str]:
    assert node.fields is not None
    pad = "  " * indent
    for key, child in node.fields.items():
        if not _wanted(child):
            continue
        if indent == 0 and key != "case_id":
            yield ""
            yield f"# {child.description}"
        if key in given:
            yield f"{pad}{key}: {given[key]}  # {_comment(child)}"
            continue
        yield from _entry(key, child, indent)


def _entry(key: str, node: Field, indent: int) -> Iterator[str]:
    pad = "  " * indent
    label = json.dumps(key, ensure_ascii=False) if not key.isidentifier() else key
    preset = node.meta.get("scaffold", True)
    if preset == "example":
        preset = node.example
    if preset is not True:
        # A top-level section already has its description above it.
        yield from _value(label, preset, indent, _comment(node) if indent else "")
    elif node.fields is not None and node.types == ("dict",):
        yield f"{pad}{label}:"
        yield from _mapping(node, indent + 1, {})
    elif node.values is not None:
        yield f"{pad}{label}:"
        names = "a test name from catalog.yaml" if node.names == "test" else "a name"
        yield from _entry(f"{PLACEHOLDER}: {names}", node.values, indent + 1)
    elif node.is_a("list"):
        yield f"{pad}{label}: [{_todo(node)}]"
    elif "allowed" in node.rules and len(node.rules["allowed"]) == 1:
        yield f"{pad}{label}: {node.rules['allowed'][0]}  # {_comment(node)}"
    elif "allowed" in node.rules or not node.is_a("string"):
        yield f"{pad}{label}: null  # {_comment(node)}"
    else:
        yield f"{pad}{label}: {_todo(node)}"


def _value(label: str, value: Any, indent: int, comment: str) -> Iterator[str]:
    """A preset value: scalars and flat lists inline, mappings as blocks."""
    pad = "  " * indent
    tail = f"  # {comment}" if comment else ""
    if isinstance(value, Mapping):
        yield f"{pad}{label}:{tail}"
        for key, item in value.items():
            yield from _value(key, item, indent + 1, "")
        return
    yield f"{pad}{label}: {json.dumps(value, ensure_ascii=False)}{tail}"


def _comment(node: Field) -> str:
    description = node.description.rstrip(".")
    allowed = [str(a) for a in node.rules.get("allowed", ())]
    if len(allowed) > 1 and not all(a in description for a in allowed):
        return f"{description}: one of {', '.join(allowed)}"
    return description


def _todo(node: Field) -> str:
    return json.dumps(f"{PLACEHOLDER}: {_phrase(node)}", ensure_ascii=False)


def _phrase(node: Field) -> str:
    """The placeholder text: what belongs here, with the schema's example."""
    description = node.description.rstrip(".")
    description = description[:1].lower() + description[1:]
    example = node.example
    if isinstance(example, list) and example and isinstance(example[0], str):
        example = example[0]
    if isinstance(example, str) and len(example) <= 60:
        return f"{description}, e.g. {example}"
    return description
