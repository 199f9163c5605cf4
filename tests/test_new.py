"""`casebank new`: a scaffold that validation then walks the author through, blank by blank."""

from __future__ import annotations

import pytest

from casebank.cli import main
from casebank.validate import validate_repository
from conftest import RepoMaker

FILLED = {
    '"TODO: a short title, e.g. Acute chest pain in a smoker"': '"Fever and flank pain"',
    "difficulty: null": "difficulty: easy",
    '"TODO: one specialty from catalog.yaml, e.g. emergency_medicine"': "emergency_medicine",
    '["TODO: keywords from catalog.yaml, e.g. chest_pain"]': "[triage]",
    "age: null": "age: 40",
    "sex: null": "sex: female",
    '"TODO: who the patient is and how they come across"': '"A teacher, calm."',
    '"TODO: the complaint in the patient\'s own words"': '"Chest pain"',
    "TODO: the true story the simulated patient draws on. Symptoms and timeline only;\n"
    "    never name the diagnosis.": "Pressing pain for an hour.",
    '["TODO: a question a competent clinician must ask"]': '["Onset"]',
    '["TODO: a question that adds value"]': '["Exertion"]',
    '["TODO: a finding that must not be missed"]': '["Syncope"]',
    '"TODO: general appearance"': '"Pale"',
    '"TODO: the diagnosis the case is built around"': '"Unstable angina"',
    '["TODO: the differential, most likely first"]': '["Unstable angina", "NSTEMI"]',
    '["TODO: tests from catalog.yaml that must be ordered"]': "[ECG]",
    '"TODO: test name from catalog.yaml"': "ECG",
    '"TODO: the result"': '"Sinus rhythm, ST depression in V4-V6."',
    '["TODO: diagnostic steps"]': '["Serial troponins"]',
    '["TODO: treatment steps, with standard doses"]': '["Aspirin 300 mg"]',
    '["TODO: what must not be done"]': '["Discharge home"]',
    '["TODO: follow-up"]': '["Cardiology clinic"]',
    '["TODO: other names for the diagnosis that count as correct"]': '["Crescendo angina"]',
    '["TODO: an error that fails the answer"]': '["Missing the ECG changes"]',
}


def test_new_case_lists_each_blank_once_then_passes_when_filled(
    make_repo: RepoMaker, capsys: pytest.CaptureFixture[str]
) -> None:
    root = make_repo({})
    assert main(["new", "chest_pain_002", "--root", str(root)]) == 0
    path = root / "cases" / "chest_pain_002.yaml"
    text = path.read_text(encoding="utf-8")
    assert text.startswith("# yaml-language-server: $schema=../schema/case.schema.json\n")

    result = validate_repository(root, [str(path)])
    per_path = [p.path for p in result.problems]
    assert len(per_path) == len(set(per_path)) == len(FILLED), result.sorted()
    assert {p.rule for p in result.problems} == {"CB418", "CB205"}

    for old, new in FILLED.items():
        assert old in text, old
        text = text.replace(old, new)
    path.write_text(text, encoding="utf-8")
    assert validate_repository(root, [str(path)]).problems == []


def test_new_refuses_an_existing_case_in_any_format(
    make_repo: RepoMaker, capsys: pytest.CaptureFixture[str]
) -> None:
    root = make_repo({"sepsis_001.json": "{}"})
    assert main(["new", "sepsis_001", "--root", str(root)]) == 1
    assert "already exists" in capsys.readouterr().err
    assert (root / "cases" / "sepsis_001.json").read_text() == "{}"


@pytest.mark.parametrize("bad", ["Chest-Pain", "chest pain", "chest__pain", "_x", "../escape"])
def test_new_refuses_an_invalid_id(
    make_repo: RepoMaker, capsys: pytest.CaptureFixture[str], bad: str
) -> None:
    root = make_repo({})
    assert main(["new", bad, "--root", str(root)]) == 2
    assert "not a valid case id" in capsys.readouterr().err
    assert list((root / "cases").iterdir()) == []
