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


def _available_commands() -> dict[str, Command]:
    found: dict[str, Command] = {}
    for name, module in COMMANDS.items():
        try:
            found[name] = cast(Command, importlib.import_module(f"casebank.commands.{module}"))
        except ModuleNotFoundError as exc:
            if exc.name != f"casebank.commands.{module}":
                raise
    return found


def build_parser() -> argparse.ArgumentParser:
    parser = _Parser(
        prog="casebank",
        description="Validate clinical cases and cut reproducible, versioned dataset releases.",
    )
    parser.add_argument("--version", action="version", version=f"casebank {__version__}")
    sub = parser.add_subparsers(dest="command", metavar="COMMAND", parser_class=_Parser)
    sub.required = True
    for name, command in _available_commands().items():
        command_parser = sub.add_parser(name, help=command.HELP, description=command.HELP)
        command_parser.set_defaults(_run=command.run)
        command.register(command_parser)
    return parser


def main(argv: Sequence[str] | None = None) -> int:
    """Run casebank; return the exit code instead of exiting, so tests can call it."""
    try:
        args = build_parser().parse_args(argv)
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
