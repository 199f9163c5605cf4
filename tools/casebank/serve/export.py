"""Export bundles: a release as the files an evaluation harness loads, the same bytes anywhere.

A bundle is a folder:

- ``cases.jsonl`` (or ``cases.parquet``): one record per case version the release does not
  withdraw, sorted by ``case_id``. ``patient`` and ``case`` are JSON *texts* (see below);
- ``attachments/<case_id>/<path>``: the attachments of those versions, byte for byte;
- ``manifest.json``: a byte copy of the release manifest;
- ``catalog.json``: the release's test catalog in canonical form (RFC 8785), whose SHA-256 is
  the manifest's ``catalog.sha256``, so the results oracle and the scorer serve from the bundle
  alone (``casebank.serve.bundle``);
- ``README.md``: a dataset card in the Hugging Face convention (YAML front matter, then a
  description generated from the release);
- ``SHA256SUMS``: the SHA-256 of every other file, in ``sha256sum`` format.

A record's ``case`` is the case's canonical form (RFC 8785 JSON, the bytes the content hash is
computed from), so ``sha256(case)`` is the case's own hash, and with ``attachments`` (a list
of ``{path, sha256}``) anyone recomputes ``content_hash`` without casebank (docs/export.md).
``patient`` is the patient view, in the same canonical form. Texts rather than nested
objects, because the same field holds a number in one case and a text in another, which a
columnar reader (Arrow, `datasets`) cannot type as one column.
"""

from __future__ import annotations

import io
import json
from collections import Counter
from collections.abc import Callable, Iterable, Mapping, Sequence
from contextlib import AbstractContextManager
from dataclasses import dataclass
from typing import Any, Protocol

import yaml

from casebank import markdown
from casebank.errors import CasebankError, SetupError
from casebank.format.canonical import canonical_json, sha256_hex
from casebank.format.coverage import Coverage
from casebank.release.manifest import Manifest
from casebank.release.released import ReleasedCase, ReleaseReader
from casebank.serve.views import view

MANIFEST_FILE = "manifest.json"
CATALOG_FILE = "catalog.json"
SUMS_FILE = "SHA256SUMS"
COLUMNS = (
    "case_id",
    "version",
    "content_hash",
    "release",
    "title",
    "specialty",
    "difficulty",
    "language",
    "licence",
    "source",
    "attachments",
    "patient",
    "case",
)
# Hugging Face's own licence identifiers (https://huggingface.co/docs/hub/repositories-licenses)
# for the SPDX identifiers a clinical dataset is likely to use; anything else is "other".
_HF_LICENCES = {
    "CC-BY-4.0": "cc-by-4.0",
    "CC-BY-SA-4.0": "cc-by-sa-4.0",
    "CC-BY-NC-4.0": "cc-by-nc-4.0",
    "CC-BY-NC-SA-4.0": "cc-by-nc-sa-4.0",
    "CC-BY-ND-4.0": "cc-by-nd-4.0",
    "CC-BY-NC-ND-4.0": "cc-by-nc-nd-4.0",
    "CC-BY-3.0": "cc-by-3.0",
    "CC-BY-SA-3.0": "cc-by-sa-3.0",
    "CC0-1.0": "cc0-1.0",
    "MIT": "mit",
    "Apache-2.0": "apache-2.0",
    "ODC-By-1.0": "odc-by",
    "ODbL-1.0": "odbl",
    "PDDL-1.0": "pddl",
    "GPL-3.0-only": "gpl-3.0",
    "BSD-3-Clause": "bsd-3-clause",
}


def _text(value: Any) -> str:
    return canonical_json(value).decode("utf-8")


def texts(data: dict[str, Any]) -> tuple[str, str]:
    """A record's two JSON texts: the patient view and the whole case (computed where the case
    is parsed: ``ReleaseReader.cases(derive=texts)``)."""
    return _text(view(data, "patient")), _text(data)


def record(release: str, case: ReleasedCase) -> dict[str, Any]:
    entry = case.entry
    patient, whole = case.derived if case.derived is not None else texts(case.data)
    metadata = case.data.get("metadata")
    language = metadata.get("language") if isinstance(metadata, dict) else None
    provenance = entry.provenance or {}
    return {
        "case_id": entry.case_id,
        "version": entry.version,
        "content_hash": entry.sha256,
        "release": release,
        "title": entry.title,
        "specialty": entry.specialty,
        "difficulty": entry.difficulty,
        "language": language if isinstance(language, str) else "",
        "licence": provenance.get("licence", ""),
        "source": provenance.get("source", ""),
        "attachments": [{"path": p, "sha256": h} for p, h in sorted(entry.attachments.items())],
        "patient": patient,
        "case": whole,
    }


class Sink(Protocol):
    """Where a writer puts its bytes (a workspace.StreamedFile)."""

    def write(self, data: bytes, /) -> int: ...


class _HashedSink(Sink, Protocol):
    @property
    def sha256(self) -> str: ...


def jsonl(rows: Iterable[Mapping[str, Any]], sink: Sink) -> None:
    """One JSON object per line, written as each record comes."""
    for row in rows:
        sink.write(f"{json.dumps(row, ensure_ascii=False, sort_keys=False)}\n".encode())


def _require_pyarrow() -> None:
    try:
        import pyarrow
        import pyarrow.parquet  # noqa: F401
    except ImportError:
        raise SetupError(
            "--format parquet needs pyarrow",
            'install it in the clone: python3 -m pip install -e ".[export]" (nox -s bundle does)',
        ) from None


def parquet(rows: Iterable[Mapping[str, Any]], sink: Sink) -> None:
    """The records as Parquet, through pyarrow (the `export` extra). One row group, so the
    columns' texts are held until the end (the parsed cases are not)."""
    _require_pyarrow()
    import pyarrow as pa
    import pyarrow.parquet as pq

    schema = pa.schema(
        [
            ("case_id", pa.string()),
            ("version", pa.int64()),
            ("content_hash", pa.string()),
            ("release", pa.string()),
            ("title", pa.string()),
            ("specialty", pa.string()),
            ("difficulty", pa.string()),
            ("language", pa.string()),
            ("licence", pa.string()),
            ("source", pa.string()),
            (
                "attachments",
                pa.list_(pa.struct([("path", pa.string()), ("sha256", pa.string())])),
            ),
            ("patient", pa.string()),
            ("case", pa.string()),
        ]
    )
    columns: dict[str, list[Any]] = {name: [] for name in COLUMNS}
    for row in rows:
        for name in COLUMNS:
            columns[name].append(row[name])
    table = pa.Table.from_pydict(columns, schema=schema)
    written = io.BytesIO()
    # No statistics or page index that depend on the writer's defaults; one row group.
    pq.write_table(table, written, compression="zstd", write_statistics=False, use_dictionary=False)
    sink.write(written.getvalue())


@dataclass(frozen=True)
class Writer:
    """One export format: how the records become its data file (``cases.<format>``), what it
    needs installed (checked before anything is read), and that extra's name for the help."""

    write: Callable[[Iterable[Mapping[str, Any]], Sink], None]
    require: Callable[[], None] | None = None
    extra: str = ""


# Every export format, in one place: a new format is one entry here (and its docs).
WRITERS: Mapping[str, Writer] = {
    "jsonl": Writer(jsonl),
    "parquet": Writer(parquet, require=_require_pyarrow, extra="export"),
}
FORMATS = tuple(WRITERS)


def format_help() -> str:
    """--format's help: the formats that need an extra say which."""
    extras = [
        f'{name} needs pyarrow: in the clone, `python3 -m pip install -e ".[{w.extra}]"`'
        for name, w in WRITERS.items()
        if w.extra
    ]
    return "format of the cases file" + (f" ({'; '.join(extras)})" if extras else "")


def _size_category(count: int) -> str:
    for limit, name in ((1_000, "n<1K"), (10_000, "1K<n<10K"), (100_000, "10K<n<100K")):
        if count < limit:
            return name
    return "100K<n<1M"


class _Release(Protocol):
    @property
    def manifest(self) -> Manifest: ...


def dataset_card(
    loaded: _Release,
    rows: Sequence[Mapping[str, Any]],
    data_file: str,
    name: str,
    coverage: Coverage,
) -> str:
    """README.md: Hugging Face front matter, then a description generated from the release."""
    manifest = loaded.manifest
    licences = Counter(str(r["licence"]) for r in rows if r["licence"])
    dataset_licence = manifest.licence or (licences.most_common(1)[0][0] if licences else "")
    ordered = [dataset_licence, *sorted(set(licences) - {dataset_licence})]
    hf = [_HF_LICENCES.get(licence, "other") for licence in ordered if licence]
    languages = sorted({str(r["language"]).split("-")[0] for r in rows if r["language"]})
    front: dict[str, Any] = {
        "pretty_name": f"{name} {manifest.version}",
        "license": list(dict.fromkeys(hf)),
    }
    if "other" in hf:
        front["license_name"] = ", ".join(lic for lic in ordered if lic not in _HF_LICENCES)
    front |= {
        "language": languages or ["en"],
        "size_categories": [_size_category(len(rows))],
        "task_categories": ["question-answering", "text-generation"],
        "tags": ["medical", "clinical-cases", "osce", "evaluation"],
        "configs": [
            {"config_name": "default", "data_files": [{"split": "test", "path": data_file}]}
        ],
    }
    # PyYAML writes the front matter (quoting what needs it), in the order given.
    matter = yaml.safe_dump(front, sort_keys=False, allow_unicode=True, default_flow_style=False)
    return f"---\n{matter}---\n" + _description(loaded, rows, data_file, name, ordered, coverage)


def _patients(coverage: Coverage) -> list[str]:
    """The patients as the README and the site count them (format.coverage's age bands)."""
    people = ", ".join(f"{n} {markdown.text(k)}" for k, n in sorted(coverage.sexes.items()))
    bands = ", ".join(f"{n} {band}" for band, n in coverage.age_counts())
    return [
        f"{coverage.total} cases, {len(coverage.diagnoses)} distinct final diagnoses; patients: "
        f"{people}; ages: {bands}.",
        "",
    ]


def _table(title: str, counts: Counter[str]) -> list[str]:
    lines = [f"| {title} | cases |", "|---|---:|"]
    lines += [f"| {markdown.cell(key) or '(none)'} | {n} |" for key, n in sorted(counts.items())]
    return [*lines, ""]


def _description(
    loaded: _Release,
    rows: Sequence[Mapping[str, Any]],
    data_file: str,
    name: str,
    licences: list[str],
    coverage: Coverage,
) -> str:
    manifest = loaded.manifest
    name = markdown.text(name)
    licences = [markdown.text(licence) for licence in licences]
    lines = [
        f"# {name} {manifest.version}",
        "",
        f"Clinical cases for evaluating history taking, test ordering, diagnosis and management: "
        f"release {manifest.version} of the {name} dataset, cut from commit "
        f"`{manifest.source_commit}` on {manifest.created[:10]}. Every record is one case "
        f"version: `(case_id, version)` names one content forever, and `content_hash` proves it.",
        "",
        f"{len(rows)} case(s) in `{data_file}`"
        + (
            f"; {len(manifest.withdrawn)} withdrawn version(s) left out (see below)."
            if manifest.withdrawn
            else "."
        ),
        "",
        "## Coverage",
        "",
        *_table(
            "specialty", Counter({s: coverage.count(specialty=s) for s in coverage.specialties})
        ),
        *_table("difficulty", Counter({lv: coverage.count(level=lv) for lv in coverage.levels})),
        *_patients(coverage),
        "## Changes since the previous release",
        "",
    ]
    lines += _changes(manifest)
    lines += [
        "## Fields",
        "",
        "| field | what it holds |",
        "|---|---|",
        "| `case_id`, `version` | the case and its immutable version |",
        "| `content_hash` | SHA-256 of the case's canonical content, as in `manifest.json` |",
        f"| `release` | `{manifest.version}` |",
        "| `title`, `specialty`, `difficulty`, `language` | from the case's metadata |",
        "| `licence`, `source` | the case's provenance (SPDX licence; original or adapted) |",
        "| `attachments` | `[{path, sha256}]`: each file below `attachments/<case_id>/` |",
        "| `patient` | JSON text: the patient view, all a simulated patient may know |",
        "| `case` | JSON text: the whole case (RFC 8785 canonical form) |",
        "",
        "The examiner's part of a case (diagnosis, checklists, management, scoring) is only in "
        "`case`: give a simulated patient `patient`, never `case`. Test results are given only "
        "when ordered, by the results oracle (`casebank results`), never by a model.",
        "",
        "`catalog.json` is the release's test catalog (RFC 8785 canonical JSON; its SHA-256 is "
        "`catalog.sha256` in `manifest.json`): with it, this folder alone answers test orders "
        "and scores submissions, as the release does from git.",
        "",
        "## Serving and scoring from this folder",
        "",
        "With casebank installed from a clone of its repository "
        '(`python3 -m pip install -e ".[inspect]"`), and no checkout of the dataset:',
        "",
        "```sh",
        "casebank results --bundle . CASE_ID TEST ...     # the results oracle",
        "casebank score --bundle . SUBMISSIONS.jsonl       # the reference scorer",
        "inspect eval casebank/osce --model MODEL -T bundle=.",
        "```",
        "",
        "Each checks `SHA256SUMS` and every case against `manifest.json` first, and refuses a "
        "folder altered after the export (exit 1, naming the file).",
        "",
        "## Verifying",
        "",
        "```sh",
        "sha256sum -c SHA256SUMS",
        "```",
        "",
        "`sha256(case)` is the case's own hash; with attachments, `content_hash` is "
        'SHA-256 of the canonical JSON `{"attachments": {path: sha256}, "case": sha256(case)}`. '
        "`manifest.json` is the release manifest, byte for byte; `casebank verify` in the "
        "repository recomputes it from git.",
        "",
        "## Licence",
        "",
        "The dataset is released under "
        + (licences[0] if licences else "the licence each case states")
        + (
            f"; some cases state their own licence ({', '.join(licences[1:])}), given in each "
            "record's `licence`."
            if len(licences) > 1
            else "."
        ),
        "",
        "## Citation",
        "",
        f"Cite the release: {name} {manifest.version} (commit {manifest.source_commit[:12]}), "
        "and report scores with the scorer's name and version (`casebank score`).",
        "",
    ]
    return "\n".join(lines)


def _changes(manifest: Manifest) -> list[str]:
    if manifest.previous_version is None:
        return ["The first release.", ""]
    lines = [f"Since {manifest.previous_version}:", ""]
    if manifest.added:
        lines.append(
            "- added: "
            + ", ".join(f"{markdown.code(a.case_id)} v{a.version}" for a in manifest.added)
        )
    if manifest.changed:
        lines.append(
            "- changed: "
            + ", ".join(
                f"{markdown.code(c.case_id)} v{c.from_version}→v{c.to_version} "
                f"({', '.join(markdown.text(s) for s in c.sections)})"
                for c in manifest.changed
            )
        )
    if manifest.removed:
        lines.append(
            "- removed: "
            + ", ".join(
                f"{markdown.code(r.case_id)} (last v{r.last_version})" for r in manifest.removed
            )
        )
    new = [w for w in manifest.withdrawn if w.release == manifest.version]
    if new:
        lines.append(
            "- withdrawn: "
            + "; ".join(
                f"{markdown.code(w.case_id)} v{w.version}: {markdown.text(w.reason)}" for w in new
            )
        )
    if len(lines) == 2:
        lines.append("- no case changed")
    return [*lines, ""]


def catalog_json(loaded: ReleaseReader) -> bytes:
    """The release's catalog as canonical JSON; its SHA-256 is the manifest's catalog.sha256
    (the canonical hash of catalog.yaml), which a bundle's reader checks."""
    raw = canonical_json(loaded.catalog_data)
    if sha256_hex(raw) != loaded.manifest.catalog_sha256:
        raise CasebankError(
            f"release {loaded.manifest.version}: its catalog's canonical SHA-256 is not the "
            "manifest's catalog.sha256",
            "run `casebank verify`; restore the release's manifest, tag and history from git",
        )
    return raw


class _Folder(Protocol):
    def write(self, relative: str, content: bytes) -> None: ...

    def stream(self, relative: str) -> AbstractContextManager[_HashedSink]: ...


# What the dataset card reads of each record: kept while the records themselves stream past.
_CARD_FIELDS = ("licence", "language", "specialty", "difficulty")


def write_bundle(reader: ReleaseReader, format: str, folder: _Folder) -> int:
    """Write the bundle into ``folder`` (a workspace.FolderWriter) as it is made: each record
    as its case is read and verified, every file's SHA-256 as it is written, SHA256SUMS
    last. Memory stays flat in the number of cases. Returns the number of records."""
    writer = WRITERS[format]
    if writer.require is not None:
        writer.require()
    data_file = f"cases.{format}"
    sums: dict[str, str] = {}
    card_rows: list[dict[str, Any]] = []
    coverage = Coverage()
    version = reader.manifest.version

    def rows() -> Iterable[dict[str, Any]]:
        for case in reader.cases(current=True, derive=texts):
            row = record(version, case)
            card_rows.append({k: row[k] for k in _CARD_FIELDS})
            coverage.add(case.data)
            for rel, raw in sorted(case.attachments.items()):
                path = f"attachments/{case.entry.case_id}/{rel}"
                folder.write(path, raw)
                sums[path] = sha256_hex(raw)
            yield row

    with folder.stream(data_file) as sink:
        writer.write(rows(), sink)
    sums[data_file] = sink.sha256
    folder.write(MANIFEST_FILE, reader.manifest_raw)
    sums[MANIFEST_FILE] = sha256_hex(reader.manifest_raw)
    catalog = catalog_json(reader)
    folder.write(CATALOG_FILE, catalog)
    sums[CATALOG_FILE] = sha256_hex(catalog)
    card = dataset_card(reader, card_rows, data_file, reader.policy.name, coverage)
    card_bytes = card.encode("utf-8")
    folder.write("README.md", card_bytes)
    sums["README.md"] = sha256_hex(card_bytes)
    folder.write(SUMS_FILE, "".join(f"{h}  {p}\n" for p, h in sorted(sums.items())).encode())
    return len(card_rows)
