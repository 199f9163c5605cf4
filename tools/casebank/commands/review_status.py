"""`casebank review-status`: which added or changed case versions still need a reviewer."""

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


def register(parser: argparse.ArgumentParser) -> None:
    pass


def run(args: argparse.Namespace) -> int:
    root = find_root(args.root)
    pending = plan_pending(root)
    reviews = pending.release.reviews
    required = pending.policy.require_review
    missing = [r for r in reviews if not r.independent]
    if args.format == "json":
        json.dump(
            {
                "next_release": pending.release.version,
                "require_review": required,
                "cases": [
                    {
                        "case_id": r.case_id,
                        "version": r.version,
                        "authors": [str(a) for a in r.authors],
                        "reviewers": [str(a) for a in r.reviewers],
                        "reviewed": r.independent,
                    }
                    for r in reviews
                ],
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
    return 1 if required and missing else 0


def _print_text(version: str, reviews: Sequence[VersionReview], required: bool) -> None:
    if not reviews:
        print(f"no case is added or changed since the last release (next: {version})")
        return
    rows = [("CASE", "VERSION", "STATUS", "AUTHORS", "REVIEWERS")]
    for r in reviews:
        status = "reviewed" if r.independent else "UNREVIEWED"
        rows.append(
            (
                r.case_id,
                str(r.version),
                status,
                ", ".join(a.name for a in r.authors),
                ", ".join(a.name for a in r.reviewers) or "-",
            )
        )
    widths = [max(len(row[i]) for row in rows) for i in range(4)]
    for row in rows:
        print("  ".join(f"{cell:<{widths[i]}}" for i, cell in enumerate(row[:4])) + "  " + row[4])
    unreviewed = sum(1 for r in reviews if not r.independent)
    policy = (
        f"{POLICY_FILE} requires review: release {version} would be refused"
        if required and unreviewed
        else f"review is {'required' if required else 'not required'} by {POLICY_FILE}"
    )
    print(f"\n{unreviewed} of {len(reviews)} new case version(s) unreviewed; {policy}")
