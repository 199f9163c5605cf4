"""`casebank new CASE_ID`: scaffold a case with every required field, generated from the schema."""

from __future__ import annotations

import argparse

from casebank.errors import CasebankError, UsageError
from casebank.format.identifiers import CASE_ID_WORDS, is_case_id
from casebank.format.layout import CASE_SUFFIXES, CASES_DIR
from casebank.format.scaffold import case_template
from casebank.format.text import for_terminal
from casebank.workspace import find_root, write_atomically

HELP = "Start a new case: write cases/CASE_ID.yaml with every required field to fill in."


def register(parser: argparse.ArgumentParser) -> None:
    parser.add_argument(
        "case_id",
        metavar="CASE_ID",
        help="the new case's id: lowercase words joined by _, e.g. sepsis_002",
    )


def run(args: argparse.Namespace) -> int:
    case_id: str = args.case_id
    if not is_case_id(case_id):
        raise UsageError(
            f"`{for_terminal(case_id)}` is not a valid case id: a case id is {CASE_ID_WORDS}, "
            "e.g. chest_pain_002"
        )
    root = find_root(args.root)
    folder = root / CASES_DIR
    existing = [p for p in (folder / f"{case_id}{s}" for s in CASE_SUFFIXES) if p.exists()]
    if existing:
        raise CasebankError(
            f"case `{case_id}` already exists: {existing[0].relative_to(root)}",
            "choose another id, or edit the existing file",
        )
    folder.mkdir(exist_ok=True)
    relative = f"{CASES_DIR}/{case_id}.yaml"
    content = case_template(case_id)
    # Exclusive: never overwrite a file that appeared since the check above.
    write_atomically(root / relative, content.encode("utf-8"), exclusive=True)
    print(f"wrote {relative}: fill in every TODO, then run `casebank validate {relative}`")
    return 0
