"""`casebank validate`: check the catalog and the cases, report, and exit 0, 1 or 2."""

from __future__ import annotations

import argparse
import sys
from pathlib import Path

from casebank.repo import find_root
from casebank.report import FORMATS, REPORTERS, pick_format
from casebank.validate import validate_repository

HELP = "Check cases and the catalog; report problems with file, line and field."


def register(parser: argparse.ArgumentParser) -> None:
    parser.add_argument(
        "paths",
        nargs="*",
        metavar="PATH",
        help="case files or folders to check (default: every case and the catalog)",
    )
    parser.add_argument(
        "--root", type=Path, help="repository root (default: the one holding the current folder)"
    )
    parser.add_argument(
        "--format",
        choices=FORMATS,
        default="auto",
        help="output format (default: auto, which is github under GitHub Actions, else text)",
    )
    parser.add_argument(
        "--strict", action="store_true", help="fail (exit 1) on warnings too, not only on errors"
    )


def run(args: argparse.Namespace) -> int:
    root = find_root(args.root)
    result = validate_repository(root, args.paths)
    reporter = REPORTERS[pick_format(args.format)](sys.stdout)
    reporter.report(result, len(result.acknowledged))
    return 1 if result.failed(strict=args.strict) else 0
