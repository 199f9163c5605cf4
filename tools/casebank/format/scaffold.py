"""The scaffold `casebank new` writes: every required field, generated from the schema tree.

Nothing here restates the format. Each field becomes a placeholder built from its own schema
entry: text fields get ``"TODO: <description>, e.g. <example>"``, fields with a fixed set of
values get ``null`` and a comment listing them, numbers get ``null`` and their description.
Optional fields appear only where the schema asks for them (``meta.scaffold``), and a field
whose ``meta.scaffold`` holds a value is written with exactly that value. Validation then points
at every blank (rule CB418 for TODO text, CB205 for null), so an author is walked through the
case field by field.

An importer starts from the same scaffold as data (:func:`case_skeleton`): there each blank is a
``TODO`` text, since data holds no comments, and :func:`blank` gives the text of one field, to
which the importer adds what its source says.
"""

from __future__ import annotations

import copy
import json
import re
from collections.abc import Iterator, Mapping
from typing import Any

from casebank.format.layout import CASES_DIR
from casebank.format.walk import ITEM, Field, case_tree, field_at

HEADER = """\
# yaml-language-server: $schema=../schema/case.schema.json
# A new case. Replace every TODO and null; `casebank validate {path}` points at each one left.
# Field reference: docs/schema.md. Checks: docs/rules.md. How to contribute: CONTRIBUTING.md.
"""
PLACEHOLDER = "TODO"
# What other formats write where they have no content ("Not provided", "N/A", "Unknown"): their
# blank, not a finding. An importer makes it a TODO; rule CB429 points at any left in a case.
_STAND_IN = re.compile(
    r"^(n/?a|n a|na|unk|unknown|not known|unspecified|tbd|tbc|tba|to be (determined|confirmed)"
    r"|-+|\?+|none (reported|given|provided|documented|mentioned|stated|specified)"
    r"|((information|info|data|details?|findings?|results?|values?) )?(is |are )?not "
    r"(provided|specified|available|given|mentioned|recorded|reported|documented|stated|"
    r"assessed|obtained|done|performed|examined|included)( in the (text|source|record|case|"
    r"report|scenario))?"
    r"|no (additional |relevant |pertinent |further |specific )?(information|info|data|details)"
    r"( (provided|given|available|reported|specified))?"
    r"|not applicable( (for|due to|given|in) [\w' ]{1,40})?)$"
)


def case_template(case_id: str) -> str:
    """A new case's text; also committed as docs/case-template.yaml for the web editor."""
    lines = list(_mapping(case_tree(), 0, {"case_id": case_id}))
    return HEADER.format(path=f"{CASES_DIR}/{case_id}.yaml") + "\n".join(lines) + "\n"


def case_skeleton(case_id: str) -> dict[str, Any]:
    """The scaffold as data: the fields and presets of :func:`case_template`, in schema order,
    with every blank a ``TODO`` text (where the template writes null and a comment, the text
    says what the comment does)."""
    return _fields(case_tree(), {"case_id": case_id})


def blank(path: str, context: str = "", *, example: bool = True) -> str:
    """The ``TODO`` text of the field at ``path`` (dotted: ``patient.age``,
    ``patient.pmh.[].condition``; a list's text is its items', and a mapping of chosen names'
    the text of a name: ``investigations.results`` gives ``TODO: a test name from
    catalog.yaml``), with ``context`` after it in brackets: what the source says, for the author.
    ``example=False`` leaves out the schema's example, where it would read as a value."""
    node = field_at(case_tree(), tuple(0 if p == ITEM else p for p in path.split(".")))
    if node is None or not node.description:
        raise KeyError(f"no described case field {path!r}")
    if node.values is not None:  # a mapping of chosen names: the placeholder of a name
        text = next(iter(_blank_value(node)))
    elif node.is_a("list"):
        text = _todo_text(node, example)
    else:
        text = _text_of_blank(node, example)
    return f"{text} ({context})" if context else text


def _fields(node: Field, given: Mapping[str, Any]) -> dict[str, Any]:
    assert node.fields is not None
    return {
        key: given[key] if key in given else _blank_value(child)
        for key, child in node.fields.items()
        if _wanted(child)
    }


def _blank_value(node: Field) -> Any:
    """What :func:`_entry` writes for ``node``, as data."""
    preset = node.meta.get("scaffold", True)
    if preset == "example":
        preset = node.example
    if preset is not True:
        return copy.deepcopy(preset)
    if node.fields is not None and node.types == ("dict",):
        return _fields(node, {})
    if node.values is not None:
        names = "a test name from catalog.yaml" if node.names == "test" else "a name"
        return {f"{PLACEHOLDER}: {names}": _blank_value(node.values)}
    if node.is_a("list"):
        return [_todo_text(node)]
    if "allowed" in node.rules and len(node.rules["allowed"]) == 1:
        return node.rules["allowed"][0]
    return _text_of_blank(node)


def _text_of_blank(node: Field, example: bool = True) -> str:
    if "allowed" in node.rules or not node.is_a("string"):
        return _choice_text(node)
    return _todo_text(node, example)


def _choice_text(node: Field) -> str:
    """The placeholder of a field the template leaves null: its comment, as text."""
    comment = _comment(node)
    return f"{PLACEHOLDER}: {comment[:1].lower()}{comment[1:]}"


# The characters a stand-in's folded text can begin with, past its dashes: the first of each
# word that starts one of _STAND_IN's forms, and "?". A test holds the two together.
STAND_IN_FIRST = frozenset("nutidfrva?")
_NOT_KEPT = re.compile(r"[^\w\s/?'-]")
_FIRST_KEPT = re.compile(r"[\w/?']")  # what folding keeps, but white space and dashes


def is_stand_in(text: str) -> bool:
    """True for text that only stands in for content: "Not provided", "N/A", "Unknown",
    "None reported", "Information not specified", "Not applicable for age"."""
    folded = text.casefold()
    first = _FIRST_KEPT.search(folded)
    if first is not None and first.group(0) not in STAND_IN_FIRST:
        return False  # one search, for the many texts whose first word starts no stand-in
    return stands_in(folded)


def stands_in(folded: str) -> bool:
    """:func:`is_stand_in` on text already case folded, read in full."""
    words = " ".join(_NOT_KEPT.sub(" ", folded).split())
    return bool(words) and bool(_STAND_IN.match(words.strip("- ") or words))


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
    return json.dumps(_todo_text(node), ensure_ascii=False)


def _todo_text(node: Field, example: bool = True) -> str:
    return f"{PLACEHOLDER}: {_phrase(node, example)}"


def _phrase(node: Field, with_example: bool = True) -> str:
    """The placeholder text: what belongs here, with the schema's example."""
    description = node.description.rstrip(".")
    description = description[:1].lower() + description[1:]
    example = node.example if with_example else None
    if isinstance(example, list) and example and isinstance(example[0], str):
        example = example[0]
    if isinstance(example, str) and len(example) <= 60:
        return f"{description}, e.g. {example}"
    return description
