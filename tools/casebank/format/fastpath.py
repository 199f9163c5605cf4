"""A fast yes/no check compiled from the schema tree, so Cerberus only runs where it must.

Cerberus stays the single source of truth: this module reads the same schema (through the one
walker, ``casebank.format.walk``) and answers one question, "would Cerberus accept this
document?", about twenty times faster. When the answer is yes (nearly every case in a healthy
repository) there is nothing to report; when it is no, Cerberus itself validates the document and
produces the error tree every message comes from. A property test checks on many random
documents that both always agree, and the walker refuses a schema rule that no view knows, so the
two cannot drift apart silently.

Semantics mirrored from Cerberus 1.3 (``cerberus/validator.py``): a null value fails unless
``nullable``; a failed ``type`` ends the field's checks; ``number`` excludes booleans while
``integer`` admits them; ``regex`` must match from the start to ``$``; ``min``/``max`` apply to
comparable values; ``minlength``/``maxlength`` apply to any sized value, text included;
``empty: False`` fails on a sized value of length 0; unknown fields fail; ``anyof`` passes when
one alternative passes.
"""

from __future__ import annotations

import re
from collections.abc import Callable, Mapping, Sequence, Sized
from typing import Any

from casebank.format.walk import Field

Check = Callable[[Any], bool]


# The loader's containers are dicts and lists: tested first, the ABC checks (slow) only for
# anything else, so the answers are the same for every value.
def _is_mapping(v: Any) -> bool:
    return isinstance(v, (dict, Mapping))  # dict first: the ABC check only for the rest


def _is_sized(v: Any) -> bool:
    return isinstance(v, (str, list, dict, Sized))


# For each type, the classes it admits and those it then excludes (Cerberus: a boolean is an
# integer but not a number; text is not a list): one isinstance for types that exclude nothing.
_CLASSES: dict[str, tuple[tuple[type, ...], tuple[type, ...]]] = {
    "string": ((str,), ()),
    "number": ((int, float), (bool,)),
    "integer": ((int,), ()),
    "float": ((float,), ()),
    "boolean": ((bool,), ()),
    "dict": ((dict, Mapping), ()),
    "list": ((list, Sequence), (str,)),
}


def _one_type(name: str) -> Check:
    admitted, excluded = _CLASSES[name]
    if excluded:
        return lambda v: isinstance(v, admitted) and not isinstance(v, excluded)
    return lambda v: isinstance(v, admitted)


def _type_check(names: tuple[str, ...]) -> Check:
    if len(names) == 1:
        return _one_type(names[0])
    if any(_CLASSES[n][1] for n in names):
        checks = [_one_type(n) for n in names]
        return lambda v: any(c(v) for c in checks)
    classes = tuple(c for n in names for c in _CLASSES[n][0])
    return lambda v: isinstance(v, classes)


def compile_field(node: Field) -> Check:
    """The yes/no check for one field (``required`` is handled by the enclosing mapping)."""
    rules = node.rules
    steps: list[Check] = []
    if "allowed" in rules:
        allowed = list(rules["allowed"])
        steps.append(
            lambda v: all(i in allowed for i in v) if isinstance(v, list) else v in allowed
        )
    if rules.get("empty") is False:
        steps.append(lambda v: not (_is_sized(v) and len(v) == 0))
    if "regex" in rules:
        pattern = rules["regex"]
        compiled = re.compile(pattern if pattern.endswith("$") else pattern + "$")
        steps.append(lambda v: not isinstance(v, str) or compiled.match(v) is not None)
    steps += _bounds(rules)
    if (
        node.types == ("dict",)
        and not steps
        and node.fields is not None
        and not (node.items or node.keys or node.values or node.choices)
    ):
        return compile_mapping(node)  # a mapping of named fields: its check tests the type
    steps += _nested(node)
    return _fused(node.types, steps, rules)


def _fused(types: tuple[str, ...], steps: list[Check], rules: Mapping[str, Any]) -> Check:
    """The type check and the steps as one function, with the common shapes of a case's
    fields written out (a text that must not be empty is 105 of the 265): a call per
    value, not one per rule. No type admits null, so with a type there is no null test."""
    if not types:
        if not steps:
            return lambda value: value is not None
        return lambda value: value is not None and all(step(value) for step in steps)
    type_ok = _type_check(types)
    if not steps:
        return type_ok
    if types == ("string",) and len(steps) == 1 and rules.get("empty") is False:
        return lambda value: isinstance(value, str) and value != ""
    if len(steps) == 1:
        [step] = steps
        return lambda value: type_ok(value) and step(value)

    def check(value: Any) -> bool:
        if not type_ok(value):
            return False
        for step in steps:  # noqa: SIM110 (a loop: all() over a generator costs a frame per field)
            if not step(value):
                return False
        return True

    return check


def _bounds(rules: Mapping[str, Any]) -> list[Check]:
    steps: list[Check] = []
    if "min" in rules:
        low = rules["min"]
        steps.append(lambda v: not _comparable(v, low) or not v < low)
    if "max" in rules:
        high = rules["max"]
        steps.append(lambda v: not _comparable(v, high) or not v > high)
    if "minlength" in rules:
        shortest = rules["minlength"]
        steps.append(lambda v: not _is_sized(v) or len(v) >= shortest)
    if "maxlength" in rules:
        longest = rules["maxlength"]
        steps.append(lambda v: not _is_sized(v) or len(v) <= longest)
    return steps


def _comparable(value: Any, bound: Any) -> bool:
    try:
        value < bound  # noqa: B015  (only asking whether comparison is possible)
    except TypeError:
        return False
    return True


def _nested(node: Field) -> list[Check]:
    steps: list[Check] = []
    if node.fields is not None:
        mapping_ok = compile_mapping(node)
        steps.append(lambda v: not _is_mapping(v) or mapping_ok(v))
    if node.items is not None:
        steps.append(_each(compile_field(node.items), lambda v: v if isinstance(v, list) else ()))
    if node.keys is not None:
        steps.append(_each(compile_field(node.keys), lambda v: v if _is_mapping(v) else ()))
    if node.values is not None:
        steps.append(
            _each(compile_field(node.values), lambda v: v.values() if _is_mapping(v) else ())
        )
    if node.choices:
        steps.append(_any_of([compile_field(choice) for choice in node.choices]))
    return steps


def _any_of(options: list[Check]) -> Check:
    def check(value: Any) -> bool:
        for option in options:  # noqa: SIM110 (a loop, not any() over a generator)
            if option(value):
                return True
        return False

    return check


def _each(item_ok: Check, members: Callable[[Any], Any]) -> Check:
    """True when every member of a value passes (``members``: a list's items, a mapping's keys
    or values; none for a value of another kind)."""

    def check(value: Any) -> bool:
        for item in members(value):  # noqa: SIM110 (a loop, not all() over a generator)
            if not item_ok(item):
                return False
        return True

    return check


def compile_mapping(node: Field) -> Check:
    """The yes/no check for a mapping with exactly ``node``'s fields (unknown fields fail)."""
    assert node.fields is not None
    checks = {name: compile_field(child) for name, child in node.fields.items()}
    required = [name for name, child in node.fields.items() if child.required]

    def check(value: Any) -> bool:
        if not _is_mapping(value):
            return False
        for name in required:
            if name not in value:
                return False
        for name, item in value.items():
            field_check = checks.get(name)
            if field_check is None or not field_check(item):
                return False
        return True

    return check
