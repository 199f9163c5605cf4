"""The semantic difference between two states of the dataset, for reviewers.

Pure: it takes the cases on each side (already loaded) and the last released entries, and says
which cases were added, removed or changed, which fields changed from what to what, and which
version each case will get at the next release. Formatting is the only thing that differs between
the text and markdown outputs. Reading the two sides from git or disk is ``commands/diff.py``.
"""

from __future__ import annotations

import json
from collections.abc import Mapping
from dataclasses import dataclass, field
from typing import Any

from casebank.format.canonical import content_hash, data_hash
from casebank.format.document import Path, format_path
from casebank.markdown import cell as markdown_cell
from casebank.markdown import code as markdown_code
from casebank.markdown import text as markdown_text
from casebank.release.manifest import CaseEntry

MISSING = object()  # a field absent on one side


@dataclass(frozen=True)
class CaseState:
    """One side's view of a case: where it is, its data (None if unreadable), attachments."""

    path: str
    data: dict[str, Any] | None
    attachments: Mapping[str, str] = field(default_factory=dict)  # rel path -> SHA-256
    problem: str = ""  # why data is None
    data_sha256: str = ""  # of the data's canonical form, where it was already made

    def content_hash(self) -> str | None:
        if self.data is None:
            return None
        return content_hash(self.data_sha256 or data_hash(self.data), self.attachments)


@dataclass(frozen=True)
class FieldChange:
    path: str
    old: Any
    new: Any


@dataclass
class CaseDiff:
    case_id: str
    status: str  # added, removed, changed, reformatted
    old: CaseState | None
    new: CaseState | None
    changes: list[FieldChange] = field(default_factory=list)
    version_note: str = ""


def field_changes(old: Any, new: Any, path: Path = ()) -> list[FieldChange]:
    """Leaf-level changes between two JSON-like values, in document order."""
    if isinstance(old, dict) and isinstance(new, dict):
        changes: list[FieldChange] = []
        for key in [*old, *(k for k in new if k not in old)]:
            changes += field_changes(old.get(key, MISSING), new.get(key, MISSING), (*path, key))
        return changes
    if (
        isinstance(old, list)
        and isinstance(new, list)
        and any(isinstance(v, (dict, list)) for v in (*old, *new))
    ):
        changes = []
        for i in range(max(len(old), len(new))):
            changes += field_changes(
                old[i] if i < len(old) else MISSING, new[i] if i < len(new) else MISSING, (*path, i)
            )
        return changes
    if old is new or (
        old is not MISSING and new is not MISSING and old == new and type(old) is type(new)
    ):
        return []
    return [FieldChange(format_path(path), old, new)]


def _attachment_changes(old: CaseState, new: CaseState) -> list[FieldChange]:
    names = sorted({*old.attachments, *new.attachments})
    return [
        FieldChange(
            f"attachments/{n}", old.attachments.get(n, MISSING), new.attachments.get(n, MISSING)
        )
        for n in names
        if old.attachments.get(n) != new.attachments.get(n)
    ]


def _version_note(case_id: str, state: CaseState | None, released: Mapping[str, CaseEntry]) -> str:
    entry = released.get(case_id)
    if state is None:
        return (
            f"removed at the next release (last released version {entry.version})"
            if entry
            else "never released"
        )
    if entry is None:
        return "version 1 at the next release (first release of this case)"
    if state.content_hash() == entry.sha256:
        return f"version {entry.version}, unchanged since it was released"
    return f"version {entry.version} → {entry.version + 1} at the next release"


def diff_cases(
    old: Mapping[str, CaseState], new: Mapping[str, CaseState], released: Mapping[str, CaseEntry]
) -> list[CaseDiff]:
    diffs: list[CaseDiff] = []
    for case_id in sorted({*old, *new}):
        before, after = old.get(case_id), new.get(case_id)
        changes: list[FieldChange] = []
        if before is None or after is None:
            status = "added" if before is None else "removed"
        elif before.data is None or after.data is None:  # unreadable on a side: no field diff
            same = (before.path, before.problem, before.data) == (
                after.path,
                after.problem,
                after.data,
            )
            status = "unchanged" if same else "changed"
        else:
            changes = field_changes(before.data, after.data) + _attachment_changes(before, after)
            moved = before.path != after.path
            status = "changed" if changes else "reformatted" if moved else "unchanged"
        if status != "unchanged":  # the version note hashes the content: only when shown
            note = _version_note(case_id, after, released)
            diffs.append(CaseDiff(case_id, status, before, after, changes, note))
    return diffs


def show_value(value: Any, limit: int = 200) -> str:
    if value is MISSING:
        return "(absent)"
    text = json.dumps(value, ensure_ascii=False)
    text = " ".join(text.split())
    return text if len(text) <= limit else text[: limit - 1] + "…"


_HEADINGS = {
    "added": "Added",
    "changed": "Changed",
    "removed": "Removed",
    "reformatted": "Moved or reformatted, content unchanged",
}


def render_text(diffs: list[CaseDiff], title: str) -> str:
    lines = [title]
    if not diffs:
        return f"{title}\nNo case changed.\n"
    for status, heading in _HEADINGS.items():
        group = [d for d in diffs if d.status == status]
        if not group:
            continue
        lines += ["", f"{heading} ({len(group)}):"]
        for d in group:
            lines.append(f"  {d.case_id} ({_where(d)}): {d.version_note}")
            if d.new is not None and d.new.data is None:
                lines.append(f"      cannot be read: {d.new.problem}")
            for change in d.changes:
                lines.append(
                    f"      {change.path}: {show_value(change.old)} → {show_value(change.new)}"
                )
    return "\n".join(lines) + "\n"


def _where(d: CaseDiff) -> str:
    if d.old is not None and d.new is not None and d.old.path != d.new.path:
        return f"{d.old.path} → {d.new.path}"
    state = d.new or d.old
    assert state is not None
    return state.path


def render_markdown(diffs: list[CaseDiff], title: str) -> str:
    lines = [f"## {markdown_text(title)}", ""]
    if not diffs:
        return "\n".join([*lines, "No case changed.", ""])
    counts = ", ".join(
        f"{sum(d.status == s for d in diffs)} {s}"
        for s in _HEADINGS
        if any(d.status == s for d in diffs)
    )
    lines += [f"{counts}.", ""]
    for d in diffs:
        lines += [
            f"### {markdown_code(d.case_id)}: {d.status}",
            "",
            f"{markdown_code(_where(d))}: {d.version_note}.",
            "",
        ]
        if d.new is not None and d.new.data is None:
            lines += [f"Cannot be read: {markdown_cell(d.new.problem)}", ""]
        if d.changes:
            lines += ["| field | before | after |", "|---|---|---|"]
            lines += [
                f"| {markdown_code(c.path)} | {markdown_cell(show_value(c.old))} | "
                f"{markdown_cell(show_value(c.new))} |"
                for c in d.changes
            ]
            lines.append("")
    return "\n".join(lines) + "\n"
