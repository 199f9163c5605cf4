"""`casebank schema`: the JSON Schema for editors and the schema reference, from the source."""

from __future__ import annotations

import argparse
import sys
from pathlib import Path

from casebank.commands.new import case_template
from casebank.docs import rules_markdown, schema_markdown
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
        help=f"write {JSON_SCHEMA_FILE}, {SCHEMA_DOC_FILE} and {RULES_DOC_FILE}",
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
    }


def run(args: argparse.Namespace) -> int:
    root = find_root(args.root)
    files = generated_files(root)
    if args.write:
        for relative, content in files.items():
            target = root / relative
            target.parent.mkdir(parents=True, exist_ok=True)
            tmp = target.with_name(f".{target.name}.tmp")
            tmp.write_text(content, encoding="utf-8")
            tmp.replace(target)
            print(f"wrote {relative}")
        return 0
    if args.check:
        stale = [
            rel
            for rel, content in files.items()
            if not (root / rel).is_file() or (root / rel).read_text(encoding="utf-8") != content
        ]
        if stale:
            raise CasebankError(
                f"generated files are out of date: {', '.join(stale)}",
                "run `casebank schema --write` (or `nox -s docs`) and commit",
            )
        print("generated files are up to date")
        return 0
    sys.stdout.write(files[JSON_SCHEMA_FILE])
    return 0
