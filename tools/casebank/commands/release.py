"""`casebank release X.Y.Z`: cut a dataset release (manifest, changelog, commit, annotated tag)."""

from __future__ import annotations

import argparse
import sys
from pathlib import Path

from casebank.errors import UsageError
from casebank.release import (
    apply_release,
    current_state,
    prepare_release,
    previous_manifests,
    render_plan,
    require_head,
    suggest_version,
)
from casebank.repo import find_root

HELP = "Cut a dataset release: assign case versions, write the manifest and changelog, tag."


def register(parser: argparse.ArgumentParser) -> None:
    parser.add_argument("version", nargs="?", metavar="X.Y.Z", help="the release's version")
    parser.add_argument(
        "--root", type=Path, help="repository root (default: the one holding the current folder)"
    )
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
    prepared = prepare_release(root, args.version, push=args.push and not args.dry_run)
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
