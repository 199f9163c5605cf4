"""`casebank rules`: list every rule with its code, name, severity and summary."""

from __future__ import annotations

import argparse
import json
import sys

HELP = "List every rule casebank checks (code, name, severity, summary)."
USES_ROOT = False
FORMATS = ("text", "json", "markdown")
FORMAT_HELP = "text (default), json, or markdown (the source of docs/rules.md)"


def register(parser: argparse.ArgumentParser) -> None:
    pass


def run(args: argparse.Namespace) -> int:
    from casebank.check.engine import all_rules

    if args.format == "markdown":
        from casebank.check.rulesdoc import rules_markdown

        sys.stdout.write(rules_markdown())
        return 0
    rules = all_rules()
    if args.format == "json":
        json.dump(
            [
                {
                    "code": r.code,
                    "name": r.name,
                    "severity": r.severity.value,
                    "family": r.family,
                    "summary": r.summary,
                }
                for r in rules
            ],
            sys.stdout,
            indent=2,
        )
        sys.stdout.write("\n")
        return 0
    width = max(len(r.name) for r in rules)
    for r in rules:
        sys.stdout.write(f"{r.code}  {r.name:<{width}}  {r.severity.value:<7}  {r.summary}\n")
    return 0
