"""Attachments: a type allow-list decided by content, names that mean one file everywhere, and a
site that serves attachments so that none can run a script on its origin. On real files, real
repositories and a real built site."""

from __future__ import annotations

import json
import re
import unicodedata
from html.parser import HTMLParser
from pathlib import Path

import pytest

from casebank.cli import main
from conftest import VALID_CASE, RepoMaker, edit
from gitrepo import GitRepo
from sitedata import tiny_png

pytestmark = pytest.mark.usefixtures("isolated_git")

REPOSITORY = Path(__file__).resolve().parents[1]
AUDIOGRAM = REPOSITORY / "cases/noise_induced_hearing_loss_001/attachments/audiogram.svg"
SVG = b'<svg xmlns="http://www.w3.org/2000/svg" viewBox="0 0 10 10"><path d="M0 0h10"/></svg>'
SCRIPTED = b'<svg xmlns="http://www.w3.org/2000/svg"><script>alert(document.domain)</script></svg>'
NFD = unicodedata.normalize("NFD", "réponse.png")

GOOD = {
    "ecg.png": tiny_png(),
    "xray.jpg": b"\xff\xd8\xff\xe0\x00\x10JFIF\x00",
    "report.pdf": b"%PDF-1.4\n1 0 obj << /Type /Catalog >> endobj\n%%EOF\n",
    "values.csv": b"time,potassium\r\n0,6.1\r\n",
    "notes.txt": "Tracing read by Dr Ünal.\n".encode(),
    "audiogram.svg": AUDIOGRAM.read_bytes(),
    "nested/strip.svg": SVG,
    "embedded.svg": SVG.replace(b"<path", b'<image href="data:image/png;base64,AAAA"/><path'),
}
BAD_TYPES = {
    "script.svg": (SCRIPTED, "it has a <script> element"),
    "onload.svg": (SVG.replace(b"<svg ", b'<svg onload="alert(1)" '), "event handler `onload`"),
    "outside.svg": (
        SVG.replace(b"<path", b'<image href="https://evil.example/track.png"/><path'),
        "refers outside the file",
    ),
    "styled.svg": (SVG.replace(b"<path", b"<style>@import url(x.css)</style><path"), "<style>"),
    "foreign.svg": (
        SVG.replace(b"<path", b"<foreignObject><div>x</div></foreignObject><path"),
        "<foreignobject>",
    ),
    "entities.svg": (b'<!DOCTYPE svg [<!ENTITY a "aaaa">]>' + SVG, "declares entities"),
    "animated.svg": (
        SVG.replace(b"<path", b'<a><set attributeName="href" to="javascript:alert(1)"/></a><path'),
        "animates `href`",
    ),
    "report.html": (b"<!doctype html><script>alert(1)</script>", "an HTML page"),
    "report.txt": (b"<html><body onload=alert(1)>", "an HTML page"),
    "picture.png": (SVG, "is an SVG image but its name ends in `.png`"),
    "macro.pdf": (
        b"%PDF-1.4\n<< /OpenAction << /S /JavaScript /JS (app.alert(1)) >> >>",
        "/JavaScript",
    ),
    "program.exe": (b"MZ\x90\x00\x03\x00\x00\x00\x04\x00", "not one of the allowed types"),
}
BAD_NAMES = {
    NFD: "not in Unicode NFC form",
    "ecg\nstrip.png": "invisible character U+000A",
    "ecg: 12 lead.png": "holds `:`, which Windows does not allow",
    "trailing .png": "",  # fine: the space is inside the name
    "ecg.png ": "starts or ends with a space",
    "x" * 125 + ".png": "the name is 129 characters long",
}


def attach(root: Path, files: dict[str, bytes], case_id: str = "valid_case") -> None:
    for name, content in files.items():
        path = root / "cases" / case_id / "attachments" / name
        path.parent.mkdir(parents=True, exist_ok=True)
        path.write_bytes(content)


def problems(root: Path, capsys: pytest.CaptureFixture[str]) -> list[tuple[str, str, str]]:
    main(["validate", "--root", str(root), "--format", "json", "--strict"])
    found = json.loads(capsys.readouterr().out)["problems"]
    return sorted((p["file"], p["rule"], p["message"]) for p in found)


def test_the_allowed_types_pass(make_repo: RepoMaker, capsys: pytest.CaptureFixture[str]) -> None:
    root = make_repo()
    attach(root, GOOD)
    assert problems(root, capsys) == []


def test_what_is_not_allowed_is_refused_by_content(
    make_repo: RepoMaker, capsys: pytest.CaptureFixture[str]
) -> None:
    root = make_repo()
    attach(root, {**GOOD, **{name: content for name, (content, _) in BAD_TYPES.items()}})
    found = problems(root, capsys)
    assert [(f, r) for f, r, _ in found] == [
        (f"cases/valid_case/attachments/{name}", "CB313") for name in sorted(BAD_TYPES)
    ]
    for (file, _, message), name in zip(found, sorted(BAD_TYPES), strict=True):
        assert BAD_TYPES[name][1] in message, (file, message)


def test_names_that_are_not_one_file_everywhere_are_refused(
    make_repo: RepoMaker, capsys: pytest.CaptureFixture[str]
) -> None:
    root = make_repo()
    attach(root, {name: tiny_png() for name in BAD_NAMES})
    attach(root, {"ECG.png": tiny_png(), "ecg.png": tiny_png(), "réponse.png": tiny_png()})
    found = problems(root, capsys)
    names: dict[str, dict[str, str]] = {}
    for file, rule, message in found:
        names.setdefault(file.removeprefix("cases/valid_case/attachments/"), {})[rule] = message
    for name, expected in BAD_NAMES.items():
        if not expected:
            assert name not in names
            continue
        assert expected in names[name]["CB311"], (name, names[name])
    collisions = sorted((f, m) for f, r, m in found if r == "CB312")
    assert [f.rsplit("/", 1)[1] for f, _ in collisions] == ["ecg.png", NFD]
    assert "`ECG.png` name one file on macOS and Windows" in collisions[0][1]


def test_a_changed_attachment_is_checked_again_with_a_warm_cache(
    make_repo: RepoMaker, capsys: pytest.CaptureFixture[str]
) -> None:
    root = make_repo()
    attach(root, {"ecg.svg": SVG})
    assert main(["validate", "--root", str(root)]) == 0
    attach(root, {"ecg.svg": SCRIPTED})  # same name, same size class: only the bytes tell
    assert main(["validate", "--root", str(root)]) == 1
    assert "CB313 attachment-type" in capsys.readouterr().out


def test_the_issue_examples_pass_neither_validate_nor_release(
    repo: GitRepo, capsys: pytest.CaptureFixture[str]
) -> None:
    for name, content in (("ecg.svg", SCRIPTED), ("page.html", b"<html><script></script>")):
        repo.write(f"cases/alpha/attachments/{name}", content)
        repo.commit(f"Attach {name}")
        assert main(["validate", "--root", str(repo.root), "--strict"]) == 1
        before = repo.state()
        assert main(["release", "1.0.0", "--root", str(repo.root)]) == 1
        assert repo.state() == before
        repo.delete(f"cases/alpha/attachments/{name}")
        repo.commit(f"Remove {name}")
    capsys.readouterr()


# --- the site --------------------------------------------------------------------------------


class _Refs(HTMLParser):
    def __init__(self) -> None:
        super().__init__()
        self.links: list[str] = []
        self.images: list[str] = []

    def handle_starttag(self, tag: str, attrs: list[tuple[str, str | None]]) -> None:
        found = dict(attrs)
        if tag == "a" and found.get("href"):
            self.links.append(str(found["href"]))
        if tag == "img" and found.get("src"):
            self.images.append(str(found["src"]))


def test_the_site_never_serves_an_attachment_that_can_run_a_script(
    repo: GitRepo, tmp_path: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    repo.write(
        "cases/alpha.yaml",
        edit(
            "    ECG:\n",
            "    ECG:\n      attachments: [tracing.svg, evil.svg]\n",
            VALID_CASE.replace("case_id: valid_case", "case_id: alpha"),
        ),
    )
    repo.write("cases/alpha/attachments/tracing.svg", SVG)
    repo.write("cases/alpha/attachments/evil.svg", SCRIPTED)
    repo.write("cases/alpha/attachments/page.html", b"<html><script>alert(1)</script></html>")
    repo.write("cases/alpha/attachments/ecg.png", tiny_png())
    out = tmp_path / "site"
    assert main(["site", "--root", str(repo.root), "--out", str(out)]) == 0
    err = capsys.readouterr().err
    assert "cases/alpha/attachments/evil.svg: not published, the SVG is not sanitised" in err
    assert "cases/alpha/attachments/page.html: not published, the file is an HTML page" in err
    published = sorted(p.name for p in (out / "cases/alpha/attachments").iterdir())
    assert published == ["ecg.png", "tracing.svg"]
    page = (out / "cases/alpha.html").read_text("utf-8")
    refs = _Refs()
    refs.feed(page)
    assert not [link for link in refs.links if re.search(r"attachments/.*\.(svg|html)$", link)]
    assert refs.images == ["alpha/attachments/ecg.png", "alpha/attachments/tracing.svg"]
    assert '<a href="#attachment-' in page  # the result links to the figure on the page
    assert "evil.svg (not published: the SVG is not sanitised" in page
    csp = re.search(r'http-equiv="Content-Security-Policy" content="([^"]+)"', page)
    assert csp is not None and "img-src 'self'" in csp.group(1)


def test_a_manifest_naming_a_refused_attachment_is_reported(
    repo: GitRepo, tmp_path: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    repo.write("cases/alpha/attachments/ecg.png", tiny_png())
    repo.commit("Attach an ECG")
    assert main(["release", "1.0.0", "--root", str(repo.root)]) == 0
    path = repo.root / "releases/1.0.0.json"
    path.write_text(path.read_text("utf-8").replace('"ecg.png"', '"ecg\\nx  ../../y.png"'))
    repo.commit("Tamper with an attachment name")
    assert main(["verify", "--root", str(repo.root)]) == 1
    out = capsys.readouterr().out
    assert "names an attachment that is refused: the name holds the invisible character" in out
    argv = ["export", "--release", "1.0.0", "--out", str(tmp_path / "b"), "--root", str(repo.root)]
    assert main(argv) == 1 and not (tmp_path / "b").exists()


def test_a_release_s_attachments_are_read_in_one_batch_whatever_the_number_of_cases(
    repo: GitRepo, monkeypatch: pytest.MonkeyPatch, capsys: pytest.CaptureFixture[str]
) -> None:
    """Every case with an attachment: one blob reader for the cases and one for all their
    attachments, never one per case."""
    from casebank.release import git as gitlayer
    from casebank.release.released import load_release

    for case in ("alpha", "beta", "gamma"):
        repo.write(f"cases/{case}/attachments/ecg.png", tiny_png() + case.encode())
    repo.commit("Attachments")
    assert main(["release", "1.0.0", "--root", str(repo.root)]) == 0
    capsys.readouterr()
    calls: list[int] = []
    real = gitlayer.read_blobs

    def counted(root: Path, oids: object) -> object:
        calls.append(1)
        return real(root, oids)  # type: ignore[arg-type]

    monkeypatch.setattr(gitlayer, "read_blobs", counted)
    loaded = load_release(repo.root, "1.0.0")
    assert all(c.attachments == {"ecg.png": tiny_png() + c.entry.case_id.encode()}
               for c in loaded.cases)  # fmt: skip
    # the manifest at its tag, the catalog and policy, the cases, the attachments
    assert len(calls) == 4
