"""Exceptions that cross module boundaries and map onto the exit-code table."""

from __future__ import annotations

import errno
from pathlib import Path


class CasebankError(Exception):
    """The data or the repository is wrong, or a command refuses to act: exit code 1."""

    def __init__(self, message: str, hint: str = "") -> None:
        super().__init__(message)
        self.hint = hint


class WriteError(CasebankError):
    """A file or folder could not be written (a full disk, a read-only folder): exit code 1.

    Whatever raises it has left nothing half-written: the old file as it was, no temporary."""

    def __init__(self, path: Path, error: OSError) -> None:
        reason = error.strerror or str(error) or type(error).__name__
        super().__init__(f"cannot write {path}: {reason}", _WRITE_HINTS.get(error.errno or 0, ""))
        self.path = path
        self.errno = error.errno


_WRITE_HINTS = {
    errno.ENOSPC: "the disk holding it is full: free some space, or write somewhere else",
    errno.EDQUOT: "your disk quota is used up: free some space, or write somewhere else",
    errno.EROFS: "that file system is read-only: write somewhere else",
    errno.EACCES: "you may not write there: check the folder's permissions",
    errno.EPERM: "you may not write there: check the folder's permissions",
}


class UsageError(Exception):
    """The command line is wrong: exit code 2."""


class SetupError(Exception):
    """casebank cannot run as installed (a missing C extension): exit code 2."""

    def __init__(self, message: str, hint: str = "") -> None:
        super().__init__(message)
        self.hint = hint


# Set by `casebank --debug` (and inherited by worker processes): show internal tracebacks.
DEBUG_VARIABLE = "CASEBANK_DEBUG"
