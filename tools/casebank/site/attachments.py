"""How the site serves a case's attachments, so that none can run a script on its origin.

A static host tells the browser a file's type by its name, and runs what it is told is a page.
So every attachment is checked again here by content (``casebank.format.attachments``, the
same allow-list ``validate`` applies), whatever the release or the working tree holds:

- a PNG, JPEG, PDF or text file is published beside the page and linked;
- an SVG is published only once it passes the check (no script, handler, style sheet or
  outside reference), and only ever shown as an image (``<img>``, where a browser runs no
  script at all): nothing links to it as a document; a result that names it links to its
  figure on the page;
- anything else (HTML, an SVG with a script) is not published, and the page says why.
"""

from __future__ import annotations

from collections.abc import Sequence
from dataclasses import dataclass
from urllib.parse import quote

from casebank.format.attachments import check_attachment
from casebank.format.identifiers import attachment_name_problem
from casebank.site.model import Attachment


@dataclass(frozen=True)
class AttachmentLink:
    name: str
    href: str = ""  # where a link to it goes, relative to the case page; "" when not served
    src: str = ""  # the image to show; "" when it is not an image
    anchor: str = ""  # the id of its figure on the page (an SVG is linked there)
    note: str = ""  # why it is not published


def served(case_id: str, attachments: Sequence[Attachment]) -> dict[str, AttachmentLink]:
    """How each attachment appears on the case page, by name."""
    links: dict[str, AttachmentLink] = {}
    for number, attachment in enumerate(attachments, 1):
        links[attachment.name] = _link(case_id, attachment, number)
    return links


def published(case_id: str, attachments: Sequence[Attachment]) -> dict[str, bytes]:
    """The files the site writes for a case's attachments (site path -> bytes)."""
    return {
        f"cases/{case_id}/attachments/{a.name}": a.content for a in attachments if _file_kind(a)
    }


def _file_kind(attachment: Attachment) -> str:
    if attachment_name_problem(attachment.name):
        return ""
    verdict = check_attachment(attachment.name, attachment.content)
    return "" if verdict.problem else verdict.kind


def _link(case_id: str, attachment: Attachment, number: int) -> AttachmentLink:
    name = attachment.name
    problem = attachment_name_problem(name)
    verdict = check_attachment(name, attachment.content)
    if problem or verdict.problem:
        return AttachmentLink(name, note=f"not published: {problem or verdict.problem}")
    path = quote(f"{case_id}/attachments/{name}")
    if verdict.kind == "svg":
        anchor = f"attachment-{number}"
        return AttachmentLink(name, f"#{anchor}", path, anchor)
    return AttachmentLink(name, path, path if verdict.kind in ("png", "jpeg") else "")
