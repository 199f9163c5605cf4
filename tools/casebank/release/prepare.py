"""Read what a release depends on (git reads only) and refuse early.

``prepare_release`` reads the previous manifests on HEAD, the tags and one history pass, checks
every precondition, and returns the planned Release with what applying it needs. It never
writes and never validates: the command runs validation and hands its digests in.
"""

from __future__ import annotations

from collections.abc import Iterable, Sequence
from dataclasses import dataclass
from pathlib import Path

from casebank.errors import CasebankError, UsageError
from casebank.format.canonical import CaseDigest
from casebank.format.layout import CATALOG_FILE, POLICY_FILE, WITHDRAWALS_FILE
from casebank.format.policy import Policy
from casebank.release import git, withdrawals
from casebank.release.changelog import insert_section
from casebank.release.history import (
    Digests,
    Snapshot,
    release_inputs,
    scan_history,
    section_changes,
    stored_manifests,
)
from casebank.release.manifest import CHANGELOG_FILE, Manifest, loads, parse_version, version_key
from casebank.release.plan import Release, classify, is_major_step, plan_release
from casebank.release.verify import Verification, verify_repository


@dataclass(frozen=True)
class Prepared:
    release: Release
    head: str
    branch: str | None
    changelog: str  # the whole new CHANGELOG.md


def previous_manifests(root: Path, treeish: str) -> list[Manifest]:
    """The manifests under releases/ in ``treeish``, oldest version first."""
    manifests = []
    for stored in stored_manifests(root, treeish):
        if parse_version(stored.version) is None:
            raise CasebankError(
                f"{stored.path}: not named after a release version (X.Y.Z.json)",
                "releases/ holds only manifests written by `casebank release`",
            )
        manifest = loads(stored.raw, stored.path)
        if manifest.version != stored.version:
            raise CasebankError(
                f"{stored.path} says it is release {manifest.version}",
                "restore the manifest from git; run `casebank verify`",
            )
        manifests.append(manifest)
    return sorted(manifests, key=lambda m: version_key(m.version))


def require_head(root: Path) -> str:
    git.check_repository(root)
    head = git.resolve_commit(root, "HEAD")
    if head is None:
        raise CasebankError(
            "the repository has no commits yet", "commit the cases and the catalog first"
        )
    return head


def check_new_version(version: str, previous: Sequence[Manifest], tags: Sequence[str]) -> None:
    """Refuse a version that is malformed, already used, or not above every earlier release."""
    wanted = parse_version(version)
    if wanted is None:
        raise UsageError(f"{version!r} is not a release version: use MAJOR.MINOR.PATCH, e.g. 1.2.0")
    earlier = {m.version for m in previous}
    earlier.update(t[1:] for t in tags if t.startswith("v") and parse_version(t[1:]))
    if version in earlier:
        raise CasebankError(
            f"release {version} already exists",
            "pick a higher version (`casebank release --suggest` proposes one)",
        )
    newer = [v for v in earlier if version_key(v) > wanted]
    if newer:
        latest = max(newer, key=version_key)
        raise CasebankError(
            f"release {version} is not above the latest release {latest}",
            "versions only go up: pick a version above it",
        )


def check_clean(root: Path) -> None:
    dirty = git.status(root)
    if dirty:
        shown = ", ".join(entry[3:] for entry in dirty[:5]) + (" ..." if len(dirty) > 5 else "")
        raise CasebankError(
            f"the working tree is not clean ({len(dirty)} changed or untracked files: {shown})",
            "commit or remove them first, then release",
        )


def current_state(
    root: Path, head: str, previous: Sequence[Manifest], digests: Digests | None = None
) -> tuple[Snapshot, dict[str, tuple[str, ...]]]:
    """The snapshot of HEAD (one history pass) and the sections changed in changed cases."""
    history = scan_history(root, head, {head}, digests)
    snapshot = history.snapshots[head]
    return snapshot, section_changes(history.digests, previous, snapshot)


Seed = Iterable[tuple[str, str, CaseDigest]]  # (blob id, path, digest) already computed


@dataclass(frozen=True)
class Preconditions:
    """What every refusal that needs no history checked: HEAD, its branch, earlier releases."""

    head: str
    branch: str | None
    previous: list[Manifest]


def check_preconditions(root: Path, version: str) -> Preconditions:
    """Refuse early, before anything expensive: the version, the repository, a clean tree."""
    check_new_version(version, [], [])  # the version's syntax first: a usage error needs no git
    head = require_head(root)
    previous = previous_manifests(root, head)
    check_new_version(version, previous, [t.name for t in git.list_tags(root)])
    check_clean(root)
    branch = git.current_branch(root)
    if branch is None:  # the release commit would be on no branch, and the push hint fail
        raise CasebankError(
            f"HEAD is detached (at {head[:12]}): a release commit must go on a branch",
            "check out the branch to release from (`git switch main`), or make one here "
            "(`git switch -c release`)",
        )
    return Preconditions(head, branch, previous)


def verified_state(root: Path, digests: Digests | None = None) -> Verification:
    """Verify every release and snapshot HEAD, in one history pass. Refuses (exit 1, naming the
    release) when an earlier release does not recompute: nothing may be built on it."""
    verification = verify_repository(root, digests=digests, snapshot_head=True)
    if verification.findings:
        found = verification.findings
        broken = sorted({f.release for f in found}, key=_version_or_zero)
        # A forked line explains the rest: say it first.
        shown = sorted(found, key=lambda f: "forked" not in f.message)[:3]
        more = f" (and {len(found) - 3} more)" if len(found) > 3 else ""
        raise CasebankError(
            f"release {', '.join(broken)} does not verify, so no release can be built on it: "
            + "; ".join(str(f) for f in shown)
            + more,
            "run `casebank verify` for every finding; restore the manifests and tags from "
            "their published copies",
        )
    return verification


def _version_or_zero(text: str) -> tuple[int, int, int]:
    return parse_version(text) or (0, 0, 0)


def prepare_release(
    root: Path, version: str, pre: Preconditions, *, seed: Seed = (), removal_reason: str = ""
) -> Prepared:
    """Verify every earlier release and snapshot HEAD (one history pass), then plan. Reads only;
    raises on the first refusal.

    ``seed`` holds digests of working-tree files the caller already parsed (validation does),
    so the history pass does not parse them again; a blob id names exactly those bytes."""
    digests = Digests(root)
    digests.seed_cases(seed)
    verification = verified_state(root, digests)
    snapshot = verification.snapshots[pre.head]
    _check_releasable(snapshot)
    _check_removals(version, pre.previous, snapshot, removal_reason)
    inputs = release_inputs(root, snapshot)
    _check_withdrawals(inputs.withdrawals, pre.previous)
    sections = section_changes(digests, pre.previous, snapshot)
    from casebank.format.schema import SCHEMA_VERSION, schema_fingerprint

    release = plan_release(
        version,
        pre.previous,
        snapshot,
        sections,
        schema_version=SCHEMA_VERSION,
        schema_sha256=schema_fingerprint(),
        removal_reason=removal_reason,
        withdrawal_requests=inputs.withdrawals,
        licence=inputs.policy.licence,
    )
    if inputs.policy.require_review and release.unreviewed:
        _refuse_unreviewed(release.unreviewed)
    existing = root / CHANGELOG_FILE
    text = existing.read_text(encoding="utf-8") if existing.is_file() else None
    changelog = insert_section(text, release.changelog_section, version)
    return Prepared(release, pre.head, pre.branch, changelog)


@dataclass(frozen=True)
class Pending:
    """What the next release would be, planned from HEAD (for reports, not for releasing)."""

    release: Release
    policy: Policy


def plan_pending(root: Path) -> Pending:
    """Plan the next release from HEAD as it stands, without validating or verifying (one
    history pass): what `review-status` reports. Refuses only where planning cannot work."""
    head = require_head(root)
    previous = previous_manifests(root, head)
    snapshot, sections = current_state(root, head, previous)
    inputs = release_inputs(root, snapshot)
    from casebank.format.schema import SCHEMA_VERSION, schema_fingerprint
    from casebank.release.plan import suggest_version

    taken = [t.name[1:] for t in git.list_tags(root) if t.name.startswith("v")]
    release = plan_release(
        suggest_version(previous, snapshot, taken),
        previous,
        snapshot,
        sections,
        schema_version=SCHEMA_VERSION,
        schema_sha256=schema_fingerprint(),
        withdrawal_requests=inputs.withdrawals,
        licence=inputs.policy.licence,
    )
    return Pending(release, inputs.policy)


def _check_removals(
    version: str, previous: Sequence[Manifest], snapshot: Snapshot, reason: str
) -> None:
    """Removing cases breaks whoever evaluates on them: a major release, or a stated reason."""
    removed = classify(previous, snapshot).removed
    if removed and not is_major_step(version, previous) and not reason.strip():
        major = version_key(previous[-1].version)[0] + 1
        shown = ", ".join(removed[:5]) + (" ..." if len(removed) > 5 else "")
        raise CasebankError(
            f"release {version} removes {len(removed)} case(s) ({shown}); removing cases is a "
            "major change",
            f"release {major}.0.0, or give the reason for a smaller step with "
            '`--allow-removal "REASON"` (the changelog records it)',
        )


def _check_withdrawals(
    requests: Sequence[withdrawals.Request], previous: Sequence[Manifest]
) -> None:
    found = [
        f"{WITHDRAWALS_FILE}:{request.line}: {message}"
        for request, message in withdrawals.problems(requests, previous)
    ]
    if found:
        raise CasebankError(
            "; ".join(found[:3]) + (f" (and {len(found) - 3} more)" if len(found) > 3 else ""),
            "only a released version can be withdrawn; remove the entry from "
            f"{WITHDRAWALS_FILE} (an unreleased change is simply fixed)",
        )


def _refuse_unreviewed(cases: Sequence[str]) -> None:
    shown = ", ".join(cases[:8]) + (f" and {len(cases) - 8} more" if len(cases) > 8 else "")
    raise CasebankError(
        f"{POLICY_FILE} requires review, and {len(cases)} added or changed case version(s) "
        f"have no reviewer who is not one of their authors: {shown}",
        "a reviewer who is not an author signs off the content: `casebank review CASE_ID... "
        '--by "Name <email>"`, or a `Reviewed-by:` trailer on the commit that made it '
        "(CONTRIBUTING.md, 'Review'); `casebank review-status` lists what is unreviewed and why",
    )


def _check_releasable(snapshot: Snapshot) -> None:
    if not snapshot.cases:
        raise CasebankError("there are no cases to release", "add cases under cases/ first")
    broken = sorted(c.path for c in snapshot.cases.values() if not c.digest.valid)
    if broken:
        raise CasebankError(
            f"cannot compute the canonical content of {', '.join(broken)}",
            "run `casebank validate` on these files",
        )
    if snapshot.catalog_blob is None:
        raise CasebankError(f"{CATALOG_FILE} is not committed", f"commit {CATALOG_FILE} first")
