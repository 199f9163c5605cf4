"""`casebank verify`: recompute every release from git and check tags, chain and versions."""

from __future__ import annotations

import argparse

from casebank.release.verify import verify_repository
from casebank.workspace import find_root

HELP = "Verify every release: manifests recomputed from git, tags, and case version rules."


def register(parser: argparse.ArgumentParser) -> None:
    pass


def run(args: argparse.Namespace) -> int:
    result = verify_repository(find_root(args.root))
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
