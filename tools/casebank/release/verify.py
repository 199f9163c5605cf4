"""Verify every release in the repository against git: the manifests, the tags, the history.

For each ``releases/X.Y.Z.json`` on HEAD and each ``v*`` tag:

- every manifest has its tag and every ``v*`` tag its manifest; tags are annotated;
- the tag's commit is a child of the manifest's source commit, holds the very same manifest
  file, and the same ``cases/`` and ``catalog.yaml`` as the source commit;
- the manifests form a chain (each names the one before it as its previous version);
- no (case_id, version) ever names two content hashes, and a case's version goes up by exactly
  one whenever its content changed between releases (and not otherwise);
- each manifest is byte-identical to its recomputation from the source commit's tree and
  history, on top of the recomputed releases before it. The schema version and hash are the
  only fields taken from the manifest as written: they record the tool that cut the release,
  which git alone cannot reproduce.

History is read in one pass from HEAD; a source commit off HEAD's first-parent line (rare: a
release branch merged as a second parent) costs one more pass.
"""

from __future__ import annotations

import itertools
from collections.abc import Sequence
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

from casebank.errors import CasebankError
from casebank.format.layout import CASES_DIR, CATALOG_FILE
from casebank.release import git
from casebank.release.history import (
    Digests,
    ReleaseInputs,
    Snapshot,
    StoredManifest,
    release_inputs,
    scan_history,
    section_changes,
    stored_manifests,
)
from casebank.release.manifest import (
    Manifest,
    dumps,
    loads,
    manifest_path,
    parse_version,
    tag_name,
    to_data,
    version_key,
)
from casebank.release.plan import plan_release


@dataclass(frozen=True, order=True)
class Finding:
    release: str
    case: str
    message: str

    def __str__(self) -> str:
        where = f"release {self.release}" + (f", case {self.case}" if self.case else "")
        return f"{where}: {self.message}"


@dataclass
class Verification:
    releases: list[str] = field(default_factory=list)
    findings: list[Finding] = field(default_factory=list)
    manifests: list[Manifest] = field(default_factory=list)
    # The one history pass, for a release to reuse: snapshots by commit, and blob digests.
    snapshots: dict[str, Snapshot] = field(default_factory=dict)
    digests: Digests | None = None

    def add(self, release: str, message: str, case: str = "") -> None:
        self.findings.append(Finding(release, case, message))


def verify_repository(
    root: Path, *, digests: Digests | None = None, snapshot_head: bool = False
) -> Verification:
    """Check every release; with ``snapshot_head`` also snapshot HEAD in the same history pass
    (what a release needs), reusing ``digests`` (what validation already parsed)."""
    result = Verification(digests=digests or Digests(root))
    git.check_repository(root)
    head = git.resolve_commit(root, "HEAD")
    if head is None:  # an empty repository has no releases either
        return result
    stored = stored_manifests(root, head)
    manifests = _load(stored, result)
    result.manifests = manifests
    tags = {t.name: t for t in git.list_tags(root) if t.name.startswith("v")}
    result.releases = sorted(
        {m.version for m in manifests} | {t[1:] for t in tags if parse_version(t[1:])},
        key=version_key,
    )
    if not stored and not tags:
        if snapshot_head:
            assert result.digests is not None
            result.snapshots = scan_history(root, head, {head}, result.digests).snapshots
        return result
    _check_tags(root, head, manifests, tags, result)
    _check_chain(manifests, result)
    _check_line(root, head, manifests, tags, result)
    _check_versions(manifests, result)
    raw = {item.version: item.raw for item in stored}
    _check_recomputation(root, head, manifests, raw, result, snapshot_head)
    result.findings.sort()
    return result


def _check_line(
    root: Path,
    head: str,
    manifests: list[Manifest],
    tags: dict[str, git.TagRef],
    result: Verification,
) -> None:
    """Releases form one line: each is cut from a commit that contains the release before it.
    Two releases on forked lines would each give versions the other does not know."""
    tagged = [(m, tags[tag_name(m.version)]) for m in manifests if tag_name(m.version) in tags]
    if len(tagged) < 2:
        return
    # Ancestry from every release's own commits too, not only HEAD: after a rebase the
    # releases' commits are off HEAD's history, yet one may well contain another.
    tips = {head, *(t.commit for _, t in tagged), *(m.source_commit for m, _ in tagged)}
    commits = git.resolve_objects(root, [f"{tip}^{{commit}}" for tip in sorted(tips)])
    parents = git.parents(root, *sorted({found[0] for found in commits.values() if found}))
    for (earlier, earlier_tag), (later, _) in itertools.pairwise(tagged):
        if not _reaches(parents, later.source_commit, earlier_tag.commit):
            result.add(
                later.version,
                f"it is on a line forked from release {earlier.version}: its source commit "
                f"{later.source_commit[:12]} does not contain {earlier_tag.name} "
                f"({earlier_tag.commit[:12]}), so versions of the two lines can collide. "
                f"Releases must form one line: if one of the two was never published, delete "
                f"its tag and manifest; cut later releases on the line that holds both",
            )


def _reaches(parents: dict[str, tuple[str, ...]], start: str, wanted: str) -> bool:
    """Whether ``wanted`` is ``start`` or one of its ancestors."""
    seen, stack = {start}, [start]
    while stack:
        commit = stack.pop()
        if commit == wanted:
            return True
        for parent in parents.get(commit, ()):
            if parent not in seen:
                seen.add(parent)
                stack.append(parent)
    return False


def _load(stored: list[StoredManifest], result: Verification) -> list[Manifest]:
    manifests = []
    for item in stored:
        if parse_version(item.version) is None:
            result.add(item.version, f"{item.path} is not named after a release version")
            continue
        try:
            manifest = loads(item.raw, item.path)
        except CasebankError as exc:
            result.add(item.version, str(exc))
            continue
        if manifest.version != item.version:
            result.add(item.version, f"{item.path} says it is release {manifest.version}")
            continue
        manifests.append(manifest)
    return sorted(manifests, key=lambda m: version_key(m.version))


def _check_tags(
    root: Path,
    head: str,
    manifests: list[Manifest],
    tags: dict[str, git.TagRef],
    result: Verification,
) -> None:
    by_version = {m.version: m for m in manifests}
    unreachable = git.tags_not_merged(root, head)
    copies = git.resolve_objects(
        root,
        [f"{r}:{manifest_path(name[1:])}" for name in sorted(unreachable) for r in (head, name)],
    )
    for name in sorted(tags):
        if name[1:] not in by_version:
            result.add(name[1:], f"tag {name} has no manifest {manifest_path(name[1:])} on HEAD")
        if name in unreachable:
            path = manifest_path(name[1:])
            copied = copies.get(f"{head}:{path}") is not None and (
                copies.get(f"{head}:{path}") == copies.get(f"{name}:{path}")
            )
            result.add(name[1:], _unreachable(tags[name], path, copied))
    names: list[str] = []
    for manifest in manifests:
        tag = tags.get(tag_name(manifest.version))
        source = manifest.source_commit
        names += [
            f"{source}^{{commit}}",
            f"{source}:{CASES_DIR}",
            f"{source}:{CATALOG_FILE}",
            f"{head}:{manifest_path(manifest.version)}",
        ]
        if tag is not None:
            names += [
                f"{tag.commit}^1",
                f"{tag.commit}:{manifest_path(manifest.version)}",
                f"{tag.commit}:{CASES_DIR}",
                f"{tag.commit}:{CATALOG_FILE}",
            ]
    found = git.resolve_objects(root, names)
    for manifest in manifests:
        _check_tag(manifest, tags.get(tag_name(manifest.version)), head, found, result)


def _unreachable(tag: git.TagRef, path: str, copied: bool) -> str:
    if not copied:
        return f"tag {tag.name} is not in HEAD's history (was history rewritten?)"
    return (
        f"tag {tag.name} is not in HEAD's history, yet HEAD holds the same {path}: the branch "
        "was rewritten after the release (a rebase, an amend or a cherry-pick), so HEAD "
        f"carries a copy of the release commit {tag.commit[:12]}, not the commit itself. A "
        f"release must stay in the history: reset the branch to {tag.name}'s line and bring "
        "the later work back with git merge or git cherry-pick, never a rebase"
    )


def _check_tag(
    manifest: Manifest,
    tag: git.TagRef | None,
    head: str,
    found: dict[str, tuple[str, str] | None],
    result: Verification,
) -> None:
    version, source, path = (
        manifest.version,
        manifest.source_commit,
        manifest_path(manifest.version),
    )
    if found[f"{source}^{{commit}}"] is None:
        result.add(version, f"its source commit {source} is not in the repository's history")
    if tag is None:
        result.add(version, f"the manifest has no tag {tag_name(version)}")
        return
    if tag.object_type != "tag":
        result.add(version, f"tag {tag.name} is not an annotated tag")
    parent = found[f"{tag.commit}^1"]
    if parent is None or parent[0] != source:
        result.add(
            version,
            f"tag {tag.name} points at {tag.commit[:12]}, which is not the "
            f"release commit made on the source commit {source[:12]}",
        )
    if found[f"{tag.commit}:{path}"] != found[f"{head}:{path}"]:
        result.add(version, f"{path} on HEAD differs from the one in the tagged commit")
    for part, shown in ((CASES_DIR, f"{CASES_DIR}/"), (CATALOG_FILE, CATALOG_FILE)):
        if found[f"{tag.commit}:{part}"] != found[f"{source}:{part}"]:
            result.add(version, f"the tagged commit's {shown} differs from the source commit's")


def _check_chain(manifests: list[Manifest], result: Verification) -> None:
    expected: str | None = None
    for manifest in manifests:
        if manifest.previous_version != expected:
            result.add(
                manifest.version,
                f"it names {manifest.previous_version or 'no release'} "
                f"as its previous version, not {expected or 'none'}",
            )
        expected = manifest.version


def _check_versions(manifests: list[Manifest], result: Verification) -> None:
    hashes: dict[tuple[str, int], tuple[str, str]] = {}
    last: dict[str, tuple[int, str]] = {}
    for manifest in manifests:
        for entry in manifest.cases:
            key = (entry.case_id, entry.version)
            seen = hashes.setdefault(key, (entry.sha256, manifest.version))
            if seen[0] != entry.sha256:
                result.add(
                    manifest.version,
                    f"version {entry.version} has content "
                    f"{entry.sha256[:12]}, but {seen[0][:12]} in release {seen[1]}",
                    entry.case_id,
                )
            before = last.get(entry.case_id)
            if before is not None:
                step = 0 if before[1] == entry.sha256 else 1
                if entry.version != before[0] + step:
                    what = "changed" if step else "did not change"
                    result.add(
                        manifest.version,
                        f"its content {what}, so its version should "
                        f"be {before[0] + step}, not {entry.version}",
                        entry.case_id,
                    )
            last[entry.case_id] = (entry.version, entry.sha256)


def _check_recomputation(
    root: Path,
    head: str,
    manifests: list[Manifest],
    raw: dict[str, bytes],
    result: Verification,
    snapshot_head: bool,
) -> None:
    sources = {m.source_commit for m in manifests}
    digests = result.digests
    assert digests is not None
    snapshots = dict(
        scan_history(root, head, sources | ({head} if snapshot_head else set()), digests).snapshots
    )
    result.snapshots = snapshots
    for source in sorted(sources - snapshots.keys()):
        if git.resolve_commit(root, source) == source:
            snapshots.update(scan_history(root, source, {source}, digests).snapshots)
    # Each release is recomputed on top of the recomputed releases before it, so a tampered
    # manifest is reported once, where it is, not again in every later release.
    chain: list[Manifest] = []
    for manifest in manifests:
        snapshot = snapshots.get(manifest.source_commit)
        if snapshot is None:
            result.add(manifest.version, "cannot be recomputed: its source commit is missing")
            chain.append(manifest)
            continue
        try:
            inputs = release_inputs(root, snapshot)
        except CasebankError as exc:
            result.add(manifest.version, f"cannot be recomputed: {exc}")
            chain.append(manifest)
            continue
        recomputed = _recompute(manifest, chain, snapshot, digests, inputs)
        if dumps(recomputed) != raw[manifest.version]:
            _compare(manifest, recomputed, result)
        chain.append(recomputed)


def _recompute(
    manifest: Manifest,
    previous: Sequence[Manifest],
    snapshot: Snapshot,
    digests: Digests,
    inputs: ReleaseInputs,
) -> Manifest:
    """The manifest git says release ``manifest.version`` must be, in the manifest's own
    format (a format-1 release carries no reviewers, provenance or withdrawals)."""
    sections = section_changes(digests, previous, snapshot)
    return plan_release(
        manifest.version,
        previous,
        snapshot,
        sections,
        schema_version=manifest.schema_version,
        schema_sha256=manifest.schema_sha256,
        withdrawal_requests=inputs.withdrawals,
        licence=inputs.policy.licence,
        manifest_format=manifest.format,
    ).manifest


def _compare(stored: Manifest, recomputed: Manifest, result: Verification) -> None:
    """Name each field that differs; the bytes differ even when no field does (formatting)."""
    version = stored.version
    if dumps(stored) == dumps(recomputed):
        result.add(version, "the manifest's data is right but its bytes were edited (formatting)")
        return
    old, new = to_data(stored), to_data(recomputed)
    for key in sorted(old.keys() | new.keys()):
        if key != "cases" and old.get(key) != new.get(key):
            result.add(
                version,
                f"`{key}` is {_short(old.get(key))} in the manifest, "
                f"but {_short(new.get(key))} recomputed from git",
            )
    old_cases = {c["case_id"]: c for c in old["cases"]}
    new_cases = {c["case_id"]: c for c in new["cases"]}
    for case_id in sorted(old_cases.keys() | new_cases.keys()):
        before, after = old_cases.get(case_id), new_cases.get(case_id)
        if before is None:
            result.add(version, "missing from the manifest, but in the source commit", case_id)
        elif after is None:
            result.add(version, "in the manifest, but not in the source commit", case_id)
        else:
            for key in sorted(before.keys() | after.keys()):
                if before.get(key) != after.get(key):
                    result.add(
                        version,
                        f"`{key}` is {_short(before.get(key))} in the manifest, "
                        f"but {_short(after.get(key))} recomputed from git",
                        case_id,
                    )


def _short(value: Any) -> str:
    text = repr(value)
    return text if len(text) <= 80 else text[:77] + "..."
