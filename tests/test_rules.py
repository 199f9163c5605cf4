"""Case rules: for each, a snippet that triggers it (exact path and line) and a near miss."""

from __future__ import annotations

import pytest

from casebank.check.rules.results import parse_reference_range
from conftest import FIXTURES, VALID_CASE, check_text, checker_for, edit, found, line_of


def rules_of(text: str, **kwargs: object) -> list[str]:
    return [rule for rule, _, _ in found(text, **kwargs)]


# --- identity -----------------------------------------------------------------------------


def test_case_id_must_match_the_file_name() -> None:
    assert found(VALID_CASE, file="cases/other_case.yaml") == [("CB302", "case_id", 2)]


def test_case_id_matching_the_file_name_passes_for_every_extension() -> None:
    for suffix in ("yaml", "yml", "json"):
        if suffix == "json":
            continue  # JSON syntax differs; covered by the CLI tests
        assert found(VALID_CASE, file=f"cases/valid_case.{suffix}") == []


# --- references ---------------------------------------------------------------------------


def test_unknown_must_order_test_suggests_the_catalog_name() -> None:
    text = edit("must_order: [ECG, Troponin, CBC]", "must_order: [ECG, Troponine, CBC]")
    [p] = check_text(text)
    assert (p.rule, p.path, p.line) == (
        "CB304",
        "investigations.expected.must_order[1]",
        line_of(text, "Troponine"),
    )
    assert "did you mean `Troponin`" in p.hint


def test_an_unknown_name_with_a_side_is_pointed_at_the_test_and_its_laterality() -> None:
    real = checker_for((FIXTURES.parent.parent / "catalog.yaml").read_text(encoding="utf-8"))
    text = edit("must_order: [ECG, Troponin, CBC]", "must_order: [ECG, Troponin, X-Ray Left Knee]")
    [p] = [p for p in check_text(text, checker=real) if p.rule == "CB304"]
    assert p.path == "investigations.expected.must_order[2]"
    assert "did you mean `Knee X-ray` with `laterality: left`?" in p.hint
    # Not for a site that does not come in pairs: a right heart MRI is no cardiac MRI on the right.
    text = edit("must_order: [ECG, Troponin, CBC]", "must_order: [ECG, Troponin, Right heart MRI]")
    [p] = [p for p in check_text(text, checker=real) if p.rule == "CB304"]
    assert "laterality" not in p.hint and "is not close to any catalog test" in p.hint


@pytest.mark.parametrize(
    "where",
    ["optional: [Chest X-ray]", "should_not_order: [Elective stress test]", "catalog_hints: [ECG]"],
)
def test_unknown_tests_are_caught_in_every_list(where: str) -> None:
    key = where.split(":")[0]
    text = edit(where, f"{key}: [Chest MRI scan]")
    assert [(r, line) for r, _, line in found(text)] == [("CB304", line_of(text, "Chest MRI"))]


def test_unknown_result_key_points_at_the_key() -> None:
    text = edit("    ECG:\n      type: text_report", "    ECGG:\n      type: text_report")
    problems = check_text(text)
    unknown = [p for p in problems if p.rule == "CB304"]
    assert [(p.path, p.line, p.column) for p in unknown] == [
        ("investigations.results.ECGG", line_of(text, "ECGG:"), 5)
    ]


def test_aliases_resolve_case_insensitively_everywhere() -> None:
    text = edit("must_order: [ECG, Troponin, CBC]", "must_order: [ekg, HS-TROPONIN, fbc]")
    assert check_text(text) == []


def test_same_test_in_two_lists_via_alias() -> None:
    text = edit("optional: [Chest X-ray]", "optional: [Chest X-ray, EKG]")
    assert found(text) == [
        ("CB401", "investigations.expected.optional[1]", line_of(text, "optional:"))
    ]


def test_same_test_twice_in_one_list() -> None:
    text = edit("must_order: [ECG, Troponin, CBC]", "must_order: [ECG, Troponin, CBC, Troponin I]")
    [p] = check_text(text)
    assert (p.rule, p.path) == ("CB401", "investigations.expected.must_order[3]")
    assert "again in the same list" in p.message


def test_distinct_tests_in_the_lists_are_fine() -> None:
    text = edit("optional: [Chest X-ray]", "optional: [Chest X-ray, Potassium]")
    assert check_text(text) == []


def test_must_order_without_result_warns_without_policy() -> None:
    text = edit("  results_generated_policy: normal_unless_listed\n", "")
    text = edit("must_order: [ECG, Troponin, CBC]", "must_order: [ECG, Troponin, CBC, K]", text)
    assert found(text) == [
        ("CB405", "investigations.expected.must_order[3]", line_of(text, "must_order:"))
    ]


def test_must_order_served_by_the_policy_warns_and_says_how() -> None:
    text = edit("must_order: [ECG, Troponin, CBC]", "must_order: [ECG, Troponin, CBC, K]")
    [p] = check_text(text)
    assert (p.rule, p.path) == ("CB405", "investigations.expected.must_order[3]")
    assert "served the catalog's normal result (normal_unless_listed)" in p.message


def test_must_order_answered_from_its_panel_is_served() -> None:
    # Hemoglobin is not listed on its own: the oracle derives it from the blood count
    text = edit("must_order: [ECG, Troponin, CBC]", "must_order: [ECG, Troponin, CBC, Hb]")
    assert check_text(text) == []


def test_must_order_result_found_through_an_alias() -> None:
    # the result is keyed `hs-troponin`, the list says `Troponin`: the same test
    text = edit("  results_generated_policy: normal_unless_listed\n", "")
    assert check_text(text) == []


def test_panel_component_not_in_the_panel() -> None:
    text = edit(
        "        Platelets: {value: 250",
        '        K: {value: 4.1, unit: mmol/L, reference_range: "3.5-5.0"}\n'
        "        Platelets: {value: 250",
    )
    assert found(text) == [
        (
            "CB415",
            'investigations.results["Complete blood count"].components.K',
            line_of(text, "K: {value"),
        )
    ]


def test_panel_component_unknown_to_the_catalog() -> None:
    text = edit("        Hemoglobin: {", "        Hemoglobinn: {")
    assert rules_of(text) == ["CB415"]


# --- results ------------------------------------------------------------------------------


def test_lab_value_without_unit_and_range() -> None:
    text = edit('      unit: ng/mL\n      reference_range: "0.00–0.04"\n', "")
    line = line_of(text, "hs-troponin:")
    assert found(text) == [
        ("CB305", "investigations.results.hs-troponin", line),
        ("CB305", "investigations.results.hs-troponin", line),
    ]


def test_lab_value_with_text_value() -> None:
    text = edit("      value: 2.4", '      value: "2.4 ng/mL"')
    assert rules_of(text) == ["CB305"]


def test_panel_component_lab_value_needs_a_unit() -> None:
    text = edit("{value: 14.1, unit: g/dL, ", "{value: 14.1, ")
    assert rules_of(text) == ["CB305"]


def test_text_report_without_text() -> None:
    text = edit('      value: "ST elevation in II, III and aVF."\n', "")
    assert found(text) == [("CB416", "investigations.results.ECG", line_of(text, "    ECG:"))]


def test_result_type_not_allowed_for_the_test() -> None:
    text = edit("      type: text_report\n", "      type: qualitative\n")
    assert found(text) == [
        ("CB402", "investigations.results.ECG.type", line_of(text, "type: qualitative"))
    ]


def test_an_unreadable_unit_is_refused_with_the_catalog_unit() -> None:
    text = edit("      unit: ng/mL", "      unit: ng/mmL")
    [p] = check_text(text)
    assert (p.rule, p.path, p.line) == (
        "CB403",
        "investigations.results.hs-troponin.unit",
        line_of(text, "unit: ng/mmL"),
    )
    assert "is not a unit casebank can read" in p.message and "ng/L" in p.hint


def test_ucum_reads_a_lower_case_litre_as_a_litre() -> None:
    assert check_text(edit("      unit: ng/mL", "      unit: ng/ml")) == []


def test_alternative_accepted_unit_passes() -> None:
    assert check_text(edit("      unit: ng/mL", "      unit: ng/L")) == []


@pytest.mark.parametrize(
    "bad", ['"0.04–0.00"', '"normal"', '"0.00–0.04 ng/mL"', "{low: 5, high: 1}", '"1.0.0"']
)
def test_bad_reference_ranges(bad: str) -> None:
    text = edit('reference_range: "0.00–0.04"', f"reference_range: {bad}")
    assert [(r, p) for r, p, _ in found(text)] == [
        ("CB404", "investigations.results.hs-troponin.reference_range")
    ]


@pytest.mark.parametrize(
    ("text", "expected"),
    [
        ("0.00–0.04", (0.0, 0.04)),
        ("3.5-5.0", (3.5, 5.0)),
        ("<5", (None, 5.0)),
        ("≤ 5", (None, 5.0)),
        (">60", (60.0, None)),
        ("≥60", (60.0, None)),
        ("-2 – 2", (-2.0, 2.0)),
        ({"low": 1, "high": 2}, (1.0, 2.0)),
        ({"high": 2}, (None, 2.0)),
        ("1 to 2", (1.0, 2.0)),
    ],
)
def test_reference_range_forms(text: object, expected: tuple[float | None, float | None]) -> None:
    assert parse_reference_range(text) == expected


# --- scoring ------------------------------------------------------------------------------


def test_weights_must_sum_to_one() -> None:
    text = edit("safety: 0.1}", "safety: 0.2}")
    [p] = check_text(text)
    assert (p.rule, p.path, p.line) == ("CB306", "scoring.weights", line_of(text, "weights:"))
    assert "sum to 1.1" in p.message


def test_weights_rounding_within_tolerance_pass() -> None:
    text = edit(
        "{diagnosis: 0.35, diagnostics: 0.25, treatment: 0.3, safety: 0.1}",
        "{diagnosis: 0.1, diagnostics: 0.2, treatment: 0.3, safety: 0.4}",
    )
    assert check_text(text) == []  # 0.1 + 0.2 + 0.3 + 0.4 is 1.0000000000000002 in floats


def test_weight_outside_zero_to_one() -> None:
    text = edit(
        "{diagnosis: 0.35, diagnostics: 0.25, treatment: 0.3, safety: 0.1}",
        "{diagnosis: 1.2, diagnostics: -0.2, treatment: 0, safety: 0}",
    )
    assert [(r, p) for r, p, _ in found(text)] == [
        ("CB409", "scoring.weights.diagnosis"),
        ("CB409", "scoring.weights.diagnostics"),
    ]


def test_unknown_score_component_suggests() -> None:
    text = edit("{diagnosis: 0.35,", "{diagnoses: 0.35,")
    [p] = check_text(text)
    assert (p.rule, p.path) == ("CB410", "scoring.weights.diagnoses")
    assert "did you mean `diagnosis`" in p.message


def test_acceptable_answer_repeating_the_diagnosis_warns() -> None:
    text = edit(
        '["Inferior STEMI", "STEMI"]',
        '["Inferior STEMI", "acute inferior ST-elevation myocardial infarction"]',
    )
    assert found(text) == [
        ("CB411", "scoring.acceptable_answers.final_diagnosis[1]", line_of(text, "Inferior STEMI"))
    ]


def test_acceptable_answer_that_is_a_real_variant_passes() -> None:
    text = edit('["Inferior STEMI", "STEMI"]', '["Inferior STEMI", "Inferior wall STEMI"]')
    assert check_text(text) == []


@pytest.mark.parametrize(
    "item,why",
    [
        ("Failing to ask about red flags", "asks, examines or advises"),
        ("No safety-net advice", "asks, examines or advises"),
        ("Not examining the ears", "asks, examines or advises"),
        ("Not measuring oxygen saturation", "left undone"),
        ("Missing the pneumothorax on the chest X-ray", "left undone"),
        ("No continuous cardiac monitoring", "left undone"),
        ("Not giving systemic corticosteroids", "without a time"),
        ("Antihistamines as first-line treatment", "does not begin with an act"),
    ],
)
def test_a_critical_error_a_judge_cannot_decide_is_refused(item: str, why: str) -> None:
    text = edit(
        'critical_safety_errors: ["Discharging the patient"]',
        f'critical_safety_errors: ["Discharging the patient", "{item}"]',
    )
    [p] = check_text(text)
    assert (p.rule, p.path, p.line) == (
        "CB428",
        "scoring.critical_safety_errors[1]",
        line_of(text, "critical_safety_errors"),
    )
    assert why in p.message


@pytest.mark.parametrize(
    "item",
    [
        "Not giving systemic corticosteroids within the first hour",
        "Not giving IM adrenaline immediately",
        "Delaying antibiotics to wait for a CT",
        "Withholding analgesia until imaging is done",
        "Giving insulin without checking the potassium",
        "Prescribing a combined pill without checking for a VTE history",
    ],
)
def test_acts_and_timed_omissions_are_decidable(item: str) -> None:
    text = edit(
        'critical_safety_errors: ["Discharging the patient"]',
        f'critical_safety_errors: ["{item}"]\n  process: ["Asks about red flags"]',
    )
    assert check_text(text) == []


def test_an_item_of_alternatives_needs_one_of_them_served() -> None:
    # Urine pregnancy test has no result in the fixture case: served by the policy (CB405),
    # unless one of its alternatives is answered by the case.
    alone = edit("must_order: [ECG, Troponin, CBC]", "must_order: [ECG, Troponin, CBC, Urine hCG]")
    assert rules_of(alone) == ["CB405"]
    either = edit(
        "must_order: [ECG, Troponin, CBC]",
        "must_order: [ECG, Troponin, {any_of: [Urine hCG, Hemoglobin]}]",
    )
    assert check_text(either) == []


# --- content ------------------------------------------------------------------------------


def test_diagnosis_leak_in_the_history() -> None:
    text = edit("with sweating and nausea.", "with sweating and nausea. He fears a STEMI.")
    assert found(text) == [
        (
            "CB408",
            "presentation.history_of_present_illness",
            line_of(text, "history_of_present_illness"),
        )
    ]


def test_diagnosis_leak_in_chief_complaint_via_full_name() -> None:
    text = edit(
        'chief_complaint: "Chest pain"',
        'chief_complaint: "Acute inferior ST-elevation myocardial infarction"',
    )
    assert rules_of(text) == ["CB408"]


def test_no_leak_for_a_word_inside_another_word() -> None:
    text = edit("with sweating and nausea.", "with sweating and nausea; STEMIs run in the family.")
    assert check_text(text) == []


def test_treatment_repeats_a_contraindication() -> None:
    text = edit(
        'contraindications: ["Discharge without ruling out ACS"]',
        'contraindications: ["Do not give primary PCI (no indication)"]',
    )
    assert found(text) == [
        ("CB406", "management_gold.treatment_plan[1]", line_of(text, "treatment_plan"))
    ]


def test_unrelated_contraindication_passes() -> None:
    text = edit(
        'contraindications: ["Discharge without ruling out ACS"]',
        'contraindications: ["Do not give thrombolysis after primary PCI"]',
    )
    assert check_text(text) == []


def test_treatment_with_a_drug_of_the_allergy_class() -> None:
    text = edit('"Primary PCI"]', '"Primary PCI", "Amoxicillin 500 mg three times daily"]')
    [p] = check_text(text)
    assert (p.rule, p.path) == ("CB407", "management_gold.treatment_plan[2]")
    assert "allergic to penicillin" in p.message


def test_treatment_that_names_the_allergen_only_to_avoid_it_passes() -> None:
    text = edit('"Primary PCI"]', '"Primary PCI", "Doxycycline instead of amoxicillin"]')
    assert check_text(text) == []


# --- vocabulary ---------------------------------------------------------------------------


def test_unknown_specialty_warns_with_suggestion() -> None:
    text = edit("specialty: emergency_medicine", "specialty: emergency_medcine")
    [p] = check_text(text)
    assert (p.rule, p.path, p.line) == (
        "CB412",
        "metadata.specialty",
        line_of(text, "emergency_medcine"),
    )
    assert "did you mean `emergency_medicine`" in p.message


def test_unknown_tag_warns() -> None:
    text = edit("tags: [chest_pain, cardiology]", "tags: [chestpain, cardiology]")
    assert found(text) == [("CB413", "metadata.tags[0]", line_of(text, "chestpain"))]


def test_unknown_tone_is_an_error() -> None:
    text = edit("tone_presets: [neutral, anxious]", "tone_presets: [neutral, grumpy]")
    assert found(text) == [("CB414", "patient.tone_presets[1]", line_of(text, "grumpy"))]


def test_known_vocabulary_passes() -> None:
    text = edit("tags: [chest_pain, cardiology]", "tags: [chest_pain, triage]")
    assert check_text(text) == []


# --- acknowledgements ---------------------------------------------------------------------

LEAK = edit("with sweating and nausea.", "with sweating and nausea. He fears a STEMI.")


def test_an_acknowledged_warning_is_set_aside() -> None:
    text = LEAK + (
        "acknowledged_warnings:\n  - rule: diagnosis-leak\n"
        "    path: presentation.history_of_present_illness\n"
        '    reason: "He had a STEMI before and says so; that is realistic."\n'
    )
    assert check_text(text) == []


def test_acknowledgement_by_code_without_path() -> None:
    text = LEAK + (
        "acknowledged_warnings:\n  - rule: CB408\n"
        '    reason: "He had a STEMI before and says so; that is realistic."\n'
    )
    assert check_text(text) == []


def test_acknowledgement_needs_a_real_reason() -> None:
    text = LEAK + 'acknowledged_warnings:\n  - rule: CB408\n    reason: "ok"\n'
    assert sorted(rules_of(text)) == ["CB208", "CB408"]


def test_stale_acknowledgement_warns() -> None:
    text = VALID_CASE + (
        "acknowledged_warnings:\n  - rule: CB408\n"
        '    reason: "He had a STEMI before and says so; that is realistic."\n'
    )
    assert found(text) == [
        ("CB417", "acknowledged_warnings[0].rule", line_of(text, "- rule: CB408"))
    ]


def test_errors_cannot_be_acknowledged() -> None:
    text = edit("safety: 0.1}", "safety: 0.2}") + (
        "acknowledged_warnings:\n  - rule: CB306\n"
        '    reason: "Weights are deliberately uneven in this teaching case."\n'
    )
    assert sorted(rules_of(text)) == ["CB306", "CB417"]


def test_acknowledgement_for_another_path_does_not_cover() -> None:
    text = LEAK + (
        "acknowledged_warnings:\n  - rule: CB408\n    path: patient.persona\n"
        '    reason: "He had a STEMI before and says so; that is realistic."\n'
    )
    assert sorted(rules_of(text)) == ["CB408", "CB417"]
