"""A draft case: the `casebank new` scaffold as data, filled in with what a record says.

Every importer starts from :func:`casebank.format.scaffold.case_skeleton`, so a draft has the
fields, presets and ``TODO`` texts of a new case and no importer restates them. What the record
says replaces a blank; what it says only partly is the blank's own text with the source's words
after it (:func:`blank`). :func:`finish` puts every field in the schema's order, the order of the
case template, and adds the provenance.
"""

from __future__ import annotations

import re
import unicodedata
from collections.abc import Mapping
from typing import Any

from casebank.format.identifiers import is_case_id
from casebank.format.scaffold import PLACEHOLDER, blank, case_skeleton
from casebank.format.walk import Field, case_tree

__all__ = ["PLACEHOLDER", "blank", "finish", "id_stem", "start", "todo"]
ID_STEM_LENGTH = 48  # leaves room for _NNN within the case id's 64 letters


def todo(what: str) -> str:
    """A placeholder naming what is missing in the source's own terms (a test name the catalog
    does not know), in the form the scaffold writes, which validation points at (CB418)."""
    return f"{PLACEHOLDER}: {what}"


def start(case_id: str) -> dict[str, Any]:
    """A new draft: the scaffold of a case named ``case_id``."""
    return case_skeleton(case_id)


def finish(
    data: dict[str, Any], *, command: str, citation: str, licence: str, notes: list[str]
) -> dict[str, Any]:
    """The draft with its provenance (an adapted case, the licence, the citation and what the
    importer decided), every mapping in the schema's order."""
    lines = [
        f"Imported with `{command}` from {citation.rsplit(', ', 1)[-1]}. Every TODO marks what "
        "the source does not give."
    ]
    lines += [f"- {note}" for note in notes]
    data["provenance"] = {
        "source": "adapted",
        "licence": licence,
        "derived_from": citation,
        "notes": "\n".join(lines),
    }
    ordered = _in_order(data, case_tree())
    assert isinstance(ordered, dict)
    return ordered


def _in_order(value: Any, node: Field | None) -> Any:
    """Named fields in the schema's order; keys the author chose (results, sections) as
    written."""
    if not isinstance(value, Mapping) or node is None:
        return value
    fields = node.fields or {}
    order = {key: i for i, key in enumerate(fields)}
    keys = sorted(value, key=lambda k: order.get(k, len(order)))
    return {k: _in_order(value[k], fields.get(k)) for k in keys}


def id_stem(name: str) -> str:
    """The start of a case id, from what the case is about: ``Myasthenia gravis`` ->
    ``myasthenia_gravis`` (whole words, at most ``ID_STEM_LENGTH`` letters; the command adds
    ``_001``, ``_002``, ... to keep ids free)."""
    text = unicodedata.normalize("NFKD", name)
    text = "".join(c for c in text if not unicodedata.combining(c))
    text = re.sub(r"['’ʼ`]", "", text.casefold())
    stem = ""
    for word in re.findall(r"[a-z0-9]+", text):
        longer = f"{stem}_{word}" if stem else word
        if len(longer) > ID_STEM_LENGTH and stem:
            break
        stem = longer[:ID_STEM_LENGTH]
    if not stem or not stem[0].isalpha():
        stem = f"case_{stem}"[:ID_STEM_LENGTH].rstrip("_") if stem else "case"
    assert is_case_id(f"{stem}_001")
    return stem
