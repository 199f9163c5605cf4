"""Reporters only format problems: one class per format; ``--format`` choices are their names."""

from __future__ import annotations

import json
import os
from collections import Counter
from typing import ClassVar, TextIO

from casebank.check.problem import Result, Severity
from casebank.format.text import LINE_BREAK
from casebank.markdown import cell as markdown_cell
from casebank.markdown import code as markdown_code
from casebank.markdown import plural as _plural


def summary_line(result: Result, acknowledged: int = 0) -> str:
    files = _plural(result.files_checked, "file")
    if not result.problems:
        line = f"All clear: {files} checked, no problems."
    else:
        line = (
            f"{_plural(result.errors, 'error')} and {_plural(result.warnings, 'warning')} "
            f"in {files} checked."
        )
    if acknowledged:
        line += f" ({_plural(acknowledged, 'acknowledged warning')} not shown.)"
    return line


def one_line(text: str) -> str:
    """A report's line stays one line whatever a file name or a key holds (the rest of the
    terminal escaping is the command line's: ``casebank.cli``)."""
    return LINE_BREAK.sub(lambda m: f"\\u{ord(m.group(0)):04x}", text)


class Reporter:
    name: ClassVar[str]

    def __init__(self, out: TextIO) -> None:
        self.out = out

    def report(self, result: Result, acknowledged: int = 0) -> None:
        raise NotImplementedError


class TextReporter(Reporter):
    """What a person reads first: ``file:line:col: severity [rule name] message``, then the hint."""

    name = "text"

    def report(self, result: Result, acknowledged: int = 0) -> None:
        for p in result.sorted():
            label = f"{p.rule} {p.name}".strip()
            self.out.write(
                f"{one_line(p.file)}:{p.line}:{p.column}: {p.severity} [{label}] "
                f"{one_line(p.message)}\n"
            )
            if p.path:
                self.out.write(f"    field: {one_line(p.path)}\n")
            if p.hint:
                self.out.write(f"    fix: {one_line(p.hint)}\n")
        self.out.write(summary_line(result, acknowledged) + "\n")


class JsonReporter(Reporter):
    """One JSON object, as DESIGN.md specifies, for tools."""

    name = "json"

    def report(self, result: Result, acknowledged: int = 0) -> None:
        payload = {
            "files_checked": result.files_checked,
            "problems": [p.to_dict() for p in result.sorted()],
        }
        json.dump(payload, self.out, ensure_ascii=False, indent=2)
        self.out.write("\n")


def escape_data(text: str) -> str:
    """GitHub workflow-command escaping for a message."""
    return text.replace("%", "%25").replace("\r", "%0D").replace("\n", "%0A")


def escape_property(text: str) -> str:
    """GitHub workflow-command escaping for a property value (file, title)."""
    return escape_data(text).replace(":", "%3A").replace(",", "%2C")


class GithubReporter(Reporter):
    """Annotations on the pull request's lines (the job summary is the markdown format's)."""

    name = "github"

    def report(self, result: Result, acknowledged: int = 0) -> None:
        for p in result.sorted():
            level = "error" if p.severity is Severity.ERROR else "warning"
            title = f"{p.rule} {p.name}".strip()
            message = p.message + (f" — fix: {p.hint}" if p.hint else "")
            if p.path:
                message = f"{p.path}: {message}"
            self.out.write(
                f"::{level} file={escape_property(p.file)},line={p.line},col={p.column},"
                f"title={escape_property(title)}::{escape_data(message)}\n"
            )
        self.out.write(summary_line(result, acknowledged) + "\n")


class MarkdownReporter(Reporter):
    """A summary table for people: what CI appends to the GitHub job summary."""

    name = "markdown"

    def report(self, result: Result, acknowledged: int = 0) -> None:
        self.out.write(markdown_summary(result, acknowledged))


def markdown_summary(result: Result, acknowledged: int = 0) -> str:
    lines = ["## casebank validate", "", summary_line(result, acknowledged), ""]
    if result.problems:
        per_file = Counter(p.file for p in result.problems)
        lines += [
            "| file | line | severity | rule | field | message |",
            "|---|---|---|---|---|---|",
        ]
        for p in result.sorted():
            lines.append(
                f"| {markdown_code(p.file)} | {p.line} | {p.severity} | {p.rule} {p.name} | "
                f"{markdown_code(p.path)} | {markdown_cell(p.message)} |"
            )
        lines += ["", f"{_plural(len(per_file), 'file')} with problems.", ""]
    return "\n".join(lines) + "\n"


REPORTERS: dict[str, type[Reporter]] = {
    r.name: r for r in (TextReporter, JsonReporter, GithubReporter, MarkdownReporter)
}
FORMATS = [*REPORTERS, "auto"]


def pick_format(name: str) -> str:
    """``auto`` means ``github`` under GitHub Actions and ``text`` everywhere else."""
    if name != "auto":
        return name
    return "github" if os.environ.get("GITHUB_ACTIONS") == "true" else "text"
