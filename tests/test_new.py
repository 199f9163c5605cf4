"""`casebank new`: a scaffold that validation then walks the author through, blank by blank."""

from __future__ import annotations

import pytest

from casebank.check.validate import validate_repository
from casebank.cli import main
from casebank.format.loader import load_document
from conftest import RepoMaker, edit, found, line_of

FILLED = {
    '"TODO: short human title, e.g. Acute chest pain in a smoker"': '"Fever and flank pain"',
    "difficulty: null": "difficulty: easy",
    '"TODO: main specialty, from the catalog\'s specialties, e.g. emergency_medicine"': (
        "emergency_medicine"
    ),
    '["TODO: keywords for search and filtering, from the catalog\'s tags, e.g. chest_pain"]': (
        "[triage]"
    ),
    "age: null": "age: 40",
    "sex: null": "sex: female",
    '"TODO: how the patient comes across: occupation, manner, worries"': '"A teacher, calm."',
    '"TODO: the complaint in the patient\'s words, e.g. Chest pain"': '"Chest pain"',
    '"TODO: the true story the simulated patient draws on; never name the diagnosis, e.g. '
    'Substernal pressure for 45 minutes, started at rest."': '"Pressing pain for an hour."',
    '["TODO: questions a competent clinician must ask, e.g. Onset and duration of the pain"]': (
        '["Onset"]'
    ),
    '["TODO: questions that add value, e.g. Recent exertion or stress"]': '["Exertion"]',
    '["TODO: findings that must not be missed, e.g. Syncope"]': '["Syncope"]',
    '"TODO: general appearance"': '"Pale"',
    '"TODO: the diagnosis the case is built around, e.g. Acute coronary syndrome '
    '(ST-elevation myocardial infarction)"': '"Unstable angina"',
    '["TODO: ranked differential diagnosis, most likely first, e.g. ST-elevation myocardial '
    'infarction"]': '["Unstable angina", "NSTEMI"]',
    '["TODO: tests that must be ordered, e.g. ECG"]': '["Chest X-ray"]',
    '"TODO: a test name from catalog.yaml"': '"Chest X-ray"',
    "type: null": "type: text_report",
    "flag: null": "flag: normal",
    '"TODO: the result: a number for lab_value, text otherwise"': (
        '"No consolidation, effusion or pneumothorax."'
    ),
    '["TODO: diagnostic steps, e.g. Serial troponins"]': '["Serial troponins"]',
    '["TODO: treatment steps, e.g. Aspirin unless contraindicated"]': '["Aspirin 300 mg"]',
    '["TODO: things that must not be done, e.g. Thrombolysis with active bleeding"]': (
        '["Discharge home"]'
    ),
    '["TODO: follow-up, e.g. Cardiology review"]': '["Cardiology clinic"]',
    '["TODO: other names for the final diagnosis that count as correct, e.g. STEMI"]': (
        '["Crescendo angina"]'
    ),
    '["TODO: errors that fail the answer whatever else it gets right, e.g. Discharging a '
    'patient with ongoing ischaemic chest pain"]': '["Discharging with ongoing chest pain"]',
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


@pytest.mark.parametrize(
    "title",
    [
        '"TODO: short title"',
        '"\\x54ODO: short title"',  # written as an escape: not in the file as typed
        '"\\u0054ODO: short title"',
    ],
)
def test_a_placeholder_is_found_however_it_is_written(title: str) -> None:
    """The rule skips its walk when the file cannot hold the placeholder; an escape can."""
    case = edit('title: "Acute chest pain in a smoker"', f"title: {title}")
    assert ("CB418", "metadata.title", line_of(case, "title:")) in found(case)


def test_a_document_may_hold_only_what_its_source_can_spell() -> None:
    loaded = load_document("cases/x.yaml", b"a: plain text\nb: 'quoted'\n")
    assert loaded.document is not None
    assert not loaded.document.may_hold("TODO") and loaded.document.may_hold("quoted")
    escaped = load_document("cases/x.yaml", b'a: "\\x54ODO"\n').document
    assert escaped is not None and escaped.may_hold("TODO") and escaped.data["a"] == "TODO"
