"""One strict JSON reader everywhere JSON is read: duplicate keys refused, JSON Lines split on
line feeds only, integers bounded, nesting bounded. The reader alone, then each place that
reads JSON (score, import, verify and the released manifests, JSON case files), on real files
and real repositories."""

from __future__ import annotations

import json
import re
from pathlib import Path
from typing import Any

import pytest

from casebank.cli import main
from casebank.format import strictjson
from casebank.format.strictjson import JSONProblem
from conftest import RepoMaker
from gitrepo import GitRepo

pytestmark = pytest.mark.usefixtures("isolated_git")

HUGE = "9" * 5001  # more digits than Python's int() converts
DATA = Path(__file__).parent / "data"
GOLD = "Acute inferior ST-elevation myocardial infarction"


def problem(text: str) -> tuple[str, int, int]:
    with pytest.raises(JSONProblem) as caught:
        strictjson.loads(text)
    return caught.value.kind, caught.value.line, caught.value.column


# --- the reader ------------------------------------------------------------------------------


@pytest.mark.parametrize(
    "text,expected",
    [
        ('{"a": 1,\n "a": 2}', ("duplicate-key", 2, 2)),
        ('{"x": {"k": 1, "k": 1}}', ("duplicate-key", 1, 16)),
        ("[" * 33 + "]" * 33, ("depth", 1, 33)),
        ("[" * 100_000 + "]" * 100_000, ("depth", 1, 33)),  # never a RecursionError
        (f'{{"n":\n {HUGE}}}', ("number", 2, 2)),
        ('{"n": 9007199254740993}', ("number", 1, 7)),
        ('{"n": -9007199254740993}', ("number", 1, 7)),
        ('{"n": 1e400}', ("number", 1, 7)),
        ('{"n": NaN}', ("constant", 1, 7)),
        ("[1, -Infinity]", ("constant", 1, 5)),
        ('{"a" 1}', ("syntax", 1, 6)),
    ],
)
def test_what_the_reader_refuses_and_where(text: str, expected: tuple[str, int, int]) -> None:
    assert problem(text) == expected


def test_what_it_reads_as_json_means_it() -> None:
    assert strictjson.loads("[" * 32 + "]" * 32) is not None
    assert strictjson.loads('{"n": 9007199254740991, "s": "[[[[{{", "e": "\\\\\\""}') == {
        "n": 9007199254740991,
        "s": "[[[[{{",
        "e": '\\"',
    }
    assert strictjson.loads('{"deep": "' + "[" * 1000 + '"}') == {"deep": "[" * 1000}


def test_json_lines_end_at_line_feeds_only() -> None:
    raw = json.dumps({"a": "x\u2028y\u2029z\x85w"}, ensure_ascii=False).encode() + b"\n\n"
    raw += b'{"b": 1}\r\n{"c": 1, "c": 2}\n\xff\n'
    found = list(strictjson.lines(raw))
    assert [(line.number, line.value) for line in found[:2]] == [
        (1, {"a": "x\u2028y\u2029z\x85w"}),
        (3, {"b": 1}),
    ]
    assert [(line.number, line.problem and line.problem.kind) for line in found[2:]] == [
        (4, "duplicate-key"),
        (5, "encoding"),
    ]


# --- score -----------------------------------------------------------------------------------


def submission(**fields: Any) -> dict[str, Any]:
    plan = ["Aspirin 300 mg chewed", "Primary PCI"]
    return {"case_id": "alpha", "version": 1, "diagnosis": GOLD, "tests": ["ECG"], "plan": plan}


def score(repo: GitRepo, path: Path, capsys: pytest.CaptureFixture[str]) -> tuple[int, str, str]:
    argv = ["score", "--release", "1.0.0", str(path), "--root", str(repo.root), "--format", "json"]
    code = main(argv)
    out, err = capsys.readouterr()
    return code, out, err


def test_a_duplicate_key_in_a_submission_is_refused_not_the_last_one_taken(
    released: GitRepo, tmp_path: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    line = json.dumps(submission())[:-1] + ', "diagnosis": "Gastritis"}'
    subs = tmp_path / "subs.jsonl"
    subs.write_text(json.dumps(submission()) + "\n" + line + "\n", "utf-8")
    code, out, err = score(released, subs, capsys)
    assert code == 1 and out == ""
    assert f'{subs}:2: not a JSON object (the key "diagnosis" appears twice' in err


def test_a_file_written_with_ensure_ascii_false_scores(
    released: GitRepo, tmp_path: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    row = submission() | {"note": "line\u2028separator, paragraph\u2029and NEL\x85inside"}
    subs = tmp_path / "subs.jsonl"
    subs.write_text(json.dumps(row, ensure_ascii=False) + "\n", "utf-8")
    code, out, err = score(released, subs, capsys)
    assert code == 0, err
    assert [c["case_id"] for c in json.loads(out)["cases"]] == ["alpha"]


@pytest.mark.parametrize(
    "line,expected",
    [
        (f'{{"case_id": "alpha", "version": {HUGE}}}', "the integer 99999999999999999999…"),
        ("[" * 50_000 + "]" * 50_000, "nest more than 32 levels deep"),
        ('{"case_id": "alpha", "version": NaN}', "`NaN` is not a number JSON allows"),
    ],
)
def test_hostile_numbers_and_nesting_are_problems_of_their_line(
    released: GitRepo,
    tmp_path: Path,
    capsys: pytest.CaptureFixture[str],
    line: str,
    expected: str,
) -> None:
    for name in ("submissions", "judgements"):
        good = tmp_path / "good.jsonl"
        good.write_text(json.dumps(submission()) + "\n", "utf-8")
        bad = tmp_path / f"{name}.jsonl"
        bad.write_text(line + "\n", "utf-8")
        argv = ["score", "--release", "1.0.0", "--root", str(released.root)]
        argv += [str(bad)] if name == "submissions" else [str(good), "--judgements", str(bad)]
        assert main(argv) == 1
        err = capsys.readouterr().err
        assert f"{bad}:1: not a JSON object (" in err and expected in err, err
        assert "internal error" not in err


# --- import ----------------------------------------------------------------------------------


def test_import_reads_records_with_the_strict_reader(
    make_repo: RepoMaker, tmp_path: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    root = make_repo({})
    good = json.loads((DATA / "agentclinic_sample.jsonl").read_text("utf-8").splitlines()[0])
    good["OSCE_Examination"]["Patient_Actor"]["History"] = "pain\u2028since\x85yesterday"
    huge = f'{{"OSCE_Examination": {{"Correct_Diagnosis": "A", "Test_Results": {{"K": {HUGE}}}}}}}'
    source = tmp_path / "records.jsonl"
    source.write_bytes(huge.encode() + b"\n" + json.dumps(good, ensure_ascii=False).encode())
    argv = ["import", "agentclinic", str(source), "--out", str(tmp_path / "o"), "--root", str(root)]
    assert main(argv) == 1
    out, err = capsys.readouterr()
    assert err.startswith("records.jsonl:1: error: the number `9999999999")
    assert "internal error" not in err and "failed on this record" not in err
    assert "records.jsonl:2: wrote" in out  # U+2028 and NEL are no line breaks


# --- manifests: verify, export, the released reader --------------------------------------------


@pytest.mark.parametrize(
    "tamper,expected",
    [
        (lambda text: text.replace('"cases": [', '"cases": ' + "[" * 5000, 1), "32 levels deep"),
        (
            lambda text: text.replace('"version": "1.0.0"', '"version": "1.0.0", "version": "9"'),
            'the key "version" appears twice',
        ),
        (
            lambda text: re.sub(r'"version": 1\b', f'"version": {HUGE}', text, count=1),
            "the integer 9999",
        ),
    ],
)
def test_a_tampered_manifest_is_reported_not_a_crash(
    released: GitRepo,
    tmp_path: Path,
    capsys: pytest.CaptureFixture[str],
    tamper: Any,
    expected: str,
) -> None:
    path = released.root / "releases" / "1.0.0.json"
    path.write_text(tamper(path.read_text("utf-8")), "utf-8")
    released.commit("Tamper with the manifest")
    assert main(["verify", "--root", str(released.root)]) == 1
    out, err = capsys.readouterr()
    assert "releases/1.0.0.json: not valid JSON (line" in out and expected in out, out + err
    assert "internal error" not in err and "RecursionError" not in out + err
    argv = ["export", "--release", "1.0.0", "--out", str(tmp_path / "b")]
    assert main([*argv, "--root", str(released.root)]) == 1
    assert "internal error" not in capsys.readouterr().err


# --- JSON case files ---------------------------------------------------------------------------


def test_a_json_case_with_a_huge_number_is_a_problem_where_it_is(
    make_repo: RepoMaker, capsys: pytest.CaptureFixture[str]
) -> None:
    root = make_repo({"x_case.json": f'{{\n  "case_id": "x_case",\n  "age": {HUGE}\n}}\n'})
    assert main(["validate", "--root", str(root), "--no-cache", "--format", "json"]) == 1
    [found] = [p for p in json.loads(capsys.readouterr().out)["problems"] if p["rule"] == "CB115"]
    assert (found["file"], found["line"], found["column"]) == ("cases/x_case.json", 3, 10)
