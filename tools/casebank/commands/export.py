"""`casebank export --release X.Y.Z --out DIR`: a release as a verifiable bundle for harnesses."""

from __future__ import annotations

import argparse
import sys
from pathlib import Path

from casebank.release.released import load_release
from casebank.serve.export import FORMATS as BUNDLE_FORMATS
from casebank.serve.export import bundle
from casebank.workspace import check_output_folder, find_root, write_folder_atomically

HELP = "Write a release as an export bundle: cases, catalog, manifest, dataset card, SHA256SUMS."
FORMATS = BUNDLE_FORMATS
FORMAT_HELP = (
    "format of the cases file (parquet needs pyarrow: in the clone, "
    '`python3 -m pip install -e ".[export]"`)'
)


def register(parser: argparse.ArgumentParser) -> None:
    parser.add_argument("--release", required=True, metavar="X.Y.Z", help="the release to export")
    parser.add_argument("--out", required=True, type=Path, metavar="DIR", help="folder to create")
    parser.add_argument(
        "--force", action="store_true", help="replace DIR if an earlier export wrote it"
    )


def run(args: argparse.Namespace) -> int:
    root = find_root(args.root)
    check_output_folder(args.out, "export", root=root, replace=args.force)
    loaded = load_release(root, args.release)
    files = bundle(loaded, args.format)
    write_folder_atomically(args.out, files, command="export", root=root, replace=args.force)
    manifest = loaded.manifest
    left_out = len(loaded.cases) - len(loaded.current)
    print(
        f"exported release {manifest.version}: {len(loaded.current)} case(s) to "
        f"{args.out}/cases.{args.format}"
        + (f" ({left_out} withdrawn version(s) left out)" if left_out else "")
    )
    for item in loaded.withdrawn_later:
        print(
            f"note: {item.case_id}@{item.version} is in this release but was withdrawn in "
            f"release {item.release}: {item.reason}",
            file=sys.stderr,
        )
    return 0
