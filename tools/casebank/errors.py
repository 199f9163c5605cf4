"""Exceptions that cross module boundaries and map onto the exit-code table."""

from __future__ import annotations


class CasebankError(Exception):
    """The data or the repository is wrong, or a command refuses to act: exit code 1."""

    def __init__(self, message: str, hint: str = "") -> None:
        super().__init__(message)
        self.hint = hint


class UsageError(Exception):
    """The command line is wrong: exit code 2."""


class SetupError(Exception):
    """casebank cannot run as installed (a missing C extension): exit code 2."""

    def __init__(self, message: str, hint: str = "") -> None:
        super().__init__(message)
        self.hint = hint


# Set by `casebank --debug` (and inherited by worker processes): show internal tracebacks.
DEBUG_VARIABLE = "CASEBANK_DEBUG"
