"""The display nodes' HTML (casebank.site.html) is, byte for byte, what the template macro that
it replaced wrote: the macro is kept here as the reference, and both render the same trees."""

from __future__ import annotations

from pathlib import Path

import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

from casebank.site import html
from casebank.site.nodes import FLAG_LABELS, Fields, Flag, Items, Measure, Node, Table, Text

jinja2 = pytest.importorskip("jinja2", reason="the site extra (Jinja2) is not installed")

# The macros as they were in templates/macros.html.j2 (kept in data/), under the site's
# template settings.
MACROS = (Path(__file__).parent / "data" / "node-macros.html.j2").read_text(encoding="utf-8")


def _reference() -> tuple[object, object]:
    env = jinja2.Environment(
        loader=jinja2.DictLoader({"macros": MACROS}),
        autoescape=True,
        undefined=jinja2.StrictUndefined,
        trim_blocks=True,
        lstrip_blocks=True,
        keep_trailing_newline=True,
    )
    env.globals["flag_labels"] = FLAG_LABELS
    module = env.get_template("macros").module
    return module.node, module.flag  # type: ignore[attr-defined]


MACRO_NODE, MACRO_FLAG = _reference()

texts = st.one_of(
    st.sampled_from(["", "none", "<script>alert(1)</script>", "a & b", "\"q\" 'q'", "5 < 6 > 4"]),
    st.text(max_size=12),
)
flags = st.one_of(st.sampled_from(["", *FLAG_LABELS]), texts)
leaves = st.one_of(
    st.builds(Text, texts),
    st.builds(Flag, flags),
    st.builds(Measure, texts, texts, flags, texts),
)


def _trees(children: st.SearchStrategy[Node]) -> st.SearchStrategy[Node]:
    return st.one_of(
        st.builds(Items, st.lists(children, max_size=4).map(tuple)),
        st.builds(Fields, st.lists(st.tuples(texts, children), max_size=4).map(tuple)),
        st.builds(
            Table,
            st.lists(texts, max_size=4).map(tuple),
            st.lists(st.lists(children, max_size=4).map(tuple), max_size=3).map(tuple),
        ),
    )


nodes = st.recursive(leaves, _trees, max_leaves=25)


@settings(max_examples=400, deadline=None)
@given(nodes)
def test_a_node_is_the_html_the_template_macro_wrote(tree: Node) -> None:
    assert str(html.node(tree)) == str(MACRO_NODE(tree))  # type: ignore[operator]


@pytest.mark.parametrize("value", ["", "high", "critical_low", "<b>odd</b>", "abnormal"])
def test_a_flag_is_the_html_the_template_macro_wrote(value: str) -> None:
    assert str(html.flag(value)) == str(MACRO_FLAG(value))  # type: ignore[operator]


def test_text_is_escaped_and_the_result_is_markup() -> None:
    shown = html.node(Fields((("<i>x</i>", Text("a & <b>")),)))
    assert "<i>" not in shown and "&lt;i&gt;" in shown and "a &amp; &lt;b&gt;" in shown
    assert shown.__html__() == str(shown)  # Jinja inserts it as it is, not escaped again
