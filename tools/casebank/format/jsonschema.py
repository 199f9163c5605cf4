"""Generate a JSON Schema (Draft 2020-12) for editors from the schema tree.

The Cerberus schema stays the source of truth; this is a translation, committed as
``schema/case.schema.json`` so that VS Code's YAML extension validates and autocompletes while a
clinician types. Where the schema says a field holds catalog test names (``meta.names``), the
catalog's names and aliases are offered as suggestions (an editor completes them; casebank itself
still decides, case-insensitively). Where it names a vocabulary (``meta.vocabulary``), the
catalog's entries are offered too; tones are a closed list, as the spec says.
"""

from __future__ import annotations

import json
from typing import Any

from casebank.format.catalog import Catalog
from casebank.format.schema import SCHEMA_VERSION
from casebank.format.walk import Field, case_tree

SCHEMA_ID = "https://casebank.invalid/schema/case.schema.json"

_TYPES = {
    "string": "string",
    "number": "number",
    "integer": "integer",
    "dict": "object",
    "list": "array",
    "boolean": "boolean",
}
CLOSED_VOCABULARIES = {"tones"}
TEST_NAME = "testName"


def translate(node: Field, catalog: Catalog | None) -> dict[str, Any]:
    """One field as a JSON Schema."""
    out: dict[str, Any] = {}
    rules = node.rules
    if node.description:
        out["description"] = node.description
    if node.has_example:
        out["examples"] = [node.example]
    if node.types:
        json_types = [_TYPES[t] for t in node.types]
        out["type"] = json_types[0] if len(json_types) == 1 else json_types
    if "allowed" in rules:
        allowed = list(rules["allowed"])
        if node.types == ("list",):
            out["items"] = {"enum": allowed}
        else:
            out["enum"] = allowed
    if rules.get("empty") is False and node.is_a("string"):
        out["minLength"] = 1
    if "regex" in rules:
        out["pattern"] = rules["regex"]
    if "min" in rules:
        out["minimum"] = rules["min"]
    if "max" in rules:
        out["maximum"] = rules["max"]
    for rule, json_rule in (("minlength", "min"), ("maxlength", "max")):
        if rule in rules:
            out[f"{json_rule}Items" if node.is_a("list") else f"{json_rule}Length"] = rules[rule]
    if node.fields is not None:
        out.update(_object(node, catalog))
    if node.items is not None:
        out["items"] = {**out.get("items", {}), **translate(node.items, catalog)}
    if node.keys is not None:
        out["propertyNames"] = translate(node.keys, None)
    if node.values is not None:
        out["additionalProperties"] = translate(node.values, catalog)
    if node.choices:
        out["anyOf"] = [_bare(translate(choice, catalog)) for choice in node.choices]
    _suggest(out, node, catalog)
    return out


def _bare(schema: dict[str, Any]) -> dict[str, Any]:
    """An alternative without the documentation its parent already carries."""
    return {k: v for k, v in schema.items() if k not in ("description", "examples")}


def _object(node: Field, catalog: Catalog | None) -> dict[str, Any]:
    assert node.fields is not None
    out: dict[str, Any] = {
        "properties": {k: translate(v, catalog) for k, v in node.fields.items()},
        "additionalProperties": False,
    }
    required = [k for k, v in node.fields.items() if v.required]
    if required:
        out["required"] = required
    return out


def _test_names(catalog: Catalog) -> list[str]:
    return sorted({n for t in catalog.tests for n in (t.name, *t.aliases)}, key=str.casefold)


def _suggest(out: dict[str, Any], node: Field, catalog: Catalog | None) -> None:
    """Offer catalog names where the schema says names of tests or a vocabulary belong."""
    if catalog is None:
        return
    if node.meta.get("names") == "test":
        reference = {"$ref": f"#/$defs/{TEST_NAME}"}
        if node.is_a("list"):
            items = out.get("items", {})
            # an order is a name or {test, ...}: the name forms take the suggestion
            choices = items.get("anyOf")
            if choices:
                items["anyOf"] = [{**choices[0], **reference}, *choices[1:]]
            else:
                out["items"] = {**items, **reference}
        else:
            out["propertyNames"] = {**out.get("propertyNames", {}), **reference}
        return
    offered: list[str] | None = None
    closed = False
    vocabulary = node.meta.get("vocabulary")
    if vocabulary is not None:
        offered = sorted(getattr(catalog, vocabulary))
        closed = vocabulary in CLOSED_VOCABULARIES
    if offered is None:
        return
    suggestion: dict[str, Any] = (
        {"enum": offered} if closed else {"anyOf": [{"enum": offered}, {"type": "string"}]}
    )
    if node.is_a("list"):
        out["items"] = {**out.get("items", {}), **suggestion}
    elif node.is_a("dict"):
        out["propertyNames"] = {**out.get("propertyNames", {}), **suggestion}
    else:
        out.update(suggestion)


def case_json_schema(catalog: Catalog | None) -> dict[str, Any]:
    schema: dict[str, Any] = {
        "$schema": "https://json-schema.org/draft/2020-12/schema",
        "$id": SCHEMA_ID,
        "title": "casebank clinical case",
        "description": (
            f"Case format {SCHEMA_VERSION}. Generated from casebank's Cerberus "
            "schema by `casebank generate`; do not edit by hand."
        ),
        "type": "object",
    }
    schema.update(_object(case_tree(), catalog))
    if catalog is not None:
        # Every catalog name once, referenced wherever a test name goes.
        schema["$defs"] = {
            TEST_NAME: {
                "description": "A catalog test name or alias (others are refused by casebank).",
                "anyOf": [{"enum": _test_names(catalog)}, {"type": "string"}],
            }
        }
    return schema


def render(schema: dict[str, Any]) -> str:
    return json.dumps(schema, indent=2, ensure_ascii=False) + "\n"
