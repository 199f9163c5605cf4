"""Generate a JSON Schema (Draft 2020-12) for editors from the Cerberus case schema.

The Cerberus schema stays the source of truth; this is a translation, committed as
``schema/case.schema.json`` so that VS Code's YAML extension validates and autocompletes while a
clinician types. The catalog's test names and aliases are offered as suggestions (an editor
completes them; casebank itself still decides, case-insensitively, with a did-you-mean). Tones
are a closed list, as the spec says.
"""

from __future__ import annotations

import json
from typing import Any

from casebank.catalog import Catalog
from casebank.schema import CASE_SCHEMA, SCHEMA_VERSION

SCHEMA_ID = "https://casebank.invalid/schema/case.schema.json"

_TYPES = {
    "string": "string",
    "number": "number",
    "integer": "integer",
    "dict": "object",
    "list": "array",
    "boolean": "boolean",
}

# Where catalog test names are expected: list items at these paths, and the keys of results.
_TEST_LISTS = {
    ("investigations", "catalog_hints"),
    ("investigations", "expected", "must_order"),
    ("investigations", "expected", "optional"),
    ("investigations", "expected", "should_not_order"),
}


def _types(rules: dict[str, Any]) -> list[str]:
    t = rules.get("type", [])
    return [t] if isinstance(t, str) else list(t)


def translate(
    rules: dict[str, Any], path: tuple[str, ...], catalog: Catalog | None
) -> dict[str, Any]:
    """One Cerberus field definition as a JSON Schema."""
    out: dict[str, Any] = {}
    meta = rules.get("meta") or {}
    if "description" in meta:
        out["description"] = meta["description"]
    if "example" in meta:
        out["examples"] = [meta["example"]]
    types = _types(rules)
    if types:
        json_types = [_TYPES[t] for t in types]
        out["type"] = json_types[0] if len(json_types) == 1 else json_types
    if "allowed" in rules:
        allowed = list(rules["allowed"])
        if types == ["list"]:
            out["items"] = {"enum": allowed}
        else:
            out["enum"] = allowed
    if rules.get("empty") is False and "string" in types:
        out["minLength"] = 1
    if "regex" in rules:
        out["pattern"] = rules["regex"]
    if "min" in rules:
        out["minimum"] = rules["min"]
    if "max" in rules:
        out["maximum"] = rules["max"]
    if "minlength" in rules:
        out["minItems" if "list" in types else "minLength"] = rules["minlength"]
    inner = rules.get("schema")
    if isinstance(inner, dict) and "dict" in types:
        out.update(_object(inner, path, catalog))
    elif isinstance(inner, dict) and "list" in types:
        out["items"] = translate(inner, (*path, "[]"), catalog)
    if "keysrules" in rules:
        out["propertyNames"] = translate(rules["keysrules"], path, None)
    if "valuesrules" in rules:
        out["additionalProperties"] = translate(rules["valuesrules"], (*path, "*"), catalog)
    _suggest(out, path, catalog)
    return out


def _object(
    fields: dict[str, Any], path: tuple[str, ...], catalog: Catalog | None
) -> dict[str, Any]:
    out: dict[str, Any] = {
        "properties": {k: translate(v, (*path, k), catalog) for k, v in fields.items()},
        "additionalProperties": False,
    }
    required = [k for k, v in fields.items() if v.get("required")]
    if required:
        out["required"] = required
    return out


def _test_names(catalog: Catalog) -> list[str]:
    return sorted({n for t in catalog.tests for n in (t.name, *t.aliases)}, key=str.casefold)


def _suggest(out: dict[str, Any], path: tuple[str, ...], catalog: Catalog | None) -> None:
    """Offer catalog names where tests are named, and close the tone list."""
    if catalog is None:
        return
    names = _test_names(catalog)
    suggestion = {"anyOf": [{"enum": names}, {"type": "string"}]}
    if path in _TEST_LISTS:
        out["items"] = {**out.get("items", {}), **suggestion}
    elif path == ("investigations", "results"):
        out["propertyNames"] = {**out.get("propertyNames", {}), **suggestion}
    elif path == ("patient", "tone_presets"):
        out["items"] = {**out.get("items", {}), "enum": sorted(catalog.tones)}
    elif path == ("metadata", "specialty"):
        out["anyOf"] = [{"enum": sorted(catalog.specialties)}, {"type": "string"}]
    elif path == ("metadata", "tags"):
        out["items"] = {
            **out.get("items", {}),
            "anyOf": [{"enum": sorted(catalog.tags)}, {"type": "string"}],
        }


def case_json_schema(catalog: Catalog | None) -> dict[str, Any]:
    schema = {
        "$schema": "https://json-schema.org/draft/2020-12/schema",
        "$id": SCHEMA_ID,
        "title": "casebank clinical case",
        "description": (
            f"Case format {SCHEMA_VERSION}. Generated from casebank's Cerberus "
            "schema by `casebank schema --write`; do not edit by hand."
        ),
        "type": "object",
    }
    schema.update(_object(CASE_SCHEMA, (), catalog))
    return schema


def render(schema: dict[str, Any]) -> str:
    return json.dumps(schema, indent=2, ensure_ascii=False) + "\n"
