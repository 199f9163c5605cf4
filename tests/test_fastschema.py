"""The compiled fast path must answer exactly as Cerberus does, or it could hide a problem."""

from __future__ import annotations

from typing import Any

import cerberus
import pytest
import yaml
from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st

from casebank.format.fastpath import compile_field, compile_mapping
from casebank.format.schema import CASE_SCHEMA, CATALOG_SCHEMA
from casebank.format.walk import build, mapping
from conftest import TEST_CATALOG, VALID_CASE, examples
from mutation import mutate

SCHEMAS = {
    "case": (CASE_SCHEMA, yaml.safe_load(VALID_CASE)),
    "catalog": (CATALOG_SCHEMA, yaml.safe_load(TEST_CATALOG)),
}
FAST = {name: compile_mapping(mapping(schema)) for name, (schema, _) in SCHEMAS.items()}
SLOW = {name: cerberus.Validator(schema) for name, (schema, _) in SCHEMAS.items()}

# Values chosen to sit on Cerberus's edges: booleans as numbers, nulls, empties, newlines.
edge_scalars = st.one_of(
    st.none(),
    st.booleans(),
    st.integers(-5, 200),
    st.floats(allow_nan=False),
    st.sampled_from(
        [
            "",
            " ",
            "en",
            "fr",
            "medium",
            "male",
            "lab_value",
            "panel",
            "text_report",
            "laboratory",
            "chest_pain_001",
            "chest_pain_001\n",
            "Chest-Pain",
            "2160-0",
            "2160-0\n",
            "a" * 25,
            "x",
            "normal_unless_listed",
            "0.00–0.04",
            "high",
            "CB408",
            "fr-CA",
            "FR",
        ]
    ),
    st.text(max_size=8),
)
values = st.recursive(
    edge_scalars,
    lambda inner: st.one_of(
        st.lists(inner, max_size=3),
        st.dictionaries(
            st.sampled_from(
                ["low", "high", "type", "value", "unit", "name", "x", "components", "en", "fr"]
            ),
            inner,
            max_size=3,
        ),
    ),
    max_leaves=6,
)


@st.composite
def mutated(draw: st.DrawFn, name: str) -> Any:
    keys = st.sampled_from(["x", "notes", "low", "unit", "since"])
    return mutate(draw, SCHEMAS[name][1], values, keys)


AGREE = settings(
    max_examples=examples(400), deadline=None, suppress_health_check=[HealthCheck.too_slow]
)


@pytest.mark.parametrize("name", sorted(SCHEMAS))
def test_valid_documents_pass_both(name: str) -> None:
    _, document = SCHEMAS[name]
    assert FAST[name](document) is True
    assert SLOW[name].validate(document, normalize=False) is True


def test_both_refuse_an_unknown_key_two_anyofs_deep() -> None:
    # Found by the property test below: Cerberus accepted it until every mapping stated
    # allow_unknown: False (its anyof validates each form allowing unknown fields).
    _, valid = SCHEMAS["case"]
    document = {**valid, "physical_exam": {"general": {"low": None, "value": 0}}}
    assert FAST["case"](document) is False
    assert SLOW["case"].validate(document, normalize=False) is False


@AGREE
@given(mutated("case"))
def test_fast_path_agrees_with_cerberus_on_cases(document: Any) -> None:
    assert FAST["case"](document) == SLOW["case"].validate(document, normalize=False)


@AGREE
@given(mutated("catalog"))
def test_fast_path_agrees_with_cerberus_on_the_catalog(document: Any) -> None:
    assert FAST["catalog"](document) == SLOW["catalog"].validate(document, normalize=False)


@pytest.mark.parametrize(
    "rules",
    [
        {"type": "number"},
        {"type": "integer"},
        {"type": "string", "empty": False},
        {"type": "string", "regex": r"^[a-z]+$"},
        {"type": "number", "min": 0, "max": 10},
        {"type": "list", "minlength": 1, "schema": {"type": "string"}},
        {"type": "string", "minlength": 3},
        {"type": ["string", "dict"], "empty": False},
        {"type": "string", "allowed": ["a", "b"]},
        {"type": "string", "maxlength": 2},
        {"type": "list", "maxlength": 1},
        {"type": ["string", "dict"], "anyof": [{"type": "string"}, {"schema": {"k": {}}}]},
        {"type": ["string", "dict", "list"], "anyof": [{"type": "dict"}, {"minlength": 2}]},
    ],
)
@pytest.mark.parametrize(
    "value",
    [
        None,
        True,
        False,
        0,
        5,
        11,
        -1,
        2.5,
        "",
        "a",
        "abc",
        "abc\n",
        "ABC",
        [],
        ["x"],
        [1],
        {},
        {"k": "v"},
    ],
)
def test_single_rules_agree_on_edge_values(rules: dict[str, Any], value: Any) -> None:
    cerberus_says = cerberus.Validator({"f": rules}).validate({"f": value}, normalize=False)
    assert compile_field(build(rules))(value) == cerberus_says


def test_a_rule_the_views_cannot_mirror_is_refused() -> None:
    with pytest.raises(ValueError, match="oneof"):
        build({"type": "string", "oneof": [{"regex": "a"}]})
