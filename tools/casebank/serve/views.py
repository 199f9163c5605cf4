"""Role views: one audience's part of a case, derived from the schema's ``audience`` metadata.

``patient`` is what the simulated patient knows and may say; ``on_request`` is what is given
only when asked for (examination findings, results); ``examiner`` is the diagnosis, the
checklists, management, scoring and everything about the case itself. A field's audience is
declared in the schema and inherited by what is below it; a field the schema does not know is
in no view, so nothing can leak by being misspelt.
"""

from __future__ import annotations

from collections.abc import Iterator, Mapping
from typing import Any

from casebank.format.document import Path, texts_at
from casebank.format.walk import AUDIENCES, Field, case_tree, field_at

ROLES = AUDIENCES


def view(data: Mapping[str, Any], role: str) -> dict[str, Any]:
    """The part of ``data`` whose audience is ``role``, keeping the case's shape."""
    if role not in ROLES:
        raise ValueError(f"unknown role {role!r}: use one of {', '.join(ROLES)}")
    kept = _keep(case_tree(), data, role)
    return kept if isinstance(kept, dict) else {}


_NOTHING = object()


def served(value: Any, at: Path) -> Any:
    """What of the value at document path ``at`` may be served on request: the part whose
    audience is ``on_request`` (a result without its examiner note or its ``answers``
    relation, an examination finding without its examiner note), or None."""
    node = field_at(case_tree(), at)
    kept = _NOTHING if node is None else _keep(node, value, "on_request")
    return None if kept is _NOTHING else kept


def _form(node: Field, value: Any) -> Field:
    """Of a field's alternatives (``anyof``), the one that describes ``value``: for a
    mapping, the form with named fields when every key is one of them, else a mapping of
    chosen keys; the field itself when it has no alternatives."""
    if not node.choices:
        return node
    if isinstance(value, dict):
        named = [c for c in node.choices if c.fields is not None and set(value) <= set(c.fields)]
        chosen = [c for c in node.choices if c.values is not None]
        for form in (*named, *chosen):
            return form
    return node


_AUDIENCES_BELOW: dict[Field, frozenset[str | None]] = {}


def _audiences(node: Field) -> frozenset[str | None]:
    """Every audience in ``node``'s subtree (its alternatives included), found once per node:
    a subtree without the role's audience holds nothing the role sees."""
    found = _AUDIENCES_BELOW.get(node)
    if found is None:
        below: set[str | None] = {node.audience}
        for child in (
            *(node.fields.values() if node.fields is not None else ()),
            *(c for c in (node.items, node.values) if c is not None),
            *node.choices,
        ):
            below |= _audiences(child)
        found = _AUDIENCES_BELOW[node] = frozenset(below)
    return found


def _keep(node: Field, value: Any, role: str) -> Any:
    """``value`` as the role sees it, or _NOTHING. Mappings with named fields are filtered key
    by key (so a field unknown to the schema is dropped), mappings of chosen keys value by
    value; anything else is the role's whole or not at all.

    A value that is neither a mapping nor a list is the role's exactly when its field's
    audience is the role (what a call would find): the loops decide that without a call, as
    most of a case's values are such leaves."""
    if role not in _audiences(node):
        return _NOTHING
    node = _form(node, value)
    if node.values is not None and node.fields is None and isinstance(value, dict):
        out = {}
        child = node.values
        for key, item in value.items():
            if not isinstance(item, (dict, list)):
                if child.audience == role:
                    out[key] = item
            elif (kept := _keep(child, item, role)) is not _NOTHING:
                out[key] = kept
        return out if out else _NOTHING
    if node.fields is not None and isinstance(value, dict):
        out = {}
        fields = node.fields
        for key, item in value.items():
            named = fields.get(key)
            if named is None:
                continue
            if not isinstance(item, (dict, list)):
                if named.audience == role:
                    out[key] = item
            elif (kept := _keep(named, item, role)) is not _NOTHING:
                out[key] = kept
        return out if out else _NOTHING
    if node.audience != role:
        return _NOTHING
    if node.items is not None and isinstance(value, list):
        each = node.items
        shown = []
        for item in value:
            if not isinstance(item, (dict, list)):
                if each.audience == role:
                    shown.append(item)
            elif (kept := _keep(each, item, role)) is not _NOTHING:
                shown.append(kept)
        return shown
    return value


def texts(data: Mapping[str, Any], role: str) -> Iterator[tuple[Path, str]]:
    """Every text in the role's view, with its path (for leak checks)."""
    yield from texts_at(view(data, role))
