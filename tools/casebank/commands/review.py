"""`casebank review CASE_ID... --by "Name <email>"`: record a review after the fact.

The review names each case's current content hash, as committed on HEAD, in an empty commit:

    Review chest_pain_001

    Reviewed-by: Dr Cara Clinician <cara@example.org>
    Reviewed-case: chest_pain_001@5f0c3a9e...(64 hex digits)

A version is reviewed when its exact content has a sign-off from someone who is not among its
authors: this commit, or a Reviewed-by trailer on the commit that made the content (the
squash-merge path). A later change makes new content, which needs its own review.
"""

from __future__ import annotations

import argparse
from collections.abc import Mapping
from pathlib import Path

from casebank.errors import CasebankError, UsageError
from casebank.format.catalog import CASE_ID_CUTOFF, did_you_mean
from casebank.format.identifiers import is_case_id
from casebank.format.layout import attachment_of, case_id_from_path, is_case_path
from casebank.release import git
from casebank.release.history import MAILMAP_FILE, parse_co_author
from casebank.release.manifest import Author
from casebank.release.plan import IDENTITY_HINT, VersionReview, authored_by, identity_problem
from casebank.release.prepare import plan_pending
from casebank.workspace import find_root

HELP = "Record a review of cases' current content (an empty commit with Reviewed-by trailers)."
SHORT = 12


def register(parser: argparse.ArgumentParser) -> None:
    parser.add_argument("cases", nargs="+", metavar="CASE_ID", help="the cases reviewed")
    parser.add_argument(
        "--by",
        required=True,
        metavar='"NAME <EMAIL>"',
        help="the reviewer, who must not be one of the versions' authors",
    )


def run(args: argparse.Namespace) -> int:
    reviewer = _reviewer(args.by)
    wanted = list(dict.fromkeys(args.cases))
    for case_id in wanted:
        if not is_case_id(case_id):
            raise UsageError(f"{case_id!r} is not a case id (the file name without extension)")
    root = find_root(args.root)
    pending = plan_pending(root)
    reviews = pending.release.case_reviews
    _refuse_unknown(wanted, reviews)
    _refuse_uncommitted(root, wanted)
    mapped = _as_mailmap_says(root, reviewer)
    _refuse_authors(reviewer, mapped, [reviews[c] for c in wanted])
    fresh = [reviews[c] for c in wanted if not _already(mapped, reviews[c])]
    for case_id in sorted(set(wanted) - {r.case_id for r in fresh}):
        print(f"{case_id}@{reviews[case_id].sha256[:SHORT]} is already reviewed by {reviewer}")
    if not fresh:
        print("nothing to record")
        return 0
    git.commit_empty(root, review_message(reviewer, fresh))
    commit = git.resolve_commit(root, "HEAD") or ""
    shown = ", ".join(f"{r.case_id}@{r.sha256[:SHORT]} (version {r.version})" for r in fresh)
    print(f"recorded the review of {shown} by {reviewer} in commit {commit[:SHORT]}")
    print("push it, or open a pull request with it: it counts once it is on the released line")
    return 0


def _reviewer(text: str) -> Author:
    person = parse_co_author(text)
    problem = identity_problem(person)
    if problem is not None or "<" not in text:
        raise UsageError(f"--by {text!r}: {problem or 'no email address'}; {IDENTITY_HINT}")
    return person


def review_message(reviewer: Author, reviews: list[VersionReview]) -> str:
    """The review commit's message: a subject naming the cases, then the trailers."""
    names = [r.case_id for r in reviews]
    subject = "Review " + (", ".join(names) if len(names) <= 3 else f"{len(names)} case versions")
    trailers = [f"Reviewed-by: {reviewer}"]
    trailers += [f"{git.REVIEW_TRAILER}: {r.case_id}@{r.sha256}" for r in reviews]
    return f"{subject}\n\n" + "\n".join(trailers) + "\n"


def _refuse_unknown(wanted: list[str], reviews: Mapping[str, VersionReview]) -> None:
    for case_id in wanted:
        if case_id not in reviews:
            raise CasebankError(
                f"there is no case `{case_id}` on HEAD"
                + did_you_mean(case_id, reviews, CASE_ID_CUTOFF),
                "a review names committed content: commit the case first",
            )


def _refuse_uncommitted(root: Path, wanted: list[str]) -> None:
    changed = set()
    for entry in git.status(root):
        path = entry[3:]
        attached = attachment_of(path)
        if attached is not None:
            changed.add(attached[0])
        elif is_case_path(path):
            changed.add(case_id_from_path(path))
    dirty = [c for c in wanted if c in changed]
    if dirty:
        raise CasebankError(
            f"{', '.join(dirty)} {'has' if len(dirty) == 1 else 'have'} uncommitted changes: a "
            "review names the content committed on HEAD",
            "commit the changes (or undo them), then review",
        )


def _as_mailmap_says(root: Path, person: Author) -> Author:
    """``person`` as the .mailmap on HEAD maps them (the release compares the same way)."""
    found = git.resolve_objects(root, [f"HEAD:{MAILMAP_FILE}"])[f"HEAD:{MAILMAP_FILE}"]
    if found is None or found[1] != "blob":
        return person
    contact = f"{person.name} <{person.email}>"
    return parse_co_author(git.check_mailmap(root, found[0], [contact])[contact])


def _refuse_authors(reviewer: Author, mapped: Author, reviews: list[VersionReview]) -> None:
    for review in reviews:
        how = authored_by(review, reviewer, mapped)
        if how is not None:
            raise CasebankError(
                f"{reviewer} is an author of {review.case_id} version {review.version} ({how}): "
                "a review by an author does not count",
                "ask someone who did not write the change to review it",
            )


def _already(mapped: Author, review: VersionReview) -> bool:
    return any(r.email.casefold() == mapped.email.casefold() for r in review.reviewers)
