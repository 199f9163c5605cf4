"""`casebank review-status`: which added or changed case versions still need a reviewer.

A row shows the content it speaks of (the version's content hash) and only the reviewers who
count; a sign-off that does not count is listed below the row with the reason, so a row never
names a reviewer and says UNREVIEWED.
"""

from __future__ import annotations

import argparse
import json
import sys
from collections.abc import Sequence

from casebank.format.layout import POLICY_FILE
from casebank.release import git
from casebank.release.plan import VersionReview
from casebank.release.prepare import plan_pending
from casebank.workspace import find_root

HELP = "List the case versions the next release would add or change, and who reviewed them."
FORMATS = ("text", "json")
SHORT = 12  # the content hash as the table shows it


def register(parser: argparse.ArgumentParser) -> None:
    pass


def run(args: argparse.Namespace) -> int:
    root = find_root(args.root)
    pending = plan_pending(root)
    reviews = pending.release.reviews
    required = pending.policy.require_review
    if args.format == "json":
        json.dump(
            {
                "next_release": pending.release.version,
                "require_review": required,
                "cases": [_record(r) for r in reviews],
            },
            sys.stdout,
            indent=2,
            ensure_ascii=False,
        )
        print()
    else:
        _print_text(pending.release.version, reviews, required)
    dirty = [e[3:] for e in git.status(root) if e[3:].startswith("cases/")]
    if dirty:
        print(
            f"note: {len(dirty)} uncommitted case file(s) are not counted; review happens on "
            "commits",
            file=sys.stderr,
        )
    return 1 if required and any(not r.independent for r in reviews) else 0


def _record(review: VersionReview) -> dict[str, object]:
    return {
        "case_id": review.case_id,
        "version": review.version,
        "sha256": review.sha256,
        "authors": [str(a) for a in review.authors],
        "reviewers": [str(a) for a in review.reviewers],
        "reviewed": review.independent,
        "not_counted": [{"reviewer": n.reviewer, "reason": n.reason} for n in review.not_counted],
    }


def _printable(text: str) -> str:
    """A trailer as written, its control characters shown as escapes (never sent to the
    terminal: a commit message is anyone's text)."""
    return "".join(c if c.isprintable() else c.encode("unicode_escape").decode() for c in text)


def _print_text(version: str, reviews: Sequence[VersionReview], required: bool) -> None:
    if not reviews:
        print(f"no case is added or changed since the last release (next: {version})")
        return
    rows = [("CASE", "VERSION", "CONTENT", "STATUS", "AUTHORS", "REVIEWED BY")]
    notes: dict[int, list[str]] = {}
    for r in reviews:
        rows.append(
            (
                r.case_id,
                str(r.version),
                r.sha256[:SHORT],
                "reviewed" if r.independent else "UNREVIEWED",
                _printable(", ".join(a.name for a in r.authors)),
                _printable(", ".join(a.name for a in r.reviewers)) or "-",
            )
        )
        notes[len(rows) - 1] = [
            f"not counted: Reviewed-by: {_printable(n.reviewer)} ({n.reason})"
            for n in r.not_counted
        ]
    widths = [max(len(row[i]) for row in rows) for i in range(5)]
    for index, row in enumerate(rows):
        print("  ".join(f"{cell:<{widths[i]}}" for i, cell in enumerate(row[:5])) + "  " + row[5])
        for note in notes.get(index, ()):
            print(f"{'':<{widths[0]}}  {note}")
    unreviewed = [r.case_id for r in reviews if not r.independent]
    policy = (
        f"{POLICY_FILE} requires review: release {version} would be refused"
        if required and unreviewed
        else f"review is {'required' if required else 'not required'} by {POLICY_FILE}"
    )
    print(f"\n{len(unreviewed)} of {len(reviews)} new case version(s) unreviewed; {policy}")
    if unreviewed:
        shown = " ".join(unreviewed[:3]) + (" ..." if len(unreviewed) > 3 else "")
        print(
            f'a reviewer who is not an author signs off with: casebank review {shown} --by "Name '
            '<email>" (CONTRIBUTING.md, "Review")'
        )
