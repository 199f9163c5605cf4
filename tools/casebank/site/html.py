"""A display node (``casebank.site.nodes``) and a result flag as HTML, for the templates.

The node tree is most of a case page: as a recursive template macro it was about half of
rendering a site (a macro call costs Jinja a frame, a context and an escape per piece). Here it
is one walk that joins strings, escaping each text as Jinja's autoescape does (MarkupSafe), so
the bytes are the ones the macro wrote. The templates call it as ``node(n)`` and ``flag(v)``.
"""

from __future__ import annotations

from markupsafe import Markup, escape

from casebank.site.nodes import FLAG_LABELS, Fields, Flag, Items, Measure, Node, Table, Text


def flag(value: object) -> Markup:
    """A result's flag as a labelled badge; nothing for no flag."""
    return Markup("".join(_flag(value)))


def node(n: Node) -> Markup:
    """A display node as HTML: text, a flag, a measure, a list, fields or a table."""
    out: list[str] = []
    _node(n, out)
    return Markup("".join(out))


def _flag(value: object) -> list[str]:
    if not value:
        return []
    shown = FLAG_LABELS.get(value, value) if isinstance(value, str) else value
    return [f'<span class="flag flag-{escape(value)}">{escape(shown)}</span>']


def _node(n: Node, out: list[str]) -> None:
    if isinstance(n, Text):
        out.append(f'<span class="text">{escape(n.text)}</span>')
    elif isinstance(n, Flag):
        out.extend(_flag(n.flag))
    elif isinstance(n, Measure):
        _measure(n, out)
    elif isinstance(n, Items):
        if not n.items:
            out.append('<span class="text">none</span>')
            return
        out.append("<ul>\n")
        for item in n.items:
            out.append("<li>")
            _node(item, out)
            out.append("</li>\n")
        out.append("</ul>\n")
    elif isinstance(n, Fields):
        out.append("<dl>\n")
        for name, value in n.fields:
            out.append(f"<dt>{escape(name)}</dt>\n<dd>")
            _node(value, out)
            out.append("</dd>\n")
        out.append("</dl>")
    elif isinstance(n, Table):
        _table(n, out)


def _measure(n: Measure, out: list[str]) -> None:
    out.append(f'<span class="measure">{escape(n.value)}</span>')
    if n.reference_range:
        out.append(f' <span class="range">(range {escape(n.reference_range)})</span>')
    if n.flag:
        out.append(" ")
        out.extend(_flag(n.flag))
    if n.note:
        out.append(f' <span class="note">{escape(n.note)}</span>')


def _table(n: Table, out: list[str]) -> None:
    out.append('<div class="table-wrap"><table>\n<thead><tr>')
    for column in n.columns:
        out.append(f'<th scope="col">{escape(column)}</th>')
    out.append("</tr></thead>\n<tbody>\n")
    for row in n.rows:
        out.append("<tr>")
        for index, cell in enumerate(row):
            out.append('<th scope="row">' if index == 0 else "<td>")
            _node(cell, out)
            out.append("</th>" if index == 0 else "</td>")
        out.append("</tr>\n")
    out.append("</tbody>\n</table></div>")
