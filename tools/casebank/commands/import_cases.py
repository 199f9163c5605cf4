"""`casebank import agentclinic FILE.jsonl --out DIR`: draft cases from another format's records.

Each record becomes one draft, ``DIR/<case_id>.yaml``, named from its diagnosis. A record that
cannot be converted is reported with its line (``FILE:LINE: ...``) and the others are still
converted; exit 1 if any failed. Nothing is written when a draft would replace an existing file,
unless ``--force``.
"""

from __future__ import annotations

import argparse
import json
import os
import sys
from collections.abc import Iterator
from dataclasses import dataclass, field
from pathlib import Path
from typing import IO, Any

from casebank.errors import DEBUG_VARIABLE, CasebankError, UsageError
from casebank.format.catalog import Catalog, build_catalog
from casebank.format.layout import CATALOG_FILE
from casebank.format.loader import load_document
from casebank.importers import agentclinic
from casebank.importers.render import render_case
from casebank.workspace import check_output_folder, find_root, write_atomically

HELP = "Convert another format's cases (AgentClinic OSCE JSONL) into draft case files."
FORMATS = ("text", "json")
FORMAT_HELP = "report format (json: one object with every record's outcome)"
SOURCES = ("agentclinic",)
CHUNK = 1 << 16
HEADER = """\
# yaml-language-server: $schema=../schema/case.schema.json
# A draft imported from {source}.
# Replace every TODO; `casebank validate` points at each one left. Where each field comes from:
# docs/importing.md; what the importer decided: provenance.notes.
"""
MISSING_TEST_HINT = (
    "rename it to the catalog name or alias it means, or ask for the test to be added "
    "(CONTRIBUTING.md, 'Asking for a test')"
)


def register(parser: argparse.ArgumentParser) -> None:
    parser.add_argument("source_format", metavar="FORMAT", choices=SOURCES, help="agentclinic")
    parser.add_argument("file", metavar="FILE.jsonl", type=Path, help="one record per line")
    parser.add_argument(
        "--out", required=True, type=Path, metavar="DIR", help="folder for the drafts"
    )
    parser.add_argument("--force", action="store_true", help="replace drafts that exist")
    parser.add_argument(
        "--licence",
        default=agentclinic.LICENCE,
        metavar="SPDX",
        help=f"licence of the source, for provenance (default: {agentclinic.LICENCE})",
    )


@dataclass
class Outcome:
    """One record: its draft (path and text) or what is wrong with it."""

    line: int
    case_id: str | None = None
    path: Path | None = None
    text: str = ""
    error: str = ""
    hint: str = ""
    conversion: agentclinic.Conversion | None = None
    internal: bool = False


@dataclass
class Run:
    source: str
    outcomes: list[Outcome] = field(default_factory=list)

    @property
    def failed(self) -> list[Outcome]:
        return [o for o in self.outcomes if o.error]

    @property
    def converted(self) -> list[Outcome]:
        return [o for o in self.outcomes if o.conversion is not None]


def run(args: argparse.Namespace) -> int:
    root = find_root(args.root)
    catalog = _catalog(root)
    if not args.file.is_file():
        raise UsageError(f"{args.file}: no such file")
    out: Path = args.out
    check_output_folder(out, "import", root=root, whole=False)
    result = convert_file(args.file, out, catalog, args.licence)
    existing = [o.path for o in result.converted if o.path is not None and o.path.exists()]
    if existing and not args.force:
        shown = ", ".join(str(p) for p in existing[:3]) + (", ..." if len(existing) > 3 else "")
        raise CasebankError(
            f"{len(existing)} draft(s) would replace existing files ({shown}); nothing written",
            "pass --force to replace them, or choose another --out folder",
        )
    out.mkdir(parents=True, exist_ok=True)
    for outcome in result.converted:
        assert outcome.path is not None
        write_atomically(outcome.path, outcome.text.encode("utf-8"))
    if args.format == "json":
        json.dump(json_report(result), sys.stdout, ensure_ascii=False, indent=2)
        sys.stdout.write("\n")
    else:
        print_report(result, out)
    if any(o.internal for o in result.outcomes):
        return 2
    return 1 if result.failed else 0


def _catalog(root: Path) -> Catalog:
    loaded = load_document(CATALOG_FILE, (root / CATALOG_FILE).read_bytes())
    if loaded.document is None:
        issue = loaded.issues[0]
        raise CasebankError(
            f"{CATALOG_FILE}:{issue.line}:{issue.column}: {issue.message}",
            f"run `casebank validate {CATALOG_FILE}`",
        )
    return build_catalog(loaded.document.data)


def convert_file(file: Path, out: Path, catalog: Catalog, licence: str) -> Run:
    """Every record of ``file`` converted in memory, in order, with unique case ids."""
    result = Run(file.name)
    taken: set[str] = set()
    with file.open("rb") as stream:
        for number, raw in _lines(stream):
            if not raw.strip():
                continue
            outcome = Outcome(number)
            try:
                record = agentclinic.parse_record(raw)
                outcome.case_id = _unique_id(agentclinic.case_stem(record), taken)
                source = f"{file.name} line {number}"
                conversion = agentclinic.convert(record, outcome.case_id, catalog, source, licence)
                header = HEADER.format(source=f"{agentclinic.NAME}, {source}")
                outcome.text = render_case(conversion.data, header)
            except CasebankError as exc:
                _fail(outcome, taken, str(exc), exc.hint)
            except Exception as exc:  # a bug on one record: report it, go on with the rest
                if os.environ.get(DEBUG_VARIABLE):
                    raise
                outcome.internal = True
                _fail(
                    outcome,
                    taken,
                    f"casebank failed on this record ({type(exc).__name__}: {exc})",
                    "this is a bug in casebank, not in the record: please report it with the "
                    "line attached (--debug shows the traceback)",
                )
            else:
                outcome.conversion = conversion
                outcome.path = out / f"{outcome.case_id}.yaml"
            result.outcomes.append(outcome)
    return result


def _fail(outcome: Outcome, taken: set[str], error: str, hint: str) -> None:
    outcome.error, outcome.hint = error, hint
    if outcome.case_id is not None:
        taken.discard(outcome.case_id)
    outcome.case_id = None


def _lines(stream: IO[bytes]) -> Iterator[tuple[int, bytes]]:
    """Each line (1-based number, bytes); a line longer than a record may be is cut at the
    limit (its record is then refused) and the rest of it skipped in chunks, never held."""
    limit = agentclinic.MAX_RECORD_BYTES + 1
    number = 0
    while True:
        raw = stream.readline(limit)
        if not raw:
            return
        number += 1
        if len(raw) == limit and not raw.endswith(b"\n"):
            while (rest := stream.readline(CHUNK)) and not rest.endswith(b"\n"):
                pass
        yield number, raw


def _unique_id(stem: str, taken: set[str]) -> str:
    n = 1
    while f"{stem}_{n:03d}" in taken:
        n += 1
    case_id = f"{stem}_{n:03d}"
    taken.add(case_id)
    return case_id


def print_report(result: Run, out: Path) -> None:
    for outcome in result.outcomes:
        where = f"{result.source}:{outcome.line}"
        if outcome.error:
            print(f"{where}: error: {outcome.error}", file=sys.stderr)
            if outcome.hint:
                print(f"    fix: {outcome.hint}", file=sys.stderr)
            continue
        conversion = outcome.conversion
        assert conversion is not None and outcome.path is not None
        print(f"{where}: wrote {outcome.path}")
        for match in conversion.matches:
            if match.inferred:
                print(f"{where}: test `{match.name}` ({match.field}) read as `{match.test}`")
                print("    check: rename it if the source meant another test")
        for name in conversion.unresolved:
            print(
                f"{where}: test `{name.name}` ({name.field}) is {name.reason}: written as "
                f"`{name.written_as}`"
            )
            print(f"    fix: {MISSING_TEST_HINT}")
    print(summary(result, out))


def summary(result: Run, out: Path) -> str:
    converted, failed = result.converted, result.failed
    resolved = sum(o.conversion.resolved for o in converted if o.conversion)
    unresolved = sum(len(o.conversion.unresolved) for o in converted if o.conversion)
    total = len(converted) + len(failed)
    lines = [
        f"{len(converted)} of {total} records converted into {out}/"
        + (f"; {len(failed)} failed (see the errors above)" if failed else ""),
        f"test names: {resolved} of {resolved + unresolved} written as catalog names"
        + (f"; {unresolved} kept as TODO keys (listed above)" if unresolved else ""),
    ]
    if converted:
        lines.append(
            "next: move the drafts you want into cases/, then `casebank validate` points at "
            "every TODO left (docs/importing.md)"
        )
    return "\n".join(lines)


def json_report(result: Run) -> dict[str, Any]:
    records = []
    for outcome in result.outcomes:
        record: dict[str, Any] = {"line": outcome.line}
        if outcome.error:
            record.update(error=outcome.error, hint=outcome.hint)
        elif outcome.conversion is not None:
            record.update(
                case_id=outcome.case_id,
                file=str(outcome.path),
                resolved=outcome.conversion.resolved,
                names=[
                    {"field": m.field, "name": m.name, "test": m.test, "inferred": m.inferred}
                    for m in outcome.conversion.matches
                ],
                unresolved=[
                    {
                        "field": u.field,
                        "name": u.name,
                        "written_as": u.written_as,
                        "reason": u.reason,
                    }
                    for u in outcome.conversion.unresolved
                ],
            )
        records.append(record)
    return {
        "file": result.source,
        "records": len(result.outcomes),
        "converted": len(result.converted),
        "failed": len(result.failed),
        "results": records,
    }
