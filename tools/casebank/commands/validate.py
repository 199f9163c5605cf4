"""`casebank validate`: check the catalog and the cases, report, and exit 0, 1 or 2."""

from __future__ import annotations

import argparse
import sys
from pathlib import Path

from casebank.check.report import FORMATS as REPORT_FORMATS
from casebank.check.report import REPORTERS, pick_format
from casebank.check.validate import Options, Validation, validate_files, validate_repository
from casebank.commands.memory import RememberedCatalog
from casebank.errors import UsageError
from casebank.format.canonical import file_digest
from casebank.format.layout import CACHE_DIR
from casebank.workspace import find_root

HELP = "Check cases and the catalog; report problems with file, line and field."
FORMATS = REPORT_FORMATS  # every reporter in the registry, and auto
DEFAULT_FORMAT = "auto"
FORMAT_HELP = "output format (default: auto, which is github under GitHub Actions, else text)"


def register(parser: argparse.ArgumentParser) -> None:
    parser.add_argument(
        "paths",
        nargs="*",
        metavar="PATH",
        help="case files or folders to check (default: every case and the catalog)",
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


def options(args: argparse.Namespace, root: Path) -> Options:
    # The digest is what a release needs of each file; keeping it now makes a later release
    # reuse this run's parsing (the cache stores it with the problems): a run that writes no
    # cache computes none (about a tenth of such a run). The catalog is remembered for the
    # commands that serve a case (the first `results` after this run).
    return Options(
        cache=not args.no_cache,
        jobs=args.jobs,
        annotate=None if args.no_cache else file_digest,
        catalog_memory=RememberedCatalog(root),
    )


def _validate(args: argparse.Namespace, root: Path) -> Validation:
    if not args.changed_since:
        return validate_repository(root, args.paths, options(args, root))
    if args.paths:
        raise UsageError("give either paths or --changed-since, not both")
    from casebank.release.git import changed_files  # the git layer: only this option needs it

    catalog_changed, files = changed_files(root, args.changed_since)
    if catalog_changed:  # every case's checks depend on the catalog
        return validate_repository(root, None, options(args, root))
    return validate_files(root, files, with_catalog=False, options=options(args, root))


def run(args: argparse.Namespace) -> int:
    if args.jobs is not None and args.jobs < 1:
        raise UsageError("--jobs must be 1 or more")
    root = find_root(args.root)
    result = _validate(args, root)
    reporter = REPORTERS[pick_format(args.format)](sys.stdout)
    reporter.report(result, len(result.acknowledged))
    return 1 if result.failed(strict=args.strict) else 0
