"""`casebank validate`: check the catalog and the cases, report, and exit 0, 1 or 2."""

from __future__ import annotations

import argparse
import sys
from pathlib import Path

from casebank.cache import CACHE_DIR
from casebank.errors import UsageError
from casebank.repo import find_root
from casebank.report import FORMATS, REPORTERS, pick_format
from casebank.validate import Validation, changed_since, validate_files, validate_repository

HELP = "Check cases and the catalog; report problems with file, line and field."


def register(parser: argparse.ArgumentParser) -> None:
    parser.add_argument(
        "paths",
        nargs="*",
        metavar="PATH",
        help="case files or folders to check (default: every case and the catalog)",
    )
    parser.add_argument(
        "--root",
        type=Path,
        help="repository root (default: the one holding the current folder)",
    )
    parser.add_argument(
        "--format",
        choices=FORMATS,
        default="auto",
        help="output format (default: auto, which is github under GitHub Actions, else text)",
    )
    parser.add_argument(
        "--strict", action="store_true", help="fail (exit 1) on warnings too, not only errors"
    )
    parser.add_argument(
        "--changed-since",
        metavar="REV",
        help="check only case files added or changed since REV (every case if the catalog changed)",
    )
    parser.add_argument(
        "--no-cache", action="store_true", help=f"neither read nor write the cache in {CACHE_DIR}/"
    )
    parser.add_argument(
        "--jobs",
        type=int,
        metavar="N",
        help="worker processes for large runs (default: one per core)",
    )


def _validate(args: argparse.Namespace, root: Path) -> Validation:
    options = {"use_cache": not args.no_cache, "jobs": args.jobs}
    if not args.changed_since:
        return validate_repository(root, args.paths, **options)
    if args.paths:
        raise UsageError("give either paths or --changed-since, not both")
    catalog_changed, files = changed_since(root, args.changed_since)
    if catalog_changed:  # every case's checks depend on the catalog
        return validate_repository(root, **options)
    return validate_files(root, files, with_catalog=False, **options)


def run(args: argparse.Namespace) -> int:
    if args.jobs is not None and args.jobs < 1:
        raise UsageError("--jobs must be 1 or more")
    root = find_root(args.root)
    result = _validate(args, root)
    reporter = REPORTERS[pick_format(args.format)](sys.stdout)
    reporter.report(result, len(result.acknowledged))
    return 1 if result.failed(strict=args.strict) else 0
