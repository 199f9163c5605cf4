"""The richer forms of case format 2.0 (series, statuses, structured exams, qualifiers,
attachments, panel-local names) and the rules that keep them honest: for each, a snippet that
triggers the rule (exact path and line) and the near miss that passes."""

from __future__ import annotations

from casebank.check.engine import Checker
from casebank.format.catalog import build_catalog
from casebank.format.loader import load_document
from casebank.serve.oracle import Oracle
from conftest import TEST_CATALOG, VALID_CASE, check_text, edit, found, line_of

RESULTS_END = "  results_generated_policy: normal_unless_listed\n"


def with_result(block: str, text: str = VALID_CASE) -> str:
    """The valid case with ``block`` (indented as a results entry) added to its results."""
    return edit(RESULTS_END, block + RESULTS_END, text)


# --- series and statuses --------------------------------------------------------------------


SERIAL_TROPONIN = """\
    Potassium:
      type: lab_value
      series:
        - {at: "on arrival", value: 5.9, unit: mmol/L, reference_range: "3.5–5.0", flag: high}
        - {at: "2 hours", value: 5.2, unit: mmol/L, reference_range: "3.5–5.0", flag: high}
"""


def test_a_series_of_full_results_is_valid() -> None:
    assert check_text(with_result(SERIAL_TROPONIN)) == []


def test_each_point_of_a_series_is_a_full_result() -> None:
    text = with_result(
        SERIAL_TROPONIN.replace(
            ', unit: mmol/L, reference_range: "3.5–5.0", flag: high}\n        - {at: "2 hours"',
            '}\n        - {at: "2 hours"',
        )
    )
    assert found(text) == [
        ("CB305", "investigations.results.Potassium.series[0]", line_of(text, "on arrival")),
        ("CB305", "investigations.results.Potassium.series[0]", line_of(text, "on arrival")),
    ]


def test_a_series_point_needs_its_time() -> None:
    text = with_result(SERIAL_TROPONIN.replace('at: "on arrival", ', ""))
    assert [r for r, _, _ in found(text)] == ["CB201"]


def test_a_series_and_a_value_together_conflict() -> None:
    text = with_result(
        SERIAL_TROPONIN.replace(
            "      type: lab_value\n", "      type: lab_value\n      value: 5.9\n"
        )
    )
    assert found(text) == [
        ("CB421", "investigations.results.Potassium.value", line_of(text, "value: 5.9"))
    ]


def test_a_pending_result_needs_no_value_and_may_not_hold_one() -> None:
    pending = (
        "    Potassium:\n      type: lab_value\n      status: pending\n"
        "      note: Due in an hour.\n"
    )
    assert check_text(with_result(pending)) == []
    text = with_result(pending + "      value: 5.1\n")
    assert found(text) == [
        ("CB421", "investigations.results.Potassium.value", line_of(text, "value: 5.1"))
    ]


def test_placeholder_words_are_not_results() -> None:
    for word in ("Pending", "N/A", "Not specified", "not done", "Unknown", "TBC"):
        text = with_result(f'    Chest X-ray:\n      type: text_report\n      value: "{word}"\n')
        [p] = check_text(text)
        assert (p.rule, p.path) == ("CB419", 'investigations.results["Chest X-ray"].value'), word
        assert "status: pending" in p.hint


def test_a_real_result_is_not_a_placeholder() -> None:
    text = with_result(
        '    Chest X-ray:\n      type: text_report\n      value: "No consolidation."\n'
        "      flag: normal\n"
    )
    assert check_text(text) == []


def test_a_numeric_test_may_be_reported_in_words() -> None:
    text = with_result("    Potassium:\n      type: qualitative\n      value: elevated\n")
    assert check_text(text) == []


def test_1e3_as_a_lab_value_says_why_it_is_text() -> None:
    text = with_result(
        '    Potassium: {type: lab_value, value: 1e3, unit: mmol/L, reference_range: "3.5–5.0"}\n'
    )
    [p] = check_text(text)
    assert p.rule == "CB305" and "YAML 1.1 reads the unquoted `1e3` as text" in p.message


# --- panels ---------------------------------------------------------------------------------


def test_panel_members_resolve_inside_their_panel_first() -> None:
    # WBC in a urinalysis is the urine white cell count (no blood-count unit rules apply)
    text = with_result(
        "    Urinalysis:\n      type: panel\n      components:\n"
        '        WBC: {value: 40, unit: /µL, reference_range: "<5", flag: high}\n'
        '        Blood: {type: qualitative, value: "Negative"}\n'
    )
    assert check_text(text) == []


def test_members_of_an_unknown_panel_are_still_checked() -> None:
    text = with_result(
        "    Renal panel:\n      type: panel\n      components:\n"
        '        Potasium: {value: 4.1, unit: mmol/L, reference_range: "3.5–5.0"}\n'
    )
    problems = [(p.rule, p.path) for p in check_text(text)]
    assert ("CB304", 'investigations.results["Renal panel"]') in problems
    assert ("CB415", 'investigations.results["Renal panel"].components.Potasium') in problems


def test_a_member_listed_alone_and_in_its_panel_must_agree() -> None:
    text = with_result(
        '    Hemoglobin: {type: lab_value, value: 9.1, unit: g/dL, reference_range: "13.0–17.0"}\n'
    )
    assert found(text) == [
        (
            "CB424",
            'investigations.results["Complete blood count"].components.Hemoglobin',
            line_of(text, "Hemoglobin: {value: 14.1"),
        )
    ]
    agreeing = with_result(
        '    Hemoglobin: {type: lab_value, value: 14.1, unit: g/dL, reference_range: "13.0-17.0"}\n'
    )
    assert check_text(agreeing) == []


# --- grounding ------------------------------------------------------------------------------


_CATALOG = build_catalog(load_document("catalog.yaml", TEST_CATALOG.encode()).document.data)  # type: ignore[union-attr]


def test_an_abnormal_result_withholds_the_normal_default_of_its_family() -> None:
    # Cardiac monitoring is of the ECG's family: beside an abnormal ECG it is not served a
    # default (it is a bedside test, which has none), so nothing contradicts the ECG.
    text = edit("      answers: [Cardiac monitoring]\n", "")
    assert check_text(text) == []
    loaded = load_document("cases/valid_case.yaml", text.encode())
    assert loaded.document is not None
    answer = Oracle(loaded.document.data, _CATALOG).answer("Cardiac monitoring")
    assert (answer.source, answer.result) == ("unavailable", None)
    assert answer.reason and "not recorded for this patient" in answer.reason


def test_a_result_the_catalog_answers_from_warns_when_the_answering_test_is_unlisted() -> None:
    text = with_result(
        '    Urine dipstick:\n      type: text_report\n      value: "Blood 3+."\n'
        "      flag: abnormal\n"
    )
    [p] = check_text(text)
    assert (p.rule, p.path) == ("CB420", 'investigations.results["Urine dipstick"]')
    assert "`Urinalysis`" in p.message


def test_a_panel_given_as_one_report_warns_for_its_unlisted_members() -> None:
    text = with_result(
        '    Urinalysis:\n      type: text_report\n      value: "Blood 3+."\n      flag: abnormal\n'
    )
    [p] = check_text(text)
    assert (p.rule, p.path) == ("CB420", "investigations.results.Urinalysis")
    assert "`Urine white blood cells`, `Urine blood`" in p.message


def test_a_test_not_done_contradicts_nothing() -> None:
    text = edit(
        '      value: "ST elevation in II, III and aVF."\n      flag: abnormal\n'
        "      answers: [Cardiac monitoring]\n",
        "      status: not_done\n      note: Declined.\n",
    )
    assert check_text(text) == []


def test_a_result_marked_normal_contradicts_nothing() -> None:
    text = edit(
        "      flag: abnormal\n      answers: [Cardiac monitoring]\n", "      flag: normal\n"
    )
    assert check_text(text) == []


def test_unlisted_policy_without_normal_is_not_a_contradiction() -> None:
    text = edit("      answers: [Cardiac monitoring]\n", "")
    text = edit(RESULTS_END, "  results_generated_policy: unavailable_unless_listed\n", text)
    assert check_text(text) == []


# --- orders with qualifiers -----------------------------------------------------------------


def test_orders_may_carry_qualifiers_and_sides_are_distinct() -> None:
    text = edit(
        "optional: [Chest X-ray]",
        "optional: [{test: Chest X-ray, laterality: left}, {test: CXR, laterality: right}]",
    )
    assert check_text(text) == []
    same = edit(
        "optional: [Chest X-ray]",
        "optional: [{test: Chest X-ray, laterality: left}, {test: CXR, laterality: left}]",
    )
    assert [r for r, _, _ in found(same)] == ["CB401"]


def test_an_unknown_test_inside_an_order_points_at_its_name() -> None:
    text = edit("optional: [Chest X-ray]", "optional: [{test: Chest Xray film, site: chest}]")
    [p] = check_text(text)
    assert (p.rule, p.path) == ("CB304", "investigations.expected.optional[0].test")


def test_a_bad_laterality_is_refused() -> None:
    text = edit("optional: [Chest X-ray]", "optional: [{test: Chest X-ray, laterality: up}]")
    assert [r for r, _, _ in found(text)] == ["CB204"]


# --- structured examination -----------------------------------------------------------------


def test_a_nested_examination_with_measured_findings_is_valid() -> None:
    text = edit(
        '  cardiovascular: "Regular rhythm, no murmur"\n',
        '  cardiovascular: "Regular rhythm, no murmur"\n'
        '  neurological:\n    upper limbs:\n      right:\n        power: "4/5"\n'
        "  temperature: {value: 38.2, unit: Cel, flag: high}\n",
    )
    assert check_text(text) == []


def test_an_examination_part_of_the_wrong_kind_is_named() -> None:
    text = edit('  cardiovascular: "Regular rhythm, no murmur"\n', "  cardiovascular: [1, 2]\n")
    [p] = check_text(text)
    assert (p.rule, p.path) == ("CB203", "physical_exam.cardiovascular")
    assert "must be text or a mapping of fields" in p.message


def test_a_measured_finding_of_no_allowed_form_is_named() -> None:
    text = edit(
        '  cardiovascular: "Regular rhythm, no murmur"\n',
        "  cardiovascular: {value: 88, flag: fast}\n",
    )
    [p] = check_text(text)
    assert (p.rule, p.path) == ("CB204", "physical_exam.cardiovascular.flag")


def test_a_misspelt_key_of_a_finding_inside_a_section_is_refused_and_named() -> None:
    # Cerberus validates the forms of an anyof allowing unknown fields, and passes that down:
    # two levels into the examination, `unti` used to pass unseen.
    text = edit(
        '  general: "Pale, sweaty, in pain"\n',
        '  general:\n    temperature: {value: 38.2, unti: "Cel"}\n',
    )
    [p] = check_text(text)
    assert (p.rule, p.path, p.line) == (
        "CB202",
        "physical_exam.general.temperature.unti",
        line_of(text, "unti"),
    )
    assert "(did you mean `unit`?)" in p.message and p.hint == "rename it to `unit`"


def test_a_finding_without_its_value_warns() -> None:
    text = edit('  cardiovascular: "Regular rhythm, no murmur"\n', "  temperature: {unit: Cel}\n")
    assert found(text) == [("CB425", "physical_exam.temperature", line_of(text, "temperature"))]


# --- attachments ----------------------------------------------------------------------------


def _with_attachment(files: frozenset[str]) -> list[tuple[str, str]]:
    text = edit(
        "      answers: [Cardiac monitoring]\n",
        "      answers: [Cardiac monitoring]\n      attachments: [ecg.svg]\n",
    )
    catalog = load_document("catalog.yaml", TEST_CATALOG.encode()).document
    assert catalog is not None
    report = Checker(build_catalog(catalog.data)).check_file(
        "cases/valid_case.yaml", text.encode(), attachments=files
    )
    return [(p.rule, p.path) for p in report.problems]


def test_an_attachment_a_result_names_must_exist() -> None:
    assert _with_attachment(frozenset()) == [("CB422", "investigations.results.ECG.attachments[0]")]
    assert _with_attachment(frozenset({"ecg.svg"})) == []


# --- the patient's own fields ---------------------------------------------------------------


def test_declared_unknowns_are_part_of_the_patient() -> None:
    text = edit(
        "  tone_presets: [neutral, anxious]\n",
        "  tone_presets: [neutral, anxious]\n"
        "  unknowns:\n    - {topic: family history, reason: adopted}\n",
    )
    assert check_text(text) == []
