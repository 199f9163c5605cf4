"""Shape rules: what the Cerberus schema says, translated into positioned, plain-words problems.

Cerberus reports an error tree keyed by document path. Each leaf becomes one finding with the
line and column of the offending key or value; a missing field points at its parent's key. One
table, ``error_table()``, maps every Cerberus error code to the rule and message it becomes; a test
fails if Cerberus defines a code the table does not map.
"""

from __future__ import annotations

import json
from collections.abc import Callable, Iterator
from functools import cache, cached_property
from typing import Any

from casebank.check.problem import Severity
from casebank.check.registry import Finding, Rule, rule
from casebank.format.catalog import did_you_mean
from casebank.format.document import Document, Path, format_path
from casebank.format.fastpath import compile_mapping
from casebank.format.identifiers import CASE_ID_EXAMPLE, CASE_ID_WORDS
from casebank.format.loader import AMBIGUOUS_NUMBER
from casebank.format.walk import Field, field_at

MISSING = rule(
    "CB201",
    "missing-field",
    Severity.ERROR,
    "A required field or section is missing.",
    doc="""
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
)

UNKNOWN = rule(
    "CB202",
    "unknown-field",
    Severity.ERROR,
    "A field the format does not define.",
    doc="""
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
)

WRONG_TYPE = rule(
    "CB203",
    "wrong-type",
    Severity.ERROR,
    "A value of the wrong kind.",
    doc="""
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
)

NOT_ALLOWED = rule(
    "CB204",
    "value-not-allowed",
    Severity.ERROR,
    "A value outside the field's allowed set.",
    doc="""
    Fields such as difficulty, sex and result type take one of a fixed set of values.

    Bad:

        metadata:
          difficulty: moderate

    Good:

        metadata:
          difficulty: medium
    """,
    target="schema",
)

EMPTY = rule(
    "CB205",
    "empty-value",
    Severity.ERROR,
    "A field present but empty.",
    doc="""
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
)

BAD_FORMAT = rule(
    "CB206",
    "bad-format",
    Severity.ERROR,
    "A value that does not match its required pattern.",
    doc="""
    Identifiers and codes have a fixed form: `case_id` is lowercase letters, digits and single
    underscores; a LOINC code is digits, a hyphen and a check digit.

    Bad:

        case_id: Chest-Pain-1

    Good:

        case_id: chest_pain_001
    """,
    target="schema",
)

OUT_OF_RANGE = rule(
    "CB207",
    "out-of-range",
    Severity.ERROR,
    "A number below its minimum or above its maximum.",
    doc="""
    Bad:

        patient:
          age: 230

    Good:

        patient:
          age: 23
    """,
    target="schema",
)

TOO_SHORT = rule(
    "CB208",
    "too-short",
    Severity.ERROR,
    "A list with too few items, or a text shorter than required.",
    doc="""
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
)

LANGUAGE = rule(
    "CB301",
    "language-en",
    Severity.ERROR,
    "metadata.language must be en.",
    doc="""
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
)

TOO_LONG = rule(
    "CB209",
    "too-long",
    Severity.ERROR,
    "A list with too many items, or a text longer than allowed.",
    target="schema",
    doc="""
    Some fields have an upper limit on their length, so that they stay what they are for (a
    short title, not a paragraph).

    Bad:

        metadata:
          title: "<three hundred characters of text>"

    Good:

        metadata:
          title: "Acute chest pain in a smoker"
    """,
)

NO_FORM = rule(
    "CB210",
    "no-form-matches",
    Severity.ERROR,
    "A value that fits none of the forms its field allows.",
    target="schema",
    doc="""
    Some fields take one of several forms (a physical examination finding is text, a measured
    value, or a section of findings). The problem points at the value and names the forms.

    Bad:

        physical_exam:
          cardiovascular: [1, 2]

    Good:

        physical_exam:
          cardiovascular: "Regular rhythm, no murmur."
    """,
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


def _example(node: Field | None) -> str:
    if node is None or not node.has_example:
        return ""
    return json.dumps(node.example, ensure_ascii=False)


def _description(node: Field | None) -> str:
    return node.description if node is not None else ""


@cache
def schema_checker(kind: str) -> SchemaChecker:
    """The process's one checker of the case (``"case"``) or catalog (``"catalog"``) schema."""
    from casebank.format.walk import case_tree, catalog_tree

    return SchemaChecker(case_tree() if kind == "case" else catalog_tree())


class SchemaChecker:
    """One reusable Cerberus validator for one schema (building validators is the slow part)."""

    def __init__(self, tree: Field) -> None:
        assert tree.fields is not None
        self.tree = tree
        # A compiled yes/no answer; Cerberus runs only for documents it refuses (see fastpath).
        self.accepts = compile_mapping(tree)

    @cached_property
    def validator(self) -> Any:
        """Cerberus, built on the first document the fast path refuses: building it (Cerberus
        checks the schema itself) costs a fifth of a second, which valid files never pay."""
        import cerberus

        return cerberus.Validator(dict(self.tree.rules["schema"]))

    def check(self, doc: Document) -> Iterator[tuple[Rule, Finding]]:
        if self.accepts(doc.data) or self.validator.validate(doc.data, normalize=False):
            return
        for error in _leaves(self.validator._errors):
            found = self.translate(doc, error)
            if found is not None:
                yield found

    def translate(self, doc: Document, error: Any) -> tuple[Rule, Finding] | None:
        """The rule and finding for one Cerberus error, through the one table."""
        build = error_table().get(error.code)
        if build is None:
            raise RuntimeError(f"Cerberus error code {error.code:#x} ({error.rule}) is not mapped")
        path: Path = tuple(error.document_path)
        return build(_Error(self, doc, error, path))


class _Error:
    """One Cerberus error, with what every message builder needs about it."""

    def __init__(self, checker: SchemaChecker, doc: Document, error: Any, path: Path) -> None:
        self.checker, self.doc, self.error, self.path = checker, doc, error, path
        self.node = field_at(checker.tree, path)
        self.where = format_path(path) or "the top level"
        self.field_name = str(path[-1]) if path else "the file"

    @property
    def value(self) -> Any:
        return self.error.value

    @property
    def constraint(self) -> Any:
        return self.error.constraint


Builder = Callable[[_Error], "tuple[Rule, Finding] | None"]


def _missing(e: _Error) -> tuple[Rule, Finding]:
    parent = format_path(e.path[:-1])
    place = f"under `{parent}`" if parent else "at the top level"
    example = _example(e.node)
    return MISSING, Finding(
        e.path,
        f"required field `{e.field_name}` is missing {place}",
        f"add `{e.field_name}:` {place}: {_description(e.node)}"
        + (f" Example: {e.field_name}: {example}" if example else ""),
    )


def _unknown(e: _Error) -> tuple[Rule, Finding]:
    parent_node = field_at(e.checker.tree, e.path[:-1])
    # A mapping of several forms (an examination part: a finding or a section) offers the
    # fields of the forms that have them.
    forms = [parent_node, *parent_node.choices] if parent_node is not None else []
    known = list(dict.fromkeys(name for form in forms for name in form.fields or {}))
    parent = format_path(e.path[:-1])
    place = f"of `{parent}`" if parent else "at the top level"
    suggestion = did_you_mean(e.field_name, known)
    hint = (
        f"rename it to `{suggestion.split('`')[1]}`"
        if suggestion
        else f"remove it; the fields allowed here are: {', '.join(known)}"
    )
    return UNKNOWN, Finding(
        e.path, f"`{e.field_name}` is not a field {place}{suggestion}", hint, at_key=True
    )


def _wrong_type(e: _Error) -> tuple[Rule, Finding] | None:
    wanted = e.constraint if isinstance(e.constraint, list) else [e.constraint]
    expected = " or ".join(_KIND.get(str(w), str(w)) for w in wanted)
    source = e.doc.plain_non_text.get(e.path)
    allowed = e.node.rules.get("allowed") if e.node is not None else None
    if source is not None and allowed is not None and source not in allowed:
        return _not_allowed(e)  # quoting would not help: the value itself is not allowed
    if source is not None and "string" in wanted:
        if AMBIGUOUS_NUMBER.match(source):
            return None  # the loader's ambiguous-number problem already says it all
        return WRONG_TYPE, Finding(
            e.path,
            f"`{e.where}` must be text, but YAML reads the unquoted `{source}` as "
            f"{describe(e.value)}",
            f'put it in quotes: "{source}"',
        )
    example = _example(e.node)
    return WRONG_TYPE, Finding(
        e.path,
        f"`{e.where}` must be {expected}, but it is {describe(e.value)}",
        _description(e.node) + (f" Example: {example}" if example else ""),
    )


def _not_allowed(e: _Error) -> tuple[Rule, Finding]:
    choices = e.node.rules.get("allowed") if e.node is not None else None
    constraint = list(choices) if choices is not None else list(e.constraint)
    allowed = [str(a) for a in constraint]
    source = e.doc.plain_non_text.get(e.path)
    shown_value = source if source is not None else e.value
    if e.path == ("metadata", "language"):
        return LANGUAGE, Finding(
            e.path,
            f"the case language is `{shown_value}`; casebank cases are written in English (`en`)",
            "set `language: en`; translations belong under `localization`",
        )
    values = e.value if isinstance(e.value, list) else [shown_value]
    bad = [str(v) for v in values if v not in constraint]
    shown = ", ".join(f"`{b}`" for b in bad) or f"`{shown_value}`"
    suggestion = did_you_mean(bad[0], allowed) if bad else ""
    return NOT_ALLOWED, Finding(
        e.path,
        f"`{e.where}` is {shown}, which is not allowed{suggestion}",
        f"use one of: {', '.join(allowed)}",
    )


def _empty(e: _Error) -> tuple[Rule, Finding]:
    wanted = _description(e.node).rstrip(".") or "a value"
    optional = "" if (e.node is not None and e.node.required) else ", or remove the line"
    return EMPTY, Finding(
        e.path, f"`{e.where}` is empty", f"write {wanted[0].lower()}{wanted[1:]}{optional}"
    )


def _regex(e: _Error) -> tuple[Rule, Finding]:
    if e.field_name == "case_id":
        hint = f"a case id is {CASE_ID_WORDS}, e.g. {CASE_ID_EXAMPLE}; name the file the same"
    elif e.field_name == "loinc":
        hint = "a LOINC code is digits, a hyphen and one check digit, e.g. 2160-0"
    else:
        hint = _description(e.node)
    return BAD_FORMAT, Finding(e.path, f"`{e.where}` is `{e.value}`, which is not valid here", hint)


def _bound(e: _Error) -> tuple[Rule, Finding]:
    side = "below the minimum" if e.error.rule == "min" else "above the maximum"
    return OUT_OF_RANGE, Finding(
        e.path,
        f"`{e.where}` is {e.value}, {side} of {e.constraint}",
        f"check the value: {_description(e.node)}",
    )


def _length(e: _Error) -> tuple[Rule, Finding]:
    short = e.error.rule == "minlength"
    found, limit = (TOO_SHORT, "at least") if short else (TOO_LONG, "at most")
    if isinstance(e.value, str):
        return found, Finding(
            e.path,
            f"`{e.where}` is {len(e.value)} characters long; {limit} {e.constraint} are needed"
            if short
            else f"`{e.where}` is {len(e.value)} characters long; {limit} {e.constraint} allowed",
            _description(e.node),
        )
    return found, Finding(
        e.path,
        f"`{e.where}` has {len(e.value)} items; {limit} {e.constraint} "
        + ("needed" if short else "allowed"),
        (f"add at least {e.constraint}: " if short else f"keep at most {e.constraint}: ")
        + _description(e.node),
    )


def _anyof(e: _Error) -> tuple[Rule, Finding] | None:
    """None of the forms fit: report the errors of the closest form, or name the forms."""
    children = [c for c in e.error.child_errors or [] if not _is_type_error(c)]
    if children and e.node is not None:
        by_form: dict[int, list[Any]] = {}
        for child in children:
            by_form.setdefault(child.schema_path[len(e.error.schema_path)], []).append(child)
        # The form that got furthest into the value, then the one with the fewest errors
        # (counted to the leaves): a section whose finding has a misspelt key, not a finding
        # with an unknown key; a short list of alternatives, not an order without its test.
        closest = min(
            by_form.values(),
            key=lambda errors: (-max(map(_depth, errors)), len(list(_leaves(errors)))),
        )
        leaves = [leaf for child in closest for leaf in _leaves([child])]
        if leaves:
            first = e.checker.translate(e.doc, leaves[0])
            if first is not None:
                return first
    forms = " or ".join(_form(c) for c in (e.node.choices if e.node else ()))
    return NO_FORM, Finding(
        e.path,
        f"`{e.where}` is {describe(e.value)}, which fits none of the forms allowed here",
        f"write {forms}" if forms else _description(e.node),
    )


def _depth(error: Any) -> int:
    """How far into the document an error, or any error below it, reaches."""
    return max([len(error.document_path), *map(_depth, error.child_errors or ())])


def _is_type_error(error: Any) -> bool:
    return not error.is_group_error and error.rule == "type"


def _form(choice: Field) -> str:
    if choice.description:
        return choice.description.rstrip(".")
    return " or ".join(_KIND.get(t, t) for t in choice.types)


def _not_used(e: _Error) -> tuple[Rule, Finding] | None:
    raise RuntimeError(
        f"Cerberus reported {e.error.rule or 'an error'} ({e.error.code:#x}) at {e.where}, a "
        "rule the case format does not use"
    )


_GROUP = "group"  # group errors are never leaves: _leaves walks into their children


@cache
def error_table() -> dict[int, Builder]:
    """Every Cerberus error code: the message builder it becomes. Codes of rules the schemas do
    not use map to _not_used, which reports a bug in casebank rather than guessing."""
    from cerberus import errors as cerr

    return {
        cerr.REQUIRED_FIELD.code: _missing,
        cerr.UNKNOWN_FIELD.code: _unknown,
        cerr.BAD_TYPE.code: _wrong_type,
        cerr.UNALLOWED_VALUE.code: _not_allowed,
        cerr.UNALLOWED_VALUES.code: _not_allowed,
        cerr.EMPTY_NOT_ALLOWED.code: _empty,
        cerr.NOT_NULLABLE.code: _empty,
        cerr.REGEX_MISMATCH.code: _regex,
        cerr.MIN_VALUE.code: _bound,
        cerr.MAX_VALUE.code: _bound,
        cerr.MIN_LENGTH.code: _length,
        cerr.MAX_LENGTH.code: _length,
        cerr.ANYOF.code: _anyof,
        **{
            definition.code: _not_used
            for definition in (
                cerr.CUSTOM,
                cerr.DEPENDENCIES_FIELD,
                cerr.DEPENDENCIES_FIELD_VALUE,
                cerr.EXCLUDES_FIELD,
                cerr.BAD_TYPE_FOR_SCHEMA,
                cerr.ITEMS_LENGTH,
                cerr.FORBIDDEN_VALUE,
                cerr.FORBIDDEN_VALUES,
                cerr.MISSING_MEMBERS,
                cerr.NORMALIZATION,
                cerr.COERCION_FAILED,
                cerr.RENAMING_FAILED,
                cerr.READONLY_FIELD,
                cerr.SETTING_DEFAULT_FAILED,
                cerr.NONEOF,
                cerr.ONEOF,
                cerr.ALLOF,
                cerr.ERROR_GROUP,
                cerr.MAPPING_SCHEMA,
                cerr.SEQUENCE_SCHEMA,
                cerr.KEYSRULES,
                cerr.VALUESRULES,
                cerr.BAD_ITEMS,
                cerr.LOGICAL,
            )
        },
    }


def _leaves(errors: Any) -> Iterator[Any]:
    """Leaf errors, depth first; an anyof failure is one leaf (its builder looks inside)."""
    for error in errors:
        if error.is_group_error and error.rule != "anyof":
            yield from _leaves(error.child_errors)
        else:
            yield error
