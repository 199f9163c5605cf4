"""One identifier policy at every entry point: command-line arguments, case files, manifests and
the site. A case id matches ``^[a-z][a-z0-9_]{2,63}$`` (in words joined by single underscores);
anything else is refused before it becomes part of a path, with a message that says what a case
id is. (Attachment names: tests/test_attachments.py.)"""

from __future__ import annotations

import json
from pathlib import Path

import pytest

from casebank.cli import main
from casebank.format.identifiers import CASE_ID_PATTERN, is_case_id
from conftest import VALID_CASE, edit, found, line_of
from gitrepo import GitRepo, case_text

pytestmark = pytest.mark.usefixtures("isolated_git")

SECRET = "hunter2-the-secret"
BAD_IDS = [
    "../../x/secret",  # the issue's example: a path to any YAML file on disk
    "/etc/passwd",
    "x",  # too short
    "ab",
    "a" * 65,  # too long (64 is the most)
    "Chest_pain",  # uppercase
    "1st_case",  # starts with a digit
    "chest pain",
    "chest__pain",
    "chest_pain_",
    "alpha\n",  # `$` alone would let a final line feed through
    "alpha\x1b[2J",
]


@pytest.fixture
def released(repo: GitRepo, tmp_path: Path, capsys: pytest.CaptureFixture[str]) -> GitRepo:
    assert main(["release", "1.0.0", "--root", str(repo.root)]) == 0
    (tmp_path / "x").mkdir()
    (tmp_path / "x" / "secret.yaml").write_text(f"case_id: alpha\nsecret: {SECRET}\n")
    capsys.readouterr()
    return repo


def commands(bad: str) -> list[list[str]]:
    return [
        ["view", bad, "--role", "examiner"],
        ["view", bad, "--role", "patient", "--release", "1.0.0"],
        ["results", bad, "ECG"],
        ["history", bad],
        ["show", bad],
        ["show", f"{bad}@1"],
        ["withdraw", f"{bad}@1", "--reason", "The troponin unit was wrong in this version."],
        ["judge-items", "--release", "1.0.0", "alpha", bad],
    ]


@pytest.mark.parametrize("bad", BAD_IDS)
def test_every_command_refuses_what_is_not_a_case_id(
    released: GitRepo, tmp_path: Path, capsys: pytest.CaptureFixture[str], bad: str
) -> None:
    before = released.state()
    for argv in commands(bad):
        code = main([*argv, "--root", str(released.root)])
        out, err = capsys.readouterr()
        assert code == 1, (argv, err)
        assert "is not a valid case id: a case id is 3 to 64 characters" in err, argv
        assert "hint: give the case's id, e.g. chest_pain_001" in err
        assert SECRET not in out + err and out == ""
        assert "\x1b" not in err  # the id is shown escaped
    assert released.state() == before


def test_the_issue_example_from_inside_the_repository(
    released: GitRepo, capsys: pytest.CaptureFixture[str], monkeypatch: pytest.MonkeyPatch
) -> None:
    monkeypatch.chdir(released.root / "cases")
    assert main(["view", "../../x/secret", "--role", "examiner"]) == 1
    out, err = capsys.readouterr()
    assert out == "" and SECRET not in err
    assert err.startswith("casebank: `../../x/secret` is not a valid case id")


@pytest.mark.parametrize("good", ["abc", "chest_pain_001", "a" * 64, "a1_2b"])
def test_ids_the_policy_allows(good: str) -> None:
    assert is_case_id(good)


@pytest.mark.parametrize("bad", BAD_IDS)
def test_the_schema_pattern_is_the_same_policy(bad: str) -> None:
    assert not is_case_id(bad)
    text = edit("case_id: valid_case", f"case_id: {json.dumps(bad)}")
    rules = {rule for rule, path, _ in found(text) if path == "case_id"}
    assert "CB206" in rules or "CB117" in rules, found(text)


def test_a_251_character_case_id_is_refused_where_it_is_written() -> None:
    long_id = "a" * 251
    text = edit("case_id: valid_case", f"case_id: {long_id}")
    assert ("CB206", "case_id", line_of(text, long_id)) in found(
        text, file=f"cases/{long_id[:200]}.yaml"
    )


def test_the_generated_json_schema_carries_the_one_pattern() -> None:
    schema = json.loads((Path(__file__).parents[1] / "schema" / "case.schema.json").read_text())
    assert schema["properties"]["case_id"]["pattern"] == CASE_ID_PATTERN


def test_the_site_leaves_out_a_file_whose_name_is_no_case_id(
    repo: GitRepo, tmp_path: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    long_id = "a" * 251  # cases/<id>.yml fits a file name; cases/<id>.html would not
    repo.write(f"cases/{long_id}.yml", case_text(long_id))
    out = tmp_path / "site"
    assert main(["site", "--root", str(repo.root), "--out", str(out)]) == 0
    err = capsys.readouterr().err
    assert f"cases/{long_id}.yml: left out, its name is not a valid case id" in err
    assert sorted(p.name for p in (out / "cases").glob("*.html")) == [
        "alpha.html",
        "beta.html",
        "gamma.html",
    ]


@pytest.mark.parametrize(
    "field,value,expected",
    [
        ("case_id", "../../etc/passwd", "`cases[0].case_id` is not a valid case id"),
        ("case_id", "alpha\u001b[2J", "`cases[0].case_id` is not a valid case id"),
    ],
)
def test_a_manifest_with_a_bad_identifier_is_reported_as_tampered(
    released: GitRepo,
    tmp_path: Path,
    capsys: pytest.CaptureFixture[str],
    field: str,
    value: str,
    expected: str,
) -> None:
    path = released.root / "releases" / "1.0.0.json"
    manifest = json.loads(path.read_text("utf-8"))
    manifest["cases"][0][field] = value
    path.write_text(json.dumps(manifest, indent=2), "utf-8")
    released.commit("Tamper with the manifest")
    assert main(["verify", "--root", str(released.root)]) == 1
    assert expected in capsys.readouterr().out
    code = main(["export", "--release", "1.0.0", "--out", str(tmp_path / "b")])
    assert code == 1 and not (tmp_path / "b").exists()


def test_a_valid_fixture_still_loads() -> None:
    assert found(VALID_CASE) == []
