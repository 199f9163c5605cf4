"""The case format and the catalog format, as Cerberus schemas: the single source of truth.

Every field carries ``meta.description`` (one line, for generated docs and editor hovers) and,
where it helps an author, ``meta.example``. Every top-level section (and any field that differs
from its section) declares its **audience**: ``patient`` (what the simulated patient knows and
may say), ``on_request`` (examination findings and results, given only when asked for) or
``examiner`` (the diagnosis, the checklists, management, scoring, and everything about the case
itself). The role views, the JSON Schema in ``schema/case.schema.json``, ``docs/schema.md`` and
the ``casebank new`` scaffold are all generated from these dictionaries through
``casebank.format.walk``; never edit those by hand.

Cross-field and catalog checks (a lab value needs a unit, tests must exist in the catalog, ...)
live in ``casebank.check.rules``; this module says only what shape a file has.
"""

from __future__ import annotations

import hashlib
import json
from typing import Any

from casebank.format.identifiers import CASE_ID_PATTERN
from casebank.format.results import ABNORMAL_FLAGS

# Bump when the case format changes in a way that could change what is valid.
SCHEMA_VERSION = "2.1"

LANGUAGES = ["en"]
DIFFICULTIES = ["easy", "medium", "hard"]
SEXES = ["female", "male", "other"]
RESULT_TYPES = ["lab_value", "qualitative", "text_report", "panel"]
RESULT_FLAGS = ["normal", *ABNORMAL_FLAGS, "indeterminate"]
RESULT_STATUSES = ["final", "pending", "not_done", "unavailable"]
LATERALITIES = ["left", "right", "bilateral"]
RESULTS_POLICIES = ["normal_unless_listed", "unavailable_unless_listed", "generate_consistent"]
PROVENANCE_SOURCES = ["original", "adapted"]
TEST_KINDS = ["lab", "imaging", "microbiology", "procedure", "bedside", "assessment"]
COST_TIERS = ["low", "medium", "high", "very_high"]  # relative, where no public figure exists
COST_CURRENCIES = ["USD", "GBP", "EUR"]
INVASIVENESS = ["none", "minimal", "invasive"]
CONTRASTS = ["none", "iodinated", "gadolinium"]
UNKNOWN_DOSE = "unknown"  # a dose no cited table gives: said, never guessed
# Diagnosis code systems a case may give, and the shape of a code in each.
CODE_PATTERNS = {
    "icd10": r"^[A-Z][0-9][0-9A-Z](\.[0-9A-Z]{1,4})?$",
    "icd11": r"^[1-9A-X][A-Z][0-9][0-9A-Z](\.[0-9A-Z]{1,2})?$",
    "snomed": r"^[1-9][0-9]{5,17}$",
}
# The weighted components of a case's score (docs/scoring.md): `scoring.weights` names them.
SCORE_COMPONENTS = ("diagnosis", "diagnostics", "treatment", "safety")
EXAM_DEPTH = 4  # levels of sections in a structured physical examination

Schema = dict[str, Any]


def _meta(description: str, example: Any = None, **more: Any) -> dict[str, Any]:
    """A field's metadata: a one-line description, an example, and what else views need:
    ``audience`` (who may see it), ``names="test"`` where catalog test names go,
    ``vocabulary=...`` where a catalog vocabulary applies, ``scaffold`` for what
    `casebank new` writes there."""
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


def choice(description: str, allowed: list[str], example: str, **more: Any) -> Schema:
    return {"type": "string", "allowed": allowed, "meta": _meta(description, example, **more)}


def mapping(description: str, fields: Schema, example: Any = None, **rules: Any) -> Schema:
    meta = _meta(description, example, **rules.pop("meta", {}))
    return {"type": "dict", "schema": fields, "meta": meta, **rules}


def required(schema: Schema) -> Schema:
    return {**schema, "required": True}


def audience(schema: Schema, who: str) -> Schema:
    return {**schema, "meta": {**schema["meta"], "audience": who}}


# --- tests, as orders and as results --------------------------------------------------------

_QUALIFIERS: Schema = {
    "site": text("Body site the test is of, where the test name leaves it open.", "hand"),
    "laterality": choice("Side: left, right or bilateral.", LATERALITIES, "right"),
    "specimen": text("Specimen, where the test name leaves it open.", "midstream urine"),
}

_ORDER: Schema = {
    "test": required(text("Catalog test name or alias.", "Hand X-ray")),
    **_QUALIFIERS,
}


def orderable_tests(description: str, example: Any, scaffold: Any = None, **rules: Any) -> Schema:
    """A list of orders: catalog test names (or aliases), or ``{test, site, laterality,
    specimen}`` where a qualifier matters."""
    more: dict[str, Any] = {"names": "test"}
    if scaffold is not None:
        more["scaffold"] = scaffold
    return {
        "type": "list",
        "schema": {
            "type": ["string", "dict"],
            "empty": False,
            "anyof": [
                {"type": "string"},
                {"type": "dict", "schema": _ORDER, "meta": _meta("An order with qualifiers.")},
            ],
        },
        "meta": _meta(description, example, **more),
        **rules,
    }


def must_orders(description: str, example: Any, **rules: Any) -> Schema:
    """Orders where an item may also be ``{any_of: [...]}``: alternatives clinicians differ
    on (a urine dipstick or a urinalysis), any one of which meets the item."""
    schema = orderable_tests(description, example, **rules)
    alternatives = orderable_tests(
        "Alternatives, any one of which meets the item.", ["Urine dipstick", "Urinalysis"]
    )
    del alternatives["meta"]["names"]  # the holding list declares the names, once
    alternatives["minlength"] = 2
    schema["schema"]["anyof"].append(
        {
            "type": "dict",
            "schema": {"any_of": required(alternatives)},
            "meta": _meta("Alternatives: any one of them meets the item."),
        }
    )
    return schema


def test_name_list(description: str, example: Any) -> Schema:
    return text_list(description, example, meta={"names": "test"})


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


# Commentary for the examiner ("not indicated here", "the key finding"): never served.
EXAMINER_NOTE: Schema = audience(
    text(
        "Commentary for the examiner about this result or finding (why it is or is not "
        "indicated, what it shows about the diagnosis); never served to the doctor or the "
        "patient.",
        "Not indicated once the ECG shows ST elevation.",
    ),
    "examiner",
)


def _result_fields(*, type_required: bool) -> Schema:
    return {
        "type": {
            "type": "string",
            "allowed": RESULT_TYPES,
            "required": type_required,
            "meta": _meta(
                "Kind of result: lab_value (a number with unit and range), qualitative "
                "(positive/negative, or a word such as `elevated` for a numeric test), "
                "text_report (imaging, ECG, pathology narrative) or panel (several analytes).",
                "lab_value",
            ),
        },
        "status": choice(
            "Where the result stands: final (the default), pending (ordered, not back yet), "
            "not_done, or unavailable (the case holds no result and none may be invented).",
            RESULT_STATUSES,
            "pending",
        ),
        "value": {
            "type": ["number", "string"],
            "meta": _meta(
                "The result: a number for lab_value, text otherwise.", 2.4, scaffold=True
            ),
        },
        "unit": text("Unit of a numeric value (UCUM or a common clinical spelling).", "ng/mL"),
        "reference_range": _REFERENCE_RANGE,
        "flag": choice(
            "How the result compares with normal: the reference range for a number, the "
            "reader's judgement for a report (indeterminate: equivocal). Harnesses and graders "
            "read it; a report without one says neither normal nor abnormal.",
            RESULT_FLAGS,
            "high",
            scaffold=True,
        ),
        "note": text(
            "What the report itself says beside the value, as the laboratory, the radiologist "
            "or the bedside team would write it; it is served with the result.",
            "Haemolysed sample.",
        ),
        "examiner_note": EXAMINER_NOTE,
        "attachments": text_list(
            "Files of this result under cases/<case_id>/attachments/ (a tracing, an image).",
            ["ecg-12-lead.png"],
        ),
    }


_COMPONENTS = {
    "type": "dict",
    "keysrules": {"type": "string", "empty": False},
    "valuesrules": {"type": "dict", "schema": _result_fields(type_required=False)},
    "meta": _meta(
        "For a panel: each member test (by catalog name or alias) with its own result.",
        {"Hemoglobin": {"value": 13.5, "unit": "g/dL", "reference_range": "13.0–17.0"}},
    ),
}

_TIMED_RESULT: Schema = {
    "at": required(
        text("When the result was taken, in words the case uses.", "3 hours after arrival")
    ),
    **_result_fields(type_required=False),
    "components": _COMPONENTS,
}

RESULT: Schema = {
    **_result_fields(type_required=True),
    "components": _COMPONENTS,
    "series": {
        "type": "list",
        "minlength": 2,
        "schema": {"type": "dict", "schema": _TIMED_RESULT},
        "meta": _meta(
            "Results at several times, oldest first, each a full result (its type is the "
            "test's); use instead of `value`.",
            [
                {"at": "on arrival", "value": 48, "unit": "ng/L", "reference_range": "<14"},
                {"at": "3 hours", "value": 512, "unit": "ng/L", "reference_range": "<14"},
            ],
        ),
    },
    "answers": audience(
        test_name_list(
            "Other catalog tests this result also answers (an abdominal ultrasound that reports "
            "the gallbladder answers a right upper quadrant ultrasound). Authoring data: never "
            "served with the result.",
            ["Right upper quadrant ultrasound"],
        ),
        "examiner",
    ),
    **_QUALIFIERS,
}

# --- the patient ----------------------------------------------------------------------------

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
    "severity": choice(
        "How severe the reaction was.",
        ["mild", "moderate", "severe", "anaphylaxis", "unknown"],
        "moderate",
    ),
}
_UNKNOWN_ITEM = {
    "topic": required(text("What the patient does not know or cannot say.", "family history")),
    "reason": text(
        "Why, as the patient would explain it.", "adopted; no contact with birth family"
    ),
}


def _structured_list(description: str, item: Schema, example: Any, **more: Any) -> Schema:
    return {
        "type": "list",
        "schema": {"type": "dict", "schema": item},
        "meta": _meta(description, example, **more),
    }


# --- the physical examination ---------------------------------------------------------------

_FINDING: Schema = {
    "value": required(
        {
            "type": ["number", "string"],
            "meta": _meta("The finding: a measurement, or a short text.", 38.2),
        }
    ),
    "unit": text("Unit of a measured finding.", "Cel"),
    "reference_range": _REFERENCE_RANGE,
    "flag": choice("How a measured finding compares with normal.", RESULT_FLAGS, "high"),
    "laterality": choice("Side: left, right or bilateral.", LATERALITIES, "right"),
    "note": text("Anything else about the finding.", "Rechecked after 10 minutes."),
    "examiner_note": EXAMINER_NOTE,
}


FINDING_FIELDS = tuple(_FINDING)


def _exam_section(levels: int) -> Schema:
    """Findings of one part of the examination: text, a measured finding, or (``levels`` more
    deep) a section of its own."""
    forms: list[Schema] = [
        {"type": "string", "empty": False, "meta": _meta("text")},
        {"type": "dict", "schema": _FINDING, "meta": _meta("a finding {value, unit, ...}")},
    ]
    if levels > 1:
        forms.append(
            {
                "type": "dict",
                "empty": False,
                "keysrules": {"type": "string", "empty": False},
                "valuesrules": _exam_section(levels - 1),
                "meta": _meta("a section of findings"),
            }
        )
    return {
        "type": ["string", "dict"],
        "anyof": forms,
        "meta": _meta(
            "A part of the examination: text, a finding with a value (and unit), or a "
            "section of further parts.",
            {"power": "4/5", "reflexes": "brisk"},
        ),
    }


PHYSICAL_EXAM: Schema = {
    "type": ["string", "dict"],
    "empty": False,
    "anyof": [
        {"type": "string", "meta": _meta("a narrative")},
        {
            "type": "dict",
            "keysrules": {"type": "string", "empty": False},
            "valuesrules": _exam_section(EXAM_DEPTH),
            "meta": _meta("sections of findings"),
        },
    ],
    "meta": _meta(
        "Examination findings: one narrative, or sections (general, cardiovascular, ...) "
        "nested as deep as needed, down to text or measured findings.",
        {
            "general": "Diaphoretic, in pain",
            "neurological": {"upper limbs": {"right": {"power": "4/5"}}},
            "temperature": {"value": 38.2, "unit": "Cel"},
        },
        audience="on_request",
        scaffold={"general": "TODO: general appearance"},
    ),
}

CASE_SCHEMA: Schema = {
    "case_id": required(
        text(
            "Unique, stable identifier; equals the file name without extension.",
            "chest_pain_001",
            meta={"audience": "examiner"},
            regex=CASE_ID_PATTERN,
        )
    ),
    "metadata": required(
        mapping(
            "What the case is, for people and for filtering.",
            {
                "title": required(text("Short human title.", "Acute chest pain in a smoker")),
                "language": required(
                    choice("Language of the case text; must be en.", LANGUAGES, "en")
                ),
                "difficulty": required(
                    choice("How hard the case is: easy, medium or hard.", DIFFICULTIES, "medium")
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
            meta={"audience": "examiner"},
        )
    ),
    "patient": required(
        mapping(
            "The simulated patient: everything here is the patient's to know and say.",
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
                "sex": required(choice("female, male or other.", SEXES, "male")),
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
                "unknowns": _structured_list(
                    "What the patient does not know or cannot say: a simulator answers these "
                    "with 'I don't know', never with an invented answer.",
                    _UNKNOWN_ITEM,
                    [{"topic": "family history", "reason": "adopted"}],
                ),
            },
            meta={"audience": "patient"},
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
                        "What a good history must cover (the examiner's checklist, never shown "
                        "to the simulated patient).",
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
                        meta={"audience": "examiner"},
                    )
                ),
            },
            meta={"audience": "patient"},
        )
    ),
    "physical_exam": PHYSICAL_EXAM,
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
            meta={"audience": "examiner"},
        )
    ),
    "investigations": required(
        mapping(
            "Tests: which a good answer orders (examiner) and their results (on request).",
            {
                "catalog_hints": orderable_tests(
                    "Tests to show first in the ordering interface.", ["ECG"]
                ),
                "expected": required(
                    mapping(
                        "Which tests a good answer orders.",
                        {
                            "must_order": required(
                                must_orders(
                                    "Tests that must be ordered.",
                                    [
                                        "ECG",
                                        "Troponin",
                                        {"any_of": ["Urine dipstick", "Urinalysis"]},
                                    ],
                                    minlength=1,
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
                            audience="on_request",
                        ),
                    }
                ),
                "results_generated_policy": choice(
                    "What the simulator returns for a test with no listed result: "
                    "normal_unless_listed (the catalog's default normal result), "
                    "unavailable_unless_listed, or generate_consistent (a result consistent "
                    "with the case, which a harness must not contradict it with).",
                    RESULTS_POLICIES,
                    "normal_unless_listed",
                    scaffold="normal_unless_listed",
                ),
            },
            meta={"audience": "examiner"},
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
            meta={"audience": "examiner"},
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
                            "partial_credit": {
                                "type": "dict",
                                "keysrules": {"type": "string", "empty": False},
                                "valuesrules": {"type": "number", "min": 0, "max": 1},
                                "meta": _meta(
                                    "Answers that earn part of the diagnosis score, with the "
                                    "share each earns (0 to 1).",
                                    {"Acute coronary syndrome": 0.5},
                                ),
                            },
                            "codes": mapping(
                                "Codes of the final diagnosis, each confirmed by a public source "
                                "(never guessed); an answer may give one instead of words.",
                                {
                                    system: text_list(
                                        f"{label} codes.",
                                        [example],
                                        schema={
                                            "type": "string",
                                            "empty": False,
                                            "regex": CODE_PATTERNS[system],
                                        },
                                    )
                                    for system, label, example in (
                                        ("icd10", "ICD-10", "I21.1"),
                                        ("icd11", "ICD-11", "BA41.0"),
                                        ("snomed", "SNOMED CT", "401314000"),
                                    )
                                },
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
                "process": text_list(
                    "What a good consultation asks, examines or advises, judged from the "
                    "transcript where there is one; reported as its own component, outside the "
                    "weighted score.",
                    ["Asks about red flags for a secondary headache"],
                ),
            },
            meta={"audience": "examiner"},
        )
    ),
    "provenance": mapping(
        "Where the case comes from and under what licence (defaults: original, under the "
        "dataset's licence).",
        {
            "source": required(
                choice(
                    "original (written for casebank) or adapted (from a published source).",
                    PROVENANCE_SOURCES,
                    "original",
                )
            ),
            "licence": text("SPDX licence identifier of the case.", "CC-BY-4.0"),
            "derived_from": text(
                "For an adapted case: the citation or URL of its source.",
                "AgentClinic-MedQA, case 12 (https://github.com/SamuelSchmidgall/AgentClinic)",
            ),
            "notes": text("What was changed in adapting it, or anything else a reviewer needs."),
        },
        meta={"audience": "examiner"},
    ),
    "localization": {
        "type": "dict",
        "keysrules": {"type": "string", "regex": r"^[a-z]{2,3}(-[A-Z][A-Za-z0-9]+)?$"},
        "valuesrules": {"type": "dict"},
        "meta": _meta(
            "Future multilingual support: translated field overrides by language tag.",
            {"fr": {"metadata": {"title": "Douleur thoracique aiguë"}}},
            audience="examiner",
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
            audience="examiner",
        ),
    },
}

CATALOG_TEST: Schema = {
    "name": required(text("Canonical test name used in reports (US spelling).", "Troponin")),
    "aliases": text_list(
        "Other names and abbreviations that mean this test.", ["hs-troponin", "Troponin I"]
    ),
    "kind": required(
        choice(
            "Kind of test: lab, imaging, microbiology, procedure, bedside or assessment.",
            TEST_KINDS,
            "lab",
        )
    ),
    "specimen": text(
        "What is sampled, for lab and microbiology tests (from the catalog's specimens).",
        "blood",
        meta={"vocabulary": "specimens"},
    ),
    "modality": text(
        "How an image is made, for imaging (from the catalog's modalities).",
        "ultrasound",
        meta={"vocabulary": "modalities"},
    ),
    "site": text("Body site, for imaging, procedures and bedside tests.", "abdomen"),
    "sex": choice(
        "The one sex the test is done for (a vaginal swab, a semen analysis): for a patient "
        "of the other sex the results oracle serves no result, and says why.",
        ["female", "male"],
        "female",
    ),
    "family": text(
        "A group of tests that report the same thing, so that a result of one bears on the "
        "others (e.g. cardiac_rhythm for ECG, telemetry and Holter).",
        "cardiac_rhythm",
    ),
    "result_types": required(
        {
            "type": "list",
            "minlength": 1,
            "schema": {"type": "string", "allowed": RESULT_TYPES},
            "meta": _meta("Result types a case may give for this test.", ["lab_value"]),
        }
    ),
    "unit": text(
        "Preferred unit of a numeric result; any unit of the same dimension is accepted.",
        "ng/L",
    ),
    "units": text_list(
        "Units of other dimensions also accepted (a mass concentration beside a molar one).",
        ["mg/dL"],
    ),
    "components": text_list(
        "For a panel: the member tests, by catalog name.", ["Hemoglobin", "Platelet count"]
    ),
    "component_aliases": {
        "type": "dict",
        "keysrules": {"type": "string", "empty": False},
        "valuesrules": {"type": "string", "empty": False},
        "meta": _meta(
            "For a panel: names that mean a member only inside this panel (WBC in a "
            "urinalysis is the urine white cell count).",
            {"WBC": "Urine white blood cells"},
        ),
    },
    "answers": text_list(
        "Tests whose request this test's result answers (a urinalysis answers a urine "
        "dipstick), by catalog name.",
        ["Urine dipstick"],
    ),
    "loinc": text(
        "LOINC code, only where a public source confirms it (the check digit is verified).",
        "2160-0",
        regex=r"^[0-9]{1,7}-[0-9]$",
    ),
    "default_result": text(
        "The normal result served for this test when a case does not list it "
        "(results_generated_policy: normal_unless_listed). Only a laboratory, microbiology, "
        "imaging or procedure test, or a bedside test on a specimen, may have one: what the "
        "examination, history or listed results determine is derived or unavailable.",
        "Within normal limits.",
    ),
    "derive": text(
        "The formula that computes this test's result from the case when the case does not "
        "list it (a score from the recorded observations: docs/serving.md lists them).",
        "news2",
    ),
    "cost": mapping(
        "What the test costs: a public fee schedule's amount (with currency, year and "
        "source), or, where no public figure exists, a relative tier (catalog header).",
        {
            "amount": {
                "type": "number",
                "min": 0,
                "meta": _meta("The amount, in `currency`.", 9.35),
            },
            "currency": choice("The currency of `amount`.", COST_CURRENCIES, "USD"),
            "year": {
                "type": "integer",
                "min": 1990,
                "max": 2100,
                "meta": _meta("The year of the schedule.", 2025),
            },
            "source": text(
                "The schedule the amount comes from, as cited in the catalog header, or the "
                "basis of a tier.",
                "CMS CLFS 2025",
            ),
            "code": text("The schedule's code for the test (CPT or HCPCS).", "85025"),
            "tier": choice(
                "A relative tier where no public figure exists: low, medium, high, very_high.",
                COST_TIERS,
                "medium",
            ),
        },
        {"amount": 9.35, "currency": "USD", "year": 2025, "source": "CMS CLFS 2025"},
    ),
    "burden": mapping(
        "What the test costs the patient besides money.",
        {
            "invasive": required(
                choice(
                    "none (no skin broken), minimal (a needle: venepuncture, cannula) or "
                    "invasive (a procedure: lumbar puncture, endoscopy, biopsy).",
                    INVASIVENESS,
                    "minimal",
                )
            ),
            "radiation_msv": required(
                {
                    "type": ["number", "string"],
                    "anyof": [
                        {"type": "number", "min": 0},
                        {"type": "string", "allowed": [UNKNOWN_DOSE]},
                    ],
                    "meta": _meta(
                        "Typical effective dose in mSv, from a published table (header); "
                        f"`{UNKNOWN_DOSE}` where no cited table has the study.",
                        0.1,
                    ),
                }
            ),
            "contrast": required(
                choice("Contrast given: none, iodinated or gadolinium.", CONTRASTS, "none")
            ),
            "sedation": required(
                {
                    "type": "boolean",
                    "meta": _meta("Whether the test usually needs sedation.", False),
                }
            ),
        },
        {"invasive": "minimal", "radiation_msv": 0, "contrast": "none", "sedation": False},
    ),
}

CATALOG_SCHEMA: Schema = {
    "vocabularies": required(
        mapping(
            "Controlled vocabularies cases and catalog entries draw on.",
            {
                "tones": required(
                    text_list("Supported simulator tones.", ["neutral", "anxious"], minlength=1)
                ),
                "specialties": required(
                    text_list("Known specialties.", ["emergency_medicine"], minlength=1)
                ),
                "tags": required(text_list("Known tags.", ["chest_pain"], minlength=1)),
                "specimens": text_list("Specimens lab tests are done on.", ["blood", "urine"]),
                "modalities": text_list("Imaging modalities.", ["x-ray", "ultrasound"]),
                "abbreviations": {
                    "type": "dict",
                    "keysrules": {"type": "string", "empty": False},
                    "valuesrules": {"type": "string", "empty": False},
                    "meta": _meta(
                        "Clinical abbreviations and what they stand for, used to compare "
                        "answers (STEMI and ST-elevation myocardial infarction are one answer).",
                        {"STEMI": "ST-elevation myocardial infarction"},
                    ),
                },
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
                [{"name": "ECG", "kind": "bedside", "result_types": ["text_report"]}],
            ),
        }
    ),
}


def _close(rules: Schema) -> None:
    """State ``allow_unknown: False`` on every mapping with named fields, below ``rules``.

    Cerberus validates each definition of an ``anyof`` with unknown fields allowed and hands
    that on to every mapping nested inside that does not say otherwise. So, unless each says so
    itself, a misspelt key in an examination finding (``unti`` for ``unit``) would pass, two
    levels down in the examination's ``anyof``s. The fast path always refuses unknown fields.
    """
    types = rules.get("type", ())
    types = (types,) if isinstance(types, str) else types
    inner = rules.get("schema")
    if isinstance(inner, dict) and "dict" in types:
        rules.setdefault("allow_unknown", False)
        for field_rules in inner.values():
            _close(field_rules)
    elif isinstance(inner, dict):
        _close(inner)
    for key in ("keysrules", "valuesrules"):
        if isinstance(rules.get(key), dict):
            _close(rules[key])
    for definition in rules.get("anyof", ()):
        _close(definition)


for _fields in (CASE_SCHEMA, CATALOG_SCHEMA):
    for _rules in _fields.values():
        _close(_rules)


def schema_fingerprint() -> str:
    """SHA-256 of the case and catalog schemas, for release manifests and the cache key."""
    blob = json.dumps(
        [SCHEMA_VERSION, CASE_SCHEMA, CATALOG_SCHEMA],
        sort_keys=True,
        ensure_ascii=False,
        default=str,
    )
    return hashlib.sha256(blob.encode("utf-8")).hexdigest()
