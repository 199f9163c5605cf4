"""The one walker of the Cerberus schemas: a tree of ``Field`` nodes that every view reads.

Cerberus describes nesting in three ways (``schema`` for a mapping's named fields or a list's
items, ``keysrules``/``valuesrules`` for a mapping of chosen keys, ``anyof`` for alternatives).
This module is the only place that knows those shapes; the fast path, the JSON Schema, the
schema reference, the error messages, the ``new`` scaffold and the role views all walk the
``Field`` tree instead of the raw dictionaries, so they cannot disagree about what is where.

A field's audience (who may see it: ``patient``, ``on_request`` or ``examiner``) and the kind of
names it holds (``test`` for catalog test names) are declared in its ``meta`` and inherited by
everything below it.
"""

from __future__ import annotations

from collections.abc import Iterator, Mapping
from dataclasses import dataclass, field
from functools import cache
from typing import Any

from casebank.format.document import Path

# The Cerberus rules the schemas may use; every view knows each of them.
KNOWN_RULES = frozenset(
    {
        "type",
        "required",
        "allowed",
        "empty",
        "regex",
        "min",
        "max",
        "minlength",
        "maxlength",
        "schema",
        "keysrules",
        "valuesrules",
        "anyof",
        "meta",
        "allow_unknown",  # only ever False, stated where Cerberus would not infer it
    }
)
AUDIENCES = ("patient", "on_request", "examiner")

ITEM = "[]"  # a list's items, in a schema path
VALUE = "*"  # the values of a mapping of chosen keys, in a schema path


@dataclass(frozen=True, eq=False)
class Field:
    """One node of a schema: its rules, and the nodes nested in it."""

    path: tuple[str, ...]
    rules: Mapping[str, Any]
    required: bool
    types: tuple[str, ...]
    audience: str | None
    names: str | None  # "test" where the values (or keys) are catalog test names
    fields: Mapping[str, Field] | None = None  # a mapping's named fields
    items: Field | None = None  # a list's items
    keys: Field | None = None  # a mapping's keys
    values: Field | None = None  # a mapping's values
    choices: tuple[Field, ...] = ()  # anyof: the value matches at least one
    meta: Mapping[str, Any] = field(default_factory=dict)

    @property
    def name(self) -> str:
        return self.path[-1] if self.path else ""

    @property
    def description(self) -> str:
        return str(self.meta.get("description", ""))

    @property
    def has_example(self) -> bool:
        return "example" in self.meta

    @property
    def example(self) -> Any:
        return self.meta.get("example")

    def is_a(self, kind: str) -> bool:
        return kind in self.types

    def children(self) -> Iterator[Field]:
        if self.fields is not None:
            yield from self.fields.values()
        for child in (self.items, self.keys, self.values):
            if child is not None:
                yield child
        yield from self.choices

    def walk(self) -> Iterator[Field]:
        """This field and every field below it, depth first, in schema order."""
        stack = [self]
        while stack:
            node = stack.pop()
            yield node
            stack.extend(reversed(list(node.children())))


def _types(rules: Mapping[str, Any]) -> tuple[str, ...]:
    kind = rules.get("type", ())
    return (kind,) if isinstance(kind, str) else tuple(kind)


def build(
    rules: Mapping[str, Any],
    path: tuple[str, ...] = (),
    *,
    audience: str | None = None,
    names: str | None = None,
) -> Field:
    """The Field tree of one field's rules (refuses rules no view knows)."""
    unknown = set(rules) - KNOWN_RULES
    if unknown:
        raise ValueError(
            f"schema field {'.'.join(path) or '<root>'}: unknown rules {sorted(unknown)}"
        )
    if rules.get("allow_unknown", False) is not False:
        raise ValueError(f"schema field {'.'.join(path)}: unknown fields are never allowed")
    meta = rules.get("meta") or {}
    audience = meta.get("audience", audience)
    if audience is not None and audience not in AUDIENCES:
        raise ValueError(f"schema field {'.'.join(path)}: unknown audience {audience!r}")
    names = meta.get("names", names)
    types = _types(rules)
    inner = rules.get("schema")
    nested: dict[str, Any] = {}
    if isinstance(inner, Mapping) and "dict" in types:
        nested["fields"] = {
            key: build(sub, (*path, key), audience=audience, names=names)
            for key, sub in inner.items()
        }
    elif isinstance(inner, Mapping) and "list" in types:
        nested["items"] = build(inner, (*path, ITEM), audience=audience, names=names)
    if "keysrules" in rules:
        nested["keys"] = build(rules["keysrules"], path, audience=audience, names=names)
    if "valuesrules" in rules:
        nested["values"] = build(
            rules["valuesrules"], (*path, VALUE), audience=audience, names=None
        )
    if "anyof" in rules:
        # Cerberus validates each alternative with the field's own type where it names none.
        inherited = {"type": rules["type"]} if "type" in rules else {}
        nested["choices"] = tuple(
            build({**inherited, **choice}, path, audience=audience, names=names)
            for choice in rules["anyof"]
        )
    return Field(
        path=path,
        rules=rules,
        required=bool(rules.get("required")),
        types=types,
        audience=audience,
        names=names,
        meta=meta,
        **nested,
    )


def mapping(fields: Mapping[str, Any]) -> Field:
    """The tree of a whole document: a mapping with exactly these fields."""
    return build({"type": "dict", "schema": fields})


@cache
def case_tree() -> Field:
    from casebank.format.schema import CASE_SCHEMA

    return mapping(CASE_SCHEMA)


@cache
def catalog_tree() -> Field:
    from casebank.format.schema import CATALOG_SCHEMA

    return mapping(CATALOG_SCHEMA)


def field_at(root: Field, path: Path) -> Field | None:
    """The schema node for the value at a document path (None where the schema does not reach).

    Where a value may take several forms (``anyof``), the first form that reaches the path wins.
    """
    node: Field | None = root
    for part in path:
        if node is None:
            return None
        node = _step(node, part)
    return node


def _step(node: Field, part: str | int) -> Field | None:
    if isinstance(part, int):
        if node.items is not None:
            return node.items
    elif node.fields is not None and part in node.fields:
        return node.fields[part]
    elif node.values is not None:
        return node.values
    for choice in node.choices:
        found = _step(choice, part)
        if found is not None:
            return found
    return None


def paths_holding(root: Field, names: str) -> list[Field]:
    """The fields whose values (list items or mapping keys) are names of the given kind."""
    return [f for f in root.walk() if f.meta.get("names") == names]
