"""`casebank judge-items --release X.Y.Z [CASE_ID ...]`: the rubric items a judge decides.

With `--submissions`, each item is paired with the submission it judges, shown as the judge
view (`casebank judge-view`), and a diagnosis the matcher cannot decide adds its own item,
`diagnosis.equivalent`.
"""

from __future__ import annotations

import argparse
import json
import sys
from pathlib import Path

from casebank.errors import CasebankError
from casebank.format.catalog import build_catalog
from casebank.format.identifiers import require_case_id
from casebank.release.released import ReleasedCase
from casebank.serve import score
from casebank.serve.judging import judge_record, render

HELP = (
    "Print the rubric items (treatment, safety, process) a judge must decide, one JSON line each."
)


def register(parser: argparse.ArgumentParser) -> None:
    from casebank.commands.serving import add_release_options

    add_release_options(parser, "whose items to list")
    parser.add_argument(
        "cases", nargs="*", type=require_case_id, metavar="CASE_ID", help="only these cases"
    )
    parser.add_argument(
        "--submissions",
        type=Path,
        metavar="FILE",
        help="pair each item with the submission it judges (one line per item and submission)",
    )
    parser.add_argument(
        "--method",
        choices=score.METHODS,
        default=score.METHOD,
        help=f"the scoring method the items are for (default {score.METHOD})",
    )


def _submissions(path: Path) -> list[score.Submission] | None:
    try:
        raw = path.read_bytes()
    except OSError as exc:
        raise CasebankError(f"{path}: cannot be read ({exc.strerror})") from None
    parsed, problems = score.read_submissions(raw, str(path))
    for problem in problems:
        print(f"error: {problem}", file=sys.stderr)
    return None if problems else parsed


def run(args: argparse.Namespace) -> int:
    from casebank.commands.serving import release_from

    loaded = release_from(args)
    chosen = {c.entry.case_id: c for c in loaded.current}
    unknown = [c for c in args.cases if c not in chosen]
    if unknown:
        raise CasebankError(
            f"release {loaded.manifest.version} has no case {', '.join(unknown)}"
            + (" (or it is withdrawn)" if loaded.manifest.withdrawn else ""),
            "`casebank show CASE_ID` tells which releases hold a case",
        )
    wanted = [chosen[c] for c in (args.cases or sorted(chosen))]
    if args.submissions is None:
        for case in wanted:
            for item in score.rubric(case.data, args.method):
                _write(case, item, None)
        return 0
    parsed = _submissions(args.submissions)
    if parsed is None:
        return 1
    catalog = build_catalog(loaded.catalog_data)
    by_case: dict[tuple[str, int], list[score.Submission]] = {}
    for s in parsed:
        by_case.setdefault((s.case_id, s.version), []).append(s)
    for case in wanted:
        entry = case.entry
        key = score.prepare(entry.case_id, entry.version, entry.sha256, case.data, catalog)
        for submission in by_case.get(case.key, []):
            items = score.rubric(case.data, args.method)
            if args.method != score.METHOD_1 and key.diagnosis.match(submission.diagnosis).pending:
                items.insert(0, score.diagnosis_item(case.data))
            for item in items:
                _write(case, item, submission)
    return 0


def _write(case: ReleasedCase, item: score.Item, submission: score.Submission | None) -> None:
    entry = case.entry
    line: dict[str, object] = {
        "case_id": entry.case_id,
        "version": entry.version,
        "content_hash": entry.sha256,
    }
    if submission is not None and submission.run:
        line["run"] = submission.run
    line |= {"item": item.id, "kind": item.kind, "text": item.text, "question": item.question}
    if submission is not None:
        record = judge_record(submission)
        line["answer"] = record
        line["view"] = render(record)
    sys.stdout.write(json.dumps(line, ensure_ascii=False) + "\n")
