"""The case format and the catalog format, as Cerberus schemas: the single source of truth.

Every field carries ``meta.description`` (one line, for generated docs and editor hovers) and,
where it helps an author, ``meta.example``. The JSON Schema in ``schema/case.schema.json`` and
``docs/schema.md`` are generated from these dictionaries; never edit those by hand.

Cross-field and catalog checks (a lab value needs a unit, tests must exist in the catalog, ...)
live in ``casebank.rules``; this module says only what shape a file has.
"""

from __future__ import annotations

import hashlib
import json
from typing import Any

# Bump when the case format changes in a way that could change what is valid.
SCHEMA_VERSION = "1.0"

CASE_ID_PATTERN = r"^[a-z0-9]+(_[a-z0-9]+)*$"
LANGUAGES = ["en"]
DIFFICULTIES = ["easy", "medium", "hard"]
SEXES = ["female", "male", "other"]
RESULT_TYPES = ["lab_value", "qualitative", "text_report", "panel"]
RESULT_FLAGS = ["normal", "low", "high", "critical_low", "critical_high", "abnormal"]
RESULTS_POLICIES = ["normal_unless_listed", "unavailable_unless_listed", "generate_consistent"]
CATEGORIES = [
    "laboratory",
    "imaging",
    "physiology",
    "bedside",
    "microbiology",
    "pathology",
    "procedure",
    "point_of_care",
]

Schema = dict[str, Any]


def _meta(description: str, example: Any = None, **more: Any) -> dict[str, Any]:
    """A field's metadata: a one-line description, an example, and what else views need:
    ``names="test"`` where catalog test names go, ``vocabulary=...`` where a catalog vocabulary
    applies, ``scaffold`` for what `casebank new` writes there."""
    meta: dict[str, Any] = {"description": description}
    if example is not None:
        meta["example"] = example
    meta.update(more)
    return meta


def text(description: str, example: Any = None, meta: Any = None, **rules: Any) -> Schema:
    return {
        "type": "string",
        "empty": False,
        "meta": _meta(description, example, **(meta or {})),
        **rules,
    }


def text_list(description: str, example: Any = None, meta: Any = None, **rules: Any) -> Schema:
    return {
        "type": "list",
        "schema": {"type": "string", "empty": False},
        "meta": _meta(description, example, **(meta or {})),
        **rules,
    }


def orderable_tests(description: str, example: Any, scaffold: Any = None, **rules: Any) -> Schema:
    """A list of catalog test names (names or aliases)."""
    more = {"names": "test"} if scaffold is None else {"names": "test", "scaffold": scaffold}
    return text_list(description, example, meta=more, **rules)


def mapping(description: str, fields: Schema, example: Any = None, **rules: Any) -> Schema:
    return {"type": "dict", "schema": fields, "meta": _meta(description, example), **rules}


def required(schema: Schema) -> Schema:
    return {**schema, "required": True}


_REFERENCE_RANGE = {
    "type": ["string", "dict"],
    "empty": False,
    "schema": {
        "low": {"type": "number", "meta": _meta("Lower limit of normal.", 0.0)},
        "high": {"type": "number", "meta": _meta("Upper limit of normal.", 0.04)},
    },
    "meta": _meta(
        "Normal range: text such as `0.00–0.04`, `<5`, `≥60`, or a mapping with low/high.",
        "0.00–0.04",
    ),
}


def _result_fields(*, type_required: bool) -> Schema:
    return {
        "type": {
            "type": "string",
            "allowed": RESULT_TYPES,
            "required": type_required,
            "meta": _meta(
                "Kind of result: lab_value (a number with unit and range), qualitative "
                "(positive/negative and the like), text_report (imaging, ECG, pathology "
                "narrative) or panel (several analytes).",
                "lab_value",
            ),
        },
        "value": {
            "type": ["number", "string"],
            "meta": _meta(
                "The result: a number for lab_value, text otherwise.", 2.4, scaffold=True
            ),
        },
        "unit": text("Unit of a numeric value, as the catalog spells it.", "ng/mL"),
        "reference_range": _REFERENCE_RANGE,
        "flag": {
            "type": "string",
            "allowed": RESULT_FLAGS,
            "meta": _meta("How the value compares with the reference range.", "high"),
        },
        "note": text("Comment a clinician would see with the result.", "Hemolysed sample."),
    }


RESULT_COMPONENT: Schema = _result_fields(type_required=False)
RESULT: Schema = {
    **_result_fields(type_required=True),
    "components": {
        "type": "dict",
        "keysrules": {"type": "string", "empty": False},
        "valuesrules": {"type": "dict", "schema": RESULT_COMPONENT},
        "meta": _meta(
            "For a panel: each member test (by catalog name or alias) with its own result.",
            {"Hemoglobin": {"value": 13.5, "unit": "g/dL", "reference_range": "13.0–17.0"}},
        ),
    },
}

_PMH_ITEM = {
    "condition": required(text("Diagnosis or past event.", "Type 2 diabetes mellitus")),
    "since": text("When it began or happened.", "2015"),
    "status": text("Current status.", "well controlled"),
    "notes": text("Anything else the patient would know about it."),
}
_MED_ITEM = {
    "name": required(text("Drug name (generic preferred).", "metformin")),
    "dose": text("Dose and strength.", "500 mg"),
    "route": text("Route.", "oral"),
    "frequency": text("How often.", "twice daily"),
    "indication": text("Why the patient takes it.", "type 2 diabetes"),
}
_ALLERGY_ITEM = {
    "substance": required(text("Drug, food or other allergen.", "penicillin")),
    "reaction": text("What happened on exposure.", "urticaria"),
    "severity": {
        "type": "string",
        "allowed": ["mild", "moderate", "severe", "anaphylaxis", "unknown"],
        "meta": _meta("How severe the reaction was.", "moderate"),
    },
}


def _structured_list(description: str, item: Schema, example: Any, **more: Any) -> Schema:
    return {
        "type": "list",
        "schema": {"type": "dict", "schema": item},
        "meta": _meta(description, example, **more),
    }


CASE_SCHEMA: Schema = {
    "case_id": required(
        text(
            "Unique, stable identifier; equals the file name without extension.",
            "chest_pain_001",
            regex=CASE_ID_PATTERN,
        )
    ),
    "metadata": required(
        mapping(
            "What the case is, for people and for filtering.",
            {
                "title": required(text("Short human title.", "Acute chest pain in a smoker")),
                "language": required(
                    {
                        "type": "string",
                        "allowed": LANGUAGES,
                        "meta": _meta("Language of the case text; must be en.", "en"),
                    }
                ),
                "difficulty": required(
                    {
                        "type": "string",
                        "allowed": DIFFICULTIES,
                        "meta": _meta("How hard the case is: easy, medium or hard.", "medium"),
                    }
                ),
                "specialty": required(
                    text(
                        "Main specialty, from the catalog's specialties.",
                        "emergency_medicine",
                        meta={"vocabulary": "specialties"},
                    )
                ),
                "tags": required(
                    text_list(
                        "Keywords for search and filtering, from the catalog's tags.",
                        ["chest_pain", "cardiology"],
                        meta={"vocabulary": "tags"},
                    )
                ),
            },
        )
    ),
    "patient": required(
        mapping(
            "The simulated patient.",
            {
                "age": required(
                    {
                        "type": "number",
                        "min": 0,
                        "max": 125,
                        "meta": _meta(
                            "Age in years; for infants use a fraction (0.5 = six months).", 54
                        ),
                    }
                ),
                "sex": required(
                    {
                        "type": "string",
                        "allowed": SEXES,
                        "meta": _meta("female, male or other.", "male"),
                    }
                ),
                "persona": required(
                    text(
                        "How the patient comes across: occupation, manner, worries.",
                        "Busy delivery driver, worried but trying to downplay symptoms.",
                    )
                ),
                "tone_presets": required(
                    text_list(
                        "Tones the simulator may use, from the catalog's supported tones.",
                        ["neutral", "anxious"],
                        meta={"vocabulary": "tones", "scaffold": ["neutral"]},
                        minlength=1,
                    )
                ),
                "pmh": _structured_list(
                    "Past medical history.",
                    _PMH_ITEM,
                    [{"condition": "Hypertension", "since": "2018"}],
                ),
                "meds": _structured_list(
                    "Current medications.",
                    _MED_ITEM,
                    [{"name": "amlodipine", "dose": "5 mg", "frequency": "daily"}],
                ),
                "allergies": _structured_list(
                    "Allergies; an empty list means none known.",
                    _ALLERGY_ITEM,
                    [{"substance": "penicillin", "reaction": "rash"}],
                    scaffold=[],
                ),
                "social_history": text(
                    "Smoking, alcohol, drugs, work and home, as the patient would tell it.",
                    "Smokes 20 cigarettes a day for 30 years; drinks socially.",
                ),
                "family_history": text_list(
                    "Relevant family history.",
                    ["Father had a myocardial infarction at 52"],
                ),
            },
        )
    ),
    "presentation": required(
        mapping(
            "What the patient brings and the story behind it.",
            {
                "chief_complaint": required(
                    text("The complaint in the patient's words.", "Chest pain")
                ),
                "history_of_present_illness": required(
                    text(
                        "The true story the simulated patient draws on; never name the diagnosis.",
                        "Substernal pressure for 45 minutes, started at rest.",
                    )
                ),
                "key_history_points": required(
                    mapping(
                        "What a good history must cover.",
                        {
                            "must_ask": required(
                                text_list(
                                    "Questions a competent clinician must ask.",
                                    ["Onset and duration of the pain"],
                                    minlength=1,
                                )
                            ),
                            "nice_to_ask": required(
                                text_list(
                                    "Questions that add value.", ["Recent exertion or stress"]
                                )
                            ),
                            "red_flags": required(
                                text_list("Findings that must not be missed.", ["Syncope"])
                            ),
                        },
                    )
                ),
            },
        )
    ),
    "physical_exam": {
        "type": ["string", "dict"],
        "empty": False,
        "keysrules": {"type": "string", "empty": False},
        "valuesrules": {"type": "string", "empty": False},
        "meta": _meta(
            "Examination findings: one narrative, or a mapping of system to findings.",
            {"general": "Diaphoretic, in pain", "cardiovascular": "Regular rhythm, no murmur"},
            scaffold={"general": "TODO: general appearance"},
        ),
    },
    "ground_truth": required(
        mapping(
            "The gold-standard answer.",
            {
                "final_diagnosis": required(
                    text(
                        "The diagnosis the case is built around.",
                        "Acute coronary syndrome (ST-elevation myocardial infarction)",
                    )
                ),
                "differential": required(
                    text_list(
                        "Ranked differential diagnosis, most likely first.",
                        ["ST-elevation myocardial infarction", "Aortic dissection"],
                        minlength=1,
                    )
                ),
                "severity_or_stage": text("Severity, stage or classification.", "Killip class I"),
            },
        )
    ),
    "investigations": required(
        mapping(
            "Tests and their results.",
            {
                "catalog_hints": orderable_tests(
                    "Tests to show first in the ordering interface.", ["ECG"]
                ),
                "expected": required(
                    mapping(
                        "Which tests a good answer orders.",
                        {
                            "must_order": required(
                                orderable_tests(
                                    "Tests that must be ordered.", ["ECG", "Troponin"], minlength=1
                                )
                            ),
                            "optional": required(
                                orderable_tests(
                                    "Reasonable but not required tests.",
                                    ["Chest X-ray"],
                                    scaffold=[],
                                )
                            ),
                            "should_not_order": required(
                                orderable_tests(
                                    "Tests that are wasteful or harmful here.",
                                    ["Elective stress test"],
                                    scaffold=[],
                                )
                            ),
                        },
                    )
                ),
                "results": required(
                    {
                        "type": "dict",
                        "keysrules": {"type": "string", "empty": False},
                        "valuesrules": {"type": "dict", "schema": RESULT},
                        "meta": _meta(
                            "Results by test name (catalog name or alias); may be partial.",
                            {
                                "Troponin": {
                                    "type": "lab_value",
                                    "value": 2.4,
                                    "unit": "ng/mL",
                                    "reference_range": "0.00–0.04",
                                }
                            },
                            names="test",
                        ),
                    }
                ),
                "results_generated_policy": {
                    "type": "string",
                    "allowed": RESULTS_POLICIES,
                    "meta": _meta(
                        "What the simulator returns for a test with no listed result: "
                        "normal_unless_listed (the catalog's default normal result), "
                        "unavailable_unless_listed, or generate_consistent (invent results "
                        "consistent with the case).",
                        "normal_unless_listed",
                        scaffold="normal_unless_listed",
                    ),
                },
            },
        )
    ),
    "management_gold": required(
        mapping(
            "The gold-standard management.",
            {
                "diagnostic_plan": required(
                    text_list("Diagnostic steps.", ["Serial troponins"], minlength=1)
                ),
                "treatment_plan": required(
                    text_list("Treatment steps.", ["Aspirin unless contraindicated"], minlength=1)
                ),
                "contraindications": required(
                    text_list(
                        "Things that must not be done.",
                        ["Thrombolysis with active bleeding"],
                        minlength=1,
                    )
                ),
                "follow_up": required(text_list("Follow-up.", ["Cardiology review"], minlength=1)),
            },
        )
    ),
    "scoring": required(
        mapping(
            "How an answer is scored.",
            {
                "weights": required(
                    {
                        "type": "dict",
                        "keysrules": {"type": "string", "empty": False},
                        "valuesrules": {"type": "number"},
                        "minlength": 1,
                        "meta": _meta(
                            "Weight of each component (diagnosis, diagnostics, treatment, safety); "
                            "they sum to 1.0.",
                            {
                                "diagnosis": 0.35,
                                "diagnostics": 0.25,
                                "treatment": 0.3,
                                "safety": 0.1,
                            },
                            scaffold="example",
                        ),
                    }
                ),
                "acceptable_answers": required(
                    mapping(
                        "Accepted variants of the answers.",
                        {
                            "final_diagnosis": required(
                                text_list(
                                    "Other names for the final diagnosis that count as correct.",
                                    ["STEMI", "ST-elevation MI"],
                                    minlength=1,
                                )
                            ),
                        },
                    )
                ),
                "critical_safety_errors": required(
                    text_list(
                        "Errors that fail the answer whatever else it gets right.",
                        ["Discharging a patient with ongoing ischaemic chest pain"],
                        minlength=1,
                    )
                ),
            },
        )
    ),
    "localization": {
        "type": "dict",
        "keysrules": {"type": "string", "regex": r"^[a-z]{2,3}(-[A-Z][A-Za-z0-9]+)?$"},
        "valuesrules": {"type": "dict"},
        "meta": _meta(
            "Future multilingual support: translated field overrides by language tag.",
            {"fr": {"metadata": {"title": "Douleur thoracique aiguë"}}},
        ),
    },
    "acknowledged_warnings": {
        "type": "list",
        "schema": {
            "type": "dict",
            "schema": {
                "rule": required(text("Code or name of the warning accepted.", "CB405")),
                "path": text(
                    "Field the warning points at; omit to accept it anywhere in the case.",
                    "presentation.chief_complaint",
                ),
                "reason": required(
                    text(
                        "Why the warning is acceptable here, for reviewers (20+ characters).",
                        "The patient names her own diagnosis: she had the same thing last year.",
                        minlength=20,
                    )
                ),
            },
        },
        "meta": _meta(
            "Warnings this case accepts on purpose, each with a written reason; "
            "they stay visible in review.",
            [{"rule": "CB405", "reason": "The patient has known asthma and says so."}],
        ),
    },
}

CATALOG_TEST: Schema = {
    "name": required(text("Canonical test name used in reports.", "Troponin")),
    "aliases": text_list(
        "Other names and abbreviations that mean this test.", ["hs-troponin", "Troponin I"]
    ),
    "category": required(
        {
            "type": "string",
            "allowed": CATEGORIES,
            "meta": _meta("Kind of test.", "laboratory"),
        }
    ),
    "result_types": required(
        {
            "type": "list",
            "minlength": 1,
            "schema": {"type": "string", "allowed": RESULT_TYPES},
            "meta": _meta("Result types a case may give for this test.", ["lab_value"]),
        }
    ),
    "unit": text("Canonical unit of a numeric result.", "ng/L"),
    "units": text_list(
        "Every unit accepted for a numeric result (the canonical one included).", ["ng/L", "ng/mL"]
    ),
    "components": text_list(
        "For a panel: the member tests, by catalog name.", ["Hemoglobin", "Platelet count"]
    ),
    "loinc": text(
        "LOINC code, only where certain (the check digit is verified).",
        "2160-0",
        regex=r"^[0-9]{1,7}-[0-9]$",
    ),
    "default_result": text(
        "Result text for a normal test a case does not list.", "Within normal limits."
    ),
}

CATALOG_SCHEMA: Schema = {
    "vocabularies": required(
        mapping(
            "Controlled vocabularies cases draw on.",
            {
                "tones": required(
                    text_list("Supported simulator tones.", ["neutral", "anxious"], minlength=1)
                ),
                "specialties": required(
                    text_list("Known specialties.", ["emergency_medicine"], minlength=1)
                ),
                "tags": required(text_list("Known tags.", ["chest_pain"], minlength=1)),
            },
        )
    ),
    "tests": required(
        {
            "type": "list",
            "minlength": 1,
            "schema": {"type": "dict", "schema": CATALOG_TEST},
            "meta": _meta(
                "Orderable tests.",
                [{"name": "ECG", "category": "physiology", "result_types": ["text_report"]}],
            ),
        }
    ),
}


def schema_fingerprint() -> str:
    """SHA-256 of the case and catalog schemas, for release manifests and the cache key."""
    blob = json.dumps(
        [SCHEMA_VERSION, CASE_SCHEMA, CATALOG_SCHEMA],
        sort_keys=True,
        ensure_ascii=False,
        default=str,
    )
    return hashlib.sha256(blob.encode("utf-8")).hexdigest()
