"""`casebank judge-view SUBMISSIONS.jsonl [CASE_ID ...]`: each submission as a judge sees it.

The one rendering a judge is shown (`judge-items --submissions` and the harness judge use it
too): the diagnosis, every order (made during the consultation, in the final answer, or both),
the examinations, the plan, and the transcript when the submission carries one.
"""

from __future__ import annotations

import argparse
import json
import sys
from pathlib import Path

from casebank.errors import CasebankError
from casebank.serve import score
from casebank.serve.judging import judge_record, render

HELP = "Show each submission as a judge sees it: diagnosis, every order, plan, transcript."
FORMATS = ("text", "json")
USES_ROOT = False


def register(parser: argparse.ArgumentParser) -> None:
    parser.add_argument("submissions", type=Path, metavar="SUBMISSIONS.jsonl")
    parser.add_argument("cases", nargs="*", metavar="CASE_ID", help="only these cases")
    parser.add_argument("--run", metavar="RUN", help="only the submissions of this run")


def run(args: argparse.Namespace) -> int:
    try:
        raw = args.submissions.read_bytes()
    except OSError as exc:
        raise CasebankError(
            f"{args.submissions}: cannot be read ({exc.strerror})", "check the path"
        ) from None
    parsed, problems = score.read_submissions(raw, str(args.submissions))
    if problems:
        for problem in problems:
            print(f"error: {problem}", file=sys.stderr)
        print(f"casebank: nothing shown: {len(problems)} problem(s) in the input", file=sys.stderr)
        return 1
    chosen = [
        s
        for s in parsed
        if (not args.cases or s.case_id in args.cases) and (args.run is None or s.run == args.run)
    ]
    missing = [c for c in args.cases if c not in {s.case_id for s in parsed}]
    if missing:
        raise CasebankError(
            f"{args.submissions} has no submission for {', '.join(missing)}",
            "name case ids the file holds",
        )
    for number, submission in enumerate(chosen):
        record = judge_record(submission)
        if args.format == "json":
            print(json.dumps(record, ensure_ascii=False))
            continue
        run = f" (run {submission.run})" if submission.run else ""
        print(("\n" if number else "") + f"== {submission.case_id}@{submission.version}{run}")
        sys.stdout.write(render(record))
    return 0
