"""Where a case names tests, read from the schema: every field marked ``names: "test"``.

Test names appear in lists of orders (``must_order``, ``catalog_hints``, a result's ``answers``),
where an item is a name or ``{test, site, laterality, specimen}`` (in ``must_order`` also
``{any_of: [...]}``, alternatives any one of which meets the item), and as the keys of
``investigations.results``. Rules, the results oracle and the scorer all find them here, so a new
field that holds test names is one schema annotation, not a change in each of them.
"""

from __future__ import annotations

from collections.abc import Iterator, Mapping
from dataclasses import dataclass, field
from functools import cache
from typing import Any

from casebank.format.document import Path
from casebank.format.walk import ITEM, VALUE, Field, case_tree

QUALIFIERS = ("site", "laterality", "specimen")


@dataclass(frozen=True)
class NamedTest:
    """One place a case names a test: where, the name as written, and its qualifiers."""

    path: Path  # the name's own place (a list item, an order's `test`, or a results key)
    name: str
    holder: tuple[str, ...]  # the schema path of the list or mapping holding it
    qualifiers: Mapping[str, str] = field(default_factory=dict)
    is_key: bool = False


@cache
def _test_fields() -> tuple[Field, ...]:
    return tuple(f for f in case_tree().walk() if f.meta.get("names") == "test")


def _expand(value: Any, schema_path: tuple[str, ...], at: Path) -> Iterator[tuple[Path, Any]]:
    """Every (document path, value) the schema path reaches in the data."""
    if not schema_path:
        yield at, value
        return
    step, rest = schema_path[0], schema_path[1:]
    if step == ITEM:
        if isinstance(value, list):
            for i, item in enumerate(value):
                yield from _expand(item, rest, (*at, i))
    elif step == VALUE:
        if isinstance(value, dict):
            for key, item in value.items():
                yield from _expand(item, rest, (*at, key))
    elif isinstance(value, dict) and step in value:
        yield from _expand(value[step], rest, (*at, step))


def _items(value: Any, at: Path, schema_path: tuple[str, ...]) -> Iterator[NamedTest]:
    if isinstance(value, dict):
        for key in value:
            yield NamedTest((*at, key), key, schema_path, is_key=True)
    elif isinstance(value, list):
        for group in _groups(value, at, schema_path):
            yield from group


def _groups(value: Any, at: Path, schema_path: tuple[str, ...]) -> Iterator[list[NamedTest]]:
    """Each item of a list of orders as its alternatives: one order, or an ``any_of``'s."""
    for i, item in enumerate(value if isinstance(value, list) else ()):
        if isinstance(item, dict) and isinstance(item.get("any_of"), list):
            yield [
                named
                for j, choice in enumerate(item["any_of"])
                for named in _order(choice, (*at, i, "any_of", j), schema_path)
            ]
        else:
            yield list(_order(item, (*at, i), schema_path))


def _order(item: Any, at: Path, schema_path: tuple[str, ...]) -> Iterator[NamedTest]:
    if isinstance(item, str):
        yield NamedTest(at, item, schema_path)
    elif isinstance(item, dict) and isinstance(item.get("test"), str):
        qualifiers = {q: item[q] for q in QUALIFIERS if isinstance(item.get(q), str)}
        yield NamedTest((*at, "test"), item["test"], schema_path, qualifiers)


def named_tests(data: Mapping[str, Any]) -> list[NamedTest]:
    """Every place the case names a test, in schema order."""
    found: list[NamedTest] = []
    for node in _test_fields():
        for at, value in _expand(data, node.path, ()):
            found.extend(_items(value, at, node.path))
    return found


def orders(data: Mapping[str, Any], *path: str) -> list[NamedTest]:
    """The test names in one list of orders (``orders(data, "investigations", "expected",
    "must_order")``), qualifiers included."""
    value: Any = data
    for step in path:
        value = value.get(step) if isinstance(value, dict) else None
    return list(_items(value, tuple(path), tuple(path)))


def order_groups(data: Mapping[str, Any], *path: str) -> list[list[NamedTest]]:
    """The items of one list of orders, each as its alternatives (``must_order`` items may be
    ``{any_of: [...]}``): an item is met when any one of its alternatives is."""
    value: Any = data
    for step in path:
        value = value.get(step) if isinstance(value, dict) else None
    return [group for group in _groups(value, tuple(path), tuple(path)) if group]
