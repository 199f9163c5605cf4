"""`casebank import agentclinic`: AgentClinic OSCE records as draft cases.

The records in tests/data/agentclinic_sample.jsonl are written for these tests in the published
shape of AgentClinic's JSON Lines (MIT licence); names resolve through the test catalog."""

from __future__ import annotations

import json
from pathlib import Path
from typing import Any

import pytest
import yaml

from casebank.cli import main
from casebank.format.schema import CASE_SCHEMA
from conftest import RepoMaker, check_text

DATA = Path(__file__).parent / "data"
SAMPLE = DATA / "agentclinic_sample.jsonl"
MALFORMED = DATA / "agentclinic_malformed.jsonl"
DRAFTS = {
    1: "inferior_st_elevation_myocardial_infarction_001",
    2: "urinary_tract_infection_001",
    3: "transient_tachypnea_of_the_newborn_001",
    4: "urinary_tract_infection_002",
}
PENDING_RANGE = "TODO: reference range (the source gives none)"


def run(capsys: pytest.CaptureFixture[str], *argv: str) -> tuple[int, str, str]:
    code = main(list(argv))
    out, err = capsys.readouterr()
    return code, out, err


@pytest.fixture
def imported(
    make_repo: RepoMaker, capsys: pytest.CaptureFixture[str]
) -> tuple[Path, str, dict[int, dict[str, Any]]]:
    """The sample imported into cases/ of a repository: (root, report, drafts by line)."""
    root = make_repo({})
    code, out, err = run(
        capsys,
        "import",
        "agentclinic",
        str(SAMPLE),
        "--out",
        str(root / "cases"),
        "--root",
        str(root),
    )
    assert (code, err) == (0, "")
    drafts = {
        line: yaml.safe_load((root / "cases" / f"{case_id}.yaml").read_text(encoding="utf-8"))
        for line, case_id in DRAFTS.items()
    }
    return root, out, drafts


def test_the_patient_and_the_history_land_in_their_fields(
    imported: tuple[Path, str, dict[int, dict[str, Any]]],
) -> None:
    case = imported[2][1]
    assert case["case_id"] == DRAFTS[1]
    assert case["patient"]["age"] == 54
    assert case["patient"]["sex"] == "male"
    assert case["patient"]["pmh"] == [
        {"condition": "Hypertension, currently managed with amlodipine."}
    ]
    assert case["patient"]["meds"] == [{"name": "Amlodipine"}]
    assert case["patient"]["social_history"] == (
        "Smokes 20 cigarettes a day. Works as a delivery driver."
    )
    presentation = case["presentation"]
    assert presentation["chief_complaint"] == "Chest pain"
    assert presentation["history_of_present_illness"] == (
        "The patient reports 45 minutes of heavy central chest pressure that started at rest and "
        "spreads to the left arm.\n"
        "Other symptoms: Sweating; Nausea.\n"
        "Review of systems: Denies cough, fever or leg swelling."
    )
    assert case["ground_truth"]["final_diagnosis"] == "Inferior ST-elevation myocardial infarction"
    assert case["provenance"]["source"] == "adapted"
    assert case["provenance"]["licence"] == "MIT"
    assert case["provenance"]["derived_from"] == (
        "AgentClinic (Schmidgall et al., 2024, https://github.com/SamuelSchmidgall/AgentClinic), "
        "agentclinic_sample.jsonl line 1"
    )


def test_ages_in_months_and_newborns_are_years_with_a_note(
    imported: tuple[Path, str, dict[int, dict[str, Any]]],
) -> None:
    drafts = imported[2]
    assert (drafts[2]["patient"]["age"], drafts[2]["patient"]["sex"]) == (0.667, "female")
    assert (
        "patient.age 0.667 (years) is `8-month-old` in the source."
        in (drafts[2]["provenance"]["notes"])
    )
    assert (drafts[3]["patient"]["age"], drafts[3]["patient"]["sex"]) == (0, "male")


def test_the_examination_stays_nested_with_vital_signs_measured(
    imported: tuple[Path, str, dict[int, dict[str, Any]]],
) -> None:
    exam = imported[2][1]["physical_exam"]
    assert exam["vital signs"] == {
        "temperature": {"value": 36.8, "unit": "°C", "note": "Source text: 36.8°C (98.2°F)"},
        "blood pressure": {"value": "146/88", "unit": "mmHg", "note": "Source text: 146/88 mmHg"},
        "heart rate": {"value": 88, "unit": "bpm", "note": "Source text: 88 bpm"},
        "respiratory rate": {
            "value": 20,
            "unit": "breaths/min",
            "note": "Source text: 20 breaths/min",
        },
        "oxygen saturation": {"value": 97, "unit": "%", "note": "Source text: 97% on room air"},
    }
    assert exam["cardiovascular examination"] == {
        "inspection": "Pale and sweaty.",
        "auscultation": "Normal heart sounds, no murmurs.",
    }
    neuro = imported[2][2]["physical_exam"]["neurological examination"]
    # Four levels of sections are the format's limit; the fifth is kept as lines of text.
    assert neuro["upper limbs"]["right"] == {"power": "Shoulder: 4/5\nElbow: 5/5", "tone": "Normal"}
    assert neuro["fontanelle"] == "Soft, not bulging."


def test_results_keep_their_values_under_catalog_names(
    imported: tuple[Path, str, dict[int, dict[str, Any]]],
) -> None:
    results = imported[2][1]["investigations"]["results"]
    assert list(results) == ["ECG", "Troponin", "Complete blood count", "Chest X-ray"]
    assert results["ECG"] == {"type": "text_report", "value": "ST elevation in II, III and aVF."}
    assert results["Troponin"] == {
        "type": "lab_value",
        "value": 2.4,
        "unit": "ng/mL",
        "reference_range": PENDING_RANGE,
        "flag": "high",
        "note": "Source text: 2.4 ng/mL (elevated)",
    }
    assert results["Complete blood count"] == {
        "type": "panel",
        "components": {
            "Hemoglobin": {
                "type": "lab_value",
                "value": 15.4,
                "unit": "g/dL",
                "reference_range": PENDING_RANGE,
                "note": "Source text: 15.4 g/dL",
            },
            "Platelet count": {
                "type": "lab_value",
                "value": 248000,
                "unit": "/μL",
                "reference_range": PENDING_RANGE,
                "note": "Source text: 248,000 /μL",
            },
        },
    }
    # Under a heading (Imaging), a test is listed on its own.
    assert results["Chest X-ray"] == {
        "type": "text_report",
        "value": "No consolidation, effusion or pneumothorax.",
    }


def test_names_are_read_in_their_group(
    imported: tuple[Path, str, dict[int, dict[str, Any]]],
) -> None:
    results = imported[2][2]["investigations"]["results"]
    # WBC in a urinalysis is the urine white cell count; under Blood_Tests, the blood count.
    assert results["Urinalysis"]["components"] == {
        "Urine white blood cells": {"type": "qualitative", "value": "Present"},
        "Urine blood": {"type": "qualitative", "value": "Negative"},
    }
    assert results["White blood cell count"]["value"] == 15000
    assert results["White blood cell count"]["flag"] == "high"
    assert results["Potassium"]["value"] == 5.9
    assert results["Potassium"]["unit"] == "mEq/L"


def test_unknown_names_are_kept_as_placeholders_and_reported(
    imported: tuple[Path, str, dict[int, dict[str, Any]]],
) -> None:
    _, report, drafts = imported
    results = drafts[2]["investigations"]["results"]
    assert results["TODO: Stool Test (not in the catalog)"] == {
        "type": "qualitative",
        "value": "Calprotectin: Elevated",
        "flag": "high",
    }
    assert results["TODO: Urine Culture (not in the catalog)"] == {
        "type": "qualitative",
        "status": "pending",
        "note": "Source text: Pending",
    }
    # A spelling slip the catalog reads safely is written as the catalog name, and noted.
    assert results["Troponin"] == {"type": "qualitative", "value": "<0.01 ng/mL"}
    assert "- `Test_Results.Troponine`: `Troponine` is read as the catalog's Troponin." in (
        drafts[2]["provenance"]["notes"].splitlines()
    )
    lines = report.splitlines()
    assert (
        "agentclinic_sample.jsonl:2: test `Urine Culture` (Test_Results.Urine_Culture) is not in "
        "the catalog: written as `TODO: Urine Culture (not in the catalog)`"
    ) in lines
    assert (
        "agentclinic_sample.jsonl:2: test `Troponine` (Test_Results.Troponine) read as `Troponin`"
    ) in lines
    assert any(line.startswith("agentclinic_sample.jsonl:2: test `Stool Test` ") for line in lines)
    assert lines[-2] == (
        "test names: 14 of 16 written as catalog names; 2 kept as TODO keys (listed above)"
    )


def test_what_the_source_lacks_is_a_placeholder(
    imported: tuple[Path, str, dict[int, dict[str, Any]]],
) -> None:
    case = imported[2][3]  # no examination, no test results, no symptoms
    assert case["presentation"]["chief_complaint"] == "TODO: the complaint in the patient's words"
    assert case["physical_exam"] == {
        "general": "TODO: general appearance (the source gives no examination)"
    }
    assert case["investigations"]["results"] == {}
    assert case["presentation"]["key_history_points"]["must_ask"] == [
        "TODO: questions a competent clinician must ask"
    ]
    assert all(step[0].startswith("TODO: ") for step in case["management_gold"].values()), case[
        "management_gold"
    ]
    assert sum(case["scoring"]["weights"].values()) == pytest.approx(1.0)
    notes = case["provenance"]["notes"]
    assert "The source also gives `OSCE_Examination.Management_and_Follow_Up`: " in notes


def test_drafts_validate_with_placeholders_only(
    imported: tuple[Path, str, dict[int, dict[str, Any]]],
) -> None:
    root = imported[0]
    for case_id in DRAFTS.values():
        text = (root / "cases" / f"{case_id}.yaml").read_text(encoding="utf-8")
        problems = check_text(text, file=f"cases/{case_id}.yaml")
        assert {p.rule for p in problems} == {"CB418"}, [str(p) for p in problems]
        # Every placeholder the draft holds is pointed at, each once.
        assert (
            len(problems) == len({p.path for p in problems}) == _placeholders(yaml.safe_load(text))
        )


def _placeholders(value: Any) -> int:
    if isinstance(value, dict):
        return sum(k.startswith("TODO") + _placeholders(v) for k, v in value.items())
    if isinstance(value, list):
        return sum(_placeholders(v) for v in value)
    return int(isinstance(value, str) and value.startswith("TODO"))


def test_drafts_read_like_the_case_template(
    imported: tuple[Path, str, dict[int, dict[str, Any]]],
) -> None:
    text = (imported[0] / "cases" / f"{DRAFTS[1]}.yaml").read_text(encoding="utf-8")
    order = [k for k in CASE_SCHEMA if k in yaml.safe_load(text)]
    assert [line.split(":")[0] for line in text.splitlines() if line[:1].isalpha()] == order
    assert "{" not in text.split("provenance:")[0]  # block style throughout
    assert "248,000 /μL" in text  # unicode as written, not escaped
    assert "\n\nmetadata:\n" in text  # sections a blank line apart


def test_a_malformed_line_is_named_and_the_others_still_convert(
    make_repo: RepoMaker, capsys: pytest.CaptureFixture[str]
) -> None:
    root = make_repo({})
    out_dir = root / "drafts"
    code, out, err = run(
        capsys, "import", "agentclinic", str(MALFORMED), "--out", str(out_dir), "--root", str(root)
    )
    assert code == 1
    errors = [line for line in err.splitlines() if not line.startswith("    fix: ")]
    assert errors == [
        "agentclinic_malformed.jsonl:2: error: not valid JSON: Expecting property name enclosed "
        "in double quotes (column 53)",
        "agentclinic_malformed.jsonl:3: error: the record is a JSON list, not an object",
        "agentclinic_malformed.jsonl:4: error: `OSCE_Examination` is missing (the record's keys: "
        "OSCE)",
        "agentclinic_malformed.jsonl:5: error: `OSCE_Examination.Patient_Actor` is a string, not "
        "an object",
        "agentclinic_malformed.jsonl:7: error: `OSCE_Examination.Correct_Diagnosis` is missing",
    ]
    assert len(err.splitlines()) == 2 * len(errors)  # each with how to fix it
    assert sorted(p.name for p in out_dir.iterdir()) == ["asthma_001.yaml", "asthma_002.yaml"]
    assert "2 of 7 records converted" in out


HOSTILE = {
    "too large": b'{"OSCE_Examination": {"Correct_Diagnosis": "' + b"x" * (1 << 21) + b'"}}',
    "deep": b"[" * 100_000 + b"]" * 100_000,
    "not a number": b'{"OSCE_Examination": {"Correct_Diagnosis": "A", "Test_Results": {"K": NaN}}}',
    "infinite": b'{"OSCE_Examination": {"Correct_Diagnosis": "A", "Test_Results": {"K": 1e400}}}',
    "not utf-8": b'{"OSCE_Examination": {"Correct_Diagnosis": "\xff"}}',
    "control": b'{"OSCE_Examination": {"Correct_Diagnosis": "A\\u0001"}}',
    "duplicate": b'{"OSCE_Examination": {"Correct_Diagnosis": "A", "Correct_Diagnosis": "B"}}',
    "many values": b'{"OSCE_Examination": {"Correct_Diagnosis": "A", "Test_Results": {'
    + b",".join(b'"T%d": "x"' % i for i in range(6000))
    + b"}}}",
}
EXPECTED = {
    "too large": "more than the 1,048,576 a case may hold",
    "deep": "nests deeper than",
    "not a number": "`NaN` is not a number a case can hold",
    "infinite": "the number `1e400` is too large",
    "not utf-8": "not valid UTF-8",
    "control": "invisible control character U+0001",
    "duplicate": "the key `Correct_Diagnosis` appears twice",
    "many values": "more than 5000 values",
}


@pytest.mark.parametrize("kind", sorted(HOSTILE))
def test_hostile_lines_are_refused_and_the_next_record_converts(
    kind: str, make_repo: RepoMaker, capsys: pytest.CaptureFixture[str], tmp_path: Path
) -> None:
    root = make_repo({})
    source = tmp_path / "hostile.jsonl"
    good = SAMPLE.read_bytes().splitlines()[0]
    source.write_bytes(HOSTILE[kind] + b"\n" + good + b"\n")
    code, out, err = run(
        capsys,
        "import",
        "agentclinic",
        str(source),
        "--out",
        str(tmp_path / "o"),
        "--root",
        str(root),
    )
    assert code == 1
    assert err.startswith("hostile.jsonl:1: error: ") and EXPECTED[kind] in err.splitlines()[0]
    assert out.startswith(f"hostile.jsonl:2: wrote {tmp_path / 'o' / DRAFTS[1]}.yaml")


def test_conversion_is_deterministic(
    make_repo: RepoMaker, capsys: pytest.CaptureFixture[str], tmp_path: Path
) -> None:
    root = make_repo({})
    texts = []
    for name in ("a", "b"):
        argv = ["import", "agentclinic", str(SAMPLE), "--out", str(tmp_path / name)]
        assert run(capsys, *argv, "--root", str(root))[0] == 0
        texts.append({p.name: p.read_bytes() for p in sorted((tmp_path / name).iterdir())})
    assert texts[0] == texts[1]
    assert sorted(texts[0]) == sorted(f"{case_id}.yaml" for case_id in DRAFTS.values())


def test_existing_drafts_are_kept_unless_forced(
    make_repo: RepoMaker, capsys: pytest.CaptureFixture[str], tmp_path: Path
) -> None:
    root = make_repo({})
    out_dir = tmp_path / "o"
    argv = ["import", "agentclinic", str(SAMPLE), "--out", str(out_dir), "--root", str(root)]
    assert run(capsys, *argv)[0] == 0
    edited = out_dir / f"{DRAFTS[2]}.yaml"
    edited.write_text("# edited by hand\n", encoding="utf-8")
    code, out, err = run(capsys, *argv)
    assert code == 1 and out == ""
    assert err.startswith("casebank: 4 draft(s) would replace existing files (")
    assert "nothing written" in err and "--force" in err
    assert edited.read_text(encoding="utf-8") == "# edited by hand\n"
    assert run(capsys, *argv, "--force")[0] == 0
    assert edited.read_text(encoding="utf-8").startswith("# yaml-language-server")


def test_json_report_lists_every_record(
    make_repo: RepoMaker, capsys: pytest.CaptureFixture[str], tmp_path: Path
) -> None:
    root = make_repo({})
    argv = ["import", "agentclinic", str(MALFORMED), "--out", str(tmp_path / "o")]
    code, out, _ = run(capsys, *argv, "--root", str(root), "--format", "json")
    report = json.loads(out)
    assert code == 1
    assert (report["records"], report["converted"], report["failed"]) == (7, 2, 5)
    assert [r["line"] for r in report["results"]] == [1, 2, 3, 4, 5, 7, 8]
    assert report["results"][0]["case_id"] == "asthma_001"
    assert report["results"][1]["error"].startswith("not valid JSON")


def test_only_the_agentclinic_format_is_known(
    make_repo: RepoMaker, capsys: pytest.CaptureFixture[str], tmp_path: Path
) -> None:
    root = make_repo({})
    argv = ["import", "medqa", str(SAMPLE), "--out", str(tmp_path / "o"), "--root", str(root)]
    code, _, err = run(capsys, *argv)
    assert code == 2
    assert "invalid choice: 'medqa' (choose from 'agentclinic')" in err


# --- reading values: a number is read only where it is certain --------------------------------

MEASURED = {
    "15,000 /μL (elevated)": (15000, "/μL", "high"),
    "8.3 g/dL (low)": (8.3, "g/dL", "low"),
    "36.6°C (97.9°F)": (36.6, "°C", None),
    "98% on room air": (98, "%", None),
    "4.5 x 10^9/L": (4.5, "x 10^9/L", None),
    "140 mEq/L (normal)": (140, "mEq/L", "normal"),
}
NOT_MEASURED = [
    "4/5",  # a power grade, not a count per 5
    "125/80 mmHg",  # a pair: a blood pressure finding, kept as text in results
    "<40% (reduced)",  # a bound, not a value
    "2.5 x 3.5 x 2-cm right upper lobe mass",
    "1,5 mg",  # a decimal comma: which number is meant is not certain
    "12 K/uL",  # thousands per microlitre, which UCUM reads as kelvin
    "12–16/hpf",  # a range
    "99999999999999999999 mg/dL",  # more digits than a double holds
    "Elevated",
]


@pytest.mark.parametrize("text", sorted(MEASURED))
def test_measurements_keep_the_number_as_written(text: str) -> None:
    from casebank.importers.values import measurement

    found = measurement(text)
    assert found is not None
    assert (found.value, found.unit, found.flag) == MEASURED[text]


@pytest.mark.parametrize("text", NOT_MEASURED)
def test_text_that_is_not_plainly_a_measurement_stays_text(text: str) -> None:
    from casebank.importers.values import measurement

    assert measurement(text) is None


def _convert(osce: dict[str, Any]) -> dict[str, Any]:
    from casebank.format.catalog import build_catalog
    from casebank.importers import agentclinic
    from conftest import TEST_CATALOG

    record = agentclinic.parse_record(json.dumps({"OSCE_Examination": osce}).encode())
    catalog = build_catalog(yaml.safe_load(TEST_CATALOG))
    return agentclinic.convert(record, "x_001", catalog, "test.jsonl line 1").data


def test_demographics_without_an_age_or_sex_are_placeholders() -> None:
    patient = _convert(
        {"Patient_Actor": {"Demographics": "An adult"}, "Correct_Diagnosis": "Asthma"}
    )["patient"]
    assert patient["age"] == "TODO: age in years (the source says: An adult)"
    assert patient["sex"] == "TODO: female, male or other (the source says: An adult)"


def test_values_a_case_cannot_hold_exactly_stay_text() -> None:
    results = _convert(
        {"Test_Results": {"Troponin": 2**60, "Potassium": "Pending"}, "Correct_Diagnosis": "A"}
    )["investigations"]["results"]
    assert results["Troponin"] == {"type": "qualitative", "value": str(2**60)}
    assert results["Potassium"] == {
        "type": "qualitative",
        "status": "pending",
        "note": "Source text: Pending",
    }


def test_a_side_in_the_name_is_the_laterality() -> None:
    results = _convert(
        {"Test_Results": {"Chest_X-ray_Right": {"Findings": "Clear."}}, "Correct_Diagnosis": "A"}
    )["investigations"]["results"]
    assert results == {
        "Chest X-ray": {"type": "text_report", "value": "Clear.", "laterality": "right"}
    }
