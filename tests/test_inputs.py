"""Every input gets an answer: no crash, no abort, no silent change, no misleading message.

Each test feeds one input that once crashed the loader, changed silently, was refused although
valid, or got a misleading message, and asserts the exact rule, place and wording now given.
"""

from __future__ import annotations

import copy
import json
import os
from pathlib import Path

import pytest
import yaml

import casebank.format.loader as loader
from casebank.check.engine import all_rules, stamp_issue
from casebank.cli import main
from casebank.format.loader import load_document
from casebank.format.text import FORBIDDEN_IN_FILE
from conftest import VALID_CASE, RepoMaker, check_text, edit, line_of

all_rules()


def issues(raw: bytes, file: str = "cases/x.yaml") -> list[tuple[str, int, int, str]]:
    result = load_document(file, raw)
    return [
        (p.rule, p.line, p.column, p.message)
        for p in (stamp_issue(file, issue) for issue in result.issues)
    ]


def rules(raw: bytes, file: str = "cases/x.yaml") -> list[str]:
    return [rule for rule, *_ in issues(raw, file)]


# --- crashes that are now problems ------------------------------------------------------


@pytest.mark.parametrize(
    "scalar,rule",
    [
        ("0x_", "CB111"),  # a hexadecimal number with no digits
        ("!!int abc", "CB116"),
        ("9" * 5000, "CB115"),  # more digits than Python converts
        ("1.0e+400", "CB115"),  # a float that overflows
        ("-.inf", "CB113"),
    ],
)
def test_scalars_that_crashed_the_loader_are_problems(scalar: str, rule: str) -> None:
    assert rules(f"a: {scalar}\n".encode()) == [rule]


@pytest.mark.parametrize("constant", ["NaN", "Infinity", "-Infinity"])
def test_json_non_finite_constants_are_refused_where_they_are(constant: str) -> None:
    [(rule, line, column, message)] = issues(
        f'{{\n  "a": 1,\n  "b": {constant}\n}}'.encode(), "cases/x.json"
    )
    assert (rule, line, column) == ("CB113", 3, 8)
    assert "json.dumps" in message


def test_an_integer_beyond_2_53_is_refused_before_hashing() -> None:
    assert rules(b"a: 9007199254740993\n") == ["CB115"]
    assert rules(b"a: 9007199254740991\n") == []
    assert rules(b'{"a": 9007199254740993}', "cases/x.json") == ["CB115"]


# --- silent changes that are now reported ---------------------------------------------------


def test_a_tag_that_does_not_fit_is_refused() -> None:
    [(rule, _, _, message)] = issues(b"a: !!bool maybe\n")
    assert rule == "CB116" and "`maybe` is not a boolean" in message


@pytest.mark.parametrize("number", ["0x36", "0b110110", "066", "1_000", "1:30"])
def test_every_yaml11_number_trap_is_reported(number: str) -> None:
    [(rule, _, _, message)] = issues(f"age: {number}\n".encode())
    assert rule == "CB111" and f"`{number}`" in message


def test_a_plain_decimal_is_no_trap() -> None:
    assert rules(b"age: 54\nvalue: 2.40\n") == []


# --- valid JSON that was refused ------------------------------------------------------------


def test_json_dumps_output_with_an_emoji_loads() -> None:
    raw = json.dumps({"case_id": "x", "note": "pain 😖 at night"}).encode()
    assert "\\ud83d" in raw.decode()  # json.dumps writes a surrogate-pair escape
    result = load_document("cases/x.json", raw)
    assert result.document is not None and result.document.data["note"] == "pain 😖 at night"


def test_a_lone_surrogate_escape_is_refused() -> None:
    assert rules(b'{"a": "\\ud800 x"}', "cases/x.json") == ["CB101"]


# --- one parser behaviour everywhere --------------------------------------------------------


def test_without_the_c_parser_casebank_stops_with_the_fix(
    make_repo: RepoMaker, capsys: pytest.CaptureFixture[str], monkeypatch: pytest.MonkeyPatch
) -> None:
    monkeypatch.setattr(loader, "_YamlLoader", None)
    root = make_repo()
    assert main(["validate", "--root", str(root), "--no-cache"]) == 2
    err = capsys.readouterr().err
    assert "without its C parser (libyaml)" in err and "--only-binary=:all: PyYAML" in err


# --- messages that misled -------------------------------------------------------------------


def test_a_tab_in_the_indentation_says_so() -> None:
    [(rule, line, _, message)] = issues(b"a:\n\tb: 1\n")
    assert (rule, line) == ("CB101", 2)
    assert "tab character" in message


def test_a_nul_byte_is_reported_where_it_is() -> None:
    raw = b"".join(f"k{i}: v\n".encode() for i in range(28)) + b"title: ab\x00c\n"
    [(rule, line, column, message)] = issues(raw)
    assert (rule, line, column) == ("CB117", 29, 10)
    assert "NUL" in message


# Every character the text policy refuses in a file (a lone surrogate is not UTF-8 at all).
FORBIDDEN = [
    chr(c) for c in range(0x110000) if not 0xD800 <= c <= 0xDFFF and FORBIDDEN_IN_FILE.match(chr(c))
]
# Where it may stand: a value (plain, quoted, in a flow list), a comment, a key, a block, and
# below a refusal of the loader's own (a duplicate key, an anchor) that comes first in the
# file. {} is the character.
PLACES = [
    "a: x{}y\n",
    'a: "quoted x{}y"\n',
    "a: [x, y{}]\n",
    "# a note{}\na: 1\n",
    '"k{}": 1\n',
    "a: |\n  line one\n  x{}\n",
    "a: 1\na: 2\nb: x{}\n",
    "a: &first 1\nb: x{}\n",
]


def test_every_refused_character_is_named_wherever_it_stands() -> None:
    """A YAML file is not searched for control characters before it is parsed: libyaml
    refuses the same ones as it reads. Each is still reported by name, at its place."""
    assert len(FORBIDDEN) == 63  # C0 but tab, LF and CR; DEL; C1 but NEL; U+FFFE, U+FFFF
    for char in FORBIDDEN:
        for place in PLACES:
            text = place.format(char)
            offset = text.index(char)
            line = text.count("\n", 0, offset) + 1
            column = offset - (text.rfind("\n", 0, offset) + 1) + 1
            [(rule, *where, message)] = issues(text.encode())
            assert (rule, *where) == ("CB117", line, column), (char, place)
            assert "invisible control character" in message


def test_a_conflict_marker_inside_a_line_is_text() -> None:
    assert issues(b"a: x ======= y\nb: '<<<<<<< not a marker'\n") == []


def test_json_duplicate_keys_are_explained_for_json() -> None:
    [(rule, _, _, message)] = issues(b'{"a": 1, "a": 2}', "cases/x.json")
    assert rule == "CB102" and "JSON readers disagree" in message and "YAML" not in message


def test_merge_conflict_markers_are_named() -> None:
    raw = b"a: 1\n<<<<<<< HEAD\ntitle: x\n=======\ntitle: y\n>>>>>>> branch\n"
    [(rule, line, _, message)] = issues(raw)
    assert (rule, line) == ("CB118", 2) and "merge conflict" in message


def test_language_no_is_told_the_language_not_to_quote_it() -> None:
    [problem] = check_text(edit("language: en", "language: no"))
    assert problem.rule == "CB301"
    assert "`no`" in problem.message and "quote" not in (problem.message + problem.hint)


def test_an_unclosed_quote_is_reported_where_it_opens() -> None:
    text = 'case_id: x\ntitle: "Chest pain\nmore: 1\nand: 2\nother: 3\nlast: 4\n'
    [(rule, line, _, message)] = issues(text.encode())
    assert (rule, line) == ("CB101", 2) and "never closed" in message


def test_1e3_says_why_it_is_not_a_number() -> None:
    text = edit("      value: 2.4\n", "      value: 1e3\n")
    [problem] = check_text(text)
    assert problem.rule == "CB305" and "exponent needs a decimal point" in problem.message
    assert problem.line == line_of(text, "hs-troponin:")


# --- case files anywhere under cases/ -------------------------------------------------------


def _json_report(capsys: pytest.CaptureFixture[str], root: Path, *extra: str) -> dict:  # type: ignore[type-arg]
    code = main(["validate", "--root", str(root), "--format", "json", "--no-cache", *extra])
    payload = json.loads(capsys.readouterr().out)
    payload["code"] = code
    return payload


def test_a_case_file_in_a_subfolder_is_refused_not_skipped(
    make_repo: RepoMaker, capsys: pytest.CaptureFixture[str]
) -> None:
    root = make_repo()
    (root / "cases" / "cardiology").mkdir()
    (root / "cases" / "cardiology" / "chest_pain_002.yaml").write_text(VALID_CASE)
    payload = _json_report(capsys, root)
    assert payload["code"] == 1 and payload["files_checked"] == 3
    [problem] = payload["problems"]
    assert (problem["file"], problem["rule"]) == ("cases/cardiology/chest_pain_002.yaml", "CB307")
    assert "move it to cases/chest_pain_002.yaml" in problem["hint"]
    # named on the command line, it is refused the same way
    explicit = _json_report(capsys, root, str(root / "cases" / "cardiology"))
    assert [p["rule"] for p in explicit["problems"]] == ["CB307"]


def test_a_symlinked_case_is_refused_and_never_followed(
    make_repo: RepoMaker, capsys: pytest.CaptureFixture[str], tmp_path: Path
) -> None:
    root = make_repo()
    outside = tmp_path / "outside.yaml"
    outside.write_text(VALID_CASE.replace("case_id: valid_case", "case_id: linked"))
    os.symlink(outside, root / "cases" / "linked.yaml")
    payload = _json_report(capsys, root)
    assert [(p["file"], p["rule"]) for p in payload["problems"]] == [("cases/linked.yaml", "CB308")]


def test_attachments_of_no_case_are_reported(
    make_repo: RepoMaker, capsys: pytest.CaptureFixture[str]
) -> None:
    root = make_repo()
    folder = root / "cases" / "valid_cas" / "attachments"
    folder.mkdir(parents=True)
    (folder / "ecg.svg").write_text("<svg/>")
    payload = _json_report(capsys, root)
    assert [(p["file"], p["rule"]) for p in payload["problems"]] == [
        ("cases/valid_cas/attachments", "CB309")
    ]


def test_editor_leftovers_are_not_cases_or_errors(
    make_repo: RepoMaker, capsys: pytest.CaptureFixture[str]
) -> None:
    root = make_repo()
    (root / "cases" / ".gitkeep").write_text("")
    (root / "cases" / ".valid_case.yaml.swp").write_bytes(b"\x00")
    assert _json_report(capsys, root)["code"] == 0


# --- one file's failure never stops the run -------------------------------------------------


def test_a_bug_on_one_file_is_a_problem_on_that_file_and_the_rest_is_reported(
    make_repo: RepoMaker, capsys: pytest.CaptureFixture[str], monkeypatch: pytest.MonkeyPatch
) -> None:
    import dataclasses

    from casebank.check import engine

    real = engine.rules_for

    def with_a_bug(target: str) -> list[engine.Rule]:
        found = real(target)  # type: ignore[arg-type]
        weights = next(r for r in found if r.code == "CB306") if target == "case" else None
        if weights is None or weights.check is None:
            return found
        original = weights.check

        def explode(ctx: engine.CaseContext) -> object:
            if ctx.doc.file.endswith("b_case.yaml"):
                raise ZeroDivisionError("boom")
            return original(ctx)

        return [dataclasses.replace(r, check=explode) if r is weights else r for r in found]

    monkeypatch.setattr(engine, "rules_for", with_a_bug)
    root = make_repo(
        {
            "a_case.yaml": VALID_CASE.replace("case_id: valid_case", "case_id: a_case"),
            "b_case.yaml": VALID_CASE.replace("case_id: valid_case", "case_id: b_case"),
        }
    )
    payload = _json_report(capsys, root)
    assert payload["code"] == 1 and payload["files_checked"] == 3
    [problem] = payload["problems"]
    assert (problem["file"], problem["rule"]) == ("cases/b_case.yaml", "CB100")
    assert "ZeroDivisionError: boom" in problem["message"]


def test_a_traceback_only_with_debug(
    make_repo: RepoMaker, capsys: pytest.CaptureFixture[str], monkeypatch: pytest.MonkeyPatch
) -> None:
    import casebank.commands.validate as command

    def explode(*_: object, **__: object) -> None:
        raise KeyError("internal")

    monkeypatch.setattr(command, "validate_repository", explode)
    root = make_repo()
    assert main(["validate", "--root", str(root)]) == 2
    err = capsys.readouterr().err
    assert "internal error" in err and "Traceback" not in err and "--debug" in err
    assert main(["validate", "--root", str(root), "--debug"]) == 2
    assert "Traceback" in capsys.readouterr().err


def test_a_yaml11_boolean_in_a_field_of_fixed_values_names_those_values() -> None:
    [problem] = check_text(edit("difficulty: medium", "difficulty: no"))
    assert problem.rule == "CB204" and "`no`" in problem.message
    assert problem.hint == "use one of: easy, medium, hard"


def test_a_null_result_is_a_shape_problem_not_a_crash() -> None:
    # found by the property test: the results oracle tried to serve a null result
    text = edit(
        '    ECG:\n      type: text_report\n      value: "ST elevation in II, III and aVF."\n'
        "      flag: abnormal\n      answers: [Cardiac monitoring]\n",
        "    ECG: null\n",
    )
    # a shape problem, and (the ECG being unserved) the must-order warning; no CB100
    assert {p.rule for p in check_text(text)} <= {"CB203", "CB205", "CB405"}


def _containers(node: object, path: tuple[object, ...] = ()) -> list[tuple[object, ...]]:
    found = [path] if path and isinstance(node, (dict, list)) else []
    children = (
        node.items()
        if isinstance(node, dict)
        else enumerate(node)
        if isinstance(node, list)
        else ()
    )
    for key, child in children:
        found += _containers(child, (*path, key))
    return found


_VALID = yaml.safe_load(VALID_CASE)


@pytest.mark.parametrize("path", _containers(_VALID), ids=lambda p: ".".join(map(str, p)) or "top")
@pytest.mark.parametrize("replacement", [None, "text", 7])
def test_any_section_of_the_wrong_shape_is_a_problem_not_a_crash(
    path: tuple[object, ...], replacement: object
) -> None:
    # found by the property test: `investigations: null` crashed the results rules
    data = copy.deepcopy(_VALID)
    parent = data
    for key in path[:-1]:
        parent = parent[key]
    parent[path[-1]] = replacement
    problems = check_text(yaml.safe_dump(data, allow_unicode=True, sort_keys=False))
    assert "CB100" not in {p.rule for p in problems}  # a shape problem (or valid), never a crash
