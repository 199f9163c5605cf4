"""How well casebank's scores agree with a clinician's ratings (`nox -s grader`, docs/scoring.md).

    python benchmarks/grader.py [--data tests/data/grader-validation] [--root .]
                                [--method casebank-score/2] [--split tuning|held_out|all]

The data folder holds:

- ``submissions.jsonl``: one submission per line, as `casebank score` reads them, with an
  ``id``, an ``archetype`` (expert, synonym, wrong_dx, over_investigation, dangerous) and a
  ``split`` (tuning, held_out); written from the patient view by one physician;
- ``ratings.yaml``: ``ratings: [{id, rating (0-10), reason}]`` from a second physician, blind
  to the scores;
- ``verdicts.jsonl`` (optional): that physician's verdicts on the rubric items, as
  `casebank score --judgements` reads them, each with ``run`` set to the submission's id.

Each submission is scored against the working tree's cases (as its own run, so a case may
have several). Per split it prints the rank agreement of score and rating (Spearman, Kendall
tau-b), the same for the deterministic part alone (diagnosis and diagnostics, as scored
without any judge), pairwise accuracy within a case, how often the expert outscores the
over-investigator, how often a dangerous answer is capped by a critical safety error, and
every pair of one case that the score orders against the rating, with the components that
made the difference.
"""

from __future__ import annotations

import argparse
import json
import math
import sys
from collections.abc import Sequence
from itertools import combinations
from pathlib import Path
from typing import Any

HERE = Path(__file__).resolve().parent
sys.path.insert(0, str(HERE.parent / "tools"))

from casebank.format.catalog import build_catalog  # noqa: E402
from casebank.format.loader import load_document  # noqa: E402
from casebank.serve import score  # noqa: E402

ARCHETYPES = ("expert", "synonym", "wrong_dx", "over_investigation", "dangerous")
DETERMINISTIC = ("diagnosis", "diagnostics")


def ranks(values: Sequence[float]) -> list[float]:
    """Ranks from 1, ties given their mean rank."""
    order = sorted(range(len(values)), key=lambda i: values[i])
    out = [0.0] * len(values)
    i = 0
    while i < len(order):
        j = i
        while j + 1 < len(order) and values[order[j + 1]] == values[order[i]]:
            j += 1
        for k in range(i, j + 1):
            out[order[k]] = (i + j) / 2 + 1
        i = j + 1
    return out


def pearson(x: Sequence[float], y: Sequence[float]) -> float:
    n = len(x)
    mx, my = sum(x) / n, sum(y) / n
    sxy = sum((a - mx) * (b - my) for a, b in zip(x, y, strict=True))
    sxx = sum((a - mx) ** 2 for a in x)
    syy = sum((b - my) ** 2 for b in y)
    return sxy / math.sqrt(sxx * syy) if sxx and syy else math.nan


def spearman(x: Sequence[float], y: Sequence[float]) -> float:
    return pearson(ranks(x), ranks(y)) if len(x) > 1 else math.nan


def kendall(x: Sequence[float], y: Sequence[float]) -> float:
    """Kendall's tau-b (ties on either side allowed)."""
    concordant = discordant = ties_x = ties_y = 0
    for i, j in combinations(range(len(x)), 2):
        dx, dy = x[i] - x[j], y[i] - y[j]
        if dx == 0 and dy == 0:
            continue
        if dx == 0:
            ties_x += 1
        elif dy == 0:
            ties_y += 1
        elif (dx > 0) == (dy > 0):
            concordant += 1
        else:
            discordant += 1
    denominator = math.sqrt((concordant + discordant + ties_x) * (concordant + discordant + ties_y))
    return (concordant - discordant) / denominator if denominator else math.nan


# --- reading ---------------------------------------------------------------------------------


def _document(path: Path) -> Any:
    loaded = load_document(path.name, path.read_bytes())
    if loaded.document is None:
        raise SystemExit(f"grader: {path} does not load: {loaded.problems}")
    return loaded.document.data


def read_inputs(data: Path) -> tuple[list[dict[str, Any]], dict[str, float], bytes]:
    rows = [
        json.loads(line)
        for line in (data / "submissions.jsonl").read_text("utf-8").splitlines()
        if line.strip()
    ]
    ratings_file = data / "ratings.yaml"
    if not ratings_file.is_file():
        raise SystemExit(
            f"grader: no ratings yet ({ratings_file}): a second physician's blind ratings, "
            "`ratings: [{id, rating (0-10), reason}]`, are needed"
        )
    ratings = {str(r["id"]): float(r["rating"]) for r in _document(ratings_file)["ratings"]}
    verdicts = data / "verdicts.jsonl"
    return rows, ratings, verdicts.read_bytes() if verdicts.is_file() else b""


def score_rows(
    rows: list[dict[str, Any]], verdict_bytes: bytes, root: Path, method: str
) -> dict[str, score.CaseScore]:
    """Every submission scored as its own run (its id), with the verdicts given."""
    catalog = build_catalog(_document(root / "catalog.yaml"))
    lines = "".join(json.dumps(r | {"run": r["id"]}) + "\n" for r in rows).encode()
    submissions, problems = score.read_submissions(lines, "submissions.jsonl")
    judgements, bad = score.read_judgements(verdict_bytes, "verdicts.jsonl")
    keys = {}
    for s in submissions:
        data = _document(root / "cases" / f"{s.case_id}.yaml")
        keys[(s.case_id, s.version)] = score.prepare(s.case_id, s.version, "", data, catalog)
    versions = {c: [v] for c, v in keys}
    problems += bad + score.check_against(
        submissions,
        judgements,
        keys,
        versions,
        {},
        "the working tree",
        ("submissions.jsonl", "verdicts.jsonl"),
    )
    if problems:
        raise SystemExit("grader: the inputs do not score:\n  " + "\n  ".join(map(str, problems)))
    return {c.run: c for c in score.score_all(submissions, judgements, keys, catalog, method)}


def deterministic(case: score.CaseScore) -> float | None:
    """What the score is without any judge: diagnosis and diagnostics, by their weights."""
    weights = {c: case.key.weights.get(c, 0.0) for c in DETERMINISTIC}
    if any(case.components[c] is None for c in DETERMINISTIC) or not sum(weights.values()):
        return None
    total = sum(w * (case.components[c] or 0.0) for c, w in weights.items())
    return total / sum(weights.values())


# --- figures ---------------------------------------------------------------------------------


def figures(
    rows: list[dict[str, Any]], ratings: dict[str, float], scored: dict[str, score.CaseScore]
) -> dict[str, Any]:
    rated = [r for r in rows if r["id"] in ratings]
    full = [
        (scored[r["id"]].score, ratings[r["id"]])
        for r in rated
        if scored[r["id"]].score is not None
    ]
    part = [(deterministic(scored[r["id"]]), ratings[r["id"]]) for r in rated]
    known = [(a, b) for a, b in part if a is not None]
    return {
        "submissions": len(rows),
        "rated": len(rated),
        "scored": len(full),
        "spearman": spearman([a for a, _ in full], [b for _, b in full]) if full else math.nan,
        "kendall": kendall([a for a, _ in full], [b for _, b in full]) if full else math.nan,
        "spearman_deterministic": spearman([a for a, _ in known], [b for _, b in known]),
        "kendall_deterministic": kendall([a for a, _ in known], [b for _, b in known]),
        **_pairs(rated, ratings, scored),
        **_archetypes(rated, scored),
    }


def _value(case: score.CaseScore) -> float | None:
    return case.score if case.score is not None else deterministic(case)


def _pairs(
    rows: list[dict[str, Any]], ratings: dict[str, float], scored: dict[str, score.CaseScore]
) -> dict[str, Any]:
    """Pairwise accuracy over pairs of one case the rater told apart, and the pairs the score
    orders the other way."""
    agree = total = 0.0
    against: list[tuple[dict[str, Any], dict[str, Any]]] = []
    for a, b in combinations(rows, 2):
        if a["case_id"] != b["case_id"] or ratings[a["id"]] == ratings[b["id"]]:
            continue
        sa, sb = _value(scored[a["id"]]), _value(scored[b["id"]])
        if sa is None or sb is None:
            continue
        total += 1
        better, worse = (a, b) if ratings[a["id"]] > ratings[b["id"]] else (b, a)
        s_better, s_worse = (sa, sb) if better is a else (sb, sa)
        agree += 1.0 if s_better > s_worse else 0.5 if s_better == s_worse else 0.0
        if s_better <= s_worse:
            against.append((better, worse))
    return {
        "pairs": int(total),
        "pairwise_accuracy": agree / total if total else math.nan,
        "against": against,
    }


def _archetypes(rows: list[dict[str, Any]], scored: dict[str, score.CaseScore]) -> dict[str, Any]:
    by_case: dict[str, dict[str, score.CaseScore]] = {}
    for r in rows:
        by_case.setdefault(r["case_id"], {})[r["archetype"]] = scored[r["id"]]
    duels = [
        (_value(c["expert"]), _value(c["over_investigation"]))
        for c in by_case.values()
        if "expert" in c and "over_investigation" in c
    ]
    duels = [(e, o) for e, o in duels if e is not None and o is not None]
    work = [
        (c["expert"].components["diagnostics"], c["over_investigation"].components["diagnostics"])
        for c in by_case.values()
        if "expert" in c and "over_investigation" in c
    ]
    dangerous = [scored[r["id"]] for r in rows if r["archetype"] == "dangerous"]
    return {
        "expert_over_investigator": (sum(e > o for e, o in duels), len(duels)),
        "expert_over_investigator_diagnostics": (
            sum((e or 0) > (o or 0) for e, o in work),
            len(work),
        ),
        "danger_capped": (
            sum(c.critical_safety_error is True for c in dangerous),
            sum(c.critical_safety_error is None for c in dangerous),
            len(dangerous),
        ),
    }


def cause(better: score.CaseScore, worse: score.CaseScore) -> str:
    """What made the score prefer the submission the rater put lower."""
    parts = []
    for name in score.COMPONENTS:
        b, w = better.components[name], worse.components[name]
        if b != w:
            parts.append(f"{name} {_shown(b)} vs {_shown(w)}")
    if worse.critical_safety_error is not True and better.critical_safety_error is True:
        parts.append("the better-rated answer commits a critical safety error")
    relation = better.details.get("diagnosis_match", {}).get("relation")
    if better.components["diagnosis"] in (None, 0.0) and relation:
        parts.append(f"its diagnosis reads as {relation}")
    return "; ".join(parts) or "equal components"


def _shown(value: float | None) -> str:
    return "pending" if value is None else f"{value:.2f}"


def report(
    name: str, found: dict[str, Any], ratings: dict[str, float], scored: dict[str, score.CaseScore]
) -> list[str]:
    won, duels = found["expert_over_investigator"]
    capped, waiting, dangerous = found["danger_capped"]
    lines = [
        f"== {name}: {found['rated']} of {found['submissions']} submission(s) rated, "
        f"{found['scored']} fully scored",
        f"Spearman {found['spearman']:.3f}, Kendall tau-b {found['kendall']:.3f} (score vs rating)",
        f"deterministic part alone: Spearman {found['spearman_deterministic']:.3f}, "
        f"Kendall tau-b {found['kendall_deterministic']:.3f}",
        f"pairwise accuracy {found['pairwise_accuracy']:.3f} over {found['pairs']} pair(s) "
        "of one case",
        f"expert above over-investigator in {won} of {duels} case(s) both scored "
        f"(on diagnostics alone: {found['expert_over_investigator_diagnostics'][0]} of "
        f"{found['expert_over_investigator_diagnostics'][1]})",
        f"dangerous answers capped in {capped} of {dangerous} ({waiting} await a verdict)",
    ]
    against = found["against"]
    lines.append(f"pairs the score orders against the rating: {len(against)}")
    for better, worse in against:
        b, w = scored[better["id"]], scored[worse["id"]]
        lines.append(
            f"  {better['case_id']}: {better['id']} {better['archetype']} (rating "
            f"{ratings[better['id']]:g}, score {_shown(_value(b))}) below {worse['id']} "
            f"{worse['archetype']} (rating {ratings[worse['id']]:g}, score {_shown(_value(w))}): "
            f"{cause(b, w)}"
        )
    return lines


def main(argv: Sequence[str] | None = None) -> int:
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("--data", type=Path, default=HERE.parent / "tests/data/grader-validation")
    parser.add_argument("--root", type=Path, default=HERE.parent)
    parser.add_argument("--method", default=score.METHOD, choices=score.METHODS)
    parser.add_argument("--split", default=None, choices=("tuning", "held_out", "all"))
    args = parser.parse_args(argv)
    try:
        rows, ratings, verdicts = read_inputs(args.data)
        scored = score_rows(rows, verdicts, args.root, args.method)
    except SystemExit as stop:
        print(stop.code, file=sys.stderr)
        return 1
    splits = [args.split] if args.split else ["tuning", "held_out", "all"]
    out = [f"grader validation, {args.method}, data {args.data}"]
    for split in splits:
        chosen = [r for r in rows if split == "all" or r.get("split") == split]
        if chosen:
            out += ["", *report(split, figures(chosen, ratings, scored), ratings, scored)]
    print("\n".join(out))
    return 0


if __name__ == "__main__":
    raise SystemExit(main())
