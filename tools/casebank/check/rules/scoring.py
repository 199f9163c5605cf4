"""Scoring: weights are known components in [0, 1] that sum to 1; answers are real variants."""

from __future__ import annotations

from collections.abc import Iterator

from casebank.check.engine import CaseContext, Finding, rule
from casebank.check.problem import Severity
from casebank.format.catalog import did_you_mean, fold

COMPONENTS = ("diagnosis", "diagnostics", "treatment", "safety")
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
