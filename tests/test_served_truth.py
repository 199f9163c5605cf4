"""Served truth: what the oracle serves for a test the case does not list (docs/serving.md).

One test per kind of test the case determines (a vital sign, a bedside observation, a computed
score, a pain scale, a measure stated in a report, a test of another analyte): each takes a
case whose examination or listed results contradict what a catalog default would say, and
shows the rule firing on the contradiction and the oracle answering derived or unavailable.
Then the rules on served text, and a walk over every shipped case.
"""

from __future__ import annotations

import re
from pathlib import Path
from typing import Any

import pytest
import yaml

from casebank.check.engine import Checker
from casebank.format.catalog import Catalog, build_catalog
from casebank.format.loader import load_document
from casebank.serve.derive import FORMULAS, egfr_ckd_epi_2021
from casebank.serve.oracle import Oracle
from conftest import TEST_CATALOG, VALID_CASE, check_text, checker_for, edit, line_of

ROOT = Path(__file__).resolve().parent.parent

# The fixture catalog and the bedside tests, scores and analytes these tests need.
EXTRA = """
  - name: Blood pressure
    aliases: ["BP"]
    kind: bedside
    result_types: [panel, text_report]
    components: [Systolic blood pressure, Diastolic blood pressure]
  - name: Systolic blood pressure
    kind: bedside
    result_types: [lab_value]
    unit: mmHg
  - name: Diastolic blood pressure
    kind: bedside
    result_types: [lab_value]
    unit: mmHg
  - name: Respiratory rate
    aliases: ["RR"]
    kind: bedside
    result_types: [lab_value]
    unit: /min
  - name: Oxygen saturation
    aliases: ["SpO2", "Sats"]
    kind: bedside
    result_types: [lab_value]
    unit: "%"
  - name: Temperature
    aliases: ["Temp"]
    kind: bedside
    result_types: [lab_value]
    unit: °C
  - name: Glasgow Coma Scale
    aliases: ["GCS"]
    kind: assessment
    derive: glasgow_coma_scale
    result_types: [lab_value, text_report]
    unit: points
  - name: National Early Warning Score 2
    aliases: ["NEWS2"]
    kind: assessment
    derive: news2
    result_types: [lab_value]
    unit: points
  - name: Pain score
    kind: assessment
    derive: pain_score
    result_types: [lab_value]
    unit: /10
  - name: Wells score for PE
    kind: assessment
    result_types: [lab_value, text_report]
    unit: points
  - name: Capillary refill time
    aliases: ["CRT", "Capillary refill"]
    kind: bedside
    result_types: [lab_value]
    unit: s
  - name: Corrected QT interval
    aliases: ["QTc"]
    kind: bedside
    result_types: [lab_value, text_report]
    unit: ms
  - name: Troponin T
    kind: lab
    family: troponin
    result_types: [lab_value]
    unit: ng/L
    default_result: "Below the 99th-percentile upper reference limit."
  - name: Troponin C assay
    kind: lab
    family: troponin
    result_types: [lab_value]
    unit: ng/L
    default_result: "Below the 99th-percentile upper reference limit."
  - name: Creatinine
    kind: lab
    result_types: [lab_value]
    unit: µmol/L
    default_result: "Within the reference range."
  - name: Estimated glomerular filtration rate
    aliases: ["eGFR"]
    kind: lab
    derive: egfr_ckd_epi_2021
    result_types: [lab_value]
    unit: mL/min/1.73m2
    default_result: "90 or more."
  - name: Core temperature
    aliases: ["Rectal temp"]
    kind: bedside
    derive: core_temperature
    result_types: [lab_value]
    unit: °C
  - name: Renal profile
    aliases: ["U&E"]
    kind: lab
    result_types: [panel]
    components: [Creatinine, Estimated glomerular filtration rate]
  - name: Serum hCG
    kind: lab
    sex: female
    result_types: [qualitative]
    default_result: "Negative"
"""
CATALOG_TEXT = TEST_CATALOG.rstrip("\n") + "\n" + EXTRA
CHECKER: Checker = checker_for(CATALOG_TEXT)
CATALOG: Catalog = CHECKER.catalog  # type: ignore[assignment]
RESULTS_END = "  results_generated_policy: normal_unless_listed\n"


def found(text: str) -> list[tuple[str, str, int]]:
    return [(p.rule, p.path, p.line) for p in check_text(text, checker=CHECKER)]


def oracle(text: str) -> Oracle:
    loaded = load_document("cases/valid_case.yaml", text.encode("utf-8"))
    assert loaded.document is not None, loaded.problems
    return Oracle(loaded.document.data, CATALOG)


def with_exam(exam: str, text: str = VALID_CASE) -> str:
    return edit(
        'physical_exam:\n  general: "Pale, sweaty, in pain"\n'
        '  cardiovascular: "Regular rhythm, no murmur"\n',
        f"physical_exam:\n{exam}",
        text,
    )


def with_result(result: str, text: str = VALID_CASE) -> str:
    return edit(RESULTS_END, result + RESULTS_END, text)


VITALS = (
    '  general: "Pale and sweaty; alert and oriented."\n'
    "  vital_signs:\n"
    "    heart rate: {value: 112, unit: /min}\n"
    '    blood pressure: {value: "98/62", unit: mmHg}\n'
    "    respiratory rate: {value: 24, unit: /min}\n"
    '    oxygen saturation: {value: 93, unit: "%", note: "On room air."}\n'
    "    temperature: {value: 36.6, unit: Cel}\n"
)


# --- one test per kind of test the case determines ------------------------------------------


def test_a_vital_sign_is_the_examination_s_and_a_listed_one_must_agree() -> None:
    text = with_exam(VITALS)
    assert found(text) == []
    answer = oracle(text).answer("BP")
    assert (answer.source, answer.origin) == ("derived", "physical_exam.vital_signs.blood pressure")
    assert answer.result is not None and answer.result["value"] == "98/62"
    assert answer.result["flag"] == "low"  # judged by the adult range (systolic 100–139)
    pulse = oracle(text).answer("Heart rate").result
    assert pulse is not None and (pulse["value"], pulse["flag"]) == (112, "high")
    contradicting = with_result(
        '    Heart rate: {type: lab_value, value: 80, unit: /min, reference_range: "60–100"}\n',
        text,
    )
    assert ("CB440", "investigations.results[\"Heart rate\"]",
            line_of(contradicting, "    Heart rate: {type")) in found(contradicting)  # fmt: skip
    # Without the examination's value nothing is assumed: no default for a vital sign.
    bare = oracle(VALID_CASE).answer("Respiratory rate")
    assert (bare.source, bare.result) == ("unavailable", None)
    assert bare.reason and "assess it from the history and the examination" in bare.reason


def test_a_bedside_observation_comes_from_the_examination_or_not_at_all() -> None:
    text = with_exam('  general: "Pale. Capillary refill 4 s centrally."\n')
    answer = oracle(text).answer("CRT")
    assert answer.source == "derived" and answer.origin == "physical_exam.general"
    assert answer.result is not None and answer.result["value"] == 4.0
    plain = oracle(VALID_CASE).answer("Capillary refill")
    assert plain.source == "unavailable" and "not recorded" in (plain.reason or "")


def test_an_order_of_one_side_is_read_from_that_side_of_the_examination() -> None:
    both = with_exam(
        '  general: "Right foot cold and pale, capillary refill 5 s; left foot warm, '
        'capillary refill 2 s."\n'
    )
    right, left = oracle(both).answer("right CRT"), oracle(both).answer("Left capillary refill")
    assert right.result is not None and left.result is not None
    assert right.result["value"] == 5 and "left" in right.result.get("note", "").lower() + "left"
    assert "refill 2 s" in str(left.result["value"]) and "5" not in str(left.result)
    # The other side's reading is never served for this one, nor a reading of no side.
    one = with_exam('  general: "Right foot cold and pale, capillary refill 5 s."\n')
    other = oracle(one).answer("left capillary refill")
    assert (other.source, other.result) == ("unavailable", None)
    assert oracle(one).answer("capillary refill").result is not None  # no side: that reading
    alike = with_exam('  general: "Capillary refill 2 s in both feet."\n')
    assert oracle(alike).answer("left capillary refill").result is not None
    unsided = with_exam('  general: "Capillary refill 2 s."\n')
    assert oracle(unsided).answer("right capillary refill").source == "unavailable"


def test_a_test_of_one_sex_is_not_served_to_a_patient_of_the_other() -> None:
    man = oracle(VALID_CASE).answer("Serum hCG")
    assert (man.source, man.result) == ("unavailable", None)
    assert man.reason == "not applicable: Serum hCG is not done for a male patient"
    woman = oracle(edit("  sex: male\n", "  sex: female\n", VALID_CASE)).answer("Serum hCG")
    assert woman.source == "policy" and woman.result is not None
    assert woman.result["value"] == "Negative"


def test_a_member_of_a_panel_not_done_is_not_done_either() -> None:
    text = with_result(
        '    Renal profile: {type: panel, status: not_done, note: "No bloods: dying at home."}\n'
    )
    for order in ("Creatinine", "eGFR", "U&E"):
        answer = oracle(text).answer(order)
        assert (answer.source, answer.reason) == ("unavailable", "not done for this patient")
    assert oracle(VALID_CASE).answer("Creatinine").source == "policy"  # no panel: its default


def test_a_core_temperature_is_a_temperature_taken_by_a_core_route() -> None:
    rectal = with_exam(
        '  vital_signs:\n    temperature: {value: 41.6, unit: Cel, note: "Rectal probe."}\n'
    )
    answer = oracle(rectal).answer("rectal temp")
    assert answer.source == "derived" and answer.result is not None
    assert (answer.result["value"], answer.result["flag"]) == (41.6, "high")
    tympanic = with_exam(
        '  vital_signs:\n    temperature: {value: 39.1, unit: Cel, note: "Tympanic."}\n'
    )
    assert oracle(tympanic).answer("Core temperature").source == "unavailable"


def test_a_score_is_computed_from_the_case_and_a_stated_one_must_match() -> None:
    text = with_exam(VITALS)
    answer = oracle(text).answer("NEWS2")
    # RR 24 (2), SpO2 93 (2), air (0), SBP 98 (2), HR 112 (2), alert (0), 36.6 (0) = 8
    assert (answer.source, answer.result and answer.result["value"]) == ("derived", 8)
    assert answer.result is not None and answer.result["flag"] == "high"
    assert "physical_exam.vital_signs.respiratory rate" in (answer.origin or "")
    stated = with_result(
        '    NEWS2: {type: lab_value, value: 3, unit: points, reference_range: "0–4"}\n', text
    )
    assert ("CB441", "investigations.results.NEWS2", line_of(stated, "    NEWS2:")) in found(stated)
    # A score whose inputs the case lacks is unavailable, with what is missing.
    missing = oracle(VALID_CASE).answer("NEWS2")
    assert missing.source == "unavailable"
    assert "respiratory rate" in (missing.reason or "")
    # A score no formula computes (Wells needs clinical judgement) is never a default.
    wells = oracle(text).answer("Wells score for PE")
    assert wells.source == "unavailable" and wells.result is None


def test_a_pain_score_is_the_patient_s_own_and_must_fit_the_story() -> None:
    story = (
        "    Central pressure for 45 minutes, started at rest, spreading to the left arm,\n"
        "    with sweating and nausea.\n"
    )
    rated = edit(
        story, "    Severe central pressure, 8/10, for 45 minutes, spreading to the left arm.\n"
    )
    answer = oracle(rated).answer("Pain score")
    assert answer.source == "derived" and answer.result is not None
    assert (answer.result["value"], answer.result["flag"]) == (8, "high")
    assert answer.origin == "presentation.history_of_present_illness"
    listed_low = with_result(
        '    Pain score: {type: lab_value, value: 1, unit: /10, reference_range: "0"}\n', rated
    )
    assert ("CB444", 'investigations.results["Pain score"]',
            line_of(listed_low, "    Pain score:")) in found(listed_low)  # fmt: skip
    assert oracle(VALID_CASE).answer("Pain score").source == "unavailable"


def test_gcs_follows_the_examination_and_a_listed_one_must_agree() -> None:
    drowsy = with_exam('  general: "Drowsy, opens eyes to voice, confused."\n')
    listed = with_result(
        '    GCS: {type: lab_value, value: 15, unit: points, reference_range: "15"}\n', drowsy
    )
    assert ("CB445", "investigations.results.GCS", line_of(listed, "    GCS:")) in found(listed)
    assert oracle(drowsy).answer("GCS").source == "unavailable"  # never a default 15/15
    alert = oracle(with_exam(VITALS)).answer("GCS")
    assert alert.source == "derived" and alert.result is not None
    assert alert.result["value"].startswith("15/15")


def test_an_interval_stated_in_the_listed_ecg_answers_its_order() -> None:
    text = edit('value: "ST elevation in II, III and aVF."', 'value: "Sinus rhythm; QTc 486 ms."')
    answer = oracle(text).answer("QTc")
    assert (answer.source, answer.origin) == ("derived", "ECG")
    assert answer.result is not None and "486" in answer.result["value"]


def test_a_test_of_another_analyte_is_not_served_a_normal_default_beside_it() -> None:
    text = with_result(
        '    Troponin T: {type: lab_value, value: 480, unit: ng/L, reference_range: "<14",'
        " flag: high}\n"
    )
    answer = oracle(text).answer("Troponin C assay")
    assert (answer.source, answer.result) == ("unavailable", None)
    assert answer.reason and "Troponin T" in answer.reason
    declared = with_result(
        "    Troponin T:\n      type: lab_value\n      value: 480\n      unit: ng/L\n"
        '      reference_range: "<14"\n      flag: high\n      answers: [Troponin C assay]\n'
    )
    assert ("CB442", 'investigations.results["Troponin T"].answers[0]',
            line_of(declared, "answers: [Troponin C")) in found(declared)  # fmt: skip


def test_a_specimen_default_the_history_contradicts_is_an_error() -> None:
    pregnant = edit(
        "    Central pressure for 45 minutes,",
        "    At 35 weeks of her first pregnancy: central pressure for 45 minutes,",
    )
    assert ("CB443", "investigations.results", line_of(pregnant, "  results:")) in found(pregnant)


def test_a_stated_egfr_is_checked_against_ckd_epi_2021() -> None:
    # 159 µmol/L = 1.80 mg/dL, a 54-year-old man: 44 mL/min/1.73m2.
    assert round(egfr_ckd_epi_2021(159 / 88.4, 54, "male")) == 44
    text = with_result(
        '    Creatinine: {type: lab_value, value: 159, unit: µmol/L, reference_range: "60–110",'
        " flag: high}\n"
        '    eGFR: {type: lab_value, value: 52, unit: mL/min/1.73m2, reference_range: ">90",'
        " flag: low}\n"
    )
    assert ("CB441", "investigations.results.eGFR", line_of(text, "    eGFR:")) in found(text)
    right = text.replace("value: 52", "value: 44")
    assert [f for f in found(right) if f[0] == "CB441"] == []
    unlisted = with_result(
        '    Creatinine: {type: lab_value, value: 159, unit: µmol/L, reference_range: "60–110",'
        " flag: high}\n"
    )
    answer = oracle(unlisted).answer("eGFR")
    assert answer.source == "derived" and answer.result is not None
    assert (answer.result["value"], answer.result["flag"]) == (44, "low")


def test_gcs_components_must_add_up() -> None:
    text = with_result('    GCS: {type: text_report, value: "14/15 (E3 V4 M6)", flag: abnormal}\n')
    assert ("CB441", "investigations.results.GCS", line_of(text, "    GCS:")) in found(text)
    assert [f for f in found(text.replace("14/15", "13/15")) if f[0] == "CB441"] == []


# --- the catalog --------------------------------------------------------------------------------


def catalog_found(text: str) -> list[tuple[str, str]]:
    loaded = load_document("catalog.yaml", text.encode("utf-8"))
    assert loaded.document is not None
    problems = Checker(build_catalog(loaded.document.data)).check_catalog(loaded.document)
    return [(p.rule, p.path) for p in problems]


def test_a_default_on_a_test_the_case_determines_is_refused() -> None:
    text = TEST_CATALOG.replace(
        '  - name: ECG\n    aliases: ["EKG", "12-lead ECG"]\n    kind: bedside\n',
        '  - name: ECG\n    aliases: ["EKG", "12-lead ECG"]\n    kind: bedside\n'
        '    default_result: "Sinus rhythm."\n',
    )
    assert ("CB520", "tests[0].default_result") in catalog_found(text)
    assert not any(rule == "CB520" for rule, _ in catalog_found(TEST_CATALOG))


def test_derive_must_name_a_formula() -> None:
    text = TEST_CATALOG.replace(
        '  - name: ECG\n    aliases: ["EKG", "12-lead ECG"]\n    kind: bedside\n',
        '  - name: ECG\n    aliases: ["EKG", "12-lead ECG"]\n    kind: bedside\n    derive: news\n',
        1,
    )
    assert "derive: news\n" in text
    assert ("CB521", "tests[0].derive") in catalog_found(text)
    assert "news2" in FORMULAS


# --- served text ----------------------------------------------------------------------------


def test_a_served_note_that_names_the_diagnosis_is_an_error() -> None:
    text = edit(
        '      value: "ST elevation in II, III and aVF."\n',
        '      value: "ST elevation in II, III and aVF."\n'
        '      note: "Diagnostic of an inferior STEMI."\n',
    )
    rules = {r for r, _, _ in found(text)}
    assert "CB446" in rules and "CB447" in rules  # names an accepted answer; commentary
    moved = text.replace('      note: "Diagnostic', '      examiner_note: "Diagnostic')
    assert {"CB446", "CB447"} & {r for r, _, _ in found(moved)} == set()
    answer = oracle(moved).answer("ECG")
    assert answer.result is not None and "examiner_note" not in answer.result
    assert "answers" not in answer.result  # authoring data is never served


def test_a_note_on_a_series_point_or_a_nested_finding_is_served_too() -> None:
    text = with_result(
        "    Troponin T:\n      type: lab_value\n      series:\n"
        '        - {at: "on arrival", value: 24, unit: ng/L}\n'
        '        - {at: "3 hours later", value: 480, unit: ng/L,\n'
        '           note: "Diagnostic of an inferior STEMI."}\n'
    )
    path = 'investigations.results["Troponin T"].series[1].note'
    assert ("CB446", path, line_of(text, 'note: "Diagnostic')) in found(text)
    exam = with_exam(
        '  cardiovascular:\n    heart_sounds: {value: "Normal", note: "As in an inferior STEMI."}\n'
    )
    assert "CB446" in {r for r, _, _ in found(exam)}


def test_a_commentary_note_is_a_warning_but_a_neutral_reason_is_not() -> None:
    text = with_result(
        "    Chest X-ray:\n      type: text_report\n      status: not_done\n"
        '      note: "Not indicated: the ECG is diagnostic."\n'
    )
    assert ("CB447", 'investigations.results["Chest X-ray"].note',
            line_of(text, "Not indicated")) in found(text)  # fmt: skip
    neutral = text.replace("Not indicated: the ECG is diagnostic.", "Not performed.")
    assert [f for f in found(neutral) if f[0] == "CB447"] == []


def test_an_attachment_named_for_the_answer_is_an_error() -> None:
    text = edit(
        '      value: "ST elevation in II, III and aVF."\n',
        '      value: "ST elevation in II, III and aVF."\n      attachments: [stemi-ecg.png]\n',
    )
    assert any(rule == "CB448" for rule, _, _ in found(text))


def test_an_unflagged_report_is_a_warning() -> None:
    text = with_result('    Chest X-ray:\n      type: text_report\n      value: "Cardiomegaly."\n')
    assert ("CB449", 'investigations.results["Chest X-ray"]',
            line_of(text, "    Chest X-ray:")) in found(text)  # fmt: skip
    assert [
        f
        for f in found(text.replace('"Cardiomegaly."', '"Cardiomegaly."\n      flag: abnormal'))
        if f[0] == "CB449"
    ] == []


# --- every shipped case -----------------------------------------------------------------------


def _shipped() -> list[tuple[str, dict[str, Any]]]:
    found_cases = []
    for path in sorted((ROOT / "cases").glob("*.yaml")):
        loaded = load_document(str(path), path.read_bytes())
        assert loaded.document is not None
        found_cases.append((path.stem, loaded.document.data))
    return found_cases


def _answer_words(data: dict[str, Any]) -> list[str]:
    accepted = data["scoring"]["acceptable_answers"]
    names = [data["ground_truth"]["final_diagnosis"], *accepted.get("final_diagnosis", [])]
    names += list(accepted.get("partial_credit") or {})
    return [" ".join(re.findall(r"[\w']+", n.casefold())) for n in names]


def _served_texts(value: Any, at: str = "") -> list[tuple[str, str]]:
    out: list[tuple[str, str]] = []
    if isinstance(value, dict):
        for key, item in value.items():
            if key == "note" and isinstance(item, str):
                out.append((f"{at}.note", item))
            elif key not in ("examiner_note",):
                out += _served_texts(item, f"{at}.{key}")
    elif isinstance(value, list):
        for i, item in enumerate(value):
            out += _served_texts(item, f"{at}[{i}]")
    return out


@pytest.mark.parametrize("case_id,data", _shipped(), ids=lambda v: v if isinstance(v, str) else "")
def test_no_served_note_or_attachment_of_a_shipped_case_names_its_diagnosis(
    case_id: str, data: dict[str, Any]
) -> None:
    catalog = _real_catalog()
    served = Oracle(data, catalog)
    answers = _answer_words(data)
    texts: list[tuple[str, str]] = []
    for key in data["investigations"]["results"]:
        answer = served.answer(key)
        assert "examiner_note" not in yaml.safe_dump(answer.to_dict()), key
        texts += _served_texts(answer.result, key)
    texts += _served_texts(data.get("physical_exam"), "physical_exam")
    folder = ROOT / "cases" / case_id / "attachments"
    for file in sorted(folder.glob("*")) if folder.is_dir() else []:
        texts.append(
            (f"attachment name {file.name}", file.name.replace("_", " ").replace("-", " "))
        )
        if file.suffix == ".svg":
            shown = re.sub(r"<[^>]+>", " ", file.read_text(encoding="utf-8"))
            texts.append((f"attachment text {file.name}", shown))
            assert case_id not in file.read_text(encoding="utf-8"), file
    for where, text in texts:
        words = " " + " ".join(_WORD.findall(text.casefold())) + " "
        for answer in answers:
            assert f" {answer} " not in words, f"{case_id} {where} names `{answer}`: {text}"


_WORD = re.compile(r"[\w']+")
_CATALOG_CACHE: list[Catalog] = []


def _real_catalog() -> Catalog:
    if not _CATALOG_CACHE:
        loaded = load_document("catalog.yaml", (ROOT / "catalog.yaml").read_bytes())
        assert loaded.document is not None
        _CATALOG_CACHE.append(build_catalog(loaded.document.data))
    return _CATALOG_CACHE[0]


def test_docs_serving_states_every_formula_with_its_source() -> None:
    text = (ROOT / "docs" / "serving.md").read_text(encoding="utf-8")
    for formula in FORMULAS.values():
        assert f"| `{formula.name}` |" in text, formula.name
        assert formula.source in text, formula.name
