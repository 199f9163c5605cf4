"""`casebank results CASE_ID TEST [TEST ...]`: the results oracle, the one way to answer orders."""

from __future__ import annotations

import argparse
import json
import sys

from casebank.format import units
from casebank.format.identifiers import require_case_id
from casebank.serve.oracle import Answer, Oracle

HELP = "Answer test orders for a case as a simulator must: from the case, or its policy."
FORMATS = ("text", "json")


def register(parser: argparse.ArgumentParser) -> None:
    parser.add_argument("case", type=require_case_id, metavar="CASE_ID", help="the case id")
    parser.add_argument("tests", nargs="+", metavar="TEST", help="test names, as a doctor orders")
    from casebank.commands.serving import add_source_options

    add_source_options(parser)
    parser.add_argument(
        "--exam",
        action="store_true",
        help="the names are parts of the physical examination, not tests",
    )


def run(args: argparse.Namespace) -> int:
    from casebank.commands.serving import served_from

    served = served_from(args)
    oracle = Oracle(served.data, served.catalog)
    answers = [
        a for t in args.tests for a in ([oracle.examine(t)] if args.exam else oracle.answers(t))
    ]
    if args.format == "json":
        payload = {
            "case_id": args.case,
            "version": served.version,
            "policy": oracle.policy,
            "answers": [a.to_dict() for a in answers],
        }
        json.dump(payload, sys.stdout, ensure_ascii=False, indent=2)
        sys.stdout.write("\n")
    else:
        for answer in answers:
            sys.stdout.write(render(answer))
    return 0


def render(answer: Answer) -> str:
    head = f"{answer.request}: {answer.source}"
    if answer.test and answer.test != answer.request:
        head += f" ({answer.test})"
    if answer.origin:
        head += f", from {answer.origin}"
    if answer.suggestion:
        head += f"; did you mean {answer.suggestion}?"
    lines = [head]
    if answer.result is not None:
        lines += [f"    {line}" for line in _flat(answer.result)]
    return "\n".join(lines) + "\n"


def _flat(value: object, prefix: str = "") -> list[str]:
    if isinstance(value, dict):
        out: list[str] = []
        for key, item in value.items():
            out += _flat(
                item, f"{prefix}{key}." if isinstance(item, (dict, list)) else f"{prefix}{key}"
            )
        return out
    if isinstance(value, list):
        return [line for i, item in enumerate(value) for line in _flat(item, f"{prefix}{i}.")]
    key = prefix.rstrip(".")
    if isinstance(value, str) and (key == "unit" or key.endswith(".unit")):
        value = units.display(value) or value  # `Cel` reads as °C; the JSON keeps the code
    return [f"{key}: {value}"]
