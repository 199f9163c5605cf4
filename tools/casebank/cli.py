"""Command-line entry point: parse arguments, run one command inside one error boundary.

Exit codes, shared by every command (DESIGN.md):
    0  done, and nothing wrong
    1  the data or the repository is wrong, or the command refused to act on it
    2  usage error or internal failure
"""

from __future__ import annotations

import argparse
import importlib
import sys
import traceback
from collections.abc import Sequence
from typing import Protocol, cast

from casebank import __version__
from casebank.errors import CasebankError, UsageError

EXIT_OK = 0
EXIT_FAILED = 1
EXIT_USAGE = 2

# Each command lives in casebank/commands/<module>.py and provides register() and run().
COMMANDS: dict[str, str] = {
    "validate": "validate",
    "rules": "rules",
    "new": "new",
    "schema": "schema",
    "diff": "diff",
    "release": "release",
    "verify": "verify",
    "show": "show",
    "history": "history",
    "coverage": "coverage",
}


class Command(Protocol):
    HELP: str

    def register(self, parser: argparse.ArgumentParser) -> None: ...

    def run(self, args: argparse.Namespace) -> int: ...


class _Parser(argparse.ArgumentParser):
    def error(self, message: str) -> None:  # type: ignore[override]
        raise UsageError(f"{self.prog}: {message}")


def _load(name: str) -> Command | None:
    module = f"casebank.commands.{COMMANDS[name]}"
    try:
        return cast(Command, importlib.import_module(module))
    except ModuleNotFoundError as exc:
        if exc.name != module:
            raise
        return None


def build_parser(argv: Sequence[str] | None = None) -> argparse.ArgumentParser:
    """The parser; only the command being run is imported (a command's imports cost time)."""
    parser = _Parser(
        prog="casebank",
        description="Validate clinical cases and cut reproducible, versioned dataset releases.",
    )
    parser.add_argument("--version", action="version", version=f"casebank {__version__}")
    sub = parser.add_subparsers(dest="command", metavar="COMMAND", parser_class=_Parser)
    sub.required = True
    words = [a for a in (argv or []) if not a.startswith("-")]
    wanted = [words[0]] if words and words[0] in COMMANDS else list(COMMANDS)
    for name in wanted:
        command = _load(name)
        if command is None:
            continue
        command_parser = sub.add_parser(name, help=command.HELP, description=command.HELP)
        command_parser.set_defaults(_run=command.run)
        command.register(command_parser)
    return parser


def main(argv: Sequence[str] | None = None) -> int:
    """Run casebank; return the exit code instead of exiting, so tests can call it."""
    try:
        arguments = list(sys.argv[1:] if argv is None else argv)
        args = build_parser(arguments).parse_args(arguments)
        code: int = args._run(args)
        return code
    except UsageError as exc:
        print(f"casebank: usage error: {exc}", file=sys.stderr)
        return EXIT_USAGE
    except CasebankError as exc:
        print(f"casebank: {exc}", file=sys.stderr)
        if exc.hint:
            print(f"  hint: {exc.hint}", file=sys.stderr)
        return EXIT_FAILED
    except KeyboardInterrupt:
        print("casebank: interrupted", file=sys.stderr)
        return EXIT_USAGE
    except BrokenPipeError:
        return EXIT_OK
    except Exception:  # the boundary: an internal failure is a bug, reported as such
        print(
            "casebank: internal error (this is a bug in casebank; please report it):",
            file=sys.stderr,
        )
        traceback.print_exc()
        return EXIT_USAGE
