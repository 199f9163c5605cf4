"""Whatever bytes a contributor pushes, validation reports and exits 0 or 1: never a traceback,
never exit 2, never a hang."""

from __future__ import annotations

import contextlib
import io
import json
from pathlib import Path
from typing import Any

import yaml
from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st

from casebank.cli import main
from conftest import TEST_CATALOG, VALID_CASE, examples
from mutation import mutate

BASE: dict[str, Any] = yaml.safe_load(VALID_CASE)

json_scalars = st.one_of(
    st.none(),
    st.booleans(),
    st.integers(-(10**6), 10**6),
    st.floats(allow_nan=False, allow_infinity=False),
    st.text(max_size=20),
)
json_values = st.recursive(
    json_scalars,
    lambda inner: st.one_of(
        st.lists(inner, max_size=4), st.dictionaries(st.text(max_size=10), inner, max_size=4)
    ),
    max_leaves=10,
)

YAML_FRAGMENTS = [
    "a:",
    "b: ",
    " - ",
    "- ",
    "&x ",
    "*x",
    "---\n",
    "...\n",
    "!!python/object ",
    "!!binary ",
    "[",
    "]",
    "{",
    "}",
    "'",
    '"',
    "\n",
    "  ",
    "\t",
    "no",
    "054",
    "12:30",
    ": ",
    "#",
    "? ",
    "|\n",
    ">\n",
    ".inf",
    "~",
    "case_id: ",
    "\\",
    "\ufeff",
    "µ",
    "–",
]


@st.composite
def mutated_cases(draw: st.DrawFn) -> str:
    data = mutate(draw, BASE, json_values, st.text(min_size=1, max_size=12), edits=4)
    return yaml.safe_dump(data, allow_unicode=True, sort_keys=False)


def _repo(tmp_path_factory: Any = None) -> Path:
    import atexit
    import shutil
    import tempfile

    root = Path(tempfile.mkdtemp(prefix="casebank-prop-"))
    atexit.register(shutil.rmtree, root, ignore_errors=True)
    (root / "cases").mkdir()
    (root / "catalog.yaml").write_text(TEST_CATALOG, encoding="utf-8")
    return root


ROOT = _repo()


def validate_bytes(raw: bytes, name: str = "valid_case.yaml") -> None:
    target = ROOT / "cases" / name
    for old in (ROOT / "cases").iterdir():
        old.unlink()
    target.write_bytes(raw)
    out, err = io.StringIO(), io.StringIO()
    with contextlib.redirect_stdout(out), contextlib.redirect_stderr(err):
        code = main(["validate", "--root", str(ROOT), "--format", "json"])
    assert code in (0, 1), err.getvalue()
    payload = json.loads(out.getvalue())
    assert payload["files_checked"] == 2
    if code == 1:
        assert payload["problems"], "exit 1 must come with a report"
    for problem in payload["problems"]:
        assert problem["line"] >= 1 and problem["column"] >= 1
        assert problem["message"] and problem["rule"].startswith("CB")


SETTINGS = settings(
    max_examples=examples(150), deadline=2000, suppress_health_check=[HealthCheck.too_slow]
)


@SETTINGS
@given(mutated_cases())
def test_mutated_cases_always_get_a_report(text: str) -> None:
    validate_bytes(text.encode("utf-8"))


@SETTINGS
@given(st.lists(st.sampled_from(YAML_FRAGMENTS), max_size=40).map("".join))
def test_yaml_shaped_noise_always_gets_a_report(text: str) -> None:
    validate_bytes(text.encode("utf-8"))


@SETTINGS
@given(st.binary(max_size=300))
def test_arbitrary_bytes_always_get_a_report(raw: bytes) -> None:
    validate_bytes(raw)


@SETTINGS
@given(st.one_of(st.binary(max_size=200), json_values.map(json.dumps).map(str.encode)))
def test_arbitrary_json_files_always_get_a_report(raw: bytes) -> None:
    validate_bytes(raw, name="valid_case.json")


# YAML and JSON scalars that have crashed or fooled loaders: YAML 1.1 traps, odd tags, huge and
# non-finite numbers, surrogate escapes, control characters.
SCALARS = [
    "0x_",
    "0b",
    "0x36",
    "0b101",
    "1_000",
    "054",
    "12:30",
    "1:30.5",
    "1e3",
    "1.0e400",
    "-.inf",
    ".NaN",
    "!!int abc",
    "!!bool maybe",
    "!!float x",
    "!!null 0",
    "!!str 12",
    "yes",
    "No",
    "~",
    "9" * 5000,
    '"\\ud83d\\ude00"',
    '"\\ud800"',
    '"\\x00"',
    "2024-01-01",
    "<<",
    "=",
    "%TAG",
]
JSON_SCALARS = ["NaN", "Infinity", "-Infinity", "1e400", "9" * 400, '"\\ud83d\\ude00"', '"\\udc00"']


@st.composite
def batches(draw: st.DrawFn) -> dict[str, bytes]:
    """A batch of files: each arbitrary bytes, a YAML value, a JSON value or a mutated case."""
    files: dict[str, bytes] = {}
    for i in range(draw(st.integers(1, 5))):
        kind = draw(st.sampled_from(["bytes", "yaml", "json", "case"]))
        if kind == "bytes":
            name, raw = f"noise_{i}.yaml", draw(st.binary(max_size=120))
        elif kind == "yaml":
            scalar = draw(st.sampled_from(SCALARS))
            name, raw = f"scalar_{i}.yaml", f"case_id: scalar_{i}\nvalue: {scalar}\n".encode()
        elif kind == "json":
            scalar = draw(st.sampled_from(JSON_SCALARS))
            name, raw = f"scalar_{i}.json", f'{{"case_id": "scalar_{i}", "v": {scalar}}}'.encode()
        else:
            name, raw = f"case_{i}.yaml", draw(mutated_cases()).encode("utf-8")
        files[name] = raw
    return files


@settings(max_examples=examples(60), deadline=5000, suppress_health_check=[HealthCheck.too_slow])
@given(batches())
def test_a_batch_of_hostile_files_gets_a_report_for_every_file(files: dict[str, bytes]) -> None:
    for old in (ROOT / "cases").iterdir():
        old.unlink()
    for name, raw in files.items():
        (ROOT / "cases" / name).write_bytes(raw)
    out, err = io.StringIO(), io.StringIO()
    with contextlib.redirect_stdout(out), contextlib.redirect_stderr(err):
        code = main(["validate", "--root", str(ROOT), "--format", "json", "--no-cache"])
    assert code in (0, 1), err.getvalue()
    assert "Traceback" not in err.getvalue()
    payload = json.loads(out.getvalue())
    assert payload["files_checked"] == len(files) + 1
    internal = [p for p in payload["problems"] if p["rule"] == "CB100"]
    assert internal == [], internal
    reported = {p["file"] for p in payload["problems"]}
    for name in files:
        # noise and bare scalars are never valid cases: each must have its own report
        if not name.startswith("case_"):
            assert f"cases/{name}" in reported, name


_PHRASE_TEXT = st.text(alphabet="ab -\n_(é", max_size=30)
_PHRASE_WORD = st.text(alphabet="ab-(é", min_size=1, max_size=4)


@given(_PHRASE_TEXT, st.lists(_PHRASE_WORD, min_size=1, max_size=3))
@settings(max_examples=examples(2000))
def test_the_phrase_finder_matches_what_the_whole_word_pattern_matches(
    text: str, words: list[str]
) -> None:
    # The leak and contraindication checks search without compiling a pattern per case; they
    # must find exactly what the whole-word regular expression finds, where it finds it.
    from casebank.check.rules.content import _word_pattern, find_phrase

    match = _word_pattern(" ".join(words)).search(text)
    assert find_phrase(text, words) == (match.start() if match else None)
