"""`casebank import FORMAT`: the importer registry, and AgentClinic's OSCE and NEJM records as
draft cases.

The records in tests/data/agentclinic_sample.jsonl (OSCE) and agentclinic_nejm_sample.jsonl
(NEJM image records) are written for these tests in the published shapes of AgentClinic's JSON
Lines (MIT licence); none is copied from AgentClinic or the NEJM. Names resolve through the test
catalog."""

from __future__ import annotations

import io
import json
from pathlib import Path
from typing import IO, Any

import pytest
import yaml
from hypothesis import given, settings
from hypothesis import strategies as st

from casebank.format.scaffold import case_skeleton
from casebank.format.schema import CASE_SCHEMA
from casebank.importers.base import Conversion, Job, Record, Refused
from casebank.importers.draft import finish, id_stem, start
from casebank.importers.registry import IMPORTERS
from casebank.importers.render import render_case
from conftest import TEST_CATALOG, RepoMaker, check_text, edit, examples, found, line_of
from conftest import run_cli as run
from gitrepo import GitRepo

DATA = Path(__file__).parent / "data"
SAMPLE = DATA / "agentclinic_sample.jsonl"
MALFORMED = DATA / "agentclinic_malformed.jsonl"
DRAFTS = {
    1: "inferior_st_elevation_myocardial_infarction_001",
    2: "urinary_tract_infection_001",
    3: "transient_tachypnea_of_the_newborn_001",
    4: "urinary_tract_infection_002",
}
HEADER_START = (
    "# yaml-language-server: $schema=../schema/case.schema.json\n# A draft imported from "
)
PENDING_RANGE = (
    "TODO: normal range: text such as `0.00–0.04`, `<5`, `≥60`, or a mapping with low/high "
    "(the source gives none)"
)


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


def test_what_the_source_lacks_is_the_scaffolds_placeholder(
    imported: tuple[Path, str, dict[int, dict[str, Any]]],
) -> None:
    case = imported[2][3]  # no examination, no test results, no symptoms
    new = case_skeleton(case["case_id"])  # what `casebank new` writes, as data
    assert case["presentation"]["chief_complaint"] == new["presentation"]["chief_complaint"]
    assert case["presentation"]["chief_complaint"].startswith("TODO: the complaint in the ")
    assert case["physical_exam"] == new["physical_exam"] == {"general": "TODO: general appearance"}
    assert case["investigations"]["results"] == {}
    for part in ("key_history_points",):
        assert case["presentation"][part] == new["presentation"][part]
    for section in ("management_gold", "scoring"):
        assert case[section] == new[section]
    assert sum(case["scoring"]["weights"].values()) == pytest.approx(1.0)
    notes = case["provenance"]["notes"]
    assert "The source also gives `OSCE_Examination.Management_and_Follow_Up`: " in notes


def test_drafts_validate_with_placeholders_only(
    imported: tuple[Path, str, dict[int, dict[str, Any]]],
) -> None:
    root = imported[0]
    for case_id in DRAFTS.values():
        text = (root / "cases" / f"{case_id}.yaml").read_text(encoding="utf-8")
        found = check_text(text, file=f"cases/{case_id}.yaml")
        # What is left is the author's: placeholders (CB418), and reports whose words do not
        # say whether they are normal, which only a clinician can judge (CB449).
        assert {p.rule for p in found} <= {"CB418", "CB449"}, [str(p) for p in found]
        problems = [p for p in found if p.rule == "CB418"]
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
    assert err.startswith("casebank: 4 draft(s) would replace earlier drafts (")
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


def test_the_formats_are_the_registrys(
    make_repo: RepoMaker, capsys: pytest.CaptureFixture[str], tmp_path: Path
) -> None:
    root = make_repo({})
    argv = ["import", "medqa", str(SAMPLE), "--out", str(tmp_path / "o"), "--root", str(root)]
    code, _, err = run(capsys, *argv)
    assert code == 2
    assert "invalid choice: 'medqa' (choose from 'agentclinic')" in err
    assert not (tmp_path / "o").exists()


class _OneDiagnosisALine:
    """An importer of a made-up format: each line names a diagnosis. All it needs is this
    class and one line in the registry."""

    title = "Diagnosis list"
    summary = "one diagnosis a line"
    licence = "CC0-1.0"

    def read(self, name: str, stream: IO[bytes]) -> list[Record | Refused]:
        lines = enumerate(stream.read().decode("utf-8").splitlines(), 1)
        return [Record(n, text.strip(), "line") for n, text in lines if text.strip()]

    def case_stem(self, record: Record) -> str:
        return id_stem(record.data)

    def convert(self, record: Record, job: Job) -> Conversion:
        data = start(job.case_id)
        data["ground_truth"]["final_diagnosis"] = record.data
        citation = f"{self.title}, {job.source}"
        command = "casebank import diagnoses"
        data = finish(data, command=command, citation=citation, licence=job.licence, notes=[])
        return Conversion(job.case_id, data)


def test_an_importer_is_its_module_and_one_registry_line(
    make_repo: RepoMaker,
    capsys: pytest.CaptureFixture[str],
    tmp_path: Path,
    monkeypatch: pytest.MonkeyPatch,
) -> None:
    monkeypatch.setitem(IMPORTERS, "diagnoses", _OneDiagnosisALine())
    root = make_repo({})
    source = tmp_path / "list.txt"
    source.write_text("Asthma\n\nCommunity-acquired pneumonia\n", encoding="utf-8")
    argv = ["import", "diagnoses", str(source), "--out", str(root / "cases"), "--root", str(root)]
    code, out, err = run(capsys, *argv)
    assert (code, err) == (0, "")
    assert "list.txt:3: wrote" in out and "2 of 2 records converted" in out
    text = (root / "cases" / "community_acquired_pneumonia_001.yaml").read_text(encoding="utf-8")
    assert text.startswith(HEADER_START) and "Diagnosis list, list.txt line 3" in text
    case = yaml.safe_load(text)
    assert case["provenance"]["licence"] == "CC0-1.0"  # the importer's licence by default
    problems = check_text(text, file="cases/community_acquired_pneumonia_001.yaml")
    assert {p.rule for p in problems} == {"CB418"}
    # The FORMAT choices are the registry's keys.
    code, _, err = run(capsys, *argv[:1], "nope", *argv[2:])
    assert "(choose from 'agentclinic', 'diagnoses')" in err


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


def _convert(record: dict[str, Any]) -> dict[str, Any]:
    """The draft of one record (an OSCE record when given its OSCE_Examination alone)."""
    from casebank.format.catalog import build_catalog
    from casebank.importers.agentclinic import IMPORTER
    from casebank.importers.base import Job, Record

    if "question" not in record:
        record = {"OSCE_Examination": record}
    (part,) = IMPORTER.read("test.jsonl", io.BytesIO(json.dumps(record).encode()))
    assert isinstance(part, Record), part
    catalog = build_catalog(yaml.safe_load(TEST_CATALOG))
    return IMPORTER.convert(part, Job("x_001", catalog, "test.jsonl line 1", "MIT")).data


def test_demographics_without_an_age_or_sex_are_placeholders() -> None:
    patient = _convert(
        {"Patient_Actor": {"Demographics": "An adult"}, "Correct_Diagnosis": "Asthma"}
    )["patient"]
    assert patient["age"] == (
        "TODO: age in years; for infants use a fraction (0.5 = six months) "
        "(the source says: An adult)"
    )
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


# --- the NEJM image records -------------------------------------------------------------------

NEJM = DATA / "agentclinic_nejm_sample.jsonl"
NEJM_DRAFTS = {
    1: "acute_pericarditis_001",
    2: "erythema_migrans_001",
    3: "sarcoidosis_001",
    4: "ureteric_calculus_001",
}


@pytest.fixture
def nejm(make_repo: RepoMaker, capsys: pytest.CaptureFixture[str]) -> dict[int, dict[str, Any]]:
    """The NEJM sample (records written for these tests in AgentClinic's NEJM shape) imported
    into cases/ of a repository, by line."""
    root = make_repo({})
    argv = ["import", "agentclinic", str(NEJM), "--out", str(root / "cases"), "--root", str(root)]
    code, out, err = run(capsys, *argv)
    assert (code, err) == (0, ""), out
    assert "4 of 4 records converted" in out
    drafts = {}
    for line, case_id in NEJM_DRAFTS.items():
        text = (root / "cases" / f"{case_id}.yaml").read_text(encoding="utf-8")
        drafts[line] = yaml.safe_load(text)
        # Placeholders, the image a maintainer is still to fetch, and reports only a clinician
        # can judge (CB449): nothing else.
        problems = [p for p in check_text(text, file=f"cases/{case_id}.yaml") if p.rule != "CB449"]
        images = [p for p in problems if p.rule == "CB422"]
        assert {p.rule for p in problems} == {"CB418", "CB422"} - (
            {"CB422"} if line == 3 else set()
        )
        assert len(images) == (0 if line == 3 else 1)
    return drafts


def test_nejm_the_answers_are_the_diagnosis_and_the_differential(
    nejm: dict[int, dict[str, Any]],
) -> None:
    truth = nejm[1]["ground_truth"]
    assert truth["final_diagnosis"] == "Acute pericarditis"
    # The diagnosis first, then the distractors in the source's order (noted: not a ranking).
    assert truth["differential"] == [
        "Acute pericarditis",
        "Acute myocardial infarction",
        "Aortic dissection",
        "Pulmonary embolism",
    ]
    assert "rank them" in nejm[1]["provenance"]["notes"]


def test_nejm_the_stem_gives_the_patient_the_examination_and_the_notes(
    nejm: dict[int, dict[str, Any]],
) -> None:
    case = nejm[1]
    assert (case["patient"]["age"], case["patient"]["sex"]) == (34, "male")
    assert case["physical_exam"] == (
        "On physical examination, a three-component friction rub was heard at the left sternal "
        "border."
    )
    assert case["metadata"]["title"].startswith("TODO: short human title")
    assert "the source's question: A 34-year-old man presented" in case["metadata"]["title"]
    notes = case["provenance"]["notes"]
    assert "- The source's question: A 34-year-old man presented" in notes
    assert notes.rstrip().endswith("What is the most likely diagnosis?")
    # The patient's script, without AgentClinic's prompt to the actor.
    assert case["presentation"]["history_of_present_illness"].startswith(
        "You are a 34-year-old man who has had sharp chest pain for two days."
    )
    assert nejm[2]["physical_exam"] == {"general": "TODO: general appearance"}


def test_nejm_results_are_read_from_the_items(nejm: dict[int, dict[str, Any]]) -> None:
    results = nejm[1]["investigations"]["results"]
    assert results["ECG"] == {
        "type": "text_report",
        "value": "Diffuse ST elevation with PR depression.",
    }
    assert results["Troponin"] == {
        "type": "lab_value",
        "value": 0.02,
        "unit": "ng/mL",
        "reference_range": "0–0.04",  # the source's own
        "note": "Source text: 0.02 ng/mL (reference range, 0 to 0.04)",
    }
    # A stand-in is the author's to fill in, never a finding.
    assert results["TODO: Echocardiogram (not in the catalog)"]["value"].startswith("TODO: ")
    # Headings and bullets: each item under its catalog name; prose kept for the author.
    third = nejm[3]["investigations"]["results"]
    assert list(third) == [
        "Hemoglobin",
        "White blood cell count",
        "TODO: Tests for HIV (under Laboratory testing results; not in the catalog)",
        "Chest X-ray",
        "TODO: a test name from catalog.yaml (for the tests this text reports: the source gives "
        "them as prose, list each on its own)",
    ]
    assert third["White blood cell count"]["value"] == 14200
    assert third["Chest X-ray"]["value"] == "Bilateral hilar lymphadenopathy"
    fourth = nejm[4]["investigations"]["results"]
    assert fourth["TODO: Ultrasound of the abdomen (not in the catalog)"]["value"] == "Normal"


def test_nejm_text_saying_there_are_no_results_is_no_result(
    nejm: dict[int, dict[str, Any]],
) -> None:
    case = nejm[2]
    assert [k for k in case["investigations"]["results"] if "image" not in k] == []
    assert (
        "`physical_exams` says: The provided text does not contain" in case["provenance"]["notes"]
    )
    # A stand-in for the patient's story is the scaffold's placeholder.
    story = nejm[4]["presentation"]["history_of_present_illness"]
    assert story == case_skeleton("x")["presentation"]["history_of_present_illness"]


def test_nejm_the_image_is_an_attachment_to_fetch(nejm: dict[int, dict[str, Any]]) -> None:
    results = nejm[2]["investigations"]["results"]
    key = (
        "TODO: a test name from catalog.yaml (for the test image IC99990102 shows; the source's "
        "image type: dermatology, physical)"
    )
    assert results[key]["attachments"] == ["IC99990102.jpg"]
    notes = nejm[2]["provenance"]["notes"]
    assert (
        "The image IC99990102 is at https://images.example.org/ContentServer/images?id=IC99990102"
        "&width=1500&height=4000: fetch it into cases/erythema_migrans_001/attachments/"
        "IC99990102.jpg"
    ) in notes
    assert "not under AgentClinic's licence" in notes


@pytest.mark.parametrize(
    ("record", "message"),
    [
        ({"question": "Q?", "answers": []}, "`answers` is empty"),
        (
            {"question": "Q?", "answers": [{"text": "A", "correct": False}]},
            "`answers` marks 0 answers",
        ),
        ({"question": 3, "answers": [{"text": "A", "correct": True}]}, "`question` is a number"),
        ({"question": "Q?", "answers": [{"text": "", "correct": True}]}, "`answers[0]` is not"),
        (
            {"question": "Q?", "answers": [{"text": "A", "correct": True}], "image_url": "x"},
            "`image_url` is not a web address",
        ),
    ],
)
def test_nejm_a_record_that_cannot_be_converted_is_named(
    record: dict[str, Any],
    message: str,
    make_repo: RepoMaker,
    capsys: pytest.CaptureFixture[str],
    tmp_path: Path,
) -> None:
    root = make_repo({})
    source = tmp_path / "nejm.jsonl"
    good = NEJM.read_text(encoding="utf-8").splitlines()[1]
    source.write_text(good + "\n" + json.dumps(record) + "\n", encoding="utf-8")
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
    assert err.startswith(f"nejm.jsonl:2: error: {message}"), err
    assert "\n    fix: " in err
    assert "1 of 2 records converted" in out


# --- a file is read in one shape ------------------------------------------------------------


@pytest.mark.parametrize(
    "content",
    [
        '{"question": "A 30-year-old ...", "options": {"A": "x"}, "answer_idx": "A"}\n' * 3,
        "case_id,diagnosis\nx_001,Asthma\n",
        "",
    ],
    ids=["medqa-original", "csv", "empty"],
)
def test_a_file_of_no_known_shape_is_one_message_and_no_folder(
    content: str, make_repo: RepoMaker, capsys: pytest.CaptureFixture[str], tmp_path: Path
) -> None:
    root = make_repo({})
    source = tmp_path / "other.jsonl"
    source.write_text(content, encoding="utf-8")
    out_dir = tmp_path / "drafts"
    argv = ["import", "agentclinic", str(source), "--out", str(out_dir), "--root", str(root)]
    code, out, err = run(capsys, *argv)
    assert code == 1 and out == ""
    lines = err.splitlines()
    assert len(lines) == 2 and lines[1].startswith("    fix: an AgentClinic file holds OSCE")
    assert lines[0].startswith("other.jsonl: error: ")
    assert not out_dir.exists()
    code, out, _ = run(capsys, *argv, "--format", "json")
    report = json.loads(out)
    assert code == 1 and report["error"] == lines[0].removeprefix("other.jsonl: error: ")


def test_the_other_shape_in_a_file_is_refused_by_line(
    make_repo: RepoMaker, capsys: pytest.CaptureFixture[str], tmp_path: Path
) -> None:
    root = make_repo({})
    source = tmp_path / "mixed.jsonl"
    osce, nejm_line = (
        SAMPLE.read_text(encoding="utf-8").splitlines()[0],
        NEJM.read_text(encoding="utf-8").splitlines()[0],
    )
    source.write_text(f"{osce}\n{nejm_line}\n", encoding="utf-8")
    argv = ["import", "agentclinic", str(source), "--out", str(tmp_path / "o"), "--root", str(root)]
    code, out, err = run(capsys, *argv)
    assert code == 1
    assert err.splitlines()[0] == (
        "mixed.jsonl:2: error: an AgentClinic NEJM record in a file of OSCE records"
    )
    assert "1 of 2 records converted" in out


def test_records_that_all_fail_leave_no_folder(
    make_repo: RepoMaker, capsys: pytest.CaptureFixture[str], tmp_path: Path
) -> None:
    root = make_repo({})
    source = tmp_path / "bad.jsonl"
    source.write_text('{"OSCE_Examination": {"Patient_Actor": {}}}\n' * 3, encoding="utf-8")
    out_dir = tmp_path / "drafts"
    argv = ["import", "agentclinic", str(source), "--out", str(out_dir), "--root", str(root)]
    code, out, err = run(capsys, *argv)
    assert code == 1
    assert len(err.splitlines()) == 6  # each record: its error and how to fix it
    assert not out_dir.exists()
    assert f"0 of 3 records converted ({out_dir}/ not created)" in out


# --- stand-ins: a source's words for nothing are placeholders, never findings ---------------


def test_stand_ins_become_placeholders() -> None:
    case = _convert(
        {
            "Patient_Actor": {
                "Demographics": "30-year-old man",
                "History": "Cough for a week.",
                "Social_History": "Information not provided",
                "Past_Medical_History": "None reported",
            },
            "Physical_Examination_Findings": {
                "Vital_Signs": {"Respiratory_Rate": "Not provided", "Heart_Rate": "88 bpm"},
                "Chest": {"Auscultation": "N/A", "Percussion": "Dull at the right base"},
            },
            "Test_Results": {"Troponin": "Unknown", "Potassium": "Pending"},
            "Correct_Diagnosis": "Pneumonia",
        }
    )
    vitals = case["physical_exam"]["vital signs"]
    assert vitals["respiratory rate"] == (
        "TODO: the finding: a measurement, or a short text (the source says only `Not provided`; "
        "write the finding, or leave it out)"
    )
    assert vitals["heart rate"]["value"] == 88
    assert case["physical_exam"]["chest"]["auscultation"].startswith("TODO: the finding")
    assert case["physical_exam"]["chest"]["percussion"] == "Dull at the right base"
    assert case["patient"]["social_history"] == (
        "TODO: smoking, alcohol, drugs, work and home, as the patient would tell it (the source "
        "says only `Information not provided`; fill it in, or delete the field)"
    )
    assert case["patient"]["pmh"] == [
        {
            "condition": "TODO: diagnosis or past event (the source says only `None reported`; "
            "write [] for none)"
        }
    ]
    results = case["investigations"]["results"]
    assert results["Troponin"]["value"].startswith("TODO: the result")
    assert results["Potassium"] == {  # a status, not a stand-in
        "type": "qualitative",
        "status": "pending",
        "note": "Source text: Pending",
    }
    text = render_case(case, "# draft\n")
    assert {p.rule for p in check_text(text, file="cases/x_001.yaml")} == {"CB418"}


@pytest.mark.parametrize(
    ("old", "new", "path"),
    [
        (
            '  cardiovascular: "Regular rhythm, no murmur"',
            '  cardiovascular: "Not provided"',
            "physical_exam.cardiovascular",
        ),
        (
            '  general: "Pale, sweaty, in pain"',
            "  general: {value: N/A}",
            "physical_exam.general.value",
        ),
        (
            'social_history: "Smokes 20 cigarettes a day."',
            'social_history: "Unknown"',
            "patient.social_history",
        ),
        (
            'family_history: ["Father had a heart attack at 52"]',
            'family_history: ["None reported"]',
            "patient.family_history[0]",
        ),
        (
            '- condition: "Hypertension"',
            '- condition: "Information not specified"',
            "patient.pmh[0].condition",
        ),
        (
            'chief_complaint: "Chest pain"',
            'chief_complaint: "not applicable"',
            "presentation.chief_complaint",
        ),
    ],
)
def test_stand_ins_left_in_a_case_are_pointed_at(old: str, new: str, path: str) -> None:
    text = edit(old, new)
    assert found(text) == [("CB429", path, line_of(text, new.strip()))]
    assert found(edit(old, old)) == []


def test_qualifiers_and_real_findings_are_not_stand_ins() -> None:
    # An allergy's severity may truly be unknown; "None" and "No rash" are findings.
    text = edit("      severity: moderate", "      severity: unknown")
    text = edit('  general: "Pale, sweaty, in pain"', '  general: "None"', text)
    text = edit(
        '  cardiovascular: "Regular rhythm, no murmur"', '  cardiovascular: "No murmur"', text
    )
    assert found(text) == []


# --- case ids: never one a case or a release holds ----------------------------------------------


def test_an_id_a_case_or_a_release_holds_is_passed_over(
    repo: GitRepo, capsys: pytest.CaptureFixture[str], tmp_path: Path
) -> None:
    from gitrepo import case_text

    repo.write("cases/asthma_001.yaml", case_text("asthma_001"))
    repo.write("cases/asthma_002.yaml", case_text("asthma_002"))
    repo.commit("Add two asthma cases")
    assert run(capsys, "release", "1.0.0", "--root", str(repo.root))[0] == 0
    repo.delete("cases/asthma_002.yaml")  # released once: its id is never given again
    kept = (repo.root / "cases" / "asthma_001.yaml").read_bytes()
    source = tmp_path / "asthma.jsonl"
    source.write_text(
        MALFORMED.read_text(encoding="utf-8").splitlines()[0] + "\n", encoding="utf-8"
    )
    argv = ["import", "agentclinic", str(source), "--out", str(repo.root / "cases")]
    code, out, err = run(capsys, *argv, "--root", str(repo.root))
    assert (code, err) == (0, "")
    assert (
        "asthma.jsonl:1: asthma_001 (cases/asthma_001.yaml); asthma_002 (release 1.0.0) taken: "
        "named `asthma_003`, the first free id"
    ) in out.splitlines()
    assert "--force" not in out
    assert (repo.root / "cases" / "asthma_001.yaml").read_bytes() == kept
    assert yaml.safe_load((repo.root / "cases" / "asthma_003.yaml").read_text())["case_id"] == (
        "asthma_003"
    )
    # Drafts elsewhere are named the same way, so they can move into cases/ as they are.
    code, out, _ = run(
        capsys,
        *argv[:3],
        "--out",
        str(tmp_path / "d"),
        "--root",
        str(repo.root),
        "--format",
        "json",
    )
    assert json.loads(out)["results"][0]["case_id"] == "asthma_004"
    assert json.loads(out)["results"][0]["passed_over"] == [
        "asthma_001 (cases/asthma_001.yaml)",
        "asthma_002 (release 1.0.0)",
        "asthma_003 (cases/asthma_003.yaml)",
    ]


# What other formats write for "nothing", each form of the stand-in pattern at least once.
STAND_INS = [
    "N/A", "n a", "NA", "unk", "Unknown", "not known", "Unspecified", "TBD", "tbc", "TBA",
    "To be determined", "to be confirmed", "---", "??", "None reported", "none given",
    "Information not provided", "Data are not available", "Details not recorded",
    "Findings not documented in the source", "results is not stated", "values not done",
    "is not specified", "are not examined", "Not performed", "No information",
    "no additional details provided", "Not applicable", "Not applicable for age",
]  # fmt: skip


def test_each_stand_in_form_starts_as_the_quick_check_expects() -> None:
    """is_stand_in skips the full reading when the folded text's first kept character
    starts no stand-in (STAND_IN_FIRST): each form of the pattern starts with one of them."""
    from casebank.format.scaffold import STAND_IN_FIRST, is_stand_in, stands_in

    for text in STAND_INS:
        dressings = [f"  - {text}.", f"**{text}**", f"— {text.upper()} —"]
        for dressed in [text, *(dressings if text[0].isalpha() else [])]:
            assert stands_in(dressed.casefold()), dressed
            assert is_stand_in(dressed), dressed
    assert {t.casefold()[0] for t in STAND_INS if t.strip("-")} <= STAND_IN_FIRST


@settings(max_examples=examples(300), deadline=None)
@given(
    st.builds(
        lambda before, text, after: before + text + after,
        st.text(alphabet=" -*—.!(\"'/?\u0345İK\t", max_size=4),
        st.one_of(st.sampled_from(STAND_INS), st.text(max_size=12)),
        st.text(max_size=6),
    )
)
def test_the_quick_stand_in_check_agrees_with_the_full_reading(text: str) -> None:
    from casebank.format.scaffold import is_stand_in, stands_in

    assert is_stand_in(text) == stands_in(text.casefold())
