"""CHANGELOG.md: one Keep-a-Changelog section per dataset release.

Everything a section says that comes from a case or a person (titles, reasons) is escaped for
Markdown and kept on its line, so no text can write a heading or a section of its own.
``casebank release`` only ever inserts its new section: above the newest existing release
section (so below the title, the introduction and any ``## [Unreleased]`` notes), or at the end
of a changelog that has none yet. Everything people wrote, anywhere, is kept byte for byte.
"""

from __future__ import annotations

import re

from casebank.errors import CasebankError
from casebank.markdown import code, text
from casebank.release.manifest import Manifest

HEADER = """# Changelog

All notable changes to the dataset are documented in this file, one section per release.
Release sections are written by `casebank release`; the format follows
[Keep a Changelog](https://keepachangelog.com/en/1.1.0/), and releases use
[Semantic Versioning](https://semver.org/spec/v2.0.0.html). Case versions are explained in
docs/releases.md.
"""

_RELEASE_HEADING = re.compile(r"^## \[?v?(\d+\.\d+\.\d+)\]?", re.MULTILINE)


def render_section(manifest: Manifest, removal_reason: str = "") -> str:
    """The section for one release, ending with a newline. A release that removes cases without
    being a major release records why (``removal_reason``)."""
    lines = [f"## [{manifest.version}] - {manifest.created[:10]}", ""]
    titles = {case.case_id: case.title for case in manifest.cases}
    if manifest.added:
        lines += [
            "### Added",
            *(
                f"- {code(a.case_id)} v{a.version}: {text(titles.get(a.case_id, ''))}"
                for a in sorted(manifest.added, key=lambda a: a.case_id)
            ),
            "",
        ]
    if manifest.changed:
        lines += [
            "### Changed",
            *(
                f"- {code(c.case_id)} v{c.from_version} → v{c.to_version}: "
                + ", ".join(text(s) for s in c.sections)
                for c in sorted(manifest.changed, key=lambda c: c.case_id)
            ),
            "",
        ]
    if manifest.removed:
        note = (
            [
                "",
                f"Removed in a {_kind(manifest)} release, not a major one: {text(removal_reason)}",
                "",
            ]
            if removal_reason
            else []
        )
        lines += [
            "### Removed",
            *note,
            *(
                f"- {code(r.case_id)} (last version v{r.last_version})"
                for r in sorted(manifest.removed, key=lambda r: r.case_id)
            ),
            "",
        ]
    new = [w for w in manifest.withdrawn if w.release == manifest.version]
    if new:
        lines += [
            "### Withdrawn",
            "",
            "Released versions found wrong; evaluations should leave them out.",
            "",
            *(f"- {code(w.case_id)} v{w.version}: {text(w.reason)}" for w in new),
            "",
        ]
    if not (manifest.added or manifest.changed or manifest.removed or new):
        lines += ["No case changed.", ""]
    return "\n".join(lines)


def insert_section(existing: str | None, section: str, version: str) -> str:
    """The changelog with ``section`` inserted; refuses if ``version`` already has a section."""
    text = HEADER if existing is None else existing
    headings = list(_RELEASE_HEADING.finditer(text))
    if any(match.group(1) == version for match in headings):
        raise CasebankError(
            f"CHANGELOG.md already has a section for {version}",
            "remove that section, or release a different version",
        )
    if headings:
        at = headings[0].start()
        return f"{text[:at]}{section}\n{text[at:]}"
    if text and not text.endswith("\n"):
        text += "\n"
    if text and not text.endswith("\n\n"):
        text += "\n"
    return text + section


def _kind(manifest: Manifest) -> str:
    patch = not manifest.version.endswith(".0")
    return "patch" if patch else "minor"
