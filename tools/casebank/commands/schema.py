"""`casebank schema`: the JSON Schema for editors and the schema reference, from the source."""

from __future__ import annotations

import argparse
import sys
from pathlib import Path

from casebank.commands.coverage import README, readme_with_table
from casebank.commands.new import case_template
from casebank.docs import rules_markdown, schema_markdown, stale_generated, write_generated
from casebank.errors import CasebankError
from casebank.jsonschema import case_json_schema, render
from casebank.repo import find_root
from casebank.validate import check_catalog

HELP = "Print the JSON Schema for case files; --write or --check the generated files."

JSON_SCHEMA_FILE = "schema/case.schema.json"
TEMPLATE_FILE = "docs/case-template.yaml"
SCHEMA_DOC_FILE = "docs/schema.md"
RULES_DOC_FILE = "docs/rules.md"


def register(parser: argparse.ArgumentParser) -> None:
    parser.add_argument("--root", type=Path, help="repository root")
    action = parser.add_mutually_exclusive_group()
    action.add_argument(
        "--write",
        action="store_true",
        help="write every generated file: JSON Schema, docs, case template, README table",
    )
    action.add_argument(
        "--check",
        action="store_true",
        help="exit 1 if a committed generated file differs from the source",
    )


def generated_files(root: Path) -> dict[str, str]:
    """Every generated file's path and the content it must have."""
    catalog = check_catalog(root).catalog
    return {
        JSON_SCHEMA_FILE: render(case_json_schema(catalog)),
        SCHEMA_DOC_FILE: schema_markdown(),
        RULES_DOC_FILE: rules_markdown(),
        TEMPLATE_FILE: case_template("your_case_id_001"),
        **({README: readme_with_table(root)} if (root / README).is_file() else {}),
    }


def run(args: argparse.Namespace) -> int:
    root = find_root(args.root)
    files = generated_files(root)
    if args.write:
        write_generated(root, files)
        return 0
    if args.check:
        stale = stale_generated(root, files)
        if stale:
            raise CasebankError(
                f"generated files are out of date: {', '.join(stale)}",
                "run `casebank schema --write` (or `nox -s docs`) and commit",
            )
        print("generated files are up to date")
        return 0
    sys.stdout.write(files[JSON_SCHEMA_FILE])
    return 0
