"""`casebank judge-items --release X.Y.Z [CASE_ID ...]`: the rubric items a judge decides."""

from __future__ import annotations

import argparse
import json
import sys
from pathlib import Path

from casebank.errors import CasebankError
from casebank.format.identifiers import require_case_id
from casebank.release.released import load_release
from casebank.serve import score
from casebank.workspace import find_root

HELP = "Print the rubric items (treatment, safety) a judge must decide, one JSON line each."


def register(parser: argparse.ArgumentParser) -> None:
    parser.add_argument("--release", required=True, metavar="X.Y.Z", help="the release")
    parser.add_argument(
        "cases", nargs="*", type=require_case_id, metavar="CASE_ID", help="only these cases"
    )
    parser.add_argument(
        "--submissions",
        type=Path,
        metavar="FILE",
        help="pair each item with the submission it judges (one line per item and submission)",
    )


def run(args: argparse.Namespace) -> int:
    loaded = load_release(find_root(args.root), args.release)
    chosen = {c.entry.case_id: c for c in loaded.current}
    unknown = [c for c in args.cases if c not in chosen]
    if unknown:
        raise CasebankError(
            f"release {args.release} has no case {', '.join(unknown)}"
            + (" (or it is withdrawn)" if loaded.manifest.withdrawn else ""),
            "`casebank show CASE_ID` tells which releases hold a case",
        )
    wanted = [chosen[c] for c in (args.cases or sorted(chosen))]
    answers: dict[tuple[str, int], score.Submission] = {}
    if args.submissions is not None:
        try:
            raw = args.submissions.read_bytes()
        except OSError as exc:
            raise CasebankError(f"{args.submissions}: cannot be read ({exc.strerror})") from None
        parsed, problems = score.read_submissions(raw, str(args.submissions))
        if problems:
            for problem in problems:
                print(f"error: {problem}", file=sys.stderr)
            return 1
        answers = {(s.case_id, s.version): s for s in parsed}
    out = sys.stdout
    for case in wanted:
        entry = case.entry
        submission = answers.get(case.key)
        if args.submissions is not None and submission is None:
            continue
        for item in score.rubric(case.data):
            line = {
                "case_id": entry.case_id,
                "version": entry.version,
                "content_hash": entry.sha256,
                "item": item.id,
                "kind": item.kind,
                "text": item.text,
                "question": item.question,
            }
            if submission is not None:
                line["answer"] = {"diagnosis": submission.diagnosis, "plan": list(submission.plan)}
            out.write(json.dumps(line, ensure_ascii=False) + "\n")
    return 0
