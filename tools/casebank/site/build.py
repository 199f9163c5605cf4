"""Build the site's files from a ``SiteInput``: a pure function from data to bytes.

Pages: ``index.html`` (coverage chart, searchable list of cases, releases), one
``cases/<case_id>.html`` per case (with its attachments under ``cases/<case_id>/attachments/``,
as ``casebank.site.attachments`` serves them: never a file that could run a script)
and one ``releases/<X.Y.Z>.html`` per release, plus ``static/`` (the style sheet and the
search script). Same input, same bytes: everything is sorted, and nothing reads the clock.

What each part of a case page may show comes from the role views: the patient section is
``view(data, "patient")``, the examination and results ``view(data, "on_request")``, and the
examiner section (closed by default) ``view(data, "examiner")``.
"""

from __future__ import annotations

import json
from collections.abc import Iterator, Mapping, Sequence
from pathlib import Path
from typing import TYPE_CHECKING, Any
from urllib.parse import quote

from casebank.errors import SetupError
from casebank.format.coverage import Coverage
from casebank.serve.views import view
from casebank.site.attachments import published, served
from casebank.site.burden import expected_workup, test_rows
from casebank.site.charts import coverage_chart
from casebank.site.model import Event, SiteCase, SiteInput, SiteRelease
from casebank.site.nodes import Node, exam_node, label, to_node
from casebank.site.results import result_rows

if TYPE_CHECKING:
    import jinja2

HERE = Path(__file__).parent
TEMPLATES = HERE / "templates"
STATIC = HERE / "static"
STATIC_FILES = ("site.css", "site.js", "favicon.svg")
# casebank is installed from a clone or its git repository (it is on no package index), so
# the hint names the one library the site needs, and the clone's extra.
INSTALL_HINT = "pip install Jinja2 (in a clone of casebank: pip install -e '.[site]')"
# Shown in the header of the case page, not again in the examiner section. The case id stays
# in the examiner section: ids often name the condition (aortic_dissection_001).
_HEADER_FIELDS = ("metadata",)


def environment() -> jinja2.Environment:
    """The template environment; Jinja2 is imported here only, by the site command."""
    try:
        import jinja2
    except ImportError:
        raise SetupError(
            "`casebank site` renders its pages with Jinja2, which is not installed",
            INSTALL_HINT,
        ) from None
    from casebank.site import html  # MarkupSafe comes with Jinja2

    env = jinja2.Environment(
        loader=jinja2.FileSystemLoader(TEMPLATES),
        autoescape=True,
        undefined=jinja2.StrictUndefined,
        trim_blocks=True,
        lstrip_blocks=True,
        keep_trailing_newline=True,
    )
    env.globals["node"] = html.node  # the node tree in Python: most of a page (site/html.py)
    env.globals["flag"] = html.flag
    return env


def build_site(site: SiteInput, env: jinja2.Environment | None = None) -> dict[str, bytes]:
    """Every file of the site, by site-relative POSIX path."""
    return dict(site_files(site, env))


def site_files(
    site: SiteInput, env: jinja2.Environment | None = None
) -> Iterator[tuple[str, bytes]]:
    """Every file of the site, as (site-relative POSIX path, bytes), each as soon as it is
    made: the command writes a page while worker processes render the next ones."""
    env = env or environment()
    for name in STATIC_FILES:
        yield f"static/{name}", (STATIC / name).read_bytes()
    released = {r.version for r in site.releases}
    yield "index.html", _render(env, "index.html.j2", index_context(site))
    for case, page in zip(site.cases, _case_pages(site, env, released), strict=True):
        yield f"cases/{case.case_id}.html", page
        yield from published(case.case_id, case.attachments).items()
    shown = {c.case_id for c in site.cases}
    for release in site.releases:
        yield (
            f"releases/{release.version}.html",
            _render(env, "release.html.j2", release_context(site, release, shown)),
        )


# From parallel.POOL_FROM cases on, the case pages are rendered in forked worker processes
# (each page depends only on the site and its case, so the bytes are the same either way).
_SHARED: list[tuple[SiteInput, jinja2.Environment, set[str]]] = []  # what forked workers read


def _case_pages(site: SiteInput, env: jinja2.Environment, released: set[str]) -> Iterator[bytes]:
    """Every case's page, in order: rendering dominates a large site's build."""
    from casebank.parallel import fork_pays, map_chunks

    _SHARED[:] = [(site, env, released)]
    try:
        yield from map_chunks(
            _render_cases,
            range(len(site.cases)),
            size=50,
            start="fork",
            parallel=fork_pays(len(site.cases)),
        )
    finally:
        _SHARED.clear()


def _render_cases(indices: list[int]) -> list[bytes]:
    site, env, released = _SHARED[0]  # inherited by a forked worker, or this process's own
    return [
        _render(env, "case.html.j2", case_context(site, site.cases[i], released)) for i in indices
    ]


def _render(env: jinja2.Environment, template: str, context: Mapping[str, Any]) -> bytes:
    return env.get_template(template).render(**context).encode("utf-8")


def case_href(case_id: str, prefix: str = "") -> str:
    return prefix + quote(f"cases/{case_id}.html")


def release_href(version: str, prefix: str = "") -> str:
    return prefix + quote(f"releases/{version}.html")


def metadata(data: Mapping[str, Any], case_id: str) -> dict[str, Any]:
    """Title, specialty, difficulty and tags, whatever shape the case gives them."""
    meta = data.get("metadata")
    meta = meta if isinstance(meta, Mapping) else {}
    tags = meta.get("tags")

    def text(key: str, default: str) -> str:
        value = meta.get(key)
        return value.strip() if isinstance(value, str) and value.strip() else default

    return {
        "title": text("title", case_id),
        "specialty": text("specialty", "unspecified"),
        "difficulty": text("difficulty", "unspecified"),
        "tags": sorted({str(t) for t in tags} if isinstance(tags, list) else set()),
    }


def _base(site: SiteInput, prefix: str, page: str) -> dict[str, Any]:
    return {"site": site, "prefix": prefix, "page": page}


# --- the index ------------------------------------------------------------------------------


def index_context(site: SiteInput) -> dict[str, Any]:
    entries = [_entry(case) for case in sorted(site.cases, key=_title_key)]
    cover = Coverage.of(case.data for case in site.cases)
    counts, specialties, levels = cover.table, cover.specialties, cover.levels
    return {
        **_base(site, "", "index"),
        "entries": entries,
        "chart": coverage_chart(counts, specialties, levels) if entries else "",
        "coverage": [
            (s, [counts[(s, level)] for level in levels], sum(counts[(s, lv)] for lv in levels))
            for s in specialties
        ],
        "levels": levels,
        "level_totals": [sum(counts[(s, level)] for s in specialties) for level in levels],
        "filters": {
            "specialty": specialties,
            "difficulty": levels,
            "tag": sorted({t for e in entries for t in e["tags"]}),
        },
        "search_index": search_index(entries),
        "facts": glance(site.cases),
        "releases": [(r, release_href(r.version)) for r in reversed(site.releases)],
    }


def glance(cases: Sequence[SiteCase]) -> list[tuple[str, str]]:
    """The dataset in a few lines: cases, specialties, difficulty, patients' sex and age."""
    cover = Coverage.of(case.data for case in cases)
    return [
        ("Cases", str(cover.total)),
        ("Specialties", str(len(cover.specialties))),
        ("Difficulty", ", ".join(f"{cover.count(level=lv)} {lv}" for lv in cover.levels)),
        ("Patients", ", ".join(f"{n} {sex}" for sex, n in sorted(cover.sexes.items()))),
        ("Ages", ", ".join(f"{n} {band}" for band, n in cover.age_counts())),
    ]


def _title_key(case: SiteCase) -> tuple[str, str]:
    return metadata(case.data, case.case_id)["title"].casefold(), case.case_id


def _entry(case: SiteCase) -> dict[str, Any]:
    return {
        "id": case.case_id,
        **metadata(case.data, case.case_id),
        "version": case.version,
        "state": case.state,
        "unreleased": case.unreleased,
        "withdrawn": bool(case.withdrawn),
        "href": case_href(case.case_id),
    }


def search_index(entries: Sequence[Mapping[str, Any]]) -> str:
    """The JSON the search script reads: what the index shows, and nothing more (no diagnosis).
    Escaped so that no text in it can close the script element it sits in."""
    records = [
        {key: e[key] for key in ("id", "title", "specialty", "difficulty", "tags")} for e in entries
    ]
    text = json.dumps(records, ensure_ascii=False, sort_keys=True, separators=(",", ":"))
    return text.replace("&", "\\u0026").replace("<", "\\u003c").replace(">", "\\u003e")


# --- a case ---------------------------------------------------------------------------------


def _sections(shown: Mapping[str, Any], skip: Sequence[str] = ()) -> list[tuple[str, Node]]:
    return [(label(key), to_node(value)) for key, value in shown.items() if key not in skip]


def case_context(site: SiteInput, case: SiteCase, released: set[str]) -> dict[str, Any]:
    data = case.data
    on_request = view(data, "on_request")
    investigations = on_request.pop("investigations", {})
    results = investigations.pop("results", None) if isinstance(investigations, dict) else None
    exam = on_request.pop("physical_exam", None)
    links = served(case.case_id, case.attachments)
    rows, series = result_rows(results, links)
    return {
        **_base(site, "../", "case"),
        "case": case,
        "meta": metadata(data, case.case_id),
        "patient": _sections(view(data, "patient")),
        "exam": None if exam is None else exam_node(exam),
        "results": rows,
        "series": series,
        "other_findings": _sections(on_request) + _sections(investigations or {}),
        "burdens": test_rows(data, site.catalog),
        "attachments": [links[a.name] for a in case.attachments],
        "examiner": _sections(view(data, "examiner"), _HEADER_FIELDS),
        "provenance": provenance(site, case),
        "history": [_event(e, released) for e in case.history],
    }


def provenance(site: SiteInput, case: SiteCase) -> list[tuple[str, str]]:
    """Where the case comes from: as the case states it, else as its release's manifest
    records it, else the defaults (original, under the dataset's licence). The case's
    provenance notes stay in the examiner view."""
    stated = case.data.get("provenance")
    stated = stated if isinstance(stated, Mapping) else {}
    shown = []
    for key in ("source", "licence", "derived_from"):
        value = stated.get(key, case.provenance.get(key))
        if isinstance(value, (str, int, float)) and str(value).strip():
            shown.append((label(key), str(value)))
        elif key == "source":
            shown.append((label(key), "original (not stated: the default)"))
        elif key == "licence" and site.licence:
            shown.append((label(key), f"{site.licence} (the dataset's licence)"))
    return shown


def _event(event: Event, released: set[str]) -> dict[str, Any]:
    href = (
        release_href(event.release, "../")
        if event.release is not None and event.release in released
        else ""
    )
    return {"event": event, "href": href}


# --- a release ------------------------------------------------------------------------------


def release_context(site: SiteInput, release: SiteRelease, shown: set[str]) -> dict[str, Any]:
    known = {r.version for r in site.releases}

    def link(case_id: str) -> str:
        return case_href(case_id, "../") if case_id in shown else ""

    previous = release.previous
    return {
        **_base(site, "../", "release"),
        "release": release,
        "previous_href": release_href(previous, "../") if previous in known and previous else "",
        "link": link,
        "workups": _workups(site) if site.release == release.version else [],
    }


def _workups(site: SiteInput) -> list[dict[str, Any]]:
    """The expected work-up (must-order tests) of each case shown, and its cost and burden."""
    rows = []
    for case in sorted(site.cases, key=lambda c: c.case_id):
        found = expected_workup(case.data, site.catalog)
        if found is not None:
            rows.append({"case_id": case.case_id, **found})
    return rows
