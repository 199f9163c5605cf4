"""Command-line entry point: parse arguments, run one command inside one error boundary.

Exit codes, shared by every command (DESIGN.md):
    0  done, and nothing wrong
    1  the data or the repository is wrong, or the command refused to act on it
    2  usage error or internal failure

Each command lives in ``casebank/commands/<name>.py`` and provides ``HELP``, ``register(parser)``
and ``run(args)``. The options every command shares are declared here, once: ``--root`` (unless
the command sets ``USES_ROOT = False``), ``--format`` with the choices of the command's
``FORMATS`` and its ``DEFAULT_FORMAT``, and ``--debug``.
"""

from __future__ import annotations

import argparse
import importlib
import os
import sys
from collections.abc import Iterator, Sequence
from contextlib import contextmanager
from pathlib import Path
from types import ModuleType
from typing import Any, TextIO, cast

from casebank import __version__
from casebank.errors import DEBUG_VARIABLE, CasebankError, SetupError, UsageError
from casebank.format.text import for_terminal

EXIT_OK = 0
EXIT_FAILED = 1
EXIT_USAGE = 2

COMMANDS = (
    "validate",
    "rules",
    "new",
    "schema",
    "generate",
    "diff",
    "release",
    "verify",
    "show",
    "history",
    "coverage",
    "view",
    "results",
    "withdraw",
    "review",
    "review-status",
    "export",
    "score",
    "judge-items",
    "judge-view",
    "site",
    "import",
)
# Commands whose name is a Python keyword live in a module of another name.
MODULES = {"import": "import_cases"}


class _Parser(argparse.ArgumentParser):
    def error(self, message: str) -> None:  # type: ignore[override]
        raise UsageError(f"{self.prog}: {message}")


def _load(name: str) -> ModuleType:
    """The module of command ``name``: ``review-status`` lives in ``review_status.py``."""
    module = MODULES.get(name, name.replace("-", "_"))
    return importlib.import_module(f"casebank.commands.{module}")


def _shared_options(command: ModuleType) -> _Parser:
    """The options a command shares with the others, declared once."""
    shared = _Parser(add_help=False)
    if getattr(command, "USES_ROOT", True):
        shared.add_argument(
            "--root",
            type=Path,
            help="repository root (default: the one holding the current folder)",
        )
    formats = getattr(command, "FORMATS", None)
    if formats:
        shared.add_argument(
            "--format",
            choices=list(formats),
            default=getattr(command, "DEFAULT_FORMAT", next(iter(formats))),
            help=getattr(command, "FORMAT_HELP", "output format"),
        )
    shared.add_argument(
        "--debug",
        action="store_true",
        default=argparse.SUPPRESS,
        help="show the traceback of an internal error",
    )
    return shared


def build_parser(argv: Sequence[str] | None = None) -> argparse.ArgumentParser:
    """The parser; only the command being run is imported (a command's imports cost time)."""
    parser = _Parser(
        prog="casebank",
        description=(
            "Validate, serve, release, export and score a git-native bank of clinical cases."
        ),
    )
    parser.add_argument("--version", action="version", version=f"casebank {__version__}")
    parser.add_argument(
        "--debug", action="store_true", help="show the traceback of an internal error"
    )
    sub = parser.add_subparsers(dest="command", metavar="COMMAND", parser_class=_Parser)
    sub.required = True
    words = [a for a in (argv or []) if not a.startswith("-")]
    if words and words[0] in COMMANDS:
        wanted = [words[0]]
    elif not words and "--version" in (argv or []):
        wanted = []  # the version is printed before any command is looked for
    else:
        wanted = list(COMMANDS)
    for name in wanted:
        command = _load(name)
        command_parser = sub.add_parser(
            name,
            help=command.HELP,
            description=command.HELP,
            parents=[_shared_options(command)],
        )
        command_parser.set_defaults(_run=command.run)
        command.register(command_parser)
    return parser


class _Escaped:
    """A text stream that writes every character a terminal would obey (an escape sequence,
    a carriage return, a bidirectional override) as ``\\uXXXX``: whatever a case, a file
    name or a git author holds, casebank's output cannot drive the terminal or CI log that
    shows it. JSON and double-quoted YAML read the escape back as the same character."""

    def __init__(self, stream: TextIO) -> None:
        self._stream = stream

    def write(self, text: str) -> int:
        self._stream.write(for_terminal(text))
        return len(text)

    def __getattr__(self, name: str) -> Any:
        return getattr(self._stream, name)


@contextmanager
def _escaped_output() -> Iterator[None]:
    saved = sys.stdout, sys.stderr
    sys.stdout, sys.stderr = cast(TextIO, _Escaped(sys.stdout)), cast(TextIO, _Escaped(sys.stderr))
    try:
        yield
    finally:
        sys.stdout, sys.stderr = saved


def main(argv: Sequence[str] | None = None) -> int:
    """Run casebank; return the exit code instead of exiting, so tests can call it."""
    with _escaped_output():
        return _main(argv)


def _main(argv: Sequence[str] | None) -> int:
    arguments = list(sys.argv[1:] if argv is None else argv)
    debug = "--debug" in arguments
    try:
        args = build_parser(arguments).parse_args(arguments)
        if debug:
            os.environ[DEBUG_VARIABLE] = "1"
        code: int = args._run(args)
        return code
    except UsageError as exc:
        print(f"casebank: usage error: {exc}", file=sys.stderr)
        return EXIT_USAGE
    except SetupError as exc:
        print(f"casebank: cannot run: {exc}", file=sys.stderr)
        if exc.hint:
            print(f"  hint: {exc.hint}", file=sys.stderr)
        return EXIT_USAGE
    except CasebankError as exc:
        print(f"casebank: {exc}", file=sys.stderr)
        if exc.hint:
            print(f"  hint: {exc.hint}", file=sys.stderr)
        return EXIT_FAILED
    except KeyboardInterrupt as exc:
        print(f"casebank: interrupted{f': {exc}' if str(exc) else ''}", file=sys.stderr)
        return EXIT_USAGE
    except BrokenPipeError:
        return EXIT_OK
    except OSError as exc:  # the machine, not casebank: a full disk, a folder it may not read
        where = f"{exc.filename}: " if exc.filename else ""
        print(f"casebank: {where}{exc.strerror or exc}", file=sys.stderr)
        return EXIT_FAILED
    except Exception as exc:  # the boundary: an internal failure is a bug, reported as such
        print(
            f"casebank: internal error ({type(exc).__name__}: {exc}); this is a bug in casebank, "
            "please report it",
            file=sys.stderr,
        )
        if debug:
            import traceback  # only here: a command that does not fail never imports it

            traceback.print_exc()
        else:
            print("  run the command again with --debug to see the traceback", file=sys.stderr)
        return EXIT_USAGE
