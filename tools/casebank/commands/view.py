"""`casebank view CASE_ID --role patient|on_request|examiner`: one audience's part of a case."""

from __future__ import annotations

import argparse
import json
import sys

import yaml

from casebank.format.identifiers import require_case_id
from casebank.format.text import unsafe_on_terminal
from casebank.serve.views import ROLES, view

HELP = "Print one audience's part of a case: what the simulated patient may know, or the examiner."
FORMATS = ("yaml", "json")


def register(parser: argparse.ArgumentParser) -> None:
    parser.add_argument("case", type=require_case_id, metavar="CASE_ID", help="the case id")
    parser.add_argument("--role", required=True, choices=ROLES, help="whose view")
    from casebank.commands.serving import add_source_options

    add_source_options(parser)


class _Dumper(yaml.SafeDumper):
    """Text a terminal would obey goes in double quotes, where the escaped output (``\\uXXXX``,
    see ``casebank.cli``) reads back as the same text."""


def _text(dumper: yaml.SafeDumper, value: str) -> yaml.ScalarNode:
    style = '"' if unsafe_on_terminal(value) else None
    return dumper.represent_scalar("tag:yaml.org,2002:str", value, style=style)


_Dumper.add_representer(str, _text)


def run(args: argparse.Namespace) -> int:
    from casebank.commands.serving import served_from

    served = served_from(args)
    shown = view(served.data, args.role)
    if args.format == "json":
        json.dump(shown, sys.stdout, ensure_ascii=False, indent=2)
        sys.stdout.write("\n")
    else:
        sys.stdout.write(
            yaml.dump(shown, Dumper=_Dumper, sort_keys=False, allow_unicode=True, width=96)
        )
    return 0
