"""The grader-validation harness (benchmarks/grader.py, `nox -s grader`) on a small MADE-UP
fixture: two copies of the fixture case, the five archetypes each, and ratings and verdicts
invented for the test. It checks the arithmetic and the report, not casebank's validity;
the real set (tests/data/grader-validation/) is a physician's."""

from __future__ import annotations

import importlib.util
import json
import math
import shutil
import sys
from pathlib import Path
from typing import Any

import pytest

from conftest import FIXTURES, VALID_CASE

ROOT = Path(__file__).resolve().parent.parent
_spec = importlib.util.spec_from_file_location("grader", ROOT / "benchmarks" / "grader.py")
assert _spec is not None and _spec.loader is not None
grader = importlib.util.module_from_spec(_spec)
_path = list(sys.path)
_spec.loader.exec_module(grader)
# The script puts tools/ first on sys.path, for running it from a clone; the tests use the
# installed casebank, and a later test's inspect_ai task is named by where it imports from.
sys.path[:] = _path

GOLD = "Acute inferior ST-elevation myocardial infarction"
MUST = ["ECG", "Troponin", "CBC"]
ANSWERS = {  # archetype: (diagnosis, tests, made-up rating)
    "expert": (GOLD, MUST, 10),
    "synonym": ("Inferior STEMI", MUST, 9),
    "over_investigation": (GOLD, [*MUST, "Urinalysis", "Elective stress test"], 6),
    "wrong_dx": ("Aortic dissection", MUST, 3),
    "dangerous": (GOLD, MUST, 1),
}


def test_rank_statistics_on_known_values() -> None:
    x, y = [1, 2, 3, 4, 5], [2, 1, 4, 3, 5]
    assert grader.spearman(x, y) == pytest.approx(0.8)
    assert grader.kendall(x, y) == pytest.approx(0.6)
    assert grader.ranks([3, 1, 3, 2]) == [3.5, 1.0, 3.5, 2.0]
    assert grader.kendall([1, 1, 2], [1, 2, 3]) == pytest.approx(2 / math.sqrt(6))
    assert math.isnan(grader.spearman([1], [2]))


@pytest.fixture
def fixture_set(tmp_path: Path) -> tuple[Path, Path]:
    root = tmp_path / "root"
    (root / "cases").mkdir(parents=True)
    shutil.copy(FIXTURES / "catalog.yaml", root / "catalog.yaml")
    data = tmp_path / "data"
    data.mkdir()
    rows, ratings, verdicts = [], [], []
    for case_id, split in (("alpha", "tuning"), ("beta", "held_out")):
        text = VALID_CASE.replace("case_id: valid_case", f"case_id: {case_id}", 1)
        (root / "cases" / f"{case_id}.yaml").write_text(text, encoding="utf-8")
        for archetype, (diagnosis, tests, rating) in ANSWERS.items():
            sid = f"{case_id}-{archetype}"
            rows.append(
                {"id": sid, "case_id": case_id, "version": 1, "archetype": archetype,
                 "split": split, "diagnosis": diagnosis, "tests": tests, "plan": ["Aspirin"]}
            )  # fmt: skip
            ratings.append({"id": sid, "rating": rating, "reason": "made up for the test"})
            for item, met in (("treatment.1", True), ("treatment.2", True),
                              ("contraindication.1", False),
                              ("critical.1", archetype == "dangerous")):  # fmt: skip
                verdicts.append(
                    {"case_id": case_id, "version": 1, "item": item, "met": met,
                     "judge": "fixture", "run": sid}
                )  # fmt: skip
    lines = "".join(json.dumps(r) + "\n" for r in rows)
    (data / "submissions.jsonl").write_text(lines, encoding="utf-8")
    (data / "ratings.yaml").write_text(json.dumps({"ratings": ratings}), encoding="utf-8")
    verdict_lines = "".join(json.dumps(v) + "\n" for v in verdicts)
    (data / "verdicts.jsonl").write_text(verdict_lines, encoding="utf-8")
    return data, root


def run(capsys: pytest.CaptureFixture[str], *argv: Any) -> tuple[int, str, str]:
    code = grader.main([str(a) for a in argv])
    out, err = capsys.readouterr()
    return code, out, err


def test_the_report_per_split(
    fixture_set: tuple[Path, Path], capsys: pytest.CaptureFixture[str]
) -> None:
    data, root = fixture_set
    code, out, _ = run(capsys, "--data", data, "--root", root)
    assert code == 0
    tuning = out.split("== tuning:")[1].split("== held_out:")[0]
    assert "5 of 5 submission(s) rated, 5 fully scored" in tuning
    # expert 1.0 = synonym 1.0 > over-investigator > wrong diagnosis > dangerous (0, capped)
    assert "expert above over-investigator in 1 of 1 case(s) both scored" in tuning
    assert "(on diagnostics alone: 1 of 1)" in tuning
    assert "dangerous answers capped in 1 of 1 (0 await a verdict)" in tuning
    # The ratings order synonym (9) above the equal-scored expert (10) is a tie: half a pair.
    assert "pairwise accuracy 0.950 over 10 pair(s) of one case" in tuning
    assert "pairs the score orders against the rating: 1" in tuning
    assert "alpha-expert expert (rating 10, score 1.00) below alpha-synonym" in tuning
    assert "== all: 10 of 10 submission(s) rated, 10 fully scored" in out


def test_the_figures_match_the_rank_statistics(fixture_set: tuple[Path, Path]) -> None:
    data, root = fixture_set
    rows, ratings, verdicts = grader.read_inputs(data)
    scored = grader.score_rows(rows, verdicts, root, "casebank-score/2")
    found = grader.figures(rows, ratings, scored)
    pairs = [(scored[r["id"]].score, ratings[r["id"]]) for r in rows]
    assert found["spearman"] == pytest.approx(grader.spearman(*zip(*pairs, strict=True)))
    assert found["kendall"] == pytest.approx(grader.kendall(*zip(*pairs, strict=True)))
    assert found["spearman"] > 0.9


def test_missing_ratings_say_what_is_needed(
    fixture_set: tuple[Path, Path], capsys: pytest.CaptureFixture[str]
) -> None:
    data, root = fixture_set
    (data / "ratings.yaml").unlink()
    code, _, err = run(capsys, "--data", data, "--root", root)
    assert code == 1 and "no ratings yet" in err and "rating (0-10)" in err


def test_a_verdict_on_no_submission_is_refused(
    fixture_set: tuple[Path, Path], capsys: pytest.CaptureFixture[str]
) -> None:
    data, root = fixture_set
    with (data / "verdicts.jsonl").open("a", encoding="utf-8") as out:
        out.write(json.dumps({"case_id": "alpha", "version": 1, "item": "treatment.1",
                              "met": True, "judge": "x", "run": "nobody"}) + "\n")  # fmt: skip
    code, _, err = run(capsys, "--data", data, "--root", root)
    assert code == 1 and "a verdict on alpha@1 in run `nobody`, which has no submission" in err


def test_the_shipped_set_still_scores_and_agrees_with_the_physician() -> None:
    """The real set against the working tree's cases: every answer scores in full (a case
    whose rubric changed needs its verdicts again), and the agreement measured when the
    verdicts came in holds (docs/scoring.md). Floors sit below the measured figures; a change
    that breaks one is a finding to look at, not a floor to lower."""
    data = ROOT / "tests" / "data" / "grader-validation"
    rows, ratings, verdicts = grader.read_inputs(data)
    scored = grader.score_rows(rows, verdicts, ROOT, "casebank-score/2")
    found = grader.figures(rows, ratings, scored)
    assert found["scored"] == found["submissions"] == 110
    assert found["spearman"] >= 0.85  # measured 0.888
    assert found["pairwise_accuracy"] >= 0.88  # measured 0.905
    assert found["expert_over_investigator"] == (22, 22)
    capped, waiting, dangerous = found["danger_capped"]
    assert waiting == 0 and dangerous == 22 and capped >= 20
    held_out = [r for r in rows if r["split"] == "held_out"]
    assert grader.figures(held_out, ratings, scored)["spearman"] >= 0.88  # measured 0.909
