"""`casebank release X.Y.Z`: cut a dataset release (manifest, changelog, commit, annotated tag).

This command is where the two sides meet: under the repository's release lock, it finishes or
undoes an interrupted release, checks the preconditions, runs validation (the check side), and
hands the digests validation computed to the release side, which verifies every earlier release
and snapshots HEAD in one history pass, plans, and applies. A dry run takes no lock and writes
nothing, not even the validation cache.
"""

from __future__ import annotations

import argparse
import sys
from pathlib import Path

from casebank.errors import CasebankError, UsageError
from casebank.format.canonical import CaseDigest
from casebank.release import git
from casebank.release.apply import apply_release
from casebank.release.journal import Journal, recover, release_lock
from casebank.release.plan import render_plan, suggest_version
from casebank.release.prepare import (
    Seed,
    check_preconditions,
    prepare_release,
    previous_manifests,
    require_head,
    verified_state,
)
from casebank.workspace import find_root

HELP = "Cut a dataset release: assign case versions, write the manifest and changelog, tag."


def register(parser: argparse.ArgumentParser) -> None:
    parser.add_argument("version", nargs="?", metavar="X.Y.Z", help="the release's version")
    parser.add_argument(
        "--dry-run",
        action="store_true",
        help="check and print the plan (cases and their versions); write nothing",
    )
    parser.add_argument(
        "--suggest",
        action="store_true",
        help="print the next version: major if cases were removed, minor if "
        "added, patch if only changed",
    )
    parser.add_argument(
        "--push", action="store_true", help="also push the release commit and tag (atomically)"
    )
    parser.add_argument("--remote", default="origin", help="where --push pushes (default: origin)")
    parser.add_argument(
        "--allow-removal",
        metavar="REASON",
        default="",
        help="allow a minor or patch release that removes cases; the changelog records REASON",
    )


def validated_digests(root: Path, *, dry_run: bool) -> Seed:
    """Validate the working tree (refusing on any error) and return the digests it computed."""
    from casebank.check.validate import Options, validate_repository
    from casebank.commands.memory import RememberedCatalog
    from casebank.format.canonical import file_digest

    memory = RememberedCatalog(root)
    options = Options(write_cache=not dry_run, annotate=file_digest, catalog_memory=memory)
    result = validate_repository(root, None, options)
    if result.errors:
        first = result.sorted()[0]
        raise CasebankError(
            f"validation found {result.errors} error(s), e.g. {first.file}:{first.line}: "
            f"{first.message}",
            "run `casebank validate` and fix every error before releasing",
        )
    return [
        (note["blob"], path, CaseDigest(**{k: v for k, v in note.items() if k != "blob"}))
        for path, note in result.annotations.items()
    ]


def run(args: argparse.Namespace) -> int:
    root = find_root(args.root)
    if args.suggest:
        if args.version is not None or args.push:
            raise UsageError("--suggest takes no version and does not combine with --push")
        return _suggest(root)
    if args.version is None:
        raise UsageError("give the version to release (X.Y.Z), or --suggest")
    if args.dry_run:
        _refuse_when_interrupted(root)
        return _release(root, args)
    with release_lock(root, f"casebank release {args.version}"):
        recovered = recover(root)
        if recovered:
            print(f"casebank: {recovered}", file=sys.stderr)
        return _release(root, args)


def _refuse_when_interrupted(root: Path) -> None:
    git.check_repository(root)
    journal = Journal.load(root)
    if journal is not None:
        raise CasebankError(
            f"release {journal.version} was interrupted and is not finished or undone yet",
            "run `casebank release` (or `casebank verify`) to finish or undo it first",
        )


def _suggest(root: Path) -> int:
    _refuse_when_interrupted(root)
    head = require_head(root)
    previous = previous_manifests(root, head)
    snapshot = verified_state(root).snapshots[head]
    taken = [t.name[1:] for t in git.list_tags(root) if t.name.startswith("v")]
    print(suggest_version(previous, snapshot, taken))
    return 0


def _release(root: Path, args: argparse.Namespace) -> int:
    pre = check_preconditions(root, args.version)
    seed = validated_digests(root, dry_run=args.dry_run)
    prepared = prepare_release(
        root, args.version, pre, seed=seed, removal_reason=args.allow_removal
    )
    if args.dry_run:
        print(render_plan(prepared.release))
        return 0
    commit = apply_release(root, prepared, remote=args.remote if args.push else None)
    release = prepared.release
    print(render_plan(release, unchanged=False))
    print(
        f"\nreleased {release.version}: {release.path}, commit {commit[:12]}, tag {release.tag}"
        + (f", pushed to {args.remote}" if args.push else "")
    )
    if not args.push:
        print(f"push it with: git push --atomic {args.remote} HEAD {release.tag}", file=sys.stderr)
    return 0
