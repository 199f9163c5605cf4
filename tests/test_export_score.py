"""Export bundles and the reference scorer, on real temporary repositories and releases."""

from __future__ import annotations

import hashlib
import json
import os
from pathlib import Path
from typing import Any

import pytest

from casebank.serve import score
from conftest import run_cli as cli
from gitrepo import GitRepo, case_text

pytestmark = pytest.mark.usefixtures("isolated_git")

GOLD = "Acute inferior ST-elevation myocardial infarction"
MUST = ["ECG", "Troponin", "CBC"]
PLAN = ["Aspirin 300 mg chewed", "Primary PCI"]


def export(
    capsys: pytest.CaptureFixture[str], repo: GitRepo, out: Path, *extra: str
) -> tuple[int, str, str]:
    return cli(
        capsys, "export", "--release", "1.0.0", "--out", str(out), "--root", str(repo.root), *extra
    )


def read_records(folder: Path) -> list[dict[str, Any]]:
    lines = (folder / "cases.jsonl").read_text("utf-8").splitlines()
    return [json.loads(line) for line in lines]


# --- export ---------------------------------------------------------------------------------


def test_two_exports_are_byte_identical(
    released: GitRepo, tmp_path: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    assert export(capsys, released, tmp_path / "a")[0] == 0
    assert export(capsys, released, tmp_path / "b")[0] == 0
    files = sorted(p.relative_to(tmp_path / "a") for p in (tmp_path / "a").rglob("*"))
    assert [str(f) for f in files] == [
        ".casebank-export",
        "README.md",
        "SHA256SUMS",
        "cases.jsonl",
        "catalog.json",
        "manifest.json",
    ]
    for name in files:
        assert (tmp_path / "a" / name).read_bytes() == (tmp_path / "b" / name).read_bytes()


def test_the_bundle_proves_itself(
    released: GitRepo, tmp_path: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    out = tmp_path / "bundle"
    export(capsys, released, out)
    manifest = json.loads((released.root / "releases/1.0.0.json").read_text("utf-8"))
    assert (out / "manifest.json").read_bytes() == (
        released.root / "releases/1.0.0.json"
    ).read_bytes()
    hashes = {c["case_id"]: (c["version"], c["sha256"]) for c in manifest["cases"]}
    records = read_records(out)
    assert [r["case_id"] for r in records] == ["alpha", "beta", "gamma"]
    for r in records:
        assert (r["version"], r["content_hash"]) == hashes[r["case_id"]]
        assert hashlib.sha256(r["case"].encode("utf-8")).hexdigest() == r["content_hash"]
        assert r["release"] == "1.0.0" and r["attachments"] == []
    for line in (out / "SHA256SUMS").read_text("utf-8").splitlines():
        digest, name = line.split("  ")
        assert hashlib.sha256((out / name).read_bytes()).hexdigest() == digest


def test_the_patient_column_holds_no_examiner_field(
    released: GitRepo, tmp_path: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    export(capsys, released, tmp_path / "b")
    for record in read_records(tmp_path / "b"):
        patient = json.loads(record["patient"])
        assert set(patient) <= {"patient", "presentation", "metadata"}, set(patient)
        text = record["patient"]
        for secret in (GOLD, "Inferior STEMI", "Aortic dissection", "Primary PCI", "must_order"):
            assert secret not in text
        assert GOLD in record["case"]  # the whole case is there, for the examiner


def test_export_reads_the_release_not_the_working_tree(
    released: GitRepo, tmp_path: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    export(capsys, released, tmp_path / "before")
    released.write("cases/alpha.yaml", case_text("alpha").replace("age: 54", "age: 80"))
    released.commit("Change alpha after the release")
    released.write("cases/beta.yaml", "not: [even, valid")
    export(capsys, released, tmp_path / "after")
    assert (tmp_path / "before/cases.jsonl").read_bytes() == (
        tmp_path / "after/cases.jsonl"
    ).read_bytes()


def test_a_manifest_edited_after_the_release_is_refused(
    released: GitRepo, tmp_path: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    path = released.root / "releases/1.0.0.json"
    path.write_text(path.read_text("utf-8").replace('"medium"', '"easy"'), "utf-8")
    released.commit("Tamper")
    code, _, err = export(capsys, released, tmp_path / "x")
    assert code == 1
    assert "releases/1.0.0.json on HEAD is not the manifest tagged v1.0.0" in err
    assert not (tmp_path / "x").exists()


def test_an_unknown_release_names_the_releases(
    released: GitRepo, tmp_path: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    code, _, err = cli(
        capsys,
        "export",
        "--release",
        "9.9.9",
        "--out",
        str(tmp_path / "x"),
        "--root",
        str(released.root),
    )
    assert code == 1 and "there is no release 9.9.9" in err and "releases: 1.0.0" in err


def test_export_never_leaves_a_partial_folder(
    released: GitRepo,
    tmp_path: Path,
    capsys: pytest.CaptureFixture[str],
    monkeypatch: pytest.MonkeyPatch,
) -> None:
    occupied = tmp_path / "occupied"
    occupied.mkdir()
    (occupied / "keep.txt").write_text("mine", "utf-8")
    for force in ((), ("--force",)):  # a folder export did not write is never replaced
        code, _, err = export(capsys, released, occupied, *force)
        assert code == 1 and "did not write" in err
        assert [p.name for p in occupied.iterdir()] == ["keep.txt"]

    def refuse(*args: object) -> None:
        raise OSError(28, "No space left on device")

    monkeypatch.setattr(os, "rename", refuse)
    code, _, err = export(capsys, released, tmp_path / "fresh")
    monkeypatch.undo()
    assert code == 1 and f"cannot write {tmp_path / 'fresh'}: No space left on device" in err
    assert sorted(p.name for p in tmp_path.iterdir()) == ["home", "occupied", "repo"]
    assert export(capsys, released, tmp_path / "fresh")[0] == 0
    (tmp_path / "fresh" / "cases.jsonl").write_text("stale", "utf-8")
    code, _, err = export(capsys, released, tmp_path / "fresh")
    assert code == 1 and "pass --force" in err
    assert export(capsys, released, tmp_path / "fresh", "--force")[0] == 0
    assert (tmp_path / "fresh" / "cases.jsonl").read_text("utf-8") != "stale"


def test_attachments_travel_with_the_bundle(
    repo: GitRepo, tmp_path: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    repo.write("cases/alpha/attachments/ecg.svg", b"<svg xmlns='http://www.w3.org/2000/svg'/>")
    repo.commit("An ECG tracing for alpha")
    assert cli(capsys, "release", "1.0.0", "--root", str(repo.root))[0] == 0
    export(capsys, repo, tmp_path / "b")
    [alpha, *_] = read_records(tmp_path / "b")
    raw = (tmp_path / "b/attachments/alpha/ecg.svg").read_bytes()
    assert alpha["attachments"] == [{"path": "ecg.svg", "sha256": hashlib.sha256(raw).hexdigest()}]
    own = hashlib.sha256(alpha["case"].encode("utf-8")).hexdigest()
    combined = json.dumps(
        {"attachments": {"ecg.svg": hashlib.sha256(raw).hexdigest()}, "case": own},
        sort_keys=True,
        separators=(",", ":"),
    )
    assert hashlib.sha256(combined.encode()).hexdigest() == alpha["content_hash"]


def test_the_dataset_card_has_hugging_face_front_matter(
    released: GitRepo, tmp_path: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    import yaml

    export(capsys, released, tmp_path / "b")
    card = (tmp_path / "b/README.md").read_text("utf-8")
    front = yaml.safe_load(card.split("---\n")[1])
    assert front["license"] == ["cc-by-4.0"]
    assert front["language"] == ["en"] and front["size_categories"] == ["n<1K"]
    assert front["configs"] == [
        {"config_name": "default", "data_files": [{"split": "test", "path": "cases.jsonl"}]}
    ]
    assert "| emergency_medicine | 3 |" in card and "The first release." in card
    # The patients counted as the README and the site count them (format.coverage's bands).
    from casebank.format.coverage import Coverage

    cases = [
        yaml.safe_load((released.root / f"cases/{c}.yaml").read_text())
        for c in ("alpha", "beta", "gamma")
    ]
    bands = ", ".join(f"{n} {band}" for band, n in Coverage.of(cases).age_counts())
    assert f"3 cases, 1 distinct final diagnoses; patients: 3 male; ages: {bands}." in card


def test_the_bundle_loads_in_datasets_offline(
    released: GitRepo,
    tmp_path: Path,
    capsys: pytest.CaptureFixture[str],
    monkeypatch: pytest.MonkeyPatch,
) -> None:
    datasets = pytest.importorskip("datasets", reason="the `datasets` library is in the test extra")
    monkeypatch.setenv("HF_DATASETS_OFFLINE", "1")
    monkeypatch.setenv("HF_HOME", str(tmp_path / "hf"))
    export(capsys, released, tmp_path / "b")
    table = datasets.load_dataset(
        "json",
        data_files=str(tmp_path / "b/cases.jsonl"),
        split="train",
        cache_dir=str(tmp_path / "c"),
    )
    assert table.num_rows == 3 and table[0]["case_id"] == "alpha"
    assert json.loads(table[0]["patient"])["patient"]["age"] == 54
    pytest.importorskip("pyarrow", reason="pyarrow is in the test and export extras")
    assert export(capsys, released, tmp_path / "p", "--format", "parquet")[0] == 0
    assert export(capsys, released, tmp_path / "q", "--format", "parquet")[0] == 0
    assert (tmp_path / "p/cases.parquet").read_bytes() == (
        tmp_path / "q/cases.parquet"
    ).read_bytes()
    table = datasets.load_dataset(
        "parquet",
        data_files=str(tmp_path / "p/cases.parquet"),
        split="train",
        cache_dir=str(tmp_path / "c"),
    )
    assert [r["case_id"] for r in table] == ["alpha", "beta", "gamma"]


# --- scoring --------------------------------------------------------------------------------


def submission(case_id: str = "alpha", **fields: Any) -> dict[str, Any]:
    return {
        "case_id": case_id,
        "version": 1,
        "diagnosis": GOLD,
        "tests": MUST,
        "plan": PLAN,
    } | fields


def write_lines(path: Path, rows: list[dict[str, Any]]) -> Path:
    path.write_text("".join(json.dumps(r) + "\n" for r in rows), "utf-8")
    return path


def run_score(
    capsys: pytest.CaptureFixture[str],
    repo: GitRepo,
    tmp_path: Path,
    rows: list[dict[str, Any]],
    judgements: list[dict[str, Any]] | None = None,
    release: str = "1.0.0",
    method: str | None = None,
    *extra: str,
) -> tuple[int, dict[str, Any] | None, str]:
    subs = write_lines(tmp_path / "subs.jsonl", rows)
    argv = ["score", "--release", release, str(subs), "--root", str(repo.root), "--format", "json"]
    argv += ["--method", method] if method else []
    argv += list(extra)
    if judgements is not None:
        argv += ["--judgements", str(write_lines(tmp_path / "judged.jsonl", judgements))]
    code, out, err = cli(capsys, *argv)
    if code == 0:  # the report as json.dumps(indent=2) writes it, byte for byte
        assert out == json.dumps(json.loads(out), indent=2, ensure_ascii=False) + "\n"
    return code, (json.loads(out) if code == 0 else None), err


def verdicts(
    case_id: str, *, treatment: bool = True, committed: tuple[str, ...] = ()
) -> list[dict[str, Any]]:
    items = {
        "treatment.1": treatment,
        "treatment.2": treatment,
        "contraindication.1": False,
        "critical.1": False,
    }
    items.update(dict.fromkeys(committed, True))
    return [
        {"case_id": case_id, "version": 1, "item": item, "met": met, "judge": "test-panel"}
        for item, met in items.items()
    ]


def by_case(report: dict[str, Any]) -> dict[str, dict[str, Any]]:
    return {c["case_id"]: c for c in report["cases"]}


@pytest.mark.parametrize(
    "answer,credit",
    [
        (GOLD, 1.0),
        ("acute inferior ST elevation myocardial infarction.", 1.0),  # case, punctuation
        ("Inferior STEMI", 1.0),  # an accepted variant
        ("Inferior ST-elevation MI", 1.0),  # the same, abbreviated differently
        ("  stemi ", 1.0),
        ("Aortic dissection", 0.0),
        ("Myocardial infarction", 0.0),  # not an accepted answer
    ],
)
def test_diagnosis_matching(
    released: GitRepo,
    tmp_path: Path,
    capsys: pytest.CaptureFixture[str],
    answer: str,
    credit: float,
) -> None:
    code, report, _ = run_score(capsys, released, tmp_path, [submission(diagnosis=answer)])
    assert code == 0 and report is not None
    assert by_case(report)["alpha"]["components"]["diagnosis"] == credit


def test_partial_credit_only_where_the_case_gives_it(
    repo: GitRepo, tmp_path: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    text = case_text("alpha").replace(
        '    final_diagnosis: ["Inferior STEMI", "STEMI"]\n',
        '    final_diagnosis: ["Inferior STEMI", "STEMI"]\n'
        '    partial_credit: {"Acute coronary syndrome": 0.5}\n',
    )
    repo.write("cases/alpha.yaml", text)
    repo.commit("Partial credit for ACS")
    assert cli(capsys, "release", "1.0.0", "--root", str(repo.root))[0] == 0
    rows = [submission(diagnosis="ACS"), submission("beta", diagnosis="ACS")]
    _, report, _ = run_score(capsys, repo, tmp_path, rows)
    assert report is not None
    assert by_case(report)["alpha"]["components"]["diagnosis"] == 0.5
    # beta gives no partial credit, and ACS is not an accepted answer: method 2 does not
    # guess 0 but asks a judge; method 1 scored it 0.
    beta = by_case(report)["beta"]
    assert beta["components"]["diagnosis"] is None
    assert beta["details"]["items_pending"][0] == "diagnosis.equivalent"
    _, old, _ = run_score(capsys, repo, tmp_path, rows, method="casebank-score/1")
    assert old is not None and by_case(old)["beta"]["components"]["diagnosis"] == 0.0


def test_diagnostics_count_aliases_and_penalise_should_not_order(
    released: GitRepo, tmp_path: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    rows = [
        submission("alpha", tests=["12-lead ECG", "hs-troponin", "FBC"]),
        submission("beta", tests=["EKG", "Troponin I"]),
        submission("gamma", tests=[*MUST, "Elective stress test", "Tarot reading"]),
    ]
    _, report, _ = run_score(capsys, released, tmp_path, rows)
    assert report is not None
    cases = by_case(report)
    assert cases["alpha"]["components"]["diagnostics"] == 1.0
    assert cases["beta"]["components"]["diagnostics"] == pytest.approx(2 / 3, abs=1e-6)
    assert cases["beta"]["details"]["must_order_missed"] == ["Complete blood count"]
    # Method 2: the should-not-order test costs 0.25, an order the catalog does not know the
    # base cost of any unneeded order (0.02).
    assert cases["gamma"]["components"]["diagnostics"] == 0.73
    assert cases["gamma"]["details"]["should_not_order_ordered"] == ["Elective stress test"]
    assert cases["gamma"]["details"]["tests_not_in_catalog"] == ["Tarot reading"]
    _, old, _ = run_score(capsys, released, tmp_path, rows, method="casebank-score/1")
    assert old is not None and by_case(old)["gamma"]["components"]["diagnostics"] == 0.75


def test_without_verdicts_treatment_and_safety_are_pending_never_guessed(
    released: GitRepo, tmp_path: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    _, report, _ = run_score(capsys, released, tmp_path, [submission()])
    assert report is not None
    [case] = report["cases"]
    assert case["components"] == {
        "diagnosis": 1.0,
        "diagnostics": 1.0,
        "treatment": None,
        "safety": None,
    }
    assert case["score"] is None and case["critical_safety_error"] is None
    assert report["summary"]["complete"] is False and report["summary"]["mean"] is None
    assert report["scorer"]["method"] == score.METHOD
    code, text, _ = cli(
        capsys,
        "score",
        "--release",
        "1.0.0",
        str(tmp_path / "subs.jsonl"),
        "--root",
        str(released.root),
    )
    assert code == 0 and "INCOMPLETE: 1 case(s) await judgements" in text


def test_judgements_are_applied_and_a_critical_error_caps_the_score(
    released: GitRepo, tmp_path: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    rows = [submission("alpha"), submission("beta"), submission("gamma")]
    judged = [
        *verdicts("alpha"),
        *verdicts("beta", treatment=False, committed=("contraindication.1",)),
        *verdicts("gamma", committed=("critical.1",)),
    ]
    code, report, _ = run_score(capsys, released, tmp_path, rows, judged)
    assert code == 0 and report is not None
    cases = by_case(report)
    assert cases["alpha"]["components"] == {
        "diagnosis": 1.0,
        "diagnostics": 1.0,
        "treatment": 1.0,
        "safety": 1.0,
    }
    assert cases["alpha"]["score"] == 1.0 and cases["alpha"]["critical_safety_error"] is False
    # beta: no treatment item met; one of two safety items committed (weights .35 .25 .3 .1)
    assert cases["beta"]["components"]["treatment"] == 0.0
    assert cases["beta"]["components"]["safety"] == 0.5
    assert cases["beta"]["score"] == pytest.approx(0.35 + 0.25 + 0.0 + 0.05)
    assert cases["gamma"]["score"] == 0.0 and cases["gamma"]["critical_safety_error"] is True
    summary = report["summary"]
    assert summary["complete"] is True and summary["n"] == 3
    assert summary["mean"] == pytest.approx((1.0 + 0.65 + 0.0) / 3)
    low, high = summary["ci95"]
    assert low <= summary["mean"] <= high
    assert summary["by_specialty"] == {
        "emergency_medicine": {"n": 3, "scored": 3, "pending": 0, "mean": summary["mean"]}
    }
    again = run_score(capsys, released, tmp_path, rows, judged)[1]
    assert again == report  # the bootstrap has a fixed seed


@pytest.mark.parametrize(
    "lines,expected",
    [
        ([json.dumps(submission()), "{not json"], "subs.jsonl:2: not a JSON object"),
        (
            [json.dumps(submission()), json.dumps(submission())],
            "subs.jsonl:2: a second submission for alpha@1 (the first is on line 1)",
        ),
        (
            [json.dumps(submission("delta"))],
            "subs.jsonl:1: release 1.0.0 has no delta@1 (no such case)",
        ),
        (
            [json.dumps(submission(version=2))],
            "subs.jsonl:1: release 1.0.0 has no alpha@2 (it holds version 1)",
        ),
        ([json.dumps({"case_id": "alpha", "version": 1})], "subs.jsonl:1: `diagnosis` is missing"),
        ([json.dumps(submission(tests="ECG"))], "subs.jsonl:1: `tests` is not a list of texts"),
        (["[1, 2]"], "subs.jsonl:1: not a JSON object"),
    ],
)
def test_bad_submissions_exit_1_with_the_line_and_score_nothing(
    released: GitRepo,
    tmp_path: Path,
    capsys: pytest.CaptureFixture[str],
    lines: list[str],
    expected: str,
) -> None:
    subs = tmp_path / "subs.jsonl"
    subs.write_text("\n".join(lines) + "\n", "utf-8")
    code, out, err = cli(
        capsys, "score", "--release", "1.0.0", str(subs), "--root", str(released.root)
    )
    assert code == 1 and out == ""
    assert f"error: {subs.parent}/{expected}" in err
    assert "nothing scored" in err


def test_every_bad_line_is_listed_in_one_run_in_line_order(
    released: GitRepo, tmp_path: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    # A line the release cannot score beside lines that do not read: all three at once.
    subs = tmp_path / "subs.jsonl"
    lines = [submission("alph"), submission(tests="ECG"), "{not json"]
    subs.write_text("\n".join(x if isinstance(x, str) else json.dumps(x) for x in lines) + "\n")
    code, out, err = cli(
        capsys, "score", "--release", "1.0.0", str(subs), "--root", str(released.root)
    )
    assert code == 1 and out == ""
    errors = [e for e in err.splitlines() if e.startswith("error: ")]
    assert errors == [
        f"error: {subs}:1: release 1.0.0 has no alph@1 (no such case; did you mean `alpha`?)",
        f"error: {subs}:2: `tests` is not a list of texts",
        f"error: {subs}:3: not a JSON object (Expecting property name enclosed in double quotes)",
    ]


def test_bad_judgements_exit_1_with_the_line(
    released: GitRepo, tmp_path: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    judged = [
        *verdicts("alpha"),
        {"case_id": "alpha", "version": 1, "item": "treatment.9", "met": True, "judge": "x"},
    ]
    code, _, err = run_score(capsys, released, tmp_path, [submission()], judged)
    assert code == 1 and "judged.jsonl:5: alpha@1 has no item `treatment.9`" in err
    twice = [*verdicts("alpha"), verdicts("alpha", treatment=False)[0]]
    code, _, err = run_score(capsys, released, tmp_path, [submission()], twice)
    assert code == 1 and "judged.jsonl:5: a different verdict on alpha@1 treatment.1 again" in err
    code, _, err = run_score(
        capsys, released, tmp_path, [submission()], [{**verdicts("alpha")[0], "met": "yes"}]
    )
    assert code == 1 and "judged.jsonl:1: `met` is not true or false" in err


def test_judge_items_lists_stable_ids_with_questions(
    released: GitRepo, tmp_path: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    code, out, _ = cli(
        capsys, "judge-items", "--release", "1.0.0", "alpha", "--root", str(released.root)
    )
    assert code == 0
    items = [json.loads(line) for line in out.splitlines()]
    assert [i["item"] for i in items] == [
        "treatment.1",
        "treatment.2",
        "contraindication.1",
        "critical.1",
    ]
    assert (
        items[3]["question"]
        == "Does the answer commit this critical safety error? Discharging the patient"
    )
    subs = write_lines(tmp_path / "s.jsonl", [submission("beta", plan=["Rest"])])
    code, out, _ = cli(
        capsys,
        "judge-items",
        "--release",
        "1.0.0",
        "--submissions",
        str(subs),
        "--root",
        str(released.root),
    )
    lines = [json.loads(line) for line in out.splitlines()]
    assert {line["case_id"] for line in lines} == {"beta"}
    assert lines[0]["answer"] == {
        "case_id": "beta",
        "version": 1,
        "diagnosis": GOLD,
        "orders": [{"test": t, "when": "final answer"} for t in MUST],
        "examined": [],
        "plan": ["Rest"],
        "transcript": [],
    }
    assert lines[0]["view"].startswith(f"Diagnosis: {GOLD}\nTests ordered:\n- ECG (final answer)")


# --- withdrawn versions: left out everywhere ---------------------------------------------


def test_withdrawn_versions_are_left_out_of_export_and_refused_by_the_scorer(
    released: GitRepo, tmp_path: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    root = str(released.root)
    cli(capsys, "withdraw", "alpha@1", "--reason", "The troponin unit was wrong.", "--root", root)
    released.commit("Withdraw alpha@1")
    assert cli(capsys, "release", "1.0.1", "--root", root)[0] == 0
    out = tmp_path / "b"
    code, text, _ = cli(capsys, "export", "--release", "1.0.1", "--out", str(out), "--root", root)
    assert code == 0 and "(1 withdrawn version(s) left out)" in text
    assert [r["case_id"] for r in read_records(out)] == ["beta", "gamma"]
    assert "withdrawn: `alpha` v1: The troponin unit was wrong." in (out / "README.md").read_text(
        "utf-8"
    )
    code, _, err = run_score(capsys, released, tmp_path, [submission("alpha")], release="1.0.1")
    assert code == 1
    assert (
        "subs.jsonl:1: alpha@1 is withdrawn in release 1.0.1: The troponin unit was wrong." in err
    )
    # The older release reads as it always did, and says what was withdrawn since.
    code, _, err = export(capsys, released, tmp_path / "old")
    assert code == 0 and [r["case_id"] for r in read_records(tmp_path / "old")] == [
        "alpha",
        "beta",
        "gamma",
    ]
    assert "alpha@1 is in this release but was withdrawn in release 1.0.1" in err


# --- runs, comparisons and the judge view --------------------------------------------------


def test_score_compares_two_runs_and_reports_each(
    released: GitRepo, tmp_path: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    rows = [submission(c, run="careful") for c in ("alpha", "beta", "gamma")]
    rows += [
        submission(c, run="rash", tests=[*MUST, "Elective stress test"]) for c in ("alpha", "beta")
    ]
    code, report, _ = run_score(
        capsys, released, tmp_path, rows, None, "1.0.0", None, "--compare", "careful", "rash"
    )
    assert code == 0 and report is not None
    assert {c["run"] for c in report["cases"]} == {"careful", "rash"}
    assert set(report["summary"]["runs"]) == {"careful", "rash"}
    compared = report["compare"]
    assert (compared["a"], compared["b"], compared["answered_by_both"]) == ("careful", "rash", 2)
    assert compared["difference"]["diagnostics"]["mean"] == -0.25
    code, text, _ = cli(
        capsys, "score", "--release", "1.0.0", str(tmp_path / "subs.jsonl"),
        "--root", str(released.root), "--compare", "careful", "rash",
    )  # fmt: skip
    assert code == 0 and "run rash against run careful: 0 case(s) scored in both" in text
    assert "accuracy against cost, by run:" in text
    code, _, err = run_score(
        capsys, released, tmp_path, rows, None, "1.0.0", None, "--compare", "careful", "rsh"
    )
    assert code == 1 and "no submission has run `rsh` (runs: careful, rash)" in err


def test_judge_view_shows_every_order_and_the_transcript(
    tmp_path: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    row = submission(
        ordered=["ECG"],
        tests=["ECG", "Troponin"],
        examined=["vital signs"],
        transcript=[{"role": "doctor", "text": "Where is the pain?"}],
        run="model-a",
    )
    subs = write_lines(tmp_path / "s.jsonl", [row, submission("beta")])
    code, out, _ = cli(capsys, "judge-view", str(subs), "alpha")
    assert code == 0
    assert out == (
        "== alpha@1 (run model-a)\n"
        f"Diagnosis: {GOLD}\n"
        "Tests ordered:\n- ECG (both)\n- Troponin (final answer)\n"
        "Examined: vital signs\n"
        "Plan:\n- Aspirin 300 mg chewed\n- Primary PCI\n"
        "Transcript:\ndoctor: Where is the pain?\n"
    )
    code, out, _ = cli(capsys, "judge-view", str(subs), "--format", "json")
    assert code == 0 and [json.loads(x)["case_id"] for x in out.splitlines()] == ["alpha", "beta"]
    code, _, err = cli(capsys, "judge-view", str(subs), "delta")
    assert code == 1 and "has no submission for delta" in err
    (tmp_path / "bad.jsonl").write_text("{nope\n", "utf-8")
    code, _, err = cli(capsys, "judge-view", str(tmp_path / "bad.jsonl"))
    assert code == 1 and "bad.jsonl:1: not a JSON object" in err


def test_judge_items_asks_about_a_diagnosis_the_matcher_cannot_decide(
    released: GitRepo, tmp_path: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    subs = write_lines(
        tmp_path / "s.jsonl", [submission(diagnosis="Inferior wall myocardial injury")]
    )
    code, out, _ = cli(
        capsys, "judge-items", "--release", "1.0.0", "--submissions", str(subs),
        "--root", str(released.root),
    )  # fmt: skip
    assert code == 0
    first = json.loads(out.splitlines()[0])
    assert (first["item"], first["kind"], first["text"]) == (
        "diagnosis.equivalent",
        "diagnosis",
        GOLD,
    )
    judged = [
        {
            "case_id": "alpha",
            "version": 1,
            "item": "diagnosis.equivalent",
            "met": True,
            "judge": "x",
        }
    ]
    code, report, _ = run_score(
        capsys,
        released,
        tmp_path,
        [submission(diagnosis="Inferior wall myocardial injury")],
        judged,
    )
    assert code == 0 and report is not None
    assert report["cases"][0]["components"]["diagnosis"] == 1.0


def _memory(path: Path) -> tuple[bytes, dict[bytes, bytes]]:
    key, *lines = path.read_bytes().splitlines()
    return key, dict(line.split(b" ", 1) for line in lines)


def _remember(path: Path, key: bytes, texts: dict[bytes, bytes]) -> None:
    path.write_bytes(b"".join([key + b"\n", *(b + b" " + t + b"\n" for b, t in texts.items())]))


def test_a_remembered_case_is_used_only_when_it_hashes_to_the_manifest(
    released: GitRepo, tmp_path: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    """`score` remembers each released case's canonical text by blob id in the cache folder;
    a second run reads it back and scores the same. A remembered text edited to say another
    diagnosis no longer hashes to the manifest's content hash: the case is parsed from git
    again (and remembered as released), never scored as the cache says."""
    from casebank.commands.memory import CASES_CACHE

    rows = [submission()]
    code, first, _ = run_score(capsys, released, tmp_path, rows)
    assert code == 0 and first is not None and by_case(first)["alpha"]["components"]["diagnosis"]
    cached = released.root / ".casebank-cache" / CASES_CACHE
    key, stored = _memory(cached)
    assert len(stored) == 4  # every case of the release, and its catalog
    [(blob, text)] = [(b, t) for b, t in stored.items() if b'"case_id":"alpha"' in t]
    assert GOLD.encode() in text
    code, again, _ = run_score(capsys, released, tmp_path, rows)
    assert (code, again) == (0, first)
    tampered = text.replace(GOLD.encode(), b"Aortic dissection")
    assert tampered != text
    _remember(cached, key, {**stored, blob: tampered})
    code, after, _ = run_score(capsys, released, tmp_path, rows)
    assert (code, after) == (0, first)
    assert _memory(cached) == (key, stored)
    # The same with the diagnosis that the tampered text names: it earns nothing.
    _remember(cached, key, {**stored, blob: tampered})
    code, other, _ = run_score(
        capsys, released, tmp_path, [submission(diagnosis="Aortic dissection")]
    )
    assert code == 0 and other is not None
    assert by_case(other)["alpha"]["components"]["diagnosis"] == 0.0


def test_a_scored_release_parses_only_the_cases_it_scores(
    released: GitRepo, tmp_path: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    """`score` reads the release lazily: each case's canonical text is checked against the
    manifest as it is read, and parsed only where a submission scores it (in the worker that
    scores it, for a large run). One submission of three cases parses one case, first run
    (from git) and second (remembered) alike, and scores as a parse of every case does."""
    import casebank.release.released as released_module

    parsed: list[str] = []
    real = json.loads

    class Counting:
        @staticmethod
        def loads(text: bytes) -> Any:
            data = real(text)
            if isinstance(data, dict) and "case_id" in data:
                parsed.append(data["case_id"])
            return data

        def __getattr__(self, name: str) -> Any:
            return getattr(json, name)

    rows = [submission()]
    with pytest.MonkeyPatch.context() as patch:
        patch.setattr(released_module, "json", Counting())
        for _ in range(2):  # parsed from git, then remembered
            parsed.clear()
            code, report, _ = run_score(capsys, released, tmp_path, rows)
            assert code == 0 and report is not None
            assert parsed == ["alpha"]
            assert by_case(report)["alpha"]["components"]["diagnosis"] == 1.0

    from casebank.commands.memory import RememberedCases
    from casebank.release.released import load_release

    memory = RememberedCases(released.root)
    lazy = load_release(released.root, "1.0.0", canonical=True, memory=memory, lazy=True)
    eager = load_release(released.root, "1.0.0", canonical=True, memory=memory)
    import pickle

    assert pickle.loads(pickle.dumps(lazy.cases[0])).data == eager.cases[0].data  # unparsed
    # A worker that parses a case for a canonical reader sends back its canonical text, not
    # the data too (the reader takes the data from the text).
    raw = (released.root / "cases" / "alpha.yaml").read_bytes()
    [(loads, data, _, _, text)] = released_module._parse_chunk([("alpha.yaml", raw)], None, True)
    assert (loads, data) == (True, None) and text is not None
    assert json.loads(text) == eager.cases[0].data
    assert [c.data for c in lazy.cases] == [c.data for c in eager.cases]
    assert [(c.entry.specialty, c.entry.difficulty) for c in lazy.cases] == [
        (c.data["metadata"]["specialty"], c.data["metadata"]["difficulty"]) for c in eager.cases
    ]


def test_a_remembered_catalog_is_used_only_when_it_hashes_to_the_manifest(
    released: GitRepo, tmp_path: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    """The release's catalog is remembered as its canonical JSON beside the cases, and read
    back (not parsed) only when that text's SHA-256 is the manifest's `catalog.sha256`: a
    remembered catalog edited to drop a must-order test is parsed from git again, so the
    work-up still scores the test as ordered."""
    from casebank.commands.memory import CASES_CACHE
    from casebank.format.loader import load_document as real_load_document

    rows = [submission()]
    code, first, _ = run_score(capsys, released, tmp_path, rows)
    assert code == 0 and first is not None
    recall = by_case(first)["alpha"]["details"]["recall"]
    assert recall > 0
    manifest = json.loads((released.root / "releases" / "1.0.0.json").read_bytes())
    blob = manifest["catalog"]["blob"].encode()
    cached = released.root / ".casebank-cache" / CASES_CACHE
    key, stored = _memory(cached)
    text = stored[blob]
    assert hashlib.sha256(text).hexdigest() == manifest["catalog"]["sha256"]

    parsed: list[str] = []

    def counting(file: str, raw: bytes) -> Any:
        parsed.append(file)
        return real_load_document(file, raw)

    with pytest.MonkeyPatch.context() as patch:
        patch.setattr("casebank.format.loader.load_document", counting)
        code, again, _ = run_score(capsys, released, tmp_path, rows)
        assert (code, again, parsed) == (0, first, [])  # nothing parsed: all remembered
        catalog = json.loads(text)
        kept = [t for t in catalog["tests"] if t["name"] != "ECG"]
        assert len(kept) == len(catalog["tests"]) - 1
        catalog["tests"] = kept
        tampered = json.dumps(catalog, sort_keys=True, separators=(",", ":")).encode()
        assert tampered != text
        _remember(cached, key, {**stored, blob: tampered})
        code, after, _ = run_score(capsys, released, tmp_path, rows)
        assert (code, after, parsed) == (0, first, ["catalog.yaml"])
    assert _memory(cached) == (key, stored)


@pytest.mark.parametrize("garbage", [b"", b"\xff\xfe", b"x\n\n \n", b"\n\xff \xfe\n"])
def test_an_unreadable_case_memory_is_parsed_afresh(
    released: GitRepo, tmp_path: Path, capsys: pytest.CaptureFixture[str], garbage: bytes
) -> None:
    from casebank.commands.memory import CASES_CACHE

    code, first, _ = run_score(capsys, released, tmp_path, [submission()])
    assert code == 0
    cached = released.root / ".casebank-cache" / CASES_CACHE
    key, stored = _memory(cached)
    for content in (garbage, key + b"\n" + garbage, key + b"\n" + b"\n".join(stored)):
        cached.write_bytes(content)
        code, again, _ = run_score(capsys, released, tmp_path, [submission()])
        assert (code, again) == (0, first)
