"""Which files a case may carry as attachments, decided by what the bytes are, not by the name.

An attachment is published: in export bundles, and on the dataset's website, next to its pages.
A file a browser would run as a page (HTML, an SVG with a script) would run on the site's own
origin, outside the pages' content security policy, so the allow-list is:

- PNG and JPEG images, and PDF documents without JavaScript, launch actions or embedded files;
- plain UTF-8 text that is not markup (``.txt``, ``.csv``);
- SVG images that are sanitised already: well-formed XML with an ``<svg>`` root, no DTD or
  entity (the billion laughs, external entities), no ``<script>``, ``<foreignObject>`` or other
  embedded document, no event handler attribute (``onload``), no style sheet or processing
  instruction, no animation that sets a link or a handler, and no reference outside the file
  (every ``href`` and ``url()`` is a ``#fragment``, or a PNG or JPEG carried in a ``data:``
  address, as SVG exports of tracings embed them).

The name's extension must say what the content is, since web servers choose the type a browser
is told from the extension. Nothing here reads a file: :func:`check_attachment` takes the bytes.
"""

from __future__ import annotations

import re
from dataclasses import dataclass
from xml.etree import ElementTree

from casebank.format.text import FORBIDDEN_IN_FILE

EXTENSIONS = {
    "png": (".png",),
    "jpeg": (".jpg", ".jpeg"),
    "pdf": (".pdf",),
    "text": (".txt", ".csv"),
    "svg": (".svg",),
}
KIND_NAMES = {
    "png": "a PNG image",
    "jpeg": "a JPEG image",
    "pdf": "a PDF document",
    "text": "plain text",
    "svg": "an SVG image",
}
ALLOWED = "PNG, JPEG, PDF, plain text (.txt, .csv) or sanitised SVG"

_PDF_ACTIVE = re.compile(rb"/(JavaScript|JS|Launch|EmbeddedFile|RichMedia|XFA)\b")
# Elements that run, embed or restyle: none belongs in a tracing or a chart.
_SVG_ELEMENTS = frozenset(
    {"script", "foreignobject", "iframe", "object", "embed", "audio", "video", "canvas",
     "handler", "listener", "style", "link", "meta", "base"}
)  # fmt: skip
_SVG_ANIMATIONS = frozenset({"set", "animate", "animatemotion", "animatetransform"})
_URL = re.compile(r"url\s*\(\s*['\"]?\s*([^'\")\s]*)", re.IGNORECASE)
_XML_DECLARATION = re.compile(r"^\s*<\?xml\s[^>]*\?>")
_PREAMBLE = re.compile(
    r"^(\s*(<\?.*?\?>|<!--.*?-->|<!DOCTYPE[^>\[]*(\[.*?\])?\s*>))*", re.DOTALL | re.I
)
# What a reference may be: a part of the same file, or a raster image carried inside it.
_INSIDE = re.compile(r"\s*(#|data:image/(png|jpeg);)", re.IGNORECASE)


@dataclass(frozen=True)
class Verdict:
    """What an attachment is (``kind``, one of EXTENSIONS), or why it is refused."""

    kind: str = ""
    problem: str = ""
    hint: str = ""


def check_attachment(name: str, raw: bytes) -> Verdict:
    """The allow-list, by content; then the extension must name that content."""
    found = _sniff(raw)
    if found.problem:
        return found
    suffix = "." + name.rsplit(".", 1)[-1].lower() if "." in name else ""
    if suffix not in EXTENSIONS[found.kind]:
        wanted = " or ".join(EXTENSIONS[found.kind])
        return Verdict(
            found.kind,
            f"the file is {KIND_NAMES[found.kind]} but its name ends in `{suffix or '(nothing)'}`",
            f"rename it to end in {wanted}: web servers tell browsers the type by the name",
        )
    return found


def _sniff(raw: bytes) -> Verdict:
    if raw.startswith(b"\x89PNG"):
        return Verdict("png")
    if raw.startswith(b"\xff\xd8\xff"):
        return Verdict("jpeg")
    if raw.startswith(b"%PDF"):
        active = _PDF_ACTIVE.search(raw)
        if active:
            return Verdict(
                "pdf",
                f"the PDF holds `/{active.group(1).decode()}`, content a viewer may run",
                "export it again as a plain PDF (PDF/A), or as PNG pages",
            )
        return Verdict("pdf")
    try:
        text = raw.decode("utf-8").removeprefix("\ufeff")
    except UnicodeDecodeError:
        return _refused("the file is not one of the allowed types")
    if text.lstrip().startswith("<"):
        return check_svg(text)
    bad = FORBIDDEN_IN_FILE.search(text)
    if bad is not None:
        return _refused(f"the text holds the control character U+{ord(bad.group(0)):04X}")
    return Verdict("text")


def _refused(problem: str) -> Verdict:
    return Verdict("", problem, f"attach {ALLOWED}; a web page (HTML) is never allowed")


def _local(name: str) -> str:
    return name.rsplit("}", 1)[-1].rsplit(":", 1)[-1].lower()


def check_svg(text: str) -> Verdict:
    """An SVG image with nothing that runs, embeds or reaches outside the file."""
    first = _local(_first_tag(text))
    if first != "svg":
        what = "an HTML page" if first in _HTML else "markup (HTML or XML), not an SVG image"
        return _refused(f"the file is {what}, which is not one of the allowed types")
    if re.search(r"<!ENTITY|<!DOCTYPE[^>\[]*\[", text, re.IGNORECASE):
        return _svg("it declares entities (a DOCTYPE with an internal subset)")
    if "<?" in _XML_DECLARATION.sub("", text, count=1):
        return _svg("it holds a processing instruction (a style sheet, say)")
    try:
        root = ElementTree.fromstring(text)
    except ElementTree.ParseError as exc:
        return _svg(f"it is not well-formed XML ({exc})")
    for element in root.iter():
        problem = _svg_element(element)
        if problem:
            return _svg(problem)
    return Verdict("svg")


_HTML = frozenset({"html", "head", "body", "script", "iframe", "div", "p", "a", "img", "table"})


def _first_tag(text: str) -> str:
    """The first element's name, past any declaration, comment or DOCTYPE."""
    found = re.search(r"<([A-Za-z][\w:.-]*)", _PREAMBLE.sub("", text))
    return found.group(1) if found else ""


def _svg_element(element: ElementTree.Element) -> str:
    tag = _local(str(element.tag))
    if tag in _SVG_ELEMENTS:
        return f"it has a <{tag}> element"
    for attribute, value in element.attrib.items():
        name = _local(attribute)
        if name.startswith("on"):
            return f"<{tag}> has the event handler `{name}`"
        if name in ("href", "src") and not _INSIDE.match(value):
            return f'<{tag}> refers outside the file (`{name}="{value[:60]}"`)'
        animated = _local(value) if tag in _SVG_ANIMATIONS and name == "attributename" else ""
        if animated.startswith("on") or animated in ("href", "src"):
            return f"<{tag}> animates `{value}`"
        if "javascript:" in value.lower().replace(" ", ""):
            return f"<{tag}> has a javascript: address in `{name}`"
        for target in _URL.findall(value):
            if not _INSIDE.match(target):
                return f"<{tag}> refers outside the file (`url({target[:60]})` in `{name}`)"
    return ""


def _svg(problem: str) -> Verdict:
    return Verdict(
        "",
        f"the SVG is not sanitised: {problem}",
        "export it again without scripts, event handlers, styles and outside links "
        "(e.g. `svgo` or Inkscape's plain SVG), or attach it as PNG",
    )
