"""`casebank score --release X.Y.Z SUBMISSIONS.jsonl`: the reference scorer (docs/scoring.md).

`--bundle DIR` in place of `--release` scores on an export bundle, with no repository: the
same report, since both read the release's canonical content.

`--method` picks the scoring method (method 1 stays reproducible), `--compare A B` adds the
paired bootstrap difference of run B against run A."""

from __future__ import annotations

import argparse
import sys
from collections.abc import Sequence
from pathlib import Path
from typing import Any

from casebank import __version__
from casebank.errors import CasebankError
from casebank.format.catalog import Catalog
from casebank.release.released import LoadedRelease
from casebank.serve import score

HELP = "Score submissions against a release (diagnosis, diagnostics; judged treatment, safety)."
FORMATS = ("text", "json")


def register(parser: argparse.ArgumentParser) -> None:
    from casebank.commands.serving import add_release_options

    add_release_options(parser, "to score on")
    parser.add_argument("submissions", type=Path, metavar="SUBMISSIONS.jsonl")
    parser.add_argument(
        "--judgements",
        type=Path,
        metavar="FILE",
        help="JSONL verdicts on the rubric items (`casebank judge-items` lists them)",
    )
    parser.add_argument(
        "--method",
        choices=score.METHODS,
        default=score.METHOD,
        help=f"the scoring method (default {score.METHOD}; docs/scoring.md)",
    )
    parser.add_argument(
        "--compare",
        nargs=2,
        metavar=("RUN_A", "RUN_B"),
        help="the paired bootstrap difference of run B against run A, over the cases both scored",
    )


def _read(path: Path) -> bytes:
    try:
        return path.read_bytes()
    except OSError as exc:
        raise CasebankError(f"{path}: cannot be read ({exc.strerror})", "check the path") from None


def keys_of(loaded: LoadedRelease, catalog: Catalog) -> dict[tuple[str, int], score.CaseKey]:
    """What scoring needs of each case version the release does not withdraw."""
    return {c.key: score.prepare_released(c, catalog) for c in loaded.current}


def run(args: argparse.Namespace) -> int:
    from casebank.commands.serving import release_catalog, release_from

    sub_raw = _read(args.submissions)
    judge_raw = _read(args.judgements) if args.judgements else b""
    files = (str(args.submissions), str(args.judgements or ""))
    # Every bad line is listed in one go: lines that do not read, and lines the release cannot
    # score (the latter only among the lines that read).
    submissions, problems = score.read_submissions(sub_raw, files[0])
    judgements, bad_verdicts = (
        score.read_judgements(judge_raw, files[1]) if args.judgements else ([], [])
    )
    loaded = release_from(args, lazy=True)  # each case parsed in the worker that scores it
    release = loaded.manifest.version
    catalog = release_catalog(args, loaded)
    keys = keys_of(loaded, catalog)
    versions: dict[str, list[int]] = {}
    for case_id, version in keys:
        versions.setdefault(case_id, []).append(version)
    withdrawn = {
        (w.case_id, w.version): f"withdrawn in release {w.release}: {w.reason}"
        for w in loaded.manifest.withdrawn
    }
    if problems:  # a verdict on a submission that did not read is no problem of its own
        submitted = {(s.case_id, s.version) for s in submissions}
        judgements = [j for j in judgements if (j.case_id, j.version) in submitted]
    against = score.check_against(
        submissions, judgements, keys, versions, withdrawn, release, files
    )
    if problems or bad_verdicts or against:
        return _refuse(_by_line([*problems, *bad_verdicts, *against], files))
    if args.compare:
        _check_runs(args.compare, submissions)
    as_json = args.format == "json"
    scored = score.score_all(submissions, judgements, keys, catalog, args.method, encode=as_json)
    report: dict[str, Any] = {
        "release": release,
        "scorer": {"name": "casebank", "version": __version__, "method": args.method},
        "cases": scored,
        "summary": score.summary(scored, len(keys)),
    }
    if args.compare:
        report["compare"] = score.compare(scored, *args.compare)
    for item in loaded.withdrawn_later:
        print(
            f"note: {item.case_id}@{item.version} was withdrawn after this release, in "
            f"{item.release}: {item.reason}",
            file=sys.stderr,
        )
    if as_json:
        # One write: json.dump would write piece by piece through the terminal-safe stdout.
        sys.stdout.write(score.report_json(report) + "\n")
    else:
        print(render({**report, "cases": [c.to_data() for c in scored]}))
    return 0


def _check_runs(wanted: list[str], submissions: list[score.Submission]) -> None:
    runs = sorted({s.run for s in submissions if s.run})
    unknown = [r for r in wanted if r not in runs]
    if unknown:
        raise CasebankError(
            f"no submission has run {', '.join(f'`{r}`' for r in unknown)}"
            + (f" (runs: {', '.join(runs)})" if runs else " (no submission has a `run`)"),
            "give each submission line a `run` key naming its model, seed or sample",
        )


def _by_line(
    problems: list[score.InputProblem], files: tuple[str, str]
) -> list[score.InputProblem]:
    """Problems in the order of the files (submissions, then verdicts), then of their lines."""
    order = {file: index for index, file in enumerate(files) if file}
    return sorted(problems, key=lambda p: (order.get(p.file, len(files)), p.line, p.message))


def _refuse(problems: list[score.InputProblem]) -> int:
    for problem in problems[:50]:
        print(f"error: {problem}", file=sys.stderr)
    more = len(problems) - 50
    if more > 0:
        print(f"... and {more} more", file=sys.stderr)
    print(
        f"casebank: nothing scored: {len(problems)} problem(s) in the input; "
        "fix them and run again",
        file=sys.stderr,
    )
    return 1


def _shown(value: float | None) -> str:
    return "pending" if value is None else f"{value:.3f}"


def render(report: dict[str, Any]) -> str:
    cases = report["cases"]
    with_runs = any("run" in c for c in cases)
    with_process = any("process" in c for c in cases)
    head = ["RUN"] if with_runs else []
    head += ["CASE", "VERSION", "DIAGNOSIS", "DIAGNOSTICS", "TREATMENT", "SAFETY", "SCORE"]
    rows = [tuple(head + (["PROCESS"] if with_process else []))]
    for case in cases:
        c = case["components"]
        score_text = _shown(case["score"])
        if case["critical_safety_error"]:
            score_text += " (critical safety error)"
        row = [case.get("run", "")] if with_runs else []
        row += [case["case_id"], str(case["version"]), *(_shown(c[k]) for k in score.COMPONENTS)]
        row.append(score_text)
        if with_process:
            row.append(
                "-"
                if case.get("process") is None and not _has_process(case)
                else _shown(case.get("process"))
            )
        rows.append(tuple(row))
    lines = _table(rows)
    s = report["summary"]
    scorer = report["scorer"]
    lines += [
        "",
        f"release {report['release']}, scored by {scorer['name']} {scorer['version']} "
        f"({scorer['method']})",
    ]
    if "runs" in s:
        for run, summary in s["runs"].items():
            lines += ["", f"run {run}:", *_summary_lines(summary)]
        if "cost_table" in s:
            lines += ["", "accuracy against cost, by run:", *_cost_table(s["cost_table"])]
    else:
        lines += _summary_lines(s)
    if "compare" in report:
        lines += ["", *_compare_lines(report["compare"])]
    return "\n".join(lines)


def _has_process(case: dict[str, Any]) -> bool:
    return any(i.startswith("process.") for i in case["details"].get("items_pending", []))


def _table(rows: Sequence[Sequence[str]]) -> list[str]:
    widths = [max(len(r[i]) for r in rows) for i in range(len(rows[0]))]
    return ["  ".join(f"{v:<{widths[i]}}" for i, v in enumerate(r)).rstrip() for r in rows]


def _summary_lines(s: dict[str, Any]) -> list[str]:
    lines = [f"{s['n']} case(s) submitted, {s['not_submitted']} not submitted"]
    if s["mean"] is None:
        lines.append("mean: pending (no case is fully scored yet)")
    else:
        ci = s["ci95"]
        interval = f", 95% CI {ci[0]:.3f}–{ci[1]:.3f}" if ci else ""
        lines.append(f"mean {s['mean']:.3f} over {s['scored']} fully scored case(s){interval}")
    if not s["complete"]:
        lines.append(
            f"INCOMPLETE: {s['pending']} case(s) await judgements on treatment or safety "
            "(`casebank judge-items`, then --judgements); the mean covers only the others"
        )
    workup = s.get("workup")
    if workup:
        lines.append(f"mean work-up: {_workup(workup)}")
    return lines


def _workup(w: dict[str, Any]) -> str:
    cost = ", ".join(f"{v:.2f} {k}" for k, v in w["cost"].items()) or "no priced test"
    return (
        f"{w['tests']:.1f} test(s), cost {cost}, {w['radiation_msv']:.2f} mSv, "
        f"{w['invasive']:.2f} invasive, {w['contrast']:.2f} contrast"
    )


def _cost_table(table: list[dict[str, Any]]) -> list[str]:
    rows = [("RUN", "N", "MEAN", "DIAGNOSIS", "TESTS", "COST", "MSV", "INVASIVE", "CONTRAST")]
    for r in table:
        cost = ", ".join(f"{v:.2f} {k}" for k, v in r.get("cost", {}).items()) or "-"
        rows.append(
            (
                r["run"],
                str(r["n"]),
                _shown(r["mean"]),
                _shown(r["diagnosis"]),
                f"{r.get('tests', 0):.1f}",
                cost,
                f"{r.get('radiation_msv', 0):.2f}",
                f"{r.get('invasive', 0):.2f}",
                f"{r.get('contrast', 0):.2f}",
            )
        )
    return _table(rows)


def _compare_lines(c: dict[str, Any]) -> list[str]:
    lines = [
        f"run {c['b']} against run {c['a']}: {c['paired']} case(s) scored in both "
        f"({c['only_a']} only in {c['a']}, {c['only_b']} only in {c['b']})"
    ]
    for name, d in c["difference"].items():
        if d["mean"] is None:
            lines.append(f"  {name}: no case scored in both")
            continue
        ci = d["ci95"]
        interval = f", 95% CI {ci[0]:+.3f} to {ci[1]:+.3f}" if ci else ""
        lines.append(f"  {name}: {d['mean']:+.3f} (B - A, n={d['n']}{interval})")
    return lines
