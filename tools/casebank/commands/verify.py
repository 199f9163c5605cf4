"""`casebank verify`: recompute every release from git and check tags, chain and versions."""

from __future__ import annotations

import argparse
import sys

from casebank.release import git
from casebank.release.journal import recover, release_lock
from casebank.release.verify import verify_repository
from casebank.workspace import find_root

HELP = "Verify every release: manifests recomputed from git, tags, and case version rules."


def register(parser: argparse.ArgumentParser) -> None:
    pass


def run(args: argparse.Namespace) -> int:
    root = find_root(args.root)
    git.check_repository(root)
    if git.resolve_commit(root, "HEAD") is not None:
        with release_lock(root, "casebank verify"):
            recovered = recover(root)  # an interrupted release is finished or undone first
        if recovered:
            print(f"casebank: {recovered}", file=sys.stderr)
    result = verify_repository(root)
    if not result.releases and not result.findings:
        print("no releases yet: nothing to verify")
        return 0
    for finding in result.findings:
        print(f"error: {finding}")
    if result.findings:
        print(
            f"verify failed: {len(result.findings)} problem(s) in "
            f"{len({f.release for f in result.findings})} release(s)"
        )
        return 1
    print(f"verified {len(result.releases)} release(s): {', '.join(result.releases)}")
    return 0
