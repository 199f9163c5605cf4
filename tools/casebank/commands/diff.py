"""`casebank diff [BASE [HEAD]]`: what changed in the cases, field by field, for reviewers.

BASE defaults to the merge base with the main branch (on a pull request under GitHub Actions,
with its target branch); HEAD defaults to the working tree. Each side is read in one pass: the
working tree from disk, a revision with one ``ls-tree`` and one batched ``cat-file``.
"""

from __future__ import annotations

import argparse
import os
import sys
from collections.abc import Iterator
from pathlib import Path

from casebank.errors import CasebankError, UsageError
from casebank.format.canonical import sha256_hex
from casebank.format.layout import CASES_DIR, attachment_path, case_id_from_path, case_part
from casebank.format.loader import load_document
from casebank.release import git
from casebank.release.diff import CaseState, diff_cases, render_markdown, render_text
from casebank.release.manifest import latest_entries
from casebank.release.prepare import previous_manifests
from casebank.workspace import find_root, scan_cases

HELP = "Show what changed in the cases between two revisions, field by field."
FORMATS = ("text", "markdown")


def register(parser: argparse.ArgumentParser) -> None:
    parser.add_argument(
        "base",
        nargs="?",
        metavar="BASE",
        help="revision to compare from (default: merge base with main)",
    )
    parser.add_argument(
        "head", nargs="?", metavar="HEAD", help="revision to compare to (default: the working tree)"
    )


def _state(relative: str, raw: bytes, attachments: dict[str, str]) -> CaseState:
    loaded = load_document(relative, raw)
    if loaded.document is None:
        from casebank.check.engine import all_rules, stamp_issue  # only for unreadable files

        all_rules()
        problem = stamp_issue(relative, loaded.issues[0])
        return CaseState(
            relative, None, attachments, f"line {problem.line}: {problem.message} [{problem.rule}]"
        )
    return CaseState(relative, loaded.document.data, attachments)


def worktree_cases(root: Path) -> dict[str, CaseState]:
    """The working tree's cases, as validation's scan finds them (``layout.case_part``)."""
    listing = scan_cases(root)
    states: dict[str, CaseState] = {}
    for relative in listing.case_files:
        case_id = case_id_from_path(relative)
        attachments = {
            name: sha256_hex((root / attachment_path(case_id, name)).read_bytes())
            for name in sorted(listing.attachments.get(case_id, ()))
        }
        states.setdefault(case_id, _state(relative, (root / relative).read_bytes(), attachments))
    return states


def revision_cases(root: Path, commit: str) -> dict[str, CaseState]:
    """A commit's cases: its regular files that ``layout.case_part`` says belong to a case.
    Attachments are keyed by path, each with the hash of its own bytes: two identical
    attachments are two attachments."""
    parts = [
        (entry, part)
        for entry in git.list_tree(root, commit, CASES_DIR)
        if entry.mode in git.REGULAR_MODES and (part := case_part(entry.path)) is not None
    ]
    blobs = dict(git.read_blobs(root, _unique([entry.oid for entry, _ in parts])))
    attachments: dict[str, dict[str, str]] = {}
    for entry, (case_id, name) in parts:
        if name:
            attachments.setdefault(case_id, {})[name] = sha256_hex(blobs[entry.oid])
    states: dict[str, CaseState] = {}
    for entry, (case_id, name) in sorted(parts, key=lambda found: found[0].path):
        if not name and case_id not in states:  # two files claiming one id: the first path
            states[case_id] = _state(entry.path, blobs[entry.oid], attachments.get(case_id, {}))
    return states


def _unique(oids: list[str]) -> Iterator[str]:
    seen: set[str] = set()
    for oid in oids:
        if oid not in seen:
            seen.add(oid)
            yield oid


def _commit(root: Path, rev: str) -> str:
    commit = git.resolve_commit(root, rev)
    if commit is None:
        raise UsageError(f"`{rev}` is not a revision in this repository")
    return commit


def default_base(root: Path) -> str:
    """The merge base of HEAD with the branch changes are meant for."""
    target = os.environ.get("GITHUB_BASE_REF")
    candidates = [f"origin/{target}", target] if target else ["main", "origin/main", "master"]
    for candidate in candidates:
        if candidate and git.resolve_commit(root, candidate):
            found = git.merge_base(root, "HEAD", candidate)
            if found:
                return found
    raise CasebankError(
        "cannot find the main branch to compare with",
        "name the revision to compare from: `casebank diff BASE`",
    )


def run(args: argparse.Namespace) -> int:
    root = find_root(args.root)
    git.check_repository(root)
    base = _commit(root, args.base) if args.base else default_base(root)
    head = _commit(root, args.head) if args.head else None
    old = revision_cases(root, base)
    new = revision_cases(root, head) if head else worktree_cases(root)
    released = latest_entries(previous_manifests(root, head or "HEAD"))
    title = (
        f"casebank diff {(args.base or 'merge base')} ({base[:12]}) → "
        f"{args.head + ' (' + head[:12] + ')' if head and args.head else 'working tree'}"
    )
    render = render_markdown if args.format == "markdown" else render_text
    sys.stdout.write(render(diff_cases(old, new, released), title))
    return 0
