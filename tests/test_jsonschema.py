"""The generated JSON Schema: valid Draft 2020-12, accepts what casebank accepts, rejects the
shape errors casebank rejects, and offers the catalog's names to editors."""

from __future__ import annotations

import json
from pathlib import Path

import jsonschema
import pytest
import yaml

from casebank.format.catalog import build_catalog
from casebank.format.jsonschema import case_json_schema
from conftest import TEST_CATALOG, VALID_CASE, edit

ROOT = Path(__file__).resolve().parent.parent
CATALOG = build_catalog(yaml.safe_load(TEST_CATALOG))
VALIDATOR = jsonschema.Draft202012Validator(case_json_schema(CATALOG))

BROKEN = {
    "missing field": edit(
        '  final_diagnosis: "Acute inferior ST-elevation myocardial infarction"\n', ""
    ),
    "unknown field": edit("  differential:", "  diferential:"),
    "wrong type": edit("  age: 54", "  age: fifty"),
    "value not allowed": edit("  difficulty: medium", "  difficulty: medum"),
    "language": edit("  language: en", "  language: fr"),
    "empty text": edit('  title: "Acute chest pain in a smoker"', '  title: ""'),
    "bad id": edit("case_id: valid_case", "case_id: Valid-Case"),
    "out of range": edit("  age: 54", "  age: 230"),
    "too short": edit(
        '    must_ask: ["Onset, character, radiation of the pain"]', "    must_ask: []"
    ),
    "unknown tone": edit("tone_presets: [neutral, anxious]", "tone_presets: [grumpy]"),
}


def test_generated_schema_is_valid_draft_2020_12() -> None:
    jsonschema.Draft202012Validator.check_schema(case_json_schema(CATALOG))


def test_accepts_the_valid_fixture() -> None:
    assert list(VALIDATOR.iter_errors(yaml.safe_load(VALID_CASE))) == []


def test_committed_schema_accepts_every_shipped_case() -> None:
    committed = json.loads((ROOT / "schema" / "case.schema.json").read_text(encoding="utf-8"))
    # A test name is `anyOf: [{enum: every catalog name}, {type: string}]`: the enum is there
    # for the editor's suggestions and never decides acceptance, and jsonschema compares an
    # instance with its 8,000 members one by one. Checked as the string it must be.
    names = committed["$defs"]["testName"]["anyOf"]
    assert len(names) == 2 and names[1] == {"type": "string"}
    committed["$defs"]["testName"] = {"type": "string"}
    validator = jsonschema.Draft202012Validator(committed)
    cases = sorted((ROOT / "cases").glob("*.y*ml"))
    assert cases
    for path in cases:
        errors = [e.message for e in validator.iter_errors(yaml.safe_load(path.read_text()))]
        assert errors == [], f"{path.name}: {errors}"


@pytest.mark.parametrize("name", sorted(BROKEN))
def test_rejects_what_the_validator_rejects(name: str) -> None:
    from conftest import check_text

    text = BROKEN[name]
    assert [
        p for p in check_text(text, file="cases/valid_case.yaml") if p.severity.value == "error"
    ], f"casebank should reject: {name}"
    assert list(VALIDATOR.iter_errors(yaml.safe_load(text))), f"JSON Schema accepts: {name}"


def test_catalog_names_and_aliases_are_offered_as_suggestions() -> None:
    schema = case_json_schema(CATALOG)
    must = schema["properties"]["investigations"]["properties"]["expected"]["properties"][
        "must_order"
    ]
    assert must["items"]["anyOf"][0]["$ref"] == "#/$defs/testName"
    names = schema["$defs"]["testName"]["anyOf"][0]["enum"]
    assert {"Troponin", "hs-troponin", "ECG", "EKG"} <= set(names)
    tones = schema["properties"]["patient"]["properties"]["tone_presets"]["items"]["enum"]
    assert tones == sorted(["neutral", "anxious", "irritated", "stoic"])
