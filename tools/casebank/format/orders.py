"""Where a case names tests, read from the schema: every field marked ``names: "test"``.

Test names appear in lists of orders (``must_order``, ``catalog_hints``, a result's ``answers``),
where an item is a name or ``{test, site, laterality, specimen}`` (in ``must_order`` also
``{any_of: [...]}``, alternatives any one of which meets the item), and as the keys of
``investigations.results``. Rules, the results oracle and the scorer all find them here, so a new
field that holds test names is one schema annotation, not a change in each of them.
"""

from __future__ import annotations

from collections.abc import Iterator, Mapping
from functools import cache
from types import MappingProxyType
from typing import Any, NamedTuple

from casebank.format.document import Path
from casebank.format.walk import ITEM, VALUE, Field, case_tree

QUALIFIERS = ("site", "laterality", "specimen")


class NamedTest(NamedTuple):
    """One place a case names a test: where, the name as written, and its qualifiers. A named
    tuple, not a dataclass: a case names about fifty tests, and validation reads them all."""

    path: Path  # the name's own place (a list item, an order's `test`, or a results key)
    name: str
    holder: tuple[str, ...]  # the schema path of the list or mapping holding it
    qualifiers: Mapping[str, str] = MappingProxyType({})
    is_key: bool = False


@cache
def _test_fields() -> tuple[Field, ...]:
    return tuple(f for f in case_tree().walk() if f.meta.get("names") == "test")


def _expand(value: Any, schema_path: tuple[str, ...], at: Path) -> list[tuple[Path, Any]]:
    """Every (document path, value) the schema path reaches in the data, in document order."""
    reached = [(at, value)]
    for step in schema_path:
        if not reached:
            break
        following: list[tuple[Path, Any]] = []
        for here, item in reached:
            if step == ITEM:
                if isinstance(item, list):
                    following += [((*here, i), child) for i, child in enumerate(item)]
            elif step == VALUE:
                if isinstance(item, dict):
                    following += [((*here, key), child) for key, child in item.items()]
            elif isinstance(item, dict) and step in item:
                following.append(((*here, step), item[step]))
        reached = following
    return reached


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
            found += _items(value, at, node.path)
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
