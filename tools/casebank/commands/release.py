"""`casebank release X.Y.Z`: cut a dataset release (manifest, changelog, commit, annotated tag).

This command is where the two sides meet: it runs validation (the check side), hands the digests
validation computed to the release side's preparation, and applies the plan. A dry run reads the
validation cache but writes nothing, not even the cache.
"""

from __future__ import annotations

import argparse
import sys
from pathlib import Path

from casebank.errors import CasebankError, UsageError
from casebank.format.canonical import CaseDigest
from casebank.release.apply import apply_release
from casebank.release.plan import render_plan, suggest_version
from casebank.release.prepare import (
    Seed,
    check_preconditions,
    current_state,
    prepare_release,
    previous_manifests,
    require_head,
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


def validated_digests(root: Path, *, dry_run: bool) -> Seed:
    """Validate the working tree (refusing on any error) and return the digests it computed."""
    from casebank.check.validate import Options, validate_repository
    from casebank.format.canonical import file_digest

    result = validate_repository(root, None, Options(write_cache=not dry_run, annotate=file_digest))
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
        head = require_head(root)
        previous = previous_manifests(root, head)
        snapshot, _ = current_state(root, head, previous)
        print(suggest_version(previous, snapshot))
        return 0
    if args.version is None:
        raise UsageError("give the version to release (X.Y.Z), or --suggest")
    pre = check_preconditions(root, args.version, push=args.push and not args.dry_run)
    seed = validated_digests(root, dry_run=args.dry_run)
    prepared = prepare_release(root, args.version, pre, seed=seed)
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
