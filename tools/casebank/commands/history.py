"""`casebank history CASE_ID`: a case's released versions, with who changed what and when."""

from __future__ import annotations

import argparse

from casebank.errors import CasebankError
from casebank.format.identifiers import require_case_id
from casebank.release.history import ReleasedVersion, released_versions
from casebank.release.prepare import previous_manifests, require_head
from casebank.workspace import find_root

HELP = "List a case's released versions: release, date, commit, authors, sections changed."


def register(parser: argparse.ArgumentParser) -> None:
    parser.add_argument("case", type=require_case_id, metavar="CASE_ID", help="the case id")


def run(args: argparse.Namespace) -> int:
    root = find_root(args.root)
    manifests = previous_manifests(root, require_head(root))
    events = released_versions(manifests, args.case)
    if not events:
        raise CasebankError(
            f"case {args.case} is not in any release",
            "only released cases have a history; see `casebank release`",
        )
    print(render_history(args.case, events))
    return 0


def render_history(case_id: str, events: list[ReleasedVersion]) -> str:
    rows = [("VERSION", "RELEASE", "EVENT", "CHANGED ON", "COMMIT", "AUTHORS", "SECTIONS")]
    for event in events:
        entry = event.entry
        if entry is None:
            rows.append((f"({event.version})", event.release, event.event, "", "", "", ""))
            continue
        rows.append(
            (
                str(event.version),
                event.release,
                event.event,
                entry.last_changed_date,
                entry.last_changed_commit[:12],
                ", ".join(str(a) for a in entry.authors),
                ", ".join(event.sections) if event.sections else "",
            )
        )
    widths = [max(len(row[i]) for row in rows) for i in range(len(rows[0]) - 1)]
    lines = [
        "  ".join([*(f"{row[i]:<{width}}" for i, width in enumerate(widths)), row[-1]])
        for row in rows
    ]
    return "\n".join([case_id, "", *(line.rstrip() for line in lines)])
