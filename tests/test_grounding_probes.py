"""The grounding probe set: every blind probe (tests/data/grounding-probes.yaml) through the oracle.

A probe is a natural order ("FBC", "obs", "pain score", "QTc") put to a shipped case, with the
clinically correct expectation written by a physician who read only the case. The oracle's
answer is judged against it:

- ``unknown_test`` is wrong: the order was not understood;
- an answer that serves no result (``unavailable``, or a listed result that is pending, not
  done or unavailable) is right only where the probe expects it or accepts it
  (``unavailable_ok``); it is counted, so the honest gaps are visible;
- a served result must contain every ``contains`` phrase and, for ``abnormal`` or ``normal``,
  be judged so by its flags, its value against its range, or its words
  (``casebank.format.results.judgement``); a result that says neither is wrong too, since a
  doctor could not tell.

A probe whose answer was judged right after all carries a recorded `disagreement` (why the
answer served is held to be right); it is counted apart, never as right, and never changes the
probe. The figures are printed per split (``tuning``, ``held_out``); the test fails on any wrong
answer.
"""

from __future__ import annotations

import json
import re
from collections import Counter
from collections.abc import Mapping
from functools import cache
from pathlib import Path
from typing import Any

import pytest
import yaml

from casebank.format.catalog import Catalog, build_catalog
from casebank.format.loader import load_document
from casebank.format.results import judgement
from casebank.serve.oracle import Answer, Oracle

ROOT = Path(__file__).resolve().parent.parent
PROBES = Path(__file__).parent / "data" / "grounding-probes.yaml"
NOT_SERVED = ("pending", "not_done", "unavailable")
_NUMBER = re.compile(r"-?\d+(?:\.\d+)?")


@cache
def _catalog() -> Catalog:
    loaded = load_document("catalog.yaml", (ROOT / "catalog.yaml").read_bytes())
    assert loaded.document is not None
    return build_catalog(loaded.document.data)


@cache
def _oracle(case_id: str) -> Oracle:
    path = ROOT / "cases" / f"{case_id}.yaml"
    loaded = load_document(str(path), path.read_bytes())
    assert loaded.document is not None, loaded.problems
    return Oracle(loaded.document.data, _catalog())


def probes() -> list[dict[str, Any]]:
    data = yaml.safe_load(PROBES.read_text(encoding="utf-8"))
    return list(data["probes"])


def combined(answers: list[Answer]) -> Answer:
    """Several answers to one compound order ("B12 and folate") judged as one: served if any
    part is served, with every served part's result in it."""
    if len(answers) == 1:
        return answers[0]
    served = [a for a in answers if _served(a)]
    if not served:
        return answers[0]
    result = {"type": "panel", "components": {a.request: a.result for a in served}}
    return Answer(answers[0].request, None, served[0].source, None, result)


def _served(answer: Answer) -> bool:
    result = answer.result
    if answer.source in ("unavailable", "unknown_test") or result is None:
        return False
    return result.get("status", "final") not in NOT_SERVED


def verdict(probe: Mapping[str, Any], answer: Answer) -> tuple[str, str]:
    """``right``, ``unavailable`` (an accepted honest gap) or ``wrong``, and why."""
    if answer.source == "unknown_test":
        return "wrong", "not understood as a catalog test"
    expect = probe["expect"]
    if not _served(answer):
        if expect == "unavailable" or probe.get("unavailable_ok"):
            return "unavailable", answer.reason or "no result"
        return "wrong", f"no result served ({answer.reason or answer.source})"
    if expect == "unavailable":
        return "wrong", "a result was served where none should be"
    assert answer.result is not None
    # What the doctor is shown: the test answered ("Chlamydia trachomatis NAAT") and its result.
    shown = (answer.test or "", json.dumps(answer.result, ensure_ascii=False))
    text = " ".join((*shown, *_pressures(answer.result)))
    text = text.casefold()
    numbers = {float(n) for n in _NUMBER.findall(text)}
    missing = [
        p
        for p in probe.get("contains") or []
        if str(p).casefold() not in text
        and not (_NUMBER.fullmatch(str(p)) and float(str(p)) in numbers)  # 2.40 is 2.4
    ]
    if missing:
        return "wrong", f"does not contain {missing}"
    if expect in ("abnormal", "normal"):
        judged = judgement(answer.result)
        if judged != expect:
            return "wrong", f"served as {judged}, expected {expect}"
    return "right", ""


def _pressures(value: Any) -> list[str]:
    """A blood pressure given as systolic and diastolic members, read as a doctor reads it
    ("116/72"), wherever a served panel holds both."""
    found: list[str] = []
    if isinstance(value, dict):
        members = value.get("components")
        if isinstance(members, dict):
            high = (members.get("Systolic blood pressure") or {}).get("value")
            low = (members.get("Diastolic blood pressure") or {}).get("value")
            if high is not None and low is not None:
                found.append(f"{high}/{low}")
        for item in value.values():
            found += _pressures(item)
    elif isinstance(value, list):
        for item in value:
            found += _pressures(item)
    return found


def outcome(probe: Mapping[str, Any]) -> tuple[str, str]:
    """The verdict on a probe, with a recorded disagreement counted as such."""
    answer = combined(_oracle(probe["case"]).answers(probe["order"]))
    found, why = verdict(probe, answer)
    if found == "wrong" and probe.get("disagreement"):
        return "disagreement", why
    return found, why


def run_all() -> dict[str, Counter[str]]:
    tally: dict[str, Counter[str]] = {}
    for probe in probes():
        tally.setdefault(probe["split"], Counter())[outcome(probe)[0]] += 1
    return tally


def test_the_probe_set_is_large_blind_and_covers_every_case() -> None:
    found = probes()
    cases = {p.stem for p in (ROOT / "cases").glob("*.yaml")}
    assert len(found) >= 300
    assert {p["case"] for p in found} == cases
    assert {p["split"] for p in found} == {"tuning", "held_out"}
    for probe in found:
        assert probe["expect"] in ("abnormal", "normal", "contains", "unavailable"), probe
        assert probe["expect"] != "contains" or probe.get("contains"), probe
        assert probe.get("why"), probe
    # A disagreement is a finding about a few probes, never a way to pass many.
    assert sum(1 for p in found if p.get("disagreement")) <= 10


@pytest.mark.parametrize("probe", probes(), ids=lambda p: f"{p['case']}:{p['order']}:{p['split']}")
def test_probe(probe: dict[str, Any]) -> None:
    found, why = outcome(probe)
    assert found != "wrong", f"{probe['order']!r} in {probe['case']}: {why}\n{probe['why']}"


def test_report_the_figures(capsys: pytest.CaptureFixture[str]) -> None:
    """Prints the figures per split (shown with ``-s`` or in the summary of a failing run)."""
    tally = run_all()
    with capsys.disabled():
        for split in ("tuning", "held_out"):
            counts = tally.get(split, Counter())
            total = sum(counts.values())
            print(
                f"\ngrounding probes, {split}: {total} probes, {counts['right']} right, "
                f"{counts['unavailable']} honestly unavailable, {counts['disagreement']} recorded "
                f"disagreements, {counts['wrong']} wrong"
            )
    assert sum(c["wrong"] for c in tally.values()) == 0
