"""The one currency between the engine's passes and the reporters."""

from __future__ import annotations

from collections.abc import Iterable
from dataclasses import dataclass, field
from enum import Enum
from typing import Any


class Severity(str, Enum):
    ERROR = "error"
    WARNING = "warning"

    def __str__(self) -> str:
        return self.value


@dataclass(frozen=True, order=True)
class Problem:
    """One thing wrong with one file, at one place.

    ``line`` and ``column`` are 1-based. ``path`` is the document path as text ("" for the whole
    file). ``rule`` is the stable rule code (``CB203``); ``name`` its kebab-case name.
    """

    file: str
    line: int
    column: int
    rule: str
    path: str
    message: str
    severity: Severity = field(compare=False)
    hint: str = field(default="", compare=False)
    name: str = field(default="", compare=False)

    def to_dict(self) -> dict[str, object]:
        return {
            "file": self.file,
            "line": self.line,
            "column": self.column,
            "path": self.path,
            "rule": self.rule,
            "severity": self.severity.value,
            "message": self.message,
            "hint": self.hint,
        }

    @classmethod
    def from_dict(cls, raw: dict[str, object], name: str = "") -> Problem:
        return cls(
            file=str(raw["file"]),
            line=int(str(raw["line"])),
            column=int(str(raw["column"])),
            rule=str(raw["rule"]),
            path=str(raw["path"]),
            message=str(raw["message"]),
            severity=Severity(str(raw["severity"])),
            hint=str(raw["hint"]),
            name=name,
        )


@dataclass
class Result:
    """Everything one validation run found."""

    files_checked: int = 0
    problems: list[Problem] = field(default_factory=list)

    def extend(self, problems: Iterable[Problem]) -> None:
        self.problems.extend(problems)

    def sorted(self) -> list[Problem]:
        return sorted(set(self.problems))

    @property
    def errors(self) -> int:
        return sum(1 for p in self.problems if p.severity is Severity.ERROR)

    @property
    def warnings(self) -> int:
        return sum(1 for p in self.problems if p.severity is Severity.WARNING)

    def failed(self, strict: bool = False) -> bool:
        return self.errors > 0 or (strict and self.warnings > 0)


@dataclass(frozen=True)
class FileReport:
    """What checking one file found, and the caller's annotation of it (cached with it)."""

    problems: list[Problem]
    acknowledged: list[Problem] = field(default_factory=list)
    annotation: Any = None
