"""Shape rules: Cerberus errors become positioned problems with plain-words messages."""

from __future__ import annotations

from casebank.format.schema import CASE_SCHEMA
from conftest import VALID_CASE, check_text, edit, found, line_of


def test_the_valid_fixture_has_no_problems() -> None:
    assert check_text(VALID_CASE) == []


def test_the_spec_seed_example_has_no_errors() -> None:
    from conftest import FIXTURES

    text = (FIXTURES / "seed_example.yaml").read_text(encoding="utf-8")
    problems = check_text(text, file="cases/chest_pain_001.yaml")
    assert [p for p in problems if p.severity.value == "error"] == []


def test_missing_field_points_at_its_parent() -> None:
    text = edit('  final_diagnosis: "Acute inferior ST-elevation myocardial infarction"\n', "")
    [p] = check_text(text)
    assert (p.rule, p.path, p.line) == (
        "CB201",
        "ground_truth.final_diagnosis",
        line_of(text, "ground_truth:"),
    )
    assert "add `final_diagnosis:` under `ground_truth`" in p.hint


def test_missing_section_points_at_the_top() -> None:
    start = VALID_CASE.index("scoring:")
    text = VALID_CASE[:start]
    assert found(text) == [("CB201", "scoring", 1)]


def test_optional_sections_may_be_absent() -> None:
    start = VALID_CASE.index("physical_exam:")
    end = VALID_CASE.index("ground_truth:")
    assert check_text(VALID_CASE[:start] + VALID_CASE[end:]) == []


def test_unknown_field_suggests_the_right_one() -> None:
    text = edit("  differential:", "  diferential:")
    problems = check_text(text)
    assert ("CB202", "ground_truth.diferential", line_of(text, "diferential")) in [
        (p.rule, p.path, p.line) for p in problems
    ]
    unknown = next(p for p in problems if p.rule == "CB202")
    assert "did you mean `differential`" in unknown.message
    assert unknown.column == 3  # the key itself


def test_unknown_top_level_field() -> None:
    text = VALID_CASE + "notes: hello\n"
    assert found(text) == [("CB202", "notes", line_of(text, "notes:"))]


def test_wrong_type_says_what_was_expected() -> None:
    text = edit("  age: 54", "  age: fifty-four")
    [p] = check_text(text)
    assert (p.rule, p.path, p.line) == ("CB203", "patient.age", line_of(text, "fifty-four"))
    assert "must be a number" in p.message


def test_yaml11_boolean_where_text_is_expected_asks_for_quotes() -> None:
    text = edit('  chief_complaint: "Chest pain"', "  chief_complaint: no")
    [p] = check_text(text)
    assert (p.rule, p.path) == ("CB203", "presentation.chief_complaint")
    assert "unquoted `no`" in p.message and p.hint == 'put it in quotes: "no"'


def test_quoted_no_is_text() -> None:
    assert check_text(edit('  chief_complaint: "Chest pain"', '  chief_complaint: "no"')) == []


def test_octal_looking_number_in_text_field_is_reported_once() -> None:
    text = edit('  chief_complaint: "Chest pain"', "  chief_complaint: 0755")
    assert found(text) == [("CB111", "presentation.chief_complaint", line_of(text, "0755"))]


def test_base60_number_in_text_field() -> None:
    text = edit('  social_history: "Smokes 20 cigarettes a day."', "  social_history: 12:30")
    assert [r for r, _, _ in found(text)] == ["CB111"]


def test_value_not_allowed_suggests() -> None:
    text = edit("  difficulty: medium", "  difficulty: medum")
    [p] = check_text(text)
    assert (p.rule, p.path, p.line) == ("CB204", "metadata.difficulty", line_of(text, "medum"))
    assert "did you mean `medium`" in p.message and "easy, medium, hard" in p.hint


def test_language_must_be_english() -> None:
    text = edit("  language: en", "  language: fr")
    assert found(text) == [("CB301", "metadata.language", line_of(text, "language: fr"))]


def test_empty_and_null_values() -> None:
    text = edit('  title: "Acute chest pain in a smoker"', '  title: ""')
    assert found(text) == [("CB205", "metadata.title", line_of(text, "title:"))]
    text = edit('  title: "Acute chest pain in a smoker"', "  title:")
    assert found(text) == [("CB205", "metadata.title", line_of(text, "title:"))]


def test_case_id_format() -> None:
    text = edit("case_id: valid_case", "case_id: Valid-Case")
    rules = found(text, file="cases/Valid-Case.yaml")
    assert rules == [("CB206", "case_id", 2)]


def test_number_out_of_range() -> None:
    text = edit("  age: 54", "  age: 230")
    assert found(text) == [("CB207", "patient.age", line_of(text, "age: 230"))]


def test_list_too_short() -> None:
    text = edit('    must_ask: ["Onset, character, radiation of the pain"]', "    must_ask: []")
    assert found(text) == [
        ("CB208", "presentation.key_history_points.must_ask", line_of(text, "must_ask: []"))
    ]


def test_every_field_has_a_description() -> None:
    def walk(node: dict, where: str) -> None:  # type: ignore[type-arg]
        for key, rules in node.items():
            here = f"{where}.{key}" if where else key
            assert rules.get("meta", {}).get("description"), f"{here} has no description"
            inner = rules.get("schema")
            if isinstance(inner, dict) and "type" in inner and inner.get("type") == "dict":
                inner = inner.get("schema", {})
            is_fields = isinstance(inner, dict) and "type" not in inner
            if is_fields and all(isinstance(v, dict) for v in inner.values()):
                walk(inner, here)

    walk(CASE_SCHEMA, "")
