"""`casebank schema`: print the JSON Schema that editors validate and complete case files with."""

from __future__ import annotations

import argparse
import sys

from casebank.check.validate import check_catalog
from casebank.format.jsonschema import case_json_schema, render
from casebank.workspace import find_root

HELP = "Print the JSON Schema for case files (schema/case.schema.json is `casebank generate`'s)."


def register(parser: argparse.ArgumentParser) -> None:
    pass


def run(args: argparse.Namespace) -> int:
    catalog = check_catalog(find_root(args.root)).catalog
    sys.stdout.write(render(case_json_schema(catalog)))
    return 0
