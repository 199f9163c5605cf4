"""The loader's refusals: each with its own code and the exact line and column."""

from __future__ import annotations

import time

import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

from casebank.check.engine import all_rules, stamp_issue
from casebank.check.problem import Problem
from casebank.format.loader import MAX_DEPTH, MAX_FILE_BYTES, LoadResult, load_document
from conftest import examples

all_rules()  # the loader names its issues; the engine's load rules give them their codes


def problems_of(result: LoadResult, file: str = "cases/x.yaml") -> list[Problem]:
    return [stamp_issue(file, issue) for issue in result.issues]


def refusal(raw: bytes, file: str = "cases/x.yaml") -> list[tuple[str, int, int]]:
    result = load_document(file, raw)
    assert result.document is None, "expected the file to be refused"
    return [(p.rule, p.line, p.column) for p in problems_of(result, file)]


def test_valid_yaml_loads_with_positions() -> None:
    result = load_document("cases/x.yaml", b"a: 1\nb:\n  c: [x, 'y']\n  d: text\n")
    assert problems_of(result) == []
    doc = result.document
    assert doc is not None
    assert doc.data == {"a": 1, "b": {"c": ["x", "y"], "d": "text"}}
    assert doc.locate(("b", "c", 1)) == (3, 10)
    assert doc.locate(("b", "d"), at_key=True) == (4, 3)
    # a missing field points at its parent's key
    assert doc.locate(("b", "missing")) == (2, 1)


def test_syntax_error_has_line_and_column() -> None:
    assert refusal(b"title: ok\nmessage: a: b\n") == [("CB101", 2, 11)]


def test_duplicate_keys_are_refused_not_silently_merged() -> None:
    result = load_document("cases/x.yaml", b"patient:\n  age: 54\n  age: 45\n")
    assert result.document is None
    [problem] = problems_of(result)
    assert (problem.rule, problem.line, problem.column, problem.path) == (
        "CB102",
        3,
        3,
        "patient.age",
    )
    assert "first on line 2" in problem.message


def test_every_duplicate_key_is_reported() -> None:
    assert [r[0] for r in refusal(b"a: 1\na: 2\nb: 1\nb: 2\n")] == ["CB102", "CB102"]


def test_anchor_is_refused() -> None:
    assert refusal(b"a: &x [1]\nb: 2\n") == [("CB103", 1, 4)]


def test_billion_laughs_is_refused_at_once() -> None:
    levels = [b'lol0: &lol0 "lol"']
    for i in range(1, 12):
        refs = ",".join([f"*lol{i - 1}"] * 10)
        levels.append(f"lol{i}: &lol{i} [{refs}]".encode())
    start = time.perf_counter()
    assert refusal(b"\n".join(levels))[0][0] == "CB103"
    assert time.perf_counter() - start < 1.0


def test_alias_without_anchor_syntax_is_still_refused() -> None:
    # An alias to an undefined anchor is a parser error; either way nothing is expanded.
    assert refusal(b"a: *nothing\n")[0][0] in ("CB101", "CB103")


def test_second_document_is_refused() -> None:
    assert refusal(b"a: 1\n---\nb: 2\n") == [("CB104", 2, 1)]


@pytest.mark.parametrize("raw", [b"- a\n- b\n", b"just text\n", b"42\n"])
def test_top_level_must_be_a_mapping(raw: bytes) -> None:
    assert refusal(raw) == [("CB105", 1, 1)]


@pytest.mark.parametrize("raw", [b"", b"   \n", b"# only a comment\n", b"---\n", b"~\n"])
def test_empty_files_are_refused(raw: bytes) -> None:
    assert refusal(raw) == [("CB106", 1, 1)]


def test_bytes_that_are_not_utf8_point_at_the_byte() -> None:
    assert refusal(b"title: ok\nunit: \xb5mol/L\n") == [("CB107", 2, 7)]


def test_utf8_byte_order_mark_is_accepted() -> None:
    result = load_document("cases/x.yaml", "\ufeffa: 1\n".encode())
    assert result.document is not None and result.document.data == {"a": 1}


def test_oversized_file_is_refused_before_parsing() -> None:
    assert refusal(b"a: " + b"x" * MAX_FILE_BYTES) == [("CB108", 1, 1)]


def test_absurd_nesting_is_refused() -> None:
    deep = b"a: " + b"[" * (MAX_DEPTH + 5) + b"]" * (MAX_DEPTH + 5)
    assert refusal(deep)[0][0] == "CB109"


def test_very_deep_nesting_neither_crashes_nor_hangs() -> None:
    assert refusal(b"[" * 200_000)[0][0] in ("CB101", "CB109")


@pytest.mark.parametrize(
    "tag",
    [b"!!python/object:os.system", b"!!python/name:os.system", b"!custom", b"!!binary", b"!!set"],
)
def test_non_safe_tags_are_refused(tag: bytes) -> None:
    assert refusal(b"a: " + tag + b" x\n") == [("CB110", 1, 4)]


def test_plain_safe_tags_are_accepted() -> None:
    result = load_document("cases/x.yaml", b'a: !!str 5\nb: !!int "7"\n')
    assert result.document is not None and result.document.data == {"a": "5", "b": 7}


@pytest.mark.parametrize(("raw", "line"), [(b"a: 1\nage: 054\n", 2), (b"time: 12:30\n", 1)])
def test_yaml11_surprising_numbers_are_reported(raw: bytes, line: int) -> None:
    result = load_document("cases/x.yaml", raw)
    assert [(p.rule, p.line) for p in problems_of(result)] == [("CB111", line)]
    assert "quotes" in problems_of(result)[0].hint


def test_quoted_and_ordinary_numbers_are_not_ambiguous() -> None:
    result = load_document("cases/x.yaml", b'a: "054"\nb: 54\nc: 0.5\nd: "12:30"\n')
    assert problems_of(result) == []


@pytest.mark.parametrize("raw", [b"yes: 1\n", b"1: x\n", b"? [a]\n: 1\n"])
def test_keys_must_be_text(raw: bytes) -> None:
    assert refusal(raw)[0][0] == "CB112"


@pytest.mark.parametrize("raw", [b"a: .inf\n", b"a: -.Inf\n", b"a: .nan\n"])
def test_non_finite_numbers_are_refused(raw: bytes) -> None:
    assert refusal(raw) == [("CB113", 1, 4)]


def test_yaml11_booleans_are_remembered_with_their_source_text() -> None:
    result = load_document("cases/x.yaml", b"title: no\n")
    assert result.document is not None
    assert result.document.data == {"title": False}
    assert result.document.plain_non_text[("title",)] == "no"


def test_timestamps_stay_text() -> None:
    result = load_document("cases/x.yaml", b"since: 2015-03-01\n")
    assert result.document is not None and result.document.data == {"since": "2015-03-01"}


def test_json_cases_load_with_positions_and_json_semantics() -> None:
    raw = b'{\n  "a": 1e3,\n  "b": ["no", true, null]\n}\n'
    result = load_document("cases/x.json", raw)
    assert result.document is not None and problems_of(result) == []
    assert result.document.data == {"a": 1000.0, "b": ["no", True, None]}
    assert result.document.locate(("b", 0)) == (3, 9)


def test_json_syntax_errors_are_positioned() -> None:
    # a missing comma: every supported Python reports it at the next key
    assert refusal(b'{\n  "a": 1\n  "b": 2\n}\n', "cases/x.json") == [("CB101", 3, 3)]


def test_json_trailing_comma_is_refused() -> None:
    # Python 3.13 points at the comma, older versions at the brace after it
    [(rule, line, _)] = refusal(b'{\n  "a": 1,\n}\n', "cases/x.json")
    assert rule == "CB101" and line in (2, 3)


def test_json_duplicate_keys_are_refused() -> None:
    assert refusal(b'{"a": 1, "a": 2}', "cases/x.json")[0][0] == "CB102"


def test_json_rejects_yaml_only_syntax() -> None:
    assert refusal(b"a: 1\n", "cases/x.json")[0][0] == "CB101"


@settings(max_examples=examples(2000), deadline=None)
@given(st.text(min_size=1, max_size=12))
def test_a_plain_scalar_read_as_text_without_the_resolver_is_text_to_the_resolver(
    text: str,
) -> None:
    # The loader skips PyYAML's resolver when no implicit type starts with the first character.
    from casebank.format import loader

    if text[0] not in loader._RESOLVED_FIRST:
        assert loader._resolve(text) == "str"
