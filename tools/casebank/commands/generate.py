"""`casebank generate`: write (or `--check`) every generated file from its one source.

The JSON Schema, the schema reference and the case template come from the Cerberus schema; the
rules reference from the rule modules; README's coverage table from the cases. A test and
`nox -s lint` run `--check`, so a committed copy that drifts fails CI.
"""

from __future__ import annotations

import argparse
from pathlib import Path

from casebank.errors import CasebankError
from casebank.workspace import find_root, stale_generated, write_generated

HELP = "Write every generated file (JSON Schema, docs, case template, README table); --check."

JSON_SCHEMA_FILE = "schema/case.schema.json"
TEMPLATE_FILE = "docs/case-template.yaml"
SCHEMA_DOC_FILE = "docs/schema.md"
RULES_DOC_FILE = "docs/rules.md"


def register(parser: argparse.ArgumentParser) -> None:
    parser.add_argument(
        "--check",
        action="store_true",
        help="write nothing; exit 1 if a committed generated file differs from its source",
    )


def generated_files(root: Path) -> dict[str, str]:
    """Every generated file's path and the content it must have."""
    from casebank.check.rulesdoc import rules_markdown
    from casebank.check.validate import check_catalog
    from casebank.commands.coverage import README, readme_with_table
    from casebank.format.jsonschema import case_json_schema, render
    from casebank.format.reference import schema_markdown
    from casebank.format.scaffold import case_template

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
    if not args.check:
        write_generated(root, files)
        return 0
    stale = stale_generated(root, files)
    if stale:
        raise CasebankError(
            f"generated files are out of date: {', '.join(stale)}",
            "run `casebank generate` (or `nox -s docs`) and commit",
        )
    print("generated files are up to date")
    return 0
