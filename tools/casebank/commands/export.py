"""`casebank export --release X.Y.Z --out DIR`: a release as a verifiable bundle for harnesses."""

from __future__ import annotations

import argparse
import sys
from pathlib import Path

from casebank.release.released import open_release
from casebank.serve.export import FORMATS as BUNDLE_FORMATS
from casebank.serve.export import format_help, write_bundle
from casebank.workspace import FolderWriter, build_folder_atomically, check_output_folder, find_root

HELP = "Write a release as an export bundle: cases, catalog, manifest, dataset card, SHA256SUMS."
FORMATS = BUNDLE_FORMATS  # serve.export.WRITERS: one entry per format
FORMAT_HELP = format_help()


def register(parser: argparse.ArgumentParser) -> None:
    parser.add_argument("--release", required=True, metavar="X.Y.Z", help="the release to export")
    parser.add_argument("--out", required=True, type=Path, metavar="DIR", help="folder to create")
    parser.add_argument(
        "--force", action="store_true", help="replace DIR if an earlier export wrote it"
    )


def run(args: argparse.Namespace) -> int:
    root = find_root(args.root)
    check_output_folder(args.out, "export", root=root, replace=args.force)
    reader = open_release(root, args.release)
    written = 0

    def build(folder: FolderWriter) -> None:
        nonlocal written
        written = write_bundle(reader, args.format, folder)

    build_folder_atomically(args.out, build, command="export", root=root, replace=args.force)
    manifest = reader.manifest
    left_out = len(manifest.cases) - written
    print(
        f"exported release {manifest.version}: {written} case(s) to "
        f"{args.out}/cases.{args.format}"
        + (f" ({left_out} withdrawn version(s) left out)" if left_out else "")
    )
    for item in reader.withdrawn_later:
        print(
            f"note: {item.case_id}@{item.version} is in this release but was withdrawn in "
            f"release {item.release}: {item.reason}",
            file=sys.stderr,
        )
    return 0
