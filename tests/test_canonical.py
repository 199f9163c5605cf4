"""Canonical content hashes: formatting never matters, content always does, and the definition
in docs/releases.md can be recomputed by hand."""

from __future__ import annotations

import hashlib
import json

import pytest
import rfc8785
from hypothesis import given
from hypothesis import strategies as st

from casebank.format.canonical import (
    canonical_json,
    changed_sections,
    content_hash,
    data_hash,
    digest_case,
    section_hashes,
)
from casebank.format.layout import attachment_of
from gitrepo import case_text

BASE = case_text("alpha", "Case alpha")


def digest(text: str, file: str = "cases/alpha.yaml") -> str:
    found = digest_case(file, text.encode("utf-8"))
    assert found.valid
    return found.sha256


@pytest.mark.parametrize(
    "variant",
    [
        "# a new comment at the top\n" + BASE,
        BASE.replace("  language: en\n", "  language: en   # always English\n"),
        BASE.replace('title: "Case alpha"', "title: 'Case alpha'"),
        BASE.replace('title: "Case alpha"', "title: Case alpha"),
        BASE.replace("  age: 54\n  sex: male\n", "  sex: male\n  age: 54\n"),  # key order
        BASE.replace("tags: [chest_pain, cardiology]", "tags:\n    - chest_pain\n    - cardiology"),
        BASE.replace("value: 2.4\n", "value: 2.40\n"),  # the same number
        BASE.replace("\n", "\r\n"),
    ],
)
def test_formatting_never_changes_the_hash(variant: str) -> None:
    assert digest(variant) == digest(BASE)


@pytest.mark.parametrize(
    "old,new",
    [
        ('title: "Case alpha"', 'title: "Case alpha "'),
        ("age: 54", "age: 55"),
        ("tags: [chest_pain, cardiology]", "tags: [cardiology, chest_pain]"),  # lists are ordered
        ("value: 2.4\n", 'value: "2.4"\n'),  # text is not a number
    ],
)
def test_content_always_changes_the_hash(old: str, new: str) -> None:
    assert BASE.count(old) == 1
    assert digest(BASE.replace(old, new)) != digest(BASE)


def test_json_and_yaml_files_with_the_same_data_hash_alike() -> None:
    loaded = digest_case("cases/alpha.yaml", BASE.encode())
    as_json = json.dumps({"case_id": "alpha", "x": [1, 2.5, "é"]}, indent=4)
    as_yaml = "x: [1, 2.50, é]\ncase_id: alpha\n"
    assert digest(as_json, "cases/alpha.json") == digest(as_yaml)
    assert loaded.title == "Case alpha"
    assert (loaded.specialty, loaded.difficulty) == ("emergency_medicine", "medium")


def test_the_hash_is_sha256_of_rfc8785_bytes() -> None:
    text = 'b: 1.0\na: "é"\nc: [true, null, 1.0e+2]\n'
    jcs = '{"a":"é","b":1,"c":[true,null,100]}'.encode()
    assert canonical_json({"b": 1.0, "a": "é", "c": [True, None, 100.0]}) == jcs
    assert digest(text) == hashlib.sha256(jcs).hexdigest()


def test_sections_hash_each_top_level_key() -> None:
    before = section_hashes("cases/alpha.yaml", BASE.encode())
    after = section_hashes("cases/alpha.yaml", BASE.replace("age: 54", "age: 60").encode())
    assert changed_sections(before, after, attachments_changed=False) == ("patient",)
    assert changed_sections(before, before, attachments_changed=True) == ("attachments",)
    assert section_hashes("cases/alpha.yaml", b"[broken") == {}


def test_attachments_combine_by_relative_path_and_content() -> None:
    case = data_hash({"case_id": "alpha"})
    png, pdf = hashlib.sha256(b"\x89PNG").hexdigest(), hashlib.sha256(b"%PDF").hexdigest()
    with_files = content_hash(case, {"ecg/strip.png": png, "report.pdf": pdf})
    # Recomputed by hand, as another language would: JCS of the object, then SHA-256.
    by_hand = f'{{"attachments":{{"ecg/strip.png":"{png}","report.pdf":"{pdf}"}},"case":"{case}"}}'
    assert with_files == hashlib.sha256(by_hand.encode()).hexdigest()
    assert content_hash(case, {}) == case
    assert content_hash(case, {"ecg/other.png": png, "report.pdf": pdf}) != with_files


def test_attachment_paths() -> None:
    assert attachment_of("cases/alpha/attachments/ecg/strip.png") == ("alpha", "ecg/strip.png")
    assert attachment_of("cases/alpha/notes.txt") is None
    assert attachment_of("cases/alpha.yaml") is None


@pytest.mark.parametrize(
    "text",
    ["key: [unclosed\n", "a: &anchor 1\nb: *anchor\n", "big: 123456789012345678901234567890\n"],
)
def test_unloadable_content_is_hashed_by_its_bytes(text: str) -> None:
    found = digest_case("cases/alpha.yaml", text.encode())
    assert not found.valid
    assert found.sha256 == hashlib.sha256(text.encode()).hexdigest()


_json = st.recursive(
    st.none() | st.booleans() | st.integers(-(2**53) + 1, 2**53 - 1) | st.text(max_size=5),
    lambda inner: (
        st.lists(inner, max_size=3) | st.dictionaries(st.text(max_size=4), inner, max_size=3)
    ),
    max_leaves=12,
)


@given(st.dictionaries(st.text(max_size=4), _json, max_size=5))
def test_key_order_never_matters(data: dict[str, object]) -> None:
    reordered = dict(reversed(list(data.items())))
    assert canonical_json(reordered) == canonical_json(data)


_any_json = st.recursive(
    st.none()
    | st.booleans()
    | st.integers(-(2**60), 2**60)
    | st.floats(allow_nan=False, allow_infinity=False)
    | st.sampled_from([0.0, -0.0, 1e-4, 9.999e-5, 1e16, 1e21, 2.0**53, 0.1, 1 / 3])
    | st.text(),
    lambda inner: st.lists(inner, max_size=3) | st.dictionaries(st.text(), inner, max_size=3),
    max_leaves=15,
)


@given(_any_json)
def test_the_fast_path_is_byte_identical_to_the_reference(value: object) -> None:
    try:
        expected: bytes | type[Exception] = rfc8785.dumps(value)
    except (rfc8785.CanonicalizationError, UnicodeEncodeError) as exc:
        expected = type(exc)
    try:
        found: bytes | type[Exception] = canonical_json(value)
    except (rfc8785.CanonicalizationError, UnicodeEncodeError) as exc:
        found = type(exc)
    assert found == expected


def test_keys_sort_by_utf16_code_units() -> None:
    # U+1F600 is a surrogate pair (D83D DE00), so it sorts before U+FB01 in UTF-16.
    assert canonical_json({"\ufb01": 1, "\U0001f600": 2}) == '{"😀":2,"ﬁ":1}'.encode()
