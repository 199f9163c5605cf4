"""`casebank site [--release X.Y.Z] --out DIR`: the dataset as a static website.

Without ``--release``: the working tree's cases, with the history of the releases committed on
HEAD (``--changed-since REV`` keeps only the cases changed since REV, for a pull request's
preview). With ``--release``: the cases exactly as released, read from git. The site is built
whole, then renamed into place, under the output-folder policy of every command that writes a
folder (``workspace.check_output_folder``). Pages: docs/site.md.
"""

from __future__ import annotations

import argparse
from pathlib import Path

from casebank.errors import UsageError
from casebank.workspace import check_output_folder, find_root, write_folder_atomically

HELP = "Build a static website of the cases: coverage, search, a page per case and per release."


def register(parser: argparse.ArgumentParser) -> None:
    parser.add_argument(
        "--out", required=True, type=Path, metavar="DIR", help="folder to write the site to"
    )
    parser.add_argument(
        "--release", metavar="X.Y.Z", help="the cases as released in X.Y.Z (default: working tree)"
    )
    parser.add_argument(
        "--changed-since",
        metavar="REV",
        help="only the cases changed since revision REV (a pull request's preview)",
    )


def run(args: argparse.Namespace) -> int:
    from casebank.commands.site_input import released_site, working_site
    from casebank.parallel import lasting
    from casebank.site.build import environment, site_files

    if args.release is not None and args.changed_since is not None:
        raise UsageError("--changed-since shows the working tree: leave out --release")
    env = environment()  # before any reading: without Jinja2 there is nothing to build
    root = find_root(args.root)
    out = check_output_folder(args.out, "site", root=root, replace=True)
    with lasting():  # the site's input lives until its pages are written
        if args.release is not None:
            site = released_site(root, args.release)
        else:
            site = working_site(root, args.changed_since)
    written = write_folder_atomically(
        out, site_files(site, env), command="site", root=root, replace=True
    )
    print(
        f"wrote {args.out}: {len(site.cases)} case page(s), {len(site.releases)} release "
        f"page(s), {written} files ({site.label})"
    )
    return 0
