"""Scoring method 2 at the library level: test credit as the oracle answers, examinations, the
burden penalty, process, a pending diagnosis, runs and paired comparisons; and method 1
reproduced exactly as it was published."""

from __future__ import annotations

import dataclasses
import json
import random
from pathlib import Path
from typing import Any

import pytest
import yaml

from casebank.format.catalog import Catalog, build_catalog
from casebank.serve import bootstrap, score
from casebank.serve.workup import BASE_PENALTY, order_penalty
from conftest import FIXTURES, VALID_CASE

DATA = Path(__file__).parent / "data"
GOLD = "Acute inferior ST-elevation myocardial infarction"
MUST = ("ECG", "Troponin", "CBC")


@pytest.fixture(scope="module")
def catalog() -> Catalog:
    return build_catalog(yaml.safe_load((FIXTURES / "catalog.yaml").read_text(encoding="utf-8")))


def case_data(old: str = "", new: str = "", case_id: str = "alpha") -> dict[str, Any]:
    text = VALID_CASE.replace("case_id: valid_case", f"case_id: {case_id}", 1)
    if old:
        assert text.count(old) == 1, old
        text = text.replace(old, new)
    data: dict[str, Any] = yaml.safe_load(text)
    return data


def key(catalog: Catalog, data: dict[str, Any] | None = None, case_id: str = "alpha") -> Any:
    return score.prepare(case_id, 1, f"hash-{case_id}", data or case_data(case_id=case_id), catalog)


def submit(case_id: str = "alpha", **fields: Any) -> score.Submission:
    given = {"diagnosis": GOLD, "tests": MUST, "plan": ("Aspirin",)} | fields
    return score.Submission(
        1,
        case_id,
        1,
        given.pop("diagnosis"),
        tuple(given.pop("tests")),
        tuple(given.pop("plan")),
        **given,
    )


def scored(catalog: Catalog, submission: score.Submission, data: Any = None, **kw: Any) -> Any:
    keys = {(submission.case_id, 1): key(catalog, data, submission.case_id)}
    [result] = score.score_all([submission], kw.pop("judgements", []), keys, catalog, **kw)
    return result


# --- method 1, exactly ---------------------------------------------------------------------


def test_method_1_reproduces_the_published_report_exactly(catalog: Catalog) -> None:
    golden = json.loads((DATA / "score-method-1.json").read_text(encoding="utf-8"))
    raw = "".join(json.dumps(s) + "\n" for s in golden["submissions"]).encode()
    submissions, problems = score.read_submissions(raw, "s")
    verdicts, bad = score.read_judgements(
        "".join(json.dumps(j) + "\n" for j in golden["judgements"]).encode(), "j"
    )
    assert problems == bad == []
    keys = {(c, 1): key(catalog, case_id=c) for c in ("alpha", "beta", "gamma")}
    found = score.score_all(submissions, verdicts, keys, catalog, method="casebank-score/1")
    report = {"cases": [c.to_data() for c in found], "summary": score.summary(found, 3)}
    assert json.loads(json.dumps(report)) == golden["report"]


# --- test credit ---------------------------------------------------------------------------


@pytest.mark.parametrize(
    "tests,hit",
    [
        (["12-lead ECG", "hs-troponin", "FBC"], 3),  # aliases
        (["ECG", "troponin at 0 and 1 h", "CBC"], 3),  # the timing taken out
        (["ECG", "Serial troponins (x2)", "Hemoglobin"], 3),  # a member of the listed panel
        (["ECG", "Cardiac monitoring"], 1),  # answered from the ECG's result: credits the ECG
        (["Tarot reading"], 0),
    ],
)
def test_an_order_meets_what_the_oracle_answers_it_from(
    catalog: Catalog, tests: list[str], hit: int
) -> None:
    found = scored(catalog, submit(tests=tuple(tests)))
    assert len(found.details["must_order_hit"]) == hit


def test_any_of_alternatives_are_met_by_one_of_them(catalog: Catalog) -> None:
    data = case_data(
        "must_order: [ECG, Troponin, CBC]",
        "must_order: [ECG, Troponin, {any_of: [CBC, Urinalysis]}]",
    )
    found = scored(catalog, submit(tests=("ECG", "Troponin", "Urinalysis")), data)
    assert found.details["must_order_hit"] == [
        "ECG",
        "Troponin",
        "Complete blood count or Urinalysis",
    ]
    assert found.components["diagnostics"] == 1.0


def test_an_examination_meets_a_bedside_must_order_item(catalog: Catalog) -> None:
    data = case_data(
        "must_order: [ECG, Troponin, CBC]", "must_order: [ECG, Troponin, CBC, Vital signs]"
    )
    data["physical_exam"]["vital_signs"] = {"heart rate": "98/min"}
    without = scored(catalog, submit(), data)
    assert without.details["must_order_missed"] == ["Vital signs"]
    found = scored(catalog, submit(examined=("vital signs",)), data)
    assert found.details["must_order_credited_by"]["Vital signs"] == "examination"
    assert found.components["diagnostics"] == 1.0
    # An examination never stands for a laboratory test.
    data["physical_exam"]["troponin"] = "raised"
    found = scored(catalog, submit(tests=("ECG", "CBC"), examined=("full",)), data)
    assert "Troponin" in found.details["must_order_missed"]


# --- the burden penalty --------------------------------------------------------------------


def test_every_order_outside_must_and_optional_costs_by_its_burden(catalog: Catalog) -> None:
    urinalysis = catalog.resolve("Urinalysis")
    penalty = order_penalty(urinalysis)
    assert penalty >= BASE_PENALTY
    found = scored(catalog, submit(tests=(*MUST, "Urinalysis", "Chest X-ray")))
    assert found.details["optional_ordered"] == ["Chest X-ray"]  # optional: free
    assert [u["test"] for u in found.details["unneeded_orders"]] == ["Urinalysis"]
    assert found.components["diagnostics"] == round(1 - penalty, 6)
    # A should-not-order test keeps its larger penalty.
    rash = scored(catalog, submit(tests=(*MUST, "Elective stress test")))
    assert rash.components["diagnostics"] == 1 - score.SHOULD_NOT_ORDER_PENALTY
    assert max(order_penalty(t) for t in catalog.tests) < score.SHOULD_NOT_ORDER_PENALTY


def test_a_zero_recall_does_not_hide_the_penalty(catalog: Catalog) -> None:
    items = [i.id for i in key(catalog).items]
    judged = [score.Judgement(1, "alpha", 1, i, not i.startswith("c"), "j") for i in items]
    blank = scored(catalog, submit(tests=()), judgements=judged)
    scattered = scored(
        catalog, submit(tests=("Urinalysis", "Elective stress test")), judgements=judged
    )
    assert blank.components["diagnostics"] == scattered.components["diagnostics"] == 0.0
    assert scattered.details["over_investigation_from_score"] > 0
    assert scattered.score < blank.score  # the penalty the component could not absorb
    assert scattered.score == round(blank.score - 0.25 * scattered.details["over_investigation"], 6)


def test_the_work_up_reports_cost_and_burden(catalog: Catalog) -> None:
    found = scored(catalog, submit(tests=(*MUST, "Chest X-ray")))
    assert found.workup == {
        "tests": 4,
        "least_cost": 66.82,
        "cost": {"USD": 66.82},
        "cost_tiers": {},
        "cost_unknown": 0,
        "radiation_msv": 0.1,
        "radiation_unknown": 0,
        "invasive": 0,
        "contrast": 0,
        "sedation": 0,
    }


# --- judged parts --------------------------------------------------------------------------


def test_process_is_judged_and_reported_apart_from_the_weighted_score(catalog: Catalog) -> None:
    data = case_data(
        'critical_safety_errors: ["Discharging the patient"]',
        'critical_safety_errors: ["Discharging the patient"]\n'
        '  process: ["Asks about the onset of the pain", "Examines the chest"]',
    )
    items = [i.id for i in key(catalog, data).items]
    assert items[-2:] == ["process.1", "process.2"]
    verdicts = [
        score.Judgement(1, "alpha", 1, i, i in ("treatment.1", "treatment.2", "process.1"), "j")
        for i in items
    ]
    found = scored(catalog, submit(), data, judgements=verdicts)
    assert found.process == 0.5 and found.score == 1.0
    assert "process" not in found.components


def test_a_diagnosis_the_matcher_cannot_decide_waits_for_a_judge(catalog: Catalog) -> None:
    waiting = scored(catalog, submit(diagnosis="Inferior wall myocardial injury"))
    assert waiting.components["diagnosis"] is None
    assert waiting.details["items_pending"][0] == score.DIAGNOSIS_ITEM
    yes = score.Judgement(1, "alpha", 1, score.DIAGNOSIS_ITEM, True, "j")
    found = scored(catalog, submit(diagnosis="Inferior wall myocardial injury"), judgements=[yes])
    assert found.components["diagnosis"] == 1.0
    no = score.Judgement(1, "alpha", 1, score.DIAGNOSIS_ITEM, False, "j")
    found = scored(catalog, submit(diagnosis="Inferior wall myocardial injury"), judgements=[no])
    assert found.components["diagnosis"] == 0.0


# --- runs and comparisons ------------------------------------------------------------------


def lines(*rows: dict[str, Any]) -> bytes:
    return "".join(json.dumps(r) + "\n" for r in rows).encode()


def row(case_id: str = "alpha", **more: Any) -> dict[str, Any]:
    return {
        "case_id": case_id,
        "version": 1,
        "diagnosis": GOLD,
        "tests": list(MUST),
        "plan": [],
    } | more


def test_one_file_holds_one_submission_per_case_and_run() -> None:
    found, problems = score.read_submissions(
        lines(row(run="a"), row(run="b"), row(run="a"), row(run=3)), "s.jsonl"
    )
    assert [s.run for s in found] == ["a", "b"]
    assert [str(p) for p in problems] == [
        "s.jsonl:3: a second submission for alpha@1 in run `a` (the first is on line 1)",
        "s.jsonl:4: `run` is not text",
    ]


def test_optional_fields_are_checked_when_given() -> None:
    _, problems = score.read_submissions(
        lines(row(examined="vital signs"), row("beta", transcript=[{"role": "doctor"}])), "s"
    )
    assert [str(p) for p in problems] == [
        "s:1: `examined` is not a list of texts",
        's:2: `transcript` is not a list of {"role": text, "text": text} objects',
    ]


def test_summaries_and_a_paired_comparison_by_run(catalog: Catalog) -> None:
    keys = {(c, 1): key(catalog, case_id=c) for c in ("alpha", "beta", "gamma")}
    subs, _ = score.read_submissions(
        lines(
            *(row(c, run="careful") for c in ("alpha", "beta", "gamma")),
            *(row(c, run="rash", tests=[*MUST, "Elective stress test"]) for c in ("alpha", "beta")),
        ),
        "s",
    )
    verdicts = [
        score.Judgement(1, c, 1, i.id, i.kind == "treatment", "j", run)
        for run, cases in (("careful", ("alpha", "beta", "gamma")), ("rash", ("alpha", "beta")))
        for c in cases
        for i in keys[(c, 1)].items
    ]
    found = score.score_all(subs, verdicts, keys, catalog)
    summary = score.summary(found, 3)
    assert set(summary["runs"]) == {"careful", "rash"}
    assert summary["runs"]["careful"]["mean"] == 1.0 and summary["runs"]["rash"]["n"] == 2
    assert [r["run"] for r in summary["cost_table"]] == ["careful", "rash"]
    compared = score.compare(found, "careful", "rash")
    assert (compared["paired"], compared["only_a"], compared["only_b"]) == (2, 1, 0)
    assert compared["difference"]["diagnostics"]["mean"] == -0.25
    assert compared["difference"]["score"]["mean"] == -0.0625
    assert compared["difference"]["score"]["ci95"] == [-0.0625, -0.0625]


def test_the_bootstrap_with_numpy_gives_the_published_interval() -> None:
    rng = random.Random(7)
    for n in (2, 5, 68, 301):
        values = [round(rng.random(), 3) for _ in range(n)]
        pure = bootstrap.intervals([values, values[::-1]], fast=False)
        assert bootstrap.intervals([values, values[::-1]]) == pure
        assert score.bootstrap_interval(values) == pure[0]
    assert bootstrap.intervals([[0.5]]) == [None]
    with pytest.raises(ValueError):
        bootstrap.intervals([[1.0, 2.0], [1.0]])


def test_the_bootstrap_keeps_its_published_numbers() -> None:
    """Pinned figures of the published method (seed 20260101, 2,000 resamples, the 50th and
    1,950th means): a faster bootstrap must give exactly these, on either path."""
    columns = [[(i * 37 % 101) / 100 for i in range(300)], [float(i % 2) for i in range(300)]]
    for fast in (True, False):
        assert bootstrap.intervals(columns, fast=fast) == [[0.467033, 0.532], [0.44, 0.556667]]
    assert bootstrap.interval([0.0, 1.0, 0.5]) == [0.0, 1.0]


@pytest.mark.parametrize("method", score.METHODS)
def test_scoring_in_worker_processes_gives_the_same_report(
    catalog: Catalog, method: str, monkeypatch: pytest.MonkeyPatch
) -> None:
    """From parallel.POOL_FROM submissions on, forked workers score them: the report is the
    same, score for score and in the same order, as scoring them here, and as scoring each
    submission alone."""
    import multiprocessing

    from casebank import parallel

    if "fork" not in multiprocessing.get_all_start_methods():
        pytest.skip("this platform cannot fork: submissions are always scored in-process")
    cases = ("alpha", "beta", "gamma")
    keys = {(c, 1): key(catalog, case_id=c) for c in cases}
    rng = random.Random(3)
    tests = [*MUST, "Elective stress test", "Chest X-ray", "No such test"]
    diagnoses = [GOLD, "Inferior STEMI", "Pericarditis", "Inferior wall myocardial injury", ""]
    subs, problems = score.read_submissions(
        lines(
            *(
                row(
                    c,
                    run=f"run-{n}",
                    diagnosis=rng.choice(diagnoses),
                    tests=rng.sample(tests, rng.randint(0, len(tests))),
                )
                for n in range(40)
                for c in cases
            )
        ),
        "s",
    )
    assert problems == []
    verdicts = [
        score.Judgement(1, c, 1, i.id, rng.random() < 0.5, "j", f"run-{n}")
        for n in range(40)
        for c in cases
        for i in keys[(c, 1)].items
        if rng.random() < 0.8
    ]

    def report() -> list[dict[str, Any]]:
        fresh = {(c, 1): key(catalog, case_id=c) for c in cases}  # no key read beforehand
        return [c.to_data() for c in score.score_all(subs, verdicts, fresh, catalog, method)]

    one_by_one = [c for s in subs for c in score.score_all([s], verdicts, keys, catalog, method)]
    here = [c.to_data() for c in sorted(one_by_one, key=lambda c: (c.run, c.key.case_id))]
    monkeypatch.setattr(parallel, "POOL_FROM", 10**9)
    assert report() == here
    forked: list[int] = []
    real = parallel.map_chunks

    def counting(*args: Any, **kwargs: Any) -> Any:
        forked.append(kwargs["parallel"])
        return real(*args, **kwargs)

    monkeypatch.setattr(parallel, "POOL_FROM", 10)
    monkeypatch.setattr(parallel, "workers", lambda jobs=None: 2)
    monkeypatch.setattr(parallel, "map_chunks", counting)
    assert report() == here
    assert forked == [True]
    # Each case's record of the JSON report written in the workers: the same report.
    fresh = {(c, 1): key(catalog, case_id=c) for c in cases}
    encoded = score.score_all(subs, verdicts, fresh, catalog, method, encode=True)
    assert all(c.json_text is not None for c in encoded)
    whole = {"release": "1.0.0", "cases": encoded, "summary": score.summary(encoded, 3)}
    assert score.report_json(whole) == json.dumps(
        {**whole, "cases": here}, indent=2, ensure_ascii=False
    )
    assert len(here) == 120 and len({c["score"] for c in here}) > 3  # three chunks of 50


def test_an_oracle_without_views_answers_every_order_as_the_served_one_does() -> None:
    """Scoring and validation ask the oracle which test, source and listed result answer each
    order (and whether a result exists), never for the served result, so their oracle leaves
    the result out (``views=False``). On every
    shipped case, for every test the case expects, lists or rules out and a sample of the
    catalog, the two oracles agree on everything but the result."""
    from dataclasses import replace

    from casebank.format.catalog import load_catalog
    from casebank.format.loader import load_data
    from casebank.format.orders import orders
    from casebank.serve.oracle import Oracle

    root = Path(__file__).resolve().parent.parent
    shipped = load_catalog((root / "catalog.yaml").read_bytes(), "catalog.yaml")
    sample = [t.name for t in shipped.tests[::23]]
    compared = 0
    for path in sorted((root / "cases").glob("*.yaml")):
        data = load_data(f"cases/{path.name}", path.read_bytes())
        names = [*sample, *data.get("investigations", {}).get("results", {})]
        for kind in ("must_order", "optional", "should_not_order"):
            names += [n.name for n in orders(data, "investigations", "expected", kind)]
        served, bare = Oracle(data, shipped), Oracle(data, shipped, views=False)
        for name in dict.fromkeys(names):
            full, located = served.answer(name), bare.answer(name)
            assert located == replace(full, result=located.result), (path.name, name)
            assert (located.result is None) == (full.result is None), (path.name, name)
            compared += 1
    assert compared > 5_000


def test_data_built_to_last_is_frozen_and_the_collector_restored() -> None:
    """`parallel.lasting` pauses the cyclic collector while a command builds what it keeps,
    then freezes it: the collector is as it was before (enabled or not), even after a
    failure, and what was built is never walked again."""
    import gc

    from casebank import parallel

    # (Never gc.unfreeze() here: it would hand what other tests' commands froze, garbage
    # included, back to the collector, in the middle of another test.)
    assert gc.isenabled()
    frozen = gc.get_freeze_count()
    try:
        with parallel.lasting():
            assert not gc.isenabled()
            kept = [{"n": i} for i in range(1_000)]
        assert gc.isenabled() and gc.get_freeze_count() >= frozen + len(kept)
        gc.disable()
        with pytest.raises(RuntimeError), parallel.lasting():
            raise RuntimeError("a command that fails while loading")
        assert not gc.isenabled()
    finally:
        gc.enable()


def test_what_a_score_builds_of_its_case_is_built_to_last(
    catalog: Catalog, monkeypatch: pytest.MonkeyPatch
) -> None:
    """A case's data, diagnosis key and work-up are built on its first score and kept for the
    run. In a forked scoring worker they are built with the cyclic collector paused
    (`parallel.lasting`), or each collection walks every case built so far again; scored
    in-process (a small run, or one sample of an evaluation) the collector is left as it is,
    so that nothing of a long-lived process is frozen."""
    import gc
    import multiprocessing

    from casebank import parallel

    if "fork" not in multiprocessing.get_all_start_methods():
        pytest.skip("this platform cannot fork: submissions are always scored in-process")
    real = score.score_v2

    def recording(*args: Any) -> Any:
        collecting = "on" if gc.isenabled() else "off"
        return dataclasses.replace(real(*args), run=collecting)

    monkeypatch.setattr(score, "score_v2", recording)
    assert gc.isenabled()
    assert scored(catalog, submit()).run == "on"
    assert gc.isenabled()
    monkeypatch.setattr(parallel, "POOL_FROM", 2)
    monkeypatch.setattr(parallel, "workers", lambda jobs=None: 2)
    keys = {("alpha", 1): key(catalog)}
    done = score.score_all([submit(), submit(run="b")], [], keys, catalog)
    assert [c.run for c in done] == ["off", "off"] and gc.isenabled()


def test_a_case_key_travels_to_a_spawned_process(catalog: Catalog) -> None:
    """A key reads its case on first use, through a picklable reader: one pickled for a
    process that does not fork reads the same data there."""
    import pickle

    prepared = key(catalog)
    copied = pickle.loads(pickle.dumps(prepared))
    assert copied.data == prepared.data and copied.weights == prepared.weights


def test_the_json_report_is_written_as_json_dumps_writes_it(catalog: Catalog) -> None:
    """`report_json` gives the report byte for byte as `json.dumps(indent=2)` does, whether a
    case's record was written where it was scored or not, for no case, one case, several
    runs, and texts that JSON escapes (a run named like the marker the cases go in)."""
    keys = {("alpha", 1): key(catalog)}
    odd = "\x00cases\x00 «Ünïcode» \u2028"
    subs = [submit(), submit(run="b"), submit(run=odd, diagnosis="Pericarditis")]
    for given in ([], subs[:1], subs):
        for encode in (False, True):
            scored = score.score_all(given, [], keys, catalog, encode=encode)
            report = {
                "release": "1.0.0",
                "scorer": {"name": "casebank", "method": score.METHOD},
                "cases": scored,
                "summary": score.summary(scored, 1),
                "compare": {"a": odd},
            }
            expected = {**report, "cases": [c.to_data() for c in scored]}
            assert score.report_json(report) == json.dumps(expected, indent=2, ensure_ascii=False)
