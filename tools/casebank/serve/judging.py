"""The judge view: one rendering of a submission, whoever judges it.

A judge (a clinician panel, `casebank judge-items`, the harness's judge model) sees the same
thing: the diagnosis, every order (those made during the consultation and those in the final
answer, each once, marked by where it was made), the examinations, the plan, and the
transcript when there is one. A verdict on "started insulin before the potassium was known"
can then not depend on which path the answer came by.
"""

from __future__ import annotations

from collections.abc import Sequence
from typing import Any

from casebank.serve.score import Submission, Turn

NONE_GIVEN = "(none given)"


def judge_record(submission: Submission) -> dict[str, Any]:
    """The view as data: what `casebank judge-view --format json` prints for a submission."""
    record: dict[str, Any] = {
        "case_id": submission.case_id,
        "version": submission.version,
    }
    if submission.run:
        record["run"] = submission.run
    record |= {
        "diagnosis": submission.diagnosis,
        "orders": orders_of(submission.ordered, submission.tests),
        "examined": list(submission.examined),
        "plan": list(submission.plan),
        "transcript": [{"role": t.role, "text": t.text} for t in submission.transcript],
    }
    return record


def orders_of(ordered: Sequence[str], tests: Sequence[str]) -> list[dict[str, str]]:
    """Every order once, in order: ``consultation`` (made while seeing the patient),
    ``final answer`` (only named in the answer), or ``both``."""
    final = {t.strip().casefold() for t in tests if t.strip()}
    made = {t.strip().casefold() for t in ordered if t.strip()}
    out: list[dict[str, str]] = []
    seen: set[str] = set()
    for name in (*ordered, *tests):
        key = name.strip().casefold()
        if not key or key in seen:
            continue
        seen.add(key)
        where = "both" if key in made and key in final else "consultation"
        out.append({"test": name.strip(), "when": where if key in made else "final answer"})
    return out


def judge_view(submission: Submission) -> str:
    """The view as text, for a person or a judge model."""
    return render(judge_record(submission))


def render(record: dict[str, Any]) -> str:
    lines = [f"Diagnosis: {record['diagnosis'] or NONE_GIVEN}"]
    orders = record["orders"]
    lines.append("Tests ordered:" + ("" if orders else f" {NONE_GIVEN}"))
    lines += [f"- {o['test']} ({o['when']})" for o in orders]
    if record["examined"]:
        lines.append(f"Examined: {'; '.join(record['examined'])}")
    lines.append("Plan:" + ("" if record["plan"] else f" {NONE_GIVEN}"))
    lines += [f"- {step}" for step in record["plan"]]
    turns = record["transcript"]
    if turns:
        lines.append("Transcript:")
        lines += [f"{t['role']}: {t['text']}" for t in turns]
    else:
        lines.append("Transcript: (none: judge from the answer above)")
    return "\n".join(lines) + "\n"


def transcript_of(turns: Sequence[tuple[str, str]]) -> tuple[Turn, ...]:
    return tuple(Turn(role, text) for role, text in turns)
