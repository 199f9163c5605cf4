"""Shape rules: what the Cerberus schema says, translated into positioned, plain-words problems.

Cerberus reports an error tree keyed by document path. Each leaf becomes one finding with the
line and column of the offending key or value; a missing field points at its parent's key.
"""

from __future__ import annotations

from collections.abc import Iterator
from typing import Any

import cerberus
from cerberus import errors as cerr

from casebank.catalog import did_you_mean
from casebank.fastschema import compile_mapping
from casebank.loader import AMBIGUOUS_NUMBER, Document
from casebank.problem import Path, Severity, format_path
from casebank.rules.base import Finding, Rule, declare

_F = "schema"

MISSING = declare(
    "CB201",
    "missing-field",
    Severity.ERROR,
    "A required field or section is missing.",
    """
    Every required section and field of the case format must be present, even when a list is
    short. The problem points at the mapping that should hold the field.

    Bad:

        ground_truth:
          differential: ["Unstable angina"]

    Good:

        ground_truth:
          final_diagnosis: "NSTEMI"
          differential: ["Unstable angina"]
    """,
    target="schema",
    family=_F,
)

UNKNOWN = declare(
    "CB202",
    "unknown-field",
    Severity.ERROR,
    "A field the format does not define.",
    """
    Unknown fields are refused so that a typo cannot silently drop data. The message suggests
    the field you probably meant.

    Bad:

        ground_truth:
          diferential: ["Unstable angina"]

    Good:

        ground_truth:
          differential: ["Unstable angina"]
    """,
    target="schema",
    family=_F,
)

WRONG_TYPE = declare(
    "CB203",
    "wrong-type",
    Severity.ERROR,
    "A value of the wrong kind.",
    """
    A field holds the wrong kind of value: text where a number is needed, a single value where
    a list is needed. YAML 1.1 reads some unquoted words as booleans or numbers (`no`, `on`,
    `1e3`); quote them when you mean text.

    Bad:

        metadata:
          title: no

    Good:

        metadata:
          title: "no"
    """,
    target="schema",
    family=_F,
)

NOT_ALLOWED = declare(
    "CB204",
    "value-not-allowed",
    Severity.ERROR,
    "A value outside the field's allowed set.",
    """
    Fields such as difficulty, sex and result type take one of a fixed set of values.

    Bad:

        metadata:
          difficulty: moderate

    Good:

        metadata:
          difficulty: medium
    """,
    target="schema",
    family=_F,
)

EMPTY = declare(
    "CB205",
    "empty-value",
    Severity.ERROR,
    "A field present but empty.",
    """
    A field that is present must hold a value. Remove an optional field rather than leave it
    empty.

    Bad:

        presentation:
          chief_complaint: ""

    Good:

        presentation:
          chief_complaint: "Chest pain"
    """,
    target="schema",
    family=_F,
)

BAD_FORMAT = declare(
    "CB206",
    "bad-format",
    Severity.ERROR,
    "A value that does not match its required pattern.",
    """
    Identifiers and codes have a fixed form: `case_id` is lowercase letters, digits and single
    underscores; a LOINC code is digits, a hyphen and a check digit.

    Bad:

        case_id: Chest-Pain-1

    Good:

        case_id: chest_pain_001
    """,
    target="schema",
    family=_F,
)

OUT_OF_RANGE = declare(
    "CB207",
    "out-of-range",
    Severity.ERROR,
    "A number below its minimum or above its maximum.",
    """
    Bad:

        patient:
          age: 230

    Good:

        patient:
          age: 23
    """,
    target="schema",
    family=_F,
)

TOO_SHORT = declare(
    "CB208",
    "too-short",
    Severity.ERROR,
    "A list with too few items, or a text shorter than required.",
    """
    Lists such as the differential, must-ask questions and critical safety errors need at
    least one item.

    Bad:

        ground_truth:
          final_diagnosis: "Asthma exacerbation"
          differential: []

    Good:

        ground_truth:
          final_diagnosis: "Asthma exacerbation"
          differential: ["Asthma exacerbation", "Pneumothorax"]
    """,
    target="schema",
    family=_F,
)

LANGUAGE = declare(
    "CB301",
    "language-en",
    Severity.ERROR,
    "metadata.language must be en.",
    """
    The MVP format holds English cases only (spec, section 5). Translations belong under
    `localization`.

    Bad:

        metadata:
          language: fr

    Good:

        metadata:
          language: en
    """,
    target="schema",
    family=_F,
)

_KIND = {
    "string": "text",
    "number": "a number",
    "integer": "a whole number",
    "float": "a number",
    "boolean": "true or false",
    "dict": "a mapping of fields",
    "list": "a list",
}


def describe(value: Any) -> str:
    if value is None:
        return "empty (null)"
    if isinstance(value, bool):
        return f"the boolean {str(value).lower()}"
    if isinstance(value, (int, float)):
        return f"the number {value}"
    if isinstance(value, str):
        return f"the text `{value}`"
    if isinstance(value, list):
        return "a list"
    return "a mapping"


def schema_node(schema: dict[str, Any], path: Path) -> dict[str, Any] | None:
    """The schema rules for the value at ``path`` (None where the schema does not reach)."""
    node: dict[str, Any] | None = {"type": "dict", "schema": schema}
    for part in path:
        if node is None:
            return None
        if isinstance(part, int):
            node = node.get("schema") if "list" in _types(node) else None
        elif isinstance(node.get("schema"), dict) and "dict" in _types(node):
            node = node["schema"].get(part)
        else:
            node = node.get("valuesrules")
    return node


def _types(node: dict[str, Any]) -> list[str]:
    t = node.get("type", [])
    return [t] if isinstance(t, str) else list(t)


def _description(node: dict[str, Any] | None) -> str:
    if not node:
        return ""
    meta = node.get("meta") or {}
    return str(meta.get("description", ""))


def _example(node: dict[str, Any] | None) -> str:
    if not node or "example" not in (node.get("meta") or {}):
        return ""
    import json

    return json.dumps(node["meta"]["example"], ensure_ascii=False)


class SchemaChecker:
    """One reusable Cerberus validator for one schema (building validators is the slow part)."""

    def __init__(self, schema: dict[str, Any]) -> None:
        self.schema = schema
        self.validator = cerberus.Validator(schema)
        # A compiled yes/no answer; Cerberus runs only for documents it refuses (see fastschema).
        self.accepts = compile_mapping(schema)

    def check(self, doc: Document) -> Iterator[tuple[Rule, Finding]]:
        if self.accepts(doc.data) or self.validator.validate(doc.data, normalize=False):
            return
        for error in _leaves(self.validator._errors):
            found = self._translate(doc, error)
            if found is not None:
                yield found

    def _translate(self, doc: Document, error: Any) -> tuple[Rule, Finding] | None:
        path: Path = tuple(error.document_path)
        where = format_path(path) or "the top level"
        field_name = str(path[-1]) if path else "the file"
        node = schema_node(self.schema, path)
        code = error.code
        if code == cerr.REQUIRED_FIELD.code:
            parent = format_path(path[:-1])
            place = f"under `{parent}`" if parent else "at the top level"
            example = _example(node)
            return MISSING, Finding(
                path,
                f"required field `{field_name}` is missing {place}",
                f"add `{field_name}:` {place}: {_description(node)}"
                + (f" Example: {field_name}: {example}" if example else ""),
            )
        if code == cerr.UNKNOWN_FIELD.code:
            return self._unknown(path, field_name)
        if code == cerr.BAD_TYPE.code:
            return self._wrong_type(doc, path, where, node, error)
        if code in (cerr.UNALLOWED_VALUE.code, cerr.UNALLOWED_VALUES.code):
            return self._not_allowed(path, where, error)
        if code in (cerr.EMPTY_NOT_ALLOWED.code, cerr.NOT_NULLABLE.code):
            wanted = _description(node).rstrip(".") or "a value"
            optional = "" if (node or {}).get("required") else ", or remove the line"
            return EMPTY, Finding(
                path, f"`{where}` is empty", f"write {wanted[0].lower()}{wanted[1:]}{optional}"
            )
        if code == cerr.REGEX_MISMATCH.code:
            return BAD_FORMAT, Finding(
                path,
                f"`{where}` is `{error.value}`, which is not valid here",
                _format_hint(field_name, node),
            )
        if code in (cerr.MIN_VALUE.code, cerr.MAX_VALUE.code):
            side = "below the minimum" if code == cerr.MIN_VALUE.code else "above the maximum"
            return OUT_OF_RANGE, Finding(
                path,
                f"`{where}` is {error.value}, {side} of {error.constraint}",
                f"check the value: {_description(node)}",
            )
        if code in (cerr.MIN_LENGTH.code, cerr.MAX_LENGTH.code):
            if isinstance(error.value, str):
                return TOO_SHORT, Finding(
                    path,
                    f"`{where}` is too short (at least {error.constraint} characters)",
                    _description(node),
                )
            return TOO_SHORT, Finding(
                path,
                f"`{where}` has {len(error.value)} items; at least {error.constraint} needed",
                f"add at least {error.constraint}: {_description(node)}",
            )
        return WRONG_TYPE, Finding(
            path, f"`{where}`: {error.rule} {error.constraint!r} failed", _description(node)
        )

    def _unknown(self, path: Path, field_name: str) -> tuple[Rule, Finding]:
        parent_node = schema_node(self.schema, path[:-1])
        known = list((parent_node or {}).get("schema") or {})
        parent = format_path(path[:-1])
        place = f"of `{parent}`" if parent else "at the top level"
        suggestion = did_you_mean(field_name, known)
        hint = (
            f"rename it to `{suggestion.split('`')[1]}`"
            if suggestion
            else f"remove it; the fields allowed here are: {', '.join(known)}"
        )
        return UNKNOWN, Finding(
            path,
            f"`{field_name}` is not a field {place}{suggestion}",
            hint,
            at_key=True,
        )

    def _wrong_type(
        self, doc: Document, path: Path, where: str, node: dict[str, Any] | None, error: Any
    ) -> tuple[Rule, Finding] | None:
        wanted = error.constraint if isinstance(error.constraint, list) else [error.constraint]
        expected = " or ".join(_KIND.get(str(w), str(w)) for w in wanted)
        source = doc.plain_non_text.get(path)
        if source is not None and "string" in wanted:
            if _is_ambiguous_number(source):
                return None  # the loader's ambiguous-number problem already says it all
            return WRONG_TYPE, Finding(
                path,
                f"`{where}` must be text, but YAML reads the unquoted `{source}` as "
                f"{describe(error.value)}",
                f'put it in quotes: "{source}"',
            )
        return WRONG_TYPE, Finding(
            path,
            f"`{where}` must be {expected}, but it is {describe(error.value)}",
            _description(node) + (f" Example: {_example(node)}" if _example(node) else ""),
        )

    def _not_allowed(self, path: Path, where: str, error: Any) -> tuple[Rule, Finding]:
        allowed = [str(a) for a in error.constraint]
        if path == ("metadata", "language"):
            return LANGUAGE, Finding(
                path,
                f"the case language is `{error.value}`; casebank cases are written in "
                "English (`en`)",
                "set `language: en`; translations belong under `localization`",
            )
        values = error.value if isinstance(error.value, list) else [error.value]
        bad = [str(v) for v in values if v not in error.constraint]
        shown = ", ".join(f"`{b}`" for b in bad) or f"`{error.value}`"
        suggestion = did_you_mean(bad[0], allowed) if bad else ""
        return NOT_ALLOWED, Finding(
            path,
            f"`{where}` is {shown}, which is not allowed{suggestion}",
            f"use one of: {', '.join(allowed)}",
        )


def _format_hint(field_name: str, node: dict[str, Any] | None) -> str:
    if field_name == "case_id":
        return (
            "use lowercase letters and digits joined by single underscores, e.g. "
            "chest_pain_001, and name the file the same"
        )
    if field_name == "loinc":
        return "a LOINC code is digits, a hyphen and one check digit, e.g. 2160-0"
    return _description(node)


def _is_ambiguous_number(source: str) -> bool:
    return bool(AMBIGUOUS_NUMBER.match(source))


def _leaves(errors: Any) -> Iterator[Any]:
    for error in errors:
        if error.is_group_error:
            yield from _leaves(error.child_errors)
        else:
            yield error
