"""One text policy: control characters are refused however they are written, one-line fields
keep to one line, everything casebank prints is escaped for the terminal, and everything it
writes as Markdown is escaped for Markdown. Each on real files and real repositories."""

from __future__ import annotations

import dataclasses
import json
import re
from pathlib import Path

import pytest
import yaml

from casebank.cli import main
from casebank.format.loader import load_document
from casebank.markdown import code, text
from casebank.release import changelog
from casebank.release.manifest import loads
from conftest import edit, found, line_of
from gitrepo import GitRepo, case_text

pytestmark = pytest.mark.usefixtures("isolated_git")

TITLE = 'title: "Acute chest pain in a smoker"'
FAKE_SECTION = "Chest pain\\n\\n## [1.2.0] - 2030-01-01\\n\\n### Added\\n\\n- `evil` v1: fake"


# --- control characters after unescaping ------------------------------------------------------


@pytest.mark.parametrize(
    "raw,file",
    [
        (b'a: "x\\e[2J"\n', "cases/x.yaml"),  # ESC, the start of every terminal escape code
        (b'a: "x\\0y"\n', "cases/x.yaml"),
        (b'a: "x\\ry"\n', "cases/x.yaml"),  # a carriage return rewrites the line shown
        (b'a: "x\\x9b"\n', "cases/x.yaml"),  # CSI, ESC's one-byte form
        (b'a: "x\\u007f"\n', "cases/x.yaml"),
        (b'"key\\e": 1\n', "cases/x.yaml"),  # keys are text too
        (b'a:\n  - "fine"\n  - "x\\a"\n', "cases/x.yaml"),
        (b'{"a": "x\\u001b[31m"}', "cases/x.json"),
        (b'{"a\\u0000": 1}', "cases/x.json"),
    ],
)
def test_an_escaped_control_character_is_refused_where_it_is(raw: bytes, file: str) -> None:
    result = load_document(file, raw)
    assert result.document is None
    [issue] = result.issues
    assert issue.name == "control-character"
    assert issue.line == raw.count(b"\n", 0, raw.rfind(b"\\")) + 1
    assert "an escape in this text" in issue.message and "invisible control character" in (
        issue.message
    )


def test_escapes_that_are_text_still_load() -> None:
    result = load_document("cases/x.yaml", b'a: "tab\\tand line\\nbreak \\u00e9 \\\\e"\n')
    assert result.document is not None
    assert result.document.data == {"a": "tab\tand line\nbreak é \\e"}


def test_in_a_case_the_escape_is_a_problem_with_its_line() -> None:
    case = edit(TITLE, 'title: "Chest pain\\e]0;owned\\a"')
    assert found(case) == [("CB117", "metadata.title", line_of(case, "owned"))]


# --- one-line fields ---------------------------------------------------------------------------


@pytest.mark.parametrize(
    "old,new,path",
    [
        (TITLE, f'title: "{FAKE_SECTION}"', "metadata.title"),
        (TITLE, 'title: "Chest\\u2028pain"', "metadata.title"),
        (TITLE, 'title: "Chest\\Npain"', "metadata.title"),  # NEL
        (
            "[ECG, Troponin, CBC]",
            '[ECG, "Trop\\nonin", CBC]',
            "investigations.expected.must_order[1]",
        ),
        ("  specialty: emergency_medicine", '  specialty: "emergency\\nmedicine"', None),
        ("chief_complaint:", '"chief\\ncomplaint":', 'presentation["chief\ncomplaint"]'),
    ],
)
def test_a_line_break_in_a_one_line_field_is_refused(old: str, new: str, path: str | None) -> None:
    case = edit(old, new)
    problems = [(rule, where) for rule, where, _ in found(case) if rule == "CB310"]
    assert problems and (path is None or problems[0][1] == path), found(case)


def test_narratives_keep_their_line_breaks_and_folded_blocks_their_end() -> None:
    case = edit(TITLE, "title: >\n    Acute chest pain\n    in a smoker")
    assert found(case) == []
    assert [
        r
        for r, _, _ in found(edit("persona:", "persona: |\n    Line one.\n    Line two.\n  x:"))
        if r == "CB310"
    ] == []


def test_the_fake_changelog_section_never_reaches_the_changelog(
    repo: GitRepo, capsys: pytest.CaptureFixture[str]
) -> None:
    repo.write("cases/alpha.yaml", case_text("alpha", FAKE_SECTION))
    repo.commit("A title with escaped line breaks")
    before = repo.state()
    assert main(["release", "1.0.0", "--root", str(repo.root)]) == 1
    out = capsys.readouterr()
    assert "cases/alpha.yaml:4: the text of `metadata.title` holds a line break" in out.err
    assert repo.state() == before and not (repo.root / "CHANGELOG.md").exists()


def test_a_released_title_is_escaped_in_the_changelog(
    repo: GitRepo, capsys: pytest.CaptureFixture[str]
) -> None:
    """Even a manifest that holds such a title (an older casebank, a hand-made one) cannot
    write a section: the changelog escapes what it quotes."""
    assert main(["release", "1.0.0", "--root", str(repo.root)]) == 0
    manifest = loads((repo.root / "releases/1.0.0.json").read_bytes(), "releases/1.0.0.json")
    hostile = json.loads(f'"{FAKE_SECTION}"') + " <img src=x onerror=alert(1)> [x](javascript:1)"
    cases = tuple(dataclasses.replace(c, title=hostile) for c in manifest.cases)
    section = changelog.render_section(dataclasses.replace(manifest, cases=cases))
    document = changelog.insert_section(None, section, "1.0.0")
    assert re.findall(r"^##? .*$", document, re.MULTILINE) == [
        "# Changelog",
        f"## [1.0.0] - {manifest.created[:10]}",
    ]
    assert "\\<img src=x onerror=alert(1)> \\[x\\](javascript:1)" in section
    assert "- `alpha` v1: Chest pain ## \\[1.2.0\\] - 2030-01-01 ### Added - \\`evil\\`" in section
    assert len(section.splitlines()) == len(changelog.render_section(manifest).splitlines())


# --- the terminal ------------------------------------------------------------------------------


def test_a_git_author_cannot_drive_the_terminal(
    repo: GitRepo, capsys: pytest.CaptureFixture[str]
) -> None:
    repo.write("cases/alpha.yaml", case_text("alpha", "Case alpha, edited"))
    repo.commit("Edit alpha", author=("Ann\x1b]0;owned\x07\x1b[2J\u202eEvil", "evil@example.org"))
    assert main(["release", "1.0.0", "--root", str(repo.root)]) == 0
    assert main(["history", "alpha", "--root", str(repo.root)]) == 0
    out = capsys.readouterr().out
    assert "Ann\\u001b]0;owned\\u0007\\u001b[2J\\u202eEvil" in out
    assert not re.search("[\x00-\x08\x0b-\x1f\x7f-\x9f\u202e]", out)


@pytest.mark.parametrize("format", ["text", "github", "markdown", "json"])
def test_a_file_name_cannot_drive_the_terminal(
    make_repo: object, capsys: pytest.CaptureFixture[str], format: str
) -> None:
    root: Path = make_repo()  # type: ignore[operator]
    name = "cases/x\x1b[31mred\u202e.yaml"
    (root / name).write_text("case_id: x\n", encoding="utf-8")
    assert main(["validate", "--root", str(root), "--no-cache", "--format", format]) == 1
    out, err = capsys.readouterr()
    assert not re.search("[\x1b\u202e]", out + err)
    if format == "json":
        files = {p["file"] for p in json.loads(out)["problems"]}
        assert name in files  # the same JSON, escaped
    else:
        assert "x\\u001b[31mred\\u202e.yaml" in out


def test_case_text_is_escaped_in_view_and_reads_back_the_same(
    make_repo: object, capsys: pytest.CaptureFixture[str]
) -> None:
    sneaky = "Chest pain\u202e\u2066 reversed\u2069"  # bidirectional controls YAML allows
    root: Path = make_repo(  # type: ignore[operator]
        {"valid_case.yaml": edit('chief_complaint: "Chest pain"', f'chief_complaint: "{sneaky}"')}
    )
    for format, parse in (("yaml", yaml.safe_load), ("json", json.loads)):
        argv = ["view", "valid_case", "--role", "patient", "--format", format]
        assert main([*argv, "--root", str(root)]) == 0
        out = capsys.readouterr().out
        assert "\u202e" not in out and "\\u202e" in out
        assert parse(out)["presentation"]["chief_complaint"] == sneaky


# --- Markdown ----------------------------------------------------------------------------------


HOSTILE = "[click](https://evil.example) <img src=x onerror=alert(1)> **bold** | `tick` @everyone"


def test_markdown_text_is_literal_and_on_one_line() -> None:
    assert text("a\n\n## [1.2.0]") == "a ## \\[1.2.0\\]"
    assert text("# heading") == "\\# heading" and text("1. item") == "1\\. item"
    assert text("snake_case stays, _emphasis_ does not") == (
        "snake_case stays, \\_emphasis\\_ does not"
    )
    assert code("a`b|c") == "``a`b\\|c``"


def test_the_pull_request_summary_escapes_case_text(
    repo: GitRepo, capsys: pytest.CaptureFixture[str]
) -> None:
    repo.write("cases/alpha.yaml", case_text("alpha", HOSTILE.replace('"', "'")))
    assert main(["diff", "--root", str(repo.root), "--format", "markdown"]) == 0
    out = capsys.readouterr().out
    row = next(line for line in out.splitlines() if line.startswith("| `metadata.title`"))
    assert "\\[click\\](https://evil.example) \\<img src=x onerror=alert(1)>" in row
    assert "\\*\\*bold\\*\\* \\| \\`tick\\`" in row
    assert row.count(" | ") == 2  # field, before, after: no cell of its own


def test_the_dataset_card_escapes_what_people_wrote(
    repo: GitRepo, tmp_path: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    assert main(["release", "1.0.0", "--root", str(repo.root)]) == 0
    reason = f"Wrong unit. {HOSTILE}"
    assert main(["withdraw", "alpha@1", "--reason", reason, "--root", str(repo.root)]) == 0
    repo.commit("Withdraw alpha@1")
    assert main(["release", "1.0.1", "--root", str(repo.root)]) == 0
    out = tmp_path / "bundle"
    argv = ["export", "--release", "1.0.1", "--out", str(out), "--root", str(repo.root)]
    assert main(argv) == 0
    card = (out / "README.md").read_text("utf-8")
    assert f"- withdrawn: `alpha` v1: {text(reason)}" in card
    assert "<img" not in card.replace("\\<img", "")
    changes = (repo.root / "CHANGELOG.md").read_text("utf-8")
    assert f"- `alpha` v1: {text(reason)}" in changes


def test_the_coverage_table_escapes_what_cases_say(
    make_repo: object, capsys: pytest.CaptureFixture[str]
) -> None:
    hostile = "cardiology | [x](javascript:alert(1)) <b>"
    root: Path = make_repo(  # type: ignore[operator]
        {"valid_case.yaml": edit("specialty: emergency_medicine", f'specialty: "{hostile}"')}
    )
    assert main(["coverage", "--root", str(root)]) == 0
    out = capsys.readouterr().out
    assert "| cardiology \\| \\[x\\](javascript:alert(1)) \\<b> | " in out
