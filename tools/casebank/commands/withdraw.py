"""`casebank withdraw CASE_ID@VERSION --reason TEXT`: record a released version as withdrawn."""

from __future__ import annotations

import argparse
import re

from casebank.errors import CasebankError, UsageError
from casebank.format.identifiers import require_case_id
from casebank.format.layout import WITHDRAWALS_FILE
from casebank.release import withdrawals
from casebank.release.journal import release_lock
from casebank.release.prepare import previous_manifests, require_head
from casebank.workspace import find_root, write_atomically

HELP = "Withdraw a released case version found wrong (the next release carries it)."

_SPEC = re.compile(r"(?P<case>[^@]*)@(?P<version>[1-9][0-9]*)")


def register(parser: argparse.ArgumentParser) -> None:
    parser.add_argument("case", metavar="CASE_ID@VERSION", help="the released version, e.g. x@2")
    parser.add_argument(
        "--reason",
        required=True,
        help=f"why the version is wrong ({withdrawals.MIN_REASON}+ characters; it is published)",
    )


def run(args: argparse.Namespace) -> int:
    match = _SPEC.fullmatch(args.case)
    if match is None:
        raise UsageError(f"{args.case!r}: expected CASE_ID@VERSION, e.g. chest_pain_001@2")
    reason = " ".join(args.reason.split())
    if len(reason) < withdrawals.MIN_REASON:
        raise UsageError(
            f"--reason: say in {withdrawals.MIN_REASON} characters or more why the version is "
            "wrong; the reason is published in the manifest and the changelog"
        )
    case_id, version = require_case_id(match.group("case")), int(match.group("version"))
    root = find_root(args.root)
    with release_lock(root, "casebank withdraw"):
        manifests = previous_manifests(root, require_head(root))
        path = root / WITHDRAWALS_FILE
        existing = withdrawals.parse(path.read_bytes() if path.is_file() else None)
        request = withdrawals.Request(case_id, version, reason)
        for _, problem in withdrawals.problems([request], manifests):
            raise CasebankError(problem, "`casebank history CASE_ID` lists its released versions")
        for manifest in manifests:
            done = manifest.withdrawal(case_id, version)
            if done is not None:
                raise CasebankError(
                    f"{case_id}@{version} was already withdrawn in release {done.release}",
                    "nothing to do",
                )
        if any((r.case_id, r.version) == (case_id, version) for r in existing):
            raise CasebankError(
                f"{case_id}@{version} is already recorded in {WITHDRAWALS_FILE}",
                "commit the file; the next release carries it",
            )
        write_atomically(path, withdrawals.render([*existing, request]))
    print(
        f"recorded {case_id}@{version} in {WITHDRAWALS_FILE}; commit it, and the next release's "
        "manifest carries the withdrawal (exports leave the version out, the scorer refuses it)"
    )
    return 0
