"""`casebank show CASE_ID[@VERSION]`: print a case exactly as released, from git."""

from __future__ import annotations

import argparse
import re
import sys

from casebank.errors import CasebankError, UsageError
from casebank.format.identifiers import require_case_id
from casebank.release import git
from casebank.release.manifest import CaseEntry, Manifest, parse_version
from casebank.release.prepare import previous_manifests, require_head
from casebank.workspace import find_root

HELP = "Print a case exactly as released (the latest version, or CASE_ID@VERSION)."

_SPEC = re.compile(r"(?P<case>[^@]*)(@(?P<version>[1-9][0-9]*))?")


def register(parser: argparse.ArgumentParser) -> None:
    parser.add_argument(
        "case",
        metavar="CASE_ID[@VERSION]",
        help="a case id, optionally with a case version (chest_pain_001@2)",
    )
    parser.add_argument(
        "--release", metavar="X.Y.Z", help="the case as it was in this dataset release"
    )


def run(args: argparse.Namespace) -> int:
    match = _SPEC.fullmatch(args.case)
    if match is None:
        raise UsageError(f"{args.case!r}: expected CASE_ID or CASE_ID@VERSION (a number >= 1)")
    case_id = require_case_id(match.group("case"))
    if args.release is not None and parse_version(args.release) is None:
        raise UsageError(f"--release {args.release!r}: expected X.Y.Z")
    root = find_root(args.root)
    manifests = previous_manifests(root, require_head(root))
    number = match.group("version")
    entry = find_entry(manifests, case_id, int(number) if number else None, args.release)
    for _, content in git.read_blobs(root, [entry.blob]):
        if sys.stdout.isatty():  # for a person: escaped, like everything casebank prints
            sys.stdout.write(content.decode("utf-8", "replace"))
            continue
        sys.stdout.flush()  # for a file or a pipe: the released bytes, exactly
        sys.stdout.buffer.write(content)
        sys.stdout.buffer.flush()
    withdrawn = manifests[-1].withdrawal(entry.case_id, entry.version)
    if withdrawn is not None:
        print(
            f"casebank: {entry.case_id}@{entry.version} was withdrawn in release "
            f"{withdrawn.release}: {withdrawn.reason}",
            file=sys.stderr,
        )
    return 0


def find_entry(
    manifests: list[Manifest], case_id: str, version: int | None, release: str | None
) -> CaseEntry:
    """The released entry: in ``release`` if given, else where ``version`` was first released,
    else the case's latest released version."""
    if not manifests:
        raise CasebankError("there are no releases yet", "cut one with `casebank release X.Y.Z`")
    if release is not None:
        chosen = [m for m in manifests if m.version == release]
        if not chosen:
            raise CasebankError(
                f"there is no release {release}",
                f"releases: {', '.join(m.version for m in manifests)}",
            )
        manifests = chosen
    found = [e for m in manifests if (e := m.case(case_id)) is not None]
    if not found:
        where = f"release {release}" if release else "any release"
        raise CasebankError(
            f"case {case_id} is not in {where}",
            "`casebank history CASE_ID` lists where a case was released",
        )
    if version is None:
        return found[-1]
    for entry in found:
        if entry.version == version:
            return entry
    versions = sorted({e.version for e in found})
    raise CasebankError(
        f"case {case_id} has no released version {version}"
        + (f" in release {release}" if release else ""),
        f"released versions: {', '.join(str(v) for v in versions)}",
    )
