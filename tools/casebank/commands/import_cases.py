"""`casebank import FORMAT FILE --out DIR`: draft cases from another format's records.

FORMAT names an importer of ``casebank.importers.registry``. Each record becomes one draft,
``DIR/<case_id>.yaml``, named from its diagnosis with the first free number: an id a case in
``cases/`` or a release already holds is never given again, and the report says which id the
draft took instead. A record that cannot be converted is reported with its line
(``FILE:LINE: ...``) and the others are still converted; exit 1 if any failed. A file whose
records are of no shape the importer reads is one error, and nothing is written. A draft never
replaces a file unless ``--force``, and then only an earlier draft outside ``cases/``.
"""

from __future__ import annotations

import argparse
import json
import os
import sys
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

from casebank.errors import DEBUG_VARIABLE, CasebankError, UsageError
from casebank.format.catalog import Catalog, load_catalog
from casebank.format.layout import CASES_DIR, CATALOG_FILE, case_id_from_path
from casebank.importers.base import Conversion, FileShapeError, Importer, Job, Record, Refused
from casebank.importers.registry import IMPORTERS
from casebank.importers.render import render_case
from casebank.workspace import case_files, check_output_folder, find_root, write_atomically

HELP = f"Convert another format's cases into draft case files (FORMAT: {', '.join(IMPORTERS)})."
FORMATS = ("text", "json")
FORMAT_HELP = "report format (json: one object with every record's outcome)"
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
    formats = "; ".join(f"{name}: {imp.summary}" for name, imp in IMPORTERS.items())
    parser.add_argument(
        "source_format", metavar="FORMAT", choices=list(IMPORTERS), help=f"({formats})"
    )
    parser.add_argument("file", metavar="FILE", type=Path, help="the file of records")
    parser.add_argument(
        "--out", required=True, type=Path, metavar="DIR", help="folder for the drafts"
    )
    parser.add_argument(
        "--force", action="store_true", help="replace earlier drafts (never a case in cases/)"
    )
    parser.add_argument(
        "--licence",
        metavar="SPDX",
        help="licence of the source, for provenance (default: the format's, e.g. MIT)",
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
    conversion: Conversion | None = None
    internal: bool = False
    passed_over: list[str] = field(default_factory=list)  # ids held, with what holds each


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
    importer = IMPORTERS[args.source_format]
    if not args.file.is_file():
        raise UsageError(f"{args.file}: no such file")
    out: Path = args.out
    check_output_folder(out, "import", root=root, whole=False)
    try:
        with args.file.open("rb") as stream:
            parts = importer.read(args.file.name, stream)
    except FileShapeError as exc:
        return _refuse_file(args, exc)
    except OSError as exc:
        raise CasebankError(
            f"{args.file}: cannot be read ({exc.strerror or exc})", "check the path and its rights"
        ) from None
    held = held_ids(root)
    result = convert_all(importer, parts, args.file.name, out, catalog, args.licence, held)
    _refuse_replacing(result, args.force)
    write_drafts(out, {o.path: o.text for o in result.converted if o.path is not None})
    if args.format == "json":
        json.dump(json_report(result), sys.stdout, ensure_ascii=False, indent=2)
        sys.stdout.write("\n")
    else:
        print_report(result, out)
    if any(o.internal for o in result.outcomes):
        return 2
    return 1 if result.failed else 0


def _catalog(root: Path) -> Catalog:
    return load_catalog((root / CATALOG_FILE).read_bytes(), CATALOG_FILE)


def _refuse_file(args: argparse.Namespace, exc: FileShapeError) -> int:
    """A file of no known record shape: one message, nothing written."""
    if args.format == "json":
        report = {"file": args.file.name, "records": 0, "converted": 0, "failed": 0}
        report.update(error=str(exc), hint=exc.hint, results=[])
        json.dump(report, sys.stdout, ensure_ascii=False, indent=2)
        sys.stdout.write("\n")
    else:
        print(f"{args.file.name}: error: {exc}", file=sys.stderr)
        print(f"    fix: {exc.hint}", file=sys.stderr)
    return 1


def held_ids(root: Path) -> dict[str, str]:
    """Case ids a draft must not take, and what holds each: a case file in ``cases/``, or a
    release (an id once released names that case forever, even when withdrawn or deleted)."""
    from casebank.release.manifest import RELEASES_DIR, loads

    held = {case_id_from_path(path): path for path in case_files(root)}
    for file in sorted((root / RELEASES_DIR).glob("*.json")):
        manifest = loads(file.read_bytes(), f"{RELEASES_DIR}/{file.name}")
        for entry in manifest.cases:
            held.setdefault(entry.case_id, f"release {manifest.version}")
    return held


@dataclass
class Names:
    """The case ids drafts may take: none a case or a release holds, none given twice."""

    held: dict[str, str]  # id -> what holds it: "cases/x_001.yaml", "release 1.2.0"
    given: set[str] = field(default_factory=set)

    def free(self, stem: str) -> tuple[str, list[str]]:
        """The first free ``stem_NNN``, and the held ids passed over on the way to it."""
        passed = []
        n = 1
        while (case_id := f"{stem}_{n:03d}") in self.held or case_id in self.given:
            if case_id in self.held:
                passed.append(f"{case_id} ({self.held[case_id]})")
            n += 1
        return case_id, passed


def convert_all(
    importer: Importer,
    parts: list[Record | Refused],
    source: str,
    out: Path,
    catalog: Catalog,
    licence: str | None,
    held: dict[str, str],
) -> Run:
    """Every record converted in memory, in order, each under a free case id."""
    result = Run(source)
    names = Names(held)
    for part in parts:
        outcome = Outcome(part.line)
        if isinstance(part, Refused):
            outcome.error, outcome.hint = part.error, part.hint
        else:
            job = _job(importer, part, source, catalog, licence, names, outcome)
            if job is not None:
                _convert(importer, part, job, outcome, out, names)
        result.outcomes.append(outcome)
    return result


def _job(
    importer: Importer,
    record: Record,
    source: str,
    catalog: Catalog,
    licence: str | None,
    names: Names,
    outcome: Outcome,
) -> Job | None:
    try:
        stem = importer.case_stem(record)
    except CasebankError as exc:
        outcome.error, outcome.hint = str(exc), exc.hint
        return None
    case_id, outcome.passed_over = names.free(stem)
    place = f"{source} line {record.line}"
    return Job(case_id, catalog, place, licence or importer.licence)


def _convert(
    importer: Importer, record: Record, job: Job, outcome: Outcome, out: Path, names: Names
) -> None:
    try:
        conversion = importer.convert(record, job)
        header = HEADER.format(source=f"{importer.title}, {job.source}")
        outcome.text = render_case(conversion.data, header)
    except CasebankError as exc:
        outcome.error, outcome.hint = str(exc), exc.hint
    except Exception as exc:  # a bug on one record: report it, go on with the rest
        if os.environ.get(DEBUG_VARIABLE):
            raise
        outcome.internal = True
        outcome.error = f"casebank failed on this record ({type(exc).__name__}: {exc})"
        outcome.hint = (
            "this is a bug in casebank, not in the record: please report it with the line "
            "attached (--debug shows the traceback)"
        )
    else:
        outcome.case_id, outcome.conversion = job.case_id, conversion
        outcome.path = out / f"{job.case_id}.yaml"
        names.given.add(job.case_id)


def _refuse_replacing(result: Run, force: bool) -> None:
    """Drafts that would replace files: refused unless ``force``. They are never cases: an id
    a case file holds was passed over when the draft was named."""
    existing = [o.path for o in result.converted if o.path is not None and o.path.exists()]
    if existing and not force:
        shown = ", ".join(str(p) for p in existing[:3]) + (", ..." if len(existing) > 3 else "")
        raise CasebankError(
            f"{len(existing)} draft(s) would replace earlier drafts ({shown}); nothing written",
            "pass --force to replace those drafts, or choose another --out folder",
        )


def write_drafts(out: Path, drafts: dict[Path, str]) -> None:
    """The one place that writes: each draft atomically; the folder only when there is a
    draft to put in it."""
    if not drafts:
        return
    out.mkdir(parents=True, exist_ok=True)
    for path, text in drafts.items():
        write_atomically(path, text.encode("utf-8"))


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
        if outcome.passed_over:
            print(
                f"{where}: {'; '.join(outcome.passed_over)} taken: named `{outcome.case_id}`, "
                "the first free id"
            )
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
    where = f"into {out}/" if converted else f"({out}/ not created)"
    lines = [
        f"{len(converted)} of {total} records converted {where}"
        + (f"; {len(failed)} failed (see the errors above)" if failed else ""),
        f"test names: {resolved} of {resolved + unresolved} written as catalog names"
        + (f"; {unresolved} kept as TODO keys (listed above)" if unresolved else ""),
    ]
    if converted:
        lines.append(
            f"next: move the drafts you want into {CASES_DIR}/, then `casebank validate` points "
            "at every TODO left (docs/importing.md)"
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
                passed_over=outcome.passed_over,
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
