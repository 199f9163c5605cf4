"""Random edits of valid documents, for the property-based tests."""

from __future__ import annotations

import copy
from typing import Any

from hypothesis import strategies as st


def paths(node: Any, prefix: tuple[Any, ...] = ()) -> list[tuple[Any, ...]]:
    """Every path in a JSON-like value, the root included."""
    found = [prefix]
    if isinstance(node, dict):
        for key, value in node.items():
            found += paths(value, (*prefix, key))
    elif isinstance(node, list):
        for i, value in enumerate(node):
            found += paths(value, (*prefix, i))
    return found


def mutate(
    draw: st.DrawFn,
    base: Any,
    values: st.SearchStrategy[Any],
    new_keys: st.SearchStrategy[str],
    edits: int = 3,
) -> Any:
    """A deep copy of ``base`` with 1 to ``edits`` random deletions, replacements or additions."""
    data = copy.deepcopy(base)
    for _ in range(draw(st.integers(1, edits))):
        candidates = [p for p in paths(data) if p]
        if not candidates:
            break
        path = draw(st.sampled_from(candidates))
        parent: Any = data
        for part in path[:-1]:
            parent = parent[part]
        action = draw(st.sampled_from(["delete", "replace", "replace", "add"]))
        if action == "delete":
            del parent[path[-1]]
        elif action == "replace":
            parent[path[-1]] = draw(values)
        elif isinstance(parent, dict):
            parent[draw(new_keys)] = draw(values)
        else:
            parent.append(draw(values))
    return data
