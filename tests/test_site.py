"""`casebank site`: what each page holds and hides, where it reads from, and how it is written.

The pages are read here as text (an element's content by its id); the browser tests in
tests/browser/ load the same pages in Chromium.
"""

from __future__ import annotations

import json
import os
import re
import subprocess
import sys
from html.parser import HTMLParser
from pathlib import Path

import pytest

from casebank.cli import main
from casebank.workspace import output_marker
from gitrepo import GitRepo, case_text, dataset
from sitedata import DIAGNOSIS, EXAMINER_TEXTS, TITLES, released_dataset, rich_case

pytestmark = pytest.mark.usefixtures("isolated_git")

VOID = {"br", "img", "input", "meta", "link", "hr", "wbr", "source", "col", "area", "base"}


class _Element(HTMLParser):
    """The source text of the element with a given id (and everything in it)."""

    def __init__(self, wanted: str) -> None:
        super().__init__(convert_charrefs=False)
        self.wanted, self.depth, self.start, self.end = wanted, 0, -1, -1
        self.lines: list[int] = []

    def _offset(self) -> int:
        line, column = self.getpos()
        return self.lines[line - 1] + column

    def handle_starttag(self, tag: str, attrs: list[tuple[str, str | None]]) -> None:
        if tag in VOID or self.end >= 0:
            return
        if self.start < 0 and ("id", self.wanted) in attrs:
            self.start, self.depth = self._offset(), 1
        elif self.start >= 0:
            self.depth += 1

    def handle_endtag(self, tag: str) -> None:
        if self.start >= 0 and self.end < 0 and tag not in VOID:
            self.depth -= 1
            if self.depth == 0:
                self.end = self._offset() + len(f"</{tag}>")


def element(html: str, wanted: str) -> str:
    parser = _Element(wanted)
    parser.lines = [0]
    for line in html.splitlines(keepends=True):
        parser.lines.append(parser.lines[-1] + len(line))
    parser.feed(html)
    assert parser.start >= 0 and parser.end > parser.start, f"no element #{wanted}"
    return html[parser.start : parser.end]


def build(root: Path, out: Path, *argv: str) -> int:
    return main(["site", "--root", str(root), "--out", str(out), *argv])


def files(folder: Path) -> dict[str, bytes]:
    return {
        p.relative_to(folder).as_posix(): p.read_bytes()
        for p in sorted(folder.rglob("*"))
        if p.is_file()
    }


def page(out: Path, relative: str) -> str:
    return (out / relative).read_text(encoding="utf-8")


@pytest.fixture
def released(tmp_path: Path) -> GitRepo:
    return released_dataset(tmp_path / "repo")


# --- what the pages hold --------------------------------------------------------------------


def test_two_builds_of_the_same_input_are_byte_identical(released: GitRepo, tmp_path: Path) -> None:
    for argv in ((), ("--release", "2.0.0")):
        assert build(released.root, tmp_path / "one", *argv) == 0
        assert build(released.root, tmp_path / "two", *argv) == 0
        first, second = files(tmp_path / "one"), files(tmp_path / "two")
        assert first == second
        assert "cases/alpha.html" in first and "releases/1.0.0.html" in first


def test_case_pages_rendered_by_worker_processes_are_the_same_bytes(
    released: GitRepo, tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    """A large site renders its case pages in forked workers: the same files as one process."""
    import multiprocessing

    if "fork" not in multiprocessing.get_all_start_methods():
        pytest.skip("no fork here: the pages are always rendered in-process")
    assert build(released.root, tmp_path / "alone") == 0
    monkeypatch.setattr("casebank.parallel.POOL_FROM", 1)
    monkeypatch.setattr("casebank.parallel.workers", lambda jobs=None: 2)
    assert build(released.root, tmp_path / "pool") == 0
    assert files(tmp_path / "pool") == files(tmp_path / "alone")


def test_the_index_and_the_patient_sections_never_hold_the_examiner_s_answers(
    released: GitRepo, tmp_path: Path
) -> None:
    out = tmp_path / "site"
    assert build(released.root, out) == 0
    index = page(out, "index.html")
    case = page(out, "cases/alpha.html")
    seen_by_everyone = [
        index,
        element(case, "patient"),
        element(case, "findings"),
        element(case, "provenance"),
    ]
    for text in EXAMINER_TEXTS:
        assert not [part for part in seen_by_everyone if text in part], text
        assert text in element(case, "examiner-details"), text
    assert re.search(r'<details id="examiner-details">', case)  # closed: no `open`
    search = json.loads(element(index, "case-index").split(">", 1)[1].rsplit("<", 1)[0])
    assert {tuple(sorted(record)) for record in search} == {
        ("difficulty", "id", "specialty", "tags", "title")
    }


def test_a_case_page_shows_results_with_flags_series_exam_and_attachments(
    released: GitRepo, tmp_path: Path
) -> None:
    out = tmp_path / "site"
    assert build(released.root, out) == 0
    findings = element(page(out, "cases/alpha.html"), "findings")
    assert '<span class="flag flag-high">high ↑</span>' in findings
    assert '<a href="#series-1">3 results over time</a>' in findings
    series = element(findings, "series-1")
    assert series.count('<svg class="chart series-chart" role="img"') == 1
    assert "3650 ng/L" in series and "Peak value." in series
    assert "<dt>Upper limbs</dt>" in findings and "<dt>Power</dt>" in findings  # nested sections
    assert '<th scope="row"><span class="text">Heart rate</span></th>' in findings
    assert '<img src="alpha/attachments/ecg-12-lead.png"' in findings
    assert '<li><a href="alpha/attachments/report.pdf">report.pdf</a></li>' in findings  # linked
    copied = out / "cases/alpha/attachments"
    assert (copied / "report.pdf").read_bytes() == (
        released.root / "cases/alpha/attachments/report.pdf"
    ).read_bytes()


def test_history_shows_field_changes_people_and_withdrawals(
    released: GitRepo, tmp_path: Path
) -> None:
    out = tmp_path / "site"
    assert build(released.root, out) == 0
    history = element(page(out, "cases/alpha.html"), "history-details")
    assert '<a href="../releases/2.0.0.html">Release 2.0.0</a>: changed, version 2' in history
    assert "<code>metadata.title</code>" in history
    assert "&#34;Crushing pain at the bus stop, revised&#34;" in history
    assert "Not released yet: unreleased changes" in history  # the working tree's draft
    people = element(page(out, "cases/alpha.html"), "provenance")
    assert "<dd>Ann Author, Bob Builder</dd>" in people and "<dd>Cara</dd>" in people
    assert "withdrawn in release 2.0.0: The troponin units were wrong" in page(
        out, "cases/beta.html"
    )


def test_a_release_page_says_what_changed(released: GitRepo, tmp_path: Path) -> None:
    out = tmp_path / "site"
    assert build(released.root, out) == 0
    second = page(out, "releases/2.0.0.html")
    changed = element(second, "changed-heading")
    assert changed == '<h2 id="changed-heading">Changed (1)</h2>'
    assert '<a href="../cases/alpha.html">alpha</a></th><td>v1 → v2</td><td>metadata</td>' in (
        second
    )
    assert '<th scope="row">gamma</th><td>v1</td><td>Case gamma</td>' in second  # removed
    assert "The troponin units were wrong" in second
    assert '<a href="../releases/1.0.0.html">1.0.0</a>' in second


def test_history_read_in_one_pass_is_what_history_says_case_by_case(released: GitRepo) -> None:
    from casebank.commands.site_input import released_events
    from casebank.release.history import released_versions
    from casebank.release.prepare import previous_manifests

    released.write("cases/gamma.yaml", case_text("gamma", "Case gamma, back"))
    released.commit("Bring gamma back")
    assert main(["release", "--root", str(released.root), "2.1.0"]) == 0
    manifests = previous_manifests(released.root, "HEAD")
    events = released_events(manifests)
    for case_id in ("alpha", "beta", "gamma"):
        assert events[case_id] == released_versions(manifests, case_id), case_id
    assert [e.event for e in events["gamma"]] == ["added", "removed", "re-added"]


def test_release_reads_git_not_the_working_tree(released: GitRepo, tmp_path: Path) -> None:
    (released.root / "cases/beta.yaml").write_text(case_text("beta", "Edited, never committed"))
    (released.root / "cases/alpha/attachments/report.pdf").write_bytes(b"%PDF changed on disk")
    out = tmp_path / "site"
    assert build(released.root, out, "--release", "1.0.0") == 0
    assert sorted(p.name for p in (out / "releases").iterdir()) == ["1.0.0.html"]
    assert TITLES["gamma"] in page(out, "index.html")  # removed later, but in 1.0.0
    assert "Edited, never committed" not in page(out, "index.html")
    assert f"<h1>{TITLES['alpha']}</h1>" in page(out, "cases/alpha.html")
    assert (out / "cases/alpha/attachments/report.pdf").read_bytes().startswith(b"%PDF-1.4")
    assert build(released.root, tmp_path / "tree") == 0
    assert "Edited, never committed" in page(tmp_path / "tree", "index.html")


def test_changed_since_previews_only_the_changed_cases(released: GitRepo, tmp_path: Path) -> None:
    out = tmp_path / "site"
    assert build(released.root, out, "--changed-since", "HEAD") == 0
    assert sorted(p.name for p in (out / "cases").glob("*.html")) == ["alpha.html"]
    assert "A preview of the 1 case changed since HEAD." in page(out, "index.html")


def test_a_file_that_cannot_be_loaded_is_left_out_with_a_warning(
    tmp_path: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    repo = dataset(tmp_path / "repo")
    repo.write("cases/broken.yaml", "case_id: broken\nmetadata: [unclosed\n")
    out = tmp_path / "site"
    assert build(repo.root, out) == 0
    err = capsys.readouterr().err
    assert re.search(r"warning: cases/broken\.yaml:\d+:\d+: left out, .*casebank validate", err)
    assert not (out / "cases/broken.html").exists()
    assert "1 case file(s) could not be read" in page(out, "index.html")


def test_text_from_a_case_cannot_break_out_of_the_page(tmp_path: Path) -> None:
    title = "Pain </script><script>alert(1)</script> & <b>worse</b>"
    repo = dataset(tmp_path / "repo", {"alpha": case_text("alpha", title.replace('"', ""))})
    out = tmp_path / "site"
    assert build(repo.root, out) == 0
    index = page(out, "index.html")
    assert "<script>alert(1)" not in index and "<b>worse" not in index
    assert "\\u003c/script\\u003e" in element(index, "case-index")
    assert "&lt;b&gt;worse&lt;/b&gt;" in page(out, "cases/alpha.html")


def test_nothing_is_loaded_from_the_network(released: GitRepo, tmp_path: Path) -> None:
    out = tmp_path / "site"
    assert build(released.root, out) == 0
    for relative, content in files(out).items():
        if relative.endswith((".html", ".css", ".js")):
            text = content.decode("utf-8")
            text = text.replace('xmlns="http://www.w3.org/2000/svg"', "")
            assert not re.search(r"(https?:)?//[a-z0-9]", text, re.IGNORECASE), relative
            assert "@import" not in text and "@font-face" not in text, relative


# --- how the site is written ----------------------------------------------------------------


def test_a_new_build_replaces_the_old_site_whole(released: GitRepo, tmp_path: Path) -> None:
    out = tmp_path / "site"
    assert build(released.root, out) == 0
    (out / "stale.html").write_text("from an older build")
    assert build(released.root, out, "--release", "1.0.0") == 0
    assert not (out / "stale.html").exists()
    assert (out / "cases/gamma.html").is_file()
    assert sorted(p.name for p in tmp_path.iterdir()) == ["home", "repo", "site"]


def test_a_failed_build_leaves_the_old_site_and_no_stray_files(
    released: GitRepo, tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    out = tmp_path / "site"
    assert build(released.root, out) == 0
    before = files(out)
    written: list[int] = []
    real = os.fsync

    def fail_on_the_third(fd: int) -> None:  # the disk fills up while the third file is written
        written.append(fd)
        if len(written) == 3:
            raise OSError(28, "No space left on device")
        real(fd)

    monkeypatch.setattr(os, "fsync", fail_on_the_third)
    assert build(released.root, out, "--release", "1.0.0") == 1
    monkeypatch.undo()
    assert files(out) == before
    assert sorted(p.name for p in tmp_path.iterdir()) == ["home", "repo", "site"]


def test_a_file_a_page_is_made_of_that_cannot_be_read_is_named_and_the_old_site_kept(
    released: GitRepo,
    tmp_path: Path,
    monkeypatch: pytest.MonkeyPatch,
    capsys: pytest.CaptureFixture[str],
) -> None:
    """Pages are written as they are made: a failure to read while making one (here the
    style sheet) is that failure, not a failure to write the site, and undoes the build."""
    from casebank.site import build as site_build

    out = tmp_path / "site"
    assert build(released.root, out) == 0
    before = files(out)
    capsys.readouterr()
    monkeypatch.setattr(site_build, "STATIC", tmp_path / "gone")
    assert build(released.root, out, "--release", "1.0.0") == 1
    err = capsys.readouterr().err
    assert f"{tmp_path / 'gone' / 'site.css'}: No such file or directory" in err
    assert "cannot write" not in err
    assert files(out) == before
    assert sorted(p.name for p in tmp_path.iterdir()) == ["home", "repo", "site"]


@pytest.mark.parametrize("kind", ["foreign folder", "file"])
def test_out_is_refused_when_it_is_not_a_site_casebank_built(
    released: GitRepo, tmp_path: Path, capsys: pytest.CaptureFixture[str], kind: str
) -> None:
    out = tmp_path / "precious"
    if kind == "file":
        out.write_text("notes")
    else:
        out.mkdir()
        (out / "notes.txt").write_text("keep me")
    assert build(released.root, out) == 1
    err = capsys.readouterr().err
    assert f"--out {out}" in err and "hint:" in err
    assert (out.read_text() if kind == "file" else (out / "notes.txt").read_text()) in (
        "notes",
        "keep me",
    )
    assert not (out / output_marker("site")).exists()


# --- refusals and set-up --------------------------------------------------------------------


@pytest.mark.parametrize(
    "argv,code,message",
    [
        (["--release", "9.9.9"], 1, "there is no release 9.9.9"),
        (["--release", "v1"], 2, "--release 'v1': expected X.Y.Z"),
        (["--release", "1.0.0", "--changed-since", "HEAD"], 2, "leave out --release"),
        (["--changed-since", "nowhere"], 2, "--changed-since nowhere: no such revision"),
    ],
)
def test_refusals_say_what_to_do(
    released: GitRepo,
    tmp_path: Path,
    capsys: pytest.CaptureFixture[str],
    argv: list[str],
    code: int,
    message: str,
) -> None:
    out = tmp_path / "site"
    assert build(released.root, out, *argv) == code
    assert message in capsys.readouterr().err
    assert not out.exists()


def test_without_jinja2_the_command_says_how_to_install_it(
    released: GitRepo,
    tmp_path: Path,
    capsys: pytest.CaptureFixture[str],
    monkeypatch: pytest.MonkeyPatch,
) -> None:
    monkeypatch.setitem(sys.modules, "jinja2", None)  # `import jinja2` now raises ImportError
    assert build(released.root, tmp_path / "site") == 2
    err = capsys.readouterr().err
    assert "Jinja2, which is not installed" in err
    assert "hint: pip install Jinja2 (in a clone of casebank: pip install -e '.[site]')" in err
    assert not (tmp_path / "site").exists()


def test_validation_and_the_parser_never_import_jinja2(tmp_path: Path) -> None:
    repo = dataset(tmp_path / "repo")
    probe = (
        "import sys\n"
        "from casebank.cli import build_parser, main\n"
        "build_parser([])\n"
        f"code = main(['validate', '--root', {str(repo.root)!r}, '--no-cache'])\n"
        "assert 'jinja2' not in sys.modules, 'jinja2 was imported'\n"
        "sys.exit(code)\n"
    )
    done = subprocess.run(
        [sys.executable, "-c", probe], capture_output=True, text=True, env=os.environ, check=False
    )
    assert done.returncode == 0, done.stderr + done.stdout


def test_the_examiner_view_of_the_fixture_holds_the_diagnosis() -> None:
    """Guard for the leak tests above: they would pass trivially if the texts were wrong."""
    text = rich_case("alpha", "A")
    assert all(t in text for t in EXAMINER_TEXTS) and DIAGNOSIS in text


def test_case_pages_show_each_tests_burden_and_the_release_page_the_expected_work_up(
    released: GitRepo, tmp_path: Path
) -> None:
    out = tmp_path / "site"
    assert build(released.root, out, "--release", "2.0.0") == 0
    case = page(out, "cases/alpha.html")
    examiner = case.split('id="examiner-details"')[1]
    assert '<h3 id="burden-heading">What the tests cost the patient</h3>' in examiner
    # The expected tests are examiner knowledge: the table is in the closed examiner section.
    assert "burden-heading" not in case.split('id="examiner-details"')[0]
    assert (
        '<th scope="row">Chest X-ray</th><td>optional</td><td>32.67 USD (cms-pfs, 2025)</td>'
        "<td>none</td><td>0.1 mSv</td><td>none</td><td>no</td>"
    ) in examiner
    release = page(out, "releases/2.0.0.html")
    assert '<h2 id="workup-heading">Expected work-up per case</h2>' in release
    # ECG 13.91 + troponin 12.47 + CBC 7.77 USD, from the fixture catalog
    assert (
        '<a href="../cases/alpha.html">alpha</a></th><td>3</td><td>34.15</td><td>0</td>' in release
    )
    assert "workup-heading" not in page(out, "releases/1.0.0.html")  # only the release shown
