"""Scoring: weights are known components in [0, 1] that sum to 1; answers are real variants."""

from __future__ import annotations

import re
from collections.abc import Iterator

from casebank.check.problem import Severity
from casebank.check.registry import CaseContext, Finding, rule
from casebank.format.catalog import did_you_mean, fold
from casebank.format.schema import SCORE_COMPONENTS

COMPONENTS = SCORE_COMPONENTS  # declared once, with the schema
WEIGHT_TOLERANCE = 1e-6


def _numeric_weights(ctx: CaseContext) -> dict[str, float]:
    weights = ctx.get("scoring", "weights")
    if not isinstance(weights, dict):
        return {}
    return {
        k: float(v)
        for k, v in weights.items()
        if isinstance(v, (int, float)) and not isinstance(v, bool)
    }


@rule(
    "CB306",
    "weights-sum",
    Severity.ERROR,
    f"Scoring weights sum to 1.0 (within {WEIGHT_TOLERANCE}).",
)
def check_weights_sum(ctx: CaseContext) -> Iterator[Finding]:
    """Spec, section 5: the scoring weights sum to 1.0. The tolerance (one millionth) only absorbs
    floating-point rounding; 0.33 + 0.33 + 0.33 is not 1.

    Bad:

        weights: {diagnosis: 0.4, diagnostics: 0.3, treatment: 0.3, safety: 0.1}

    Good:

        weights: {diagnosis: 0.3, diagnostics: 0.3, treatment: 0.3, safety: 0.1}
    """
    weights = _numeric_weights(ctx)
    if not weights:
        return
    total = sum(weights.values())
    if abs(total - 1.0) > WEIGHT_TOLERANCE:
        yield Finding(
            ("scoring", "weights"),
            f"the scoring weights sum to {total:g}, not 1.0",
            "adjust the weights so they add up to exactly 1.0",
        )


@rule("CB409", "weight-out-of-range", Severity.ERROR, "A scoring weight outside [0, 1].")
def check_weight_range(ctx: CaseContext) -> Iterator[Finding]:
    """Each weight is a share of the score, between 0 and 1.

    Bad:

        weights: {diagnosis: 1.2, diagnostics: -0.2, treatment: 0, safety: 0}

    Good:

        weights: {diagnosis: 0.4, diagnostics: 0.2, treatment: 0.2, safety: 0.2}
    """
    for key, value in _numeric_weights(ctx).items():
        if not 0.0 <= value <= 1.0:
            yield Finding(
                ("scoring", "weights", key),
                f"weight `{key}` is {value:g}",
                "use a number from 0 to 1",
            )


@rule(
    "CB410",
    "unknown-score-component",
    Severity.ERROR,
    "A scoring weight for a component other than diagnosis, diagnostics, treatment, safety.",
)
def check_score_components(ctx: CaseContext) -> Iterator[Finding]:
    """Scores are comparable across cases only if every case weighs the same components.

    Bad:

        weights: {diagnoses: 0.4, diagnostics: 0.2, treatment: 0.2, safety: 0.2}

    Good:

        weights: {diagnosis: 0.4, diagnostics: 0.2, treatment: 0.2, safety: 0.2}
    """
    weights = ctx.get("scoring", "weights")
    if not isinstance(weights, dict):
        return
    for key in weights:
        if key not in COMPONENTS:
            yield Finding(
                ("scoring", "weights", key),
                f"`{key}` is not a scoring component{did_you_mean(key, COMPONENTS)}",
                f"use {', '.join(COMPONENTS)}",
                at_key=True,
            )


@rule(
    "CB411",
    "redundant-acceptable-answer",
    Severity.WARNING,
    "An acceptable answer that merely repeats the final diagnosis.",
)
def check_acceptable_answers(ctx: CaseContext) -> Iterator[Finding]:
    """Acceptable answers list the *other* ways to name the diagnosis; the final diagnosis itself
    is always accepted. A repeat (or a repeat within the list) adds nothing and hides a missing
    variant.

    Bad:

        final_diagnosis: "Pulmonary embolism"
        acceptable_answers: {final_diagnosis: ["Pulmonary embolism"]}

    Good:

        final_diagnosis: "Pulmonary embolism"
        acceptable_answers: {final_diagnosis: ["PE", "Pulmonary thromboembolism"]}
    """
    final = ctx.get("ground_truth", "final_diagnosis")
    seen = {fold(final)} if isinstance(final, str) else set()
    for path, answer in ctx.texts("scoring", "acceptable_answers", "final_diagnosis"):
        if fold(answer) in seen:
            what = (
                "repeats the final diagnosis"
                if isinstance(final, str) and fold(answer) == fold(final)
                else "is listed twice"
            )
            yield Finding(
                path,
                f"acceptable answer `{answer}` {what}",
                "remove it, or replace it with a genuine variant (abbreviation, "
                "synonym, more or less specific name)",
            )
        seen.add(fold(answer))


# --- critical safety errors a judge can decide ---------------------------------------------


def _wordset(text: str) -> frozenset[str]:
    return frozenset(text.split())


# What a critical safety error may begin with: an act the answer does (or a decision it makes).
_ACTS = _wordset(
    """giving starting prescribing discharging sending performing injecting transfusing
    cardioverting continuing restarting stopping advising allowing offering attempting using
    combining treating diagnosing attributing labelling labeling excluding sedating irrigating
    syringing ordering removing letting leaving relying recommending dismissing reassuring
    managing discontinuing increasing reducing lowering intubating operating inspecting
    administering thrombolysing switching arranging referring inserting telling delaying
    withholding omitting"""
)
# An omission: what the answer leaves undone. Critical only for a time-critical treatment.
_OMISSIONS = _wordset("not no failing failure omitting withholding delaying without")
_MISSED = frozenset(["missing", "overlooking"])
# What the doctor asks, examines or advises: judged from the transcript, as `process`.
_PROCESS = re.compile(
    r"\b(ask|asks|asking|asked|enquir\w*|inquir\w*|history[- ]taking|a history|examin\w*|"
    r"elicit\w*|"
    r"counsel\w*|safety[- ]?net\w*|warn\w*|advice|explain\w*|screen\w*|assess\w*)\b"
)
# Tests left undone: scored by diagnostics (must_order), not as a safety error.
_TEST_VERBS = _wordset(
    """check checking measure measuring test testing do doing order ordering send sending
    take taking
    image imaging monitor monitoring exclude excluding consider considering recognise
    recognising recognize recognizing"""
)
# Words that say when a treatment is due, which makes its omission decidable and critical.
_TIME = re.compile(
    r"\b(immediately|immediate|promptly|prompt|urgently|urgent|emergency|emergent|within|"
    r"before|until|delay\w*|first[- ]line|at once|at presentation|on arrival|on diagnosis|"
    r"on admission|"
    r"at the start|minutes?|hours?|days?|now)\b"
)


def _words(text: str) -> list[str]:
    return re.findall(r"[a-z0-9]+(?:-[a-z0-9]+)*", text.casefold())


def critical_error_problem(text: str) -> tuple[str, str] | None:
    """What makes a critical safety error undecidable, or not an act (message, hint)."""
    words = _words(text)
    lowered = text.casefold()
    if not words:
        return None
    if _PROCESS.search(lowered):
        return (
            "is about what the doctor asks, examines or advises, which the answer alone "
            "does not show",
            "move it to `scoring.process`, written as what a good consultation does "
            "(`Asks about red flags for ...`); keep here only the act it would lead to",
        )
    first = words[0]
    # The verb left undone: "Not measuring ...", "Failing to check ...", "No continuous
    # cardiac monitoring"; withholding, omitting and delaying name a treatment.
    after = words[2:3] if words[:2] in (["failing", "to"], ["failure", "to"]) else words[1:2]
    after = words[1:4] if first == "no" else after
    undone = first in ("not", "no", "failing", "failure") and set(after) & _TEST_VERBS
    if first in _MISSED or undone:
        return (
            "is a test or a diagnosis left undone, which diagnostics and the diagnosis "
            "already score",
            "list the test under `investigations.expected.must_order`, or name the harmful "
            "act it leads to (`Discharging without imaging ...`)",
        )
    if first in _OMISSIONS and first != "delaying" and not _TIME.search(lowered):
        return (
            "is an omission without a time: only leaving out a time-critical treatment is a "
            "critical safety error",
            "say when the treatment is due (`Not giving IM adrenaline immediately`, `within 1 "
            "hour of arrival`), or leave it to `management_gold.treatment_plan`",
        )
    if first not in _ACTS and first not in _OMISSIONS:
        return (
            "does not begin with an act a judge can find in the answer",
            "begin with what the answer does (`Giving ...`, `Starting ...`, `Discharging ...`) "
            "or, for a time-critical omission, `Not giving ... immediately`",
        )
    return None


@rule(
    "CB428",
    "critical-error-not-decidable",
    Severity.ERROR,
    "A critical safety error that is not an act, or a time-critical omission, a judge can decide.",
)
def check_critical_errors(ctx: CaseContext) -> Iterator[Finding]:
    """A critical safety error fails the whole answer, so a judge must be able to decide it from
    the answer or the transcript, and it must be harm: an act (giving, starting, discharging,
    delaying, withholding ...) or the omission of a time-critical treatment, with its time. What
    the doctor asks, examines or advises is judged separately as `scoring.process`; a test left
    undone is scored by diagnostics; a missed diagnosis by the diagnosis.

    Bad:

        critical_safety_errors:
          - "Failing to ask about red flags"
          - "Not measuring oxygen saturation"
          - "Not giving systemic corticosteroids"

    Good:

        critical_safety_errors:
          - "Not giving systemic corticosteroids within the first hour"
          - "Discharging the patient while hypoxaemic"
        process:
          - "Asks about red flags for a secondary headache"
    """
    for path, text in ctx.texts("scoring", "critical_safety_errors"):
        found = critical_error_problem(text)
        if found is not None:
            message, hint = found
            yield Finding(path, f"critical safety error `{text}` {message}", hint)
