"""`casebank score --release X.Y.Z SUBMISSIONS.jsonl`: the reference scorer (docs/scoring.md)."""

from __future__ import annotations

import argparse
import json
import sys
from pathlib import Path
from typing import Any

from casebank import __version__
from casebank.errors import CasebankError
from casebank.format.catalog import Catalog, build_catalog
from casebank.release.released import LoadedRelease, load_release
from casebank.serve import score

HELP = "Score submissions against a release (diagnosis, diagnostics; judged treatment, safety)."
FORMATS = ("text", "json")


def register(parser: argparse.ArgumentParser) -> None:
    parser.add_argument("--release", required=True, metavar="X.Y.Z", help="the release to score on")
    parser.add_argument("submissions", type=Path, metavar="SUBMISSIONS.jsonl")
    parser.add_argument(
        "--judgements",
        type=Path,
        metavar="FILE",
        help="JSONL verdicts on the rubric items (`casebank judge-items` lists them)",
    )


def _read(path: Path) -> bytes:
    try:
        return path.read_bytes()
    except OSError as exc:
        raise CasebankError(f"{path}: cannot be read ({exc.strerror})", "check the path") from None


def keys_of(loaded: LoadedRelease, catalog: Catalog) -> dict[tuple[str, int], score.CaseKey]:
    """What scoring needs of each case version the release does not withdraw."""
    return {
        c.key: score.prepare(c.entry.case_id, c.entry.version, c.entry.sha256, c.data, catalog)
        for c in loaded.current
    }


def run(args: argparse.Namespace) -> int:
    from casebank.workspace import find_root

    sub_raw = _read(args.submissions)
    judge_raw = _read(args.judgements) if args.judgements else b""
    files = (str(args.submissions), str(args.judgements or ""))
    # Every bad line is listed in one go: lines that do not read, and lines the release cannot
    # score (the latter only among the lines that read).
    submissions, problems = score.read_submissions(sub_raw, files[0])
    judgements, bad_verdicts = (
        score.read_judgements(judge_raw, files[1]) if args.judgements else ([], [])
    )
    loaded = load_release(find_root(args.root), args.release)
    catalog = build_catalog(loaded.catalog_data)
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
        submissions, judgements, keys, versions, withdrawn, args.release, files
    )
    if problems or bad_verdicts or against:
        return _refuse(_by_line([*problems, *bad_verdicts, *against], files))
    scored = score.score_all(submissions, judgements, keys, catalog)
    report = {
        "release": args.release,
        "scorer": {"name": "casebank", "version": __version__, "method": score.METHOD},
        "cases": [c.to_data() for c in scored],
        "summary": score.summary(scored, len(keys)),
    }
    for item in loaded.withdrawn_later:
        print(
            f"note: {item.case_id}@{item.version} was withdrawn after this release, in "
            f"{item.release}: {item.reason}",
            file=sys.stderr,
        )
    if args.format == "json":
        json.dump(report, sys.stdout, indent=2, ensure_ascii=False)
        print()
    else:
        print(render(report))
    return 0


def _by_line(problems: list[str], files: tuple[str, str]) -> list[str]:
    """Problems (each ``FILE:LINE: ...``) in the order of the files, then of their lines."""

    def key(problem: str) -> tuple[int, int]:
        for index, file in enumerate(files):
            if file and problem.startswith(f"{file}:"):
                line = problem[len(file) + 1 :].partition(":")[0]
                return index, int(line) if line.isdigit() else 0
        return len(files), 0

    return sorted(problems, key=key)


def _refuse(problems: list[str]) -> int:
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
    rows = [("CASE", "VERSION", "DIAGNOSIS", "DIAGNOSTICS", "TREATMENT", "SAFETY", "SCORE")]
    for case in report["cases"]:
        c = case["components"]
        score_text = _shown(case["score"])
        if case["critical_safety_error"]:
            score_text += " (critical safety error)"
        rows.append(
            (
                case["case_id"],
                str(case["version"]),
                *(_shown(c[k]) for k in score.COMPONENTS),
                score_text,
            )
        )
    widths = [max(len(r[i]) for r in rows) for i in range(len(rows[0]))]
    lines = ["  ".join(f"{v:<{widths[i]}}" for i, v in enumerate(r)).rstrip() for r in rows]
    s = report["summary"]
    scorer = report["scorer"]
    lines += [
        "",
        f"release {report['release']}, scored by {scorer['name']} {scorer['version']} "
        f"({scorer['method']})",
        f"{s['n']} case(s) submitted, {s['not_submitted']} not submitted",
    ]
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
    return "\n".join(lines)
