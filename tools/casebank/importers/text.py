"""Reading an outside record's text: keys as words, values as prose, who the patient is.

Other formats write keys as identifiers (``Complete_Blood_Count``), nest what a case writes as
one paragraph, and fill a field they have nothing for with a stand-in ("Not provided", "N/A").
These helpers read such text the same way for every importer: a stand-in is never content
(``casebank.format.scaffold.is_stand_in``), and age and sex are read only where the words
say them.
"""

from __future__ import annotations

import re
from collections.abc import Iterator
from dataclasses import dataclass
from typing import Any

from casebank.format.scaffold import is_stand_in

# Words that say there is nothing, beyond the stand-ins: "None", "Nil", "No data given".
_NOTHING = re.compile(
    r"^(none|nil|no (additional |relevant |pertinent )?(social |family )?history "
    r"(provided|given|available))$"
)


def humanize(key: str) -> str:
    """A source key as words: ``Complete_Blood_Count`` -> ``Complete Blood Count``."""
    return " ".join(key.replace("_", " ").split())


def exam_label(key: str) -> str:
    """An examination section's name as the cases write it: ``Vital_Signs`` -> ``vital signs``
    (abbreviations such as ``ENT`` kept)."""
    words = humanize(key).split(" ")
    label = " ".join(w.lower() if w[:1].isupper() and w[1:].islower() else w for w in words)
    return label or "unnamed"


def join_path(where: str, key: str) -> str:
    return f"{where}.{key}" if where else key


def prose(value: Any) -> str:
    """Text as written (stripped); other values as text (lists joined, objects flattened)."""
    if isinstance(value, str):
        return value.strip()
    if value is None:
        return ""
    return joined(value)


def joined(value: Any) -> str:
    """A value as one text, or empty when it says nothing (``N/A``, ``Not specified``)."""
    if isinstance(value, dict):
        parts = [f"{humanize(k)}: {t}" for k, v in value.items() if (t := joined(v))]
        return " ".join(p if p.endswith((".", "?", "!")) else p + "." for p in parts)
    if isinstance(value, list):
        return "; ".join(items(value))
    text = scalar_text(value)
    return "" if says_nothing(text) else text


def items(value: Any) -> list[str]:
    """A list's items as texts, leaving out those that say nothing (``None reported``)."""
    listed = value if isinstance(value, list) else [value] if value is not None else []
    texts = [joined(item) for item in listed]
    return [t for t in texts if t and not re.fullmatch(r"none( reported| known)?", plain(t))]


def scalar_text(value: Any) -> str:
    if isinstance(value, bool):
        return "yes" if value else "no"
    if value is None:
        return ""
    return str(value).strip()


def plain(text: str) -> str:
    """Lower case, punctuation as spaces: for matching words, never for writing."""
    return " ".join(re.sub(r"[^\w\s/]", " ", text.casefold()).split())


def says_nothing(text: str) -> bool:
    """Empty, a stand-in ("Not provided"), or a word for nothing ("None", "Nil")."""
    return not text or is_stand_in(text) or bool(_NOTHING.match(plain(text)))


def flatten(value: dict[str, Any]) -> str:
    """A group of attributes as lines of text, ``Label: text``, nested labels joined by ``/``."""
    lines = [f"{' / '.join(labels)}: {text}" for labels, text in _leaves(value, ())]
    return "\n".join(lines)


def _leaves(value: dict[str, Any], labels: tuple[str, ...]) -> Iterator[tuple[list[str], str]]:
    for key, item in value.items():
        here = (*labels, humanize(key))
        if isinstance(item, dict):
            yield from _leaves(item, here)
        elif text := prose(item):
            yield list(here), text


def kind(value: Any) -> str:
    """A JSON value's kind, as a message names it."""
    names = {dict: "object", list: "list", str: "string", bool: "boolean", type(None): "null"}
    return names.get(type(value), "number")


# --- who the patient is ---------------------------------------------------------------------


@dataclass(frozen=True)
class Age:
    """An age in years, read from words, with how the source wrote it where that differs."""

    years: int | float
    written: str | None = None  # "8-month-old": the source's words for a converted age


_AGE = re.compile(r"(\d+(?:\.\d+)?)[\s-]*(year|yr|month|week|day)s?[\s-]*old")
_PER_YEAR = {"year": 1, "yr": 1, "month": 12, "week": 52, "day": 365}
_NEWBORN = re.compile(r"\b(newborn|neonate|hours? old|hours? post delivery)\b")


def age_of(text: str) -> Age | None:
    """The age the words state: ``35-year-old`` is 35; months, weeks and days become years
    (``8-month-old`` is 0.667); a newborn is 0. None when the words state no age."""
    folded = text.casefold()
    match = _AGE.search(folded)
    if match is not None:
        amount = float(match.group(1))
        per_year = _PER_YEAR[match.group(2)]
        if per_year == 1:
            return Age(int(amount) if amount.is_integer() else amount)
        return Age(round(amount / per_year, 3), match.group(0))
    if _NEWBORN.search(folded):
        return Age(0, text)
    return None


def sex_of(text: str) -> str | None:
    """``female`` or ``male`` where the words say exactly one of them."""
    folded = text.casefold()
    female = bool(re.search(r"\b(female|woman|girl|lady|gravida|primigravida|mother)\b", folded))
    male = bool(re.search(r"\b(male|man|boy|gentleman)\b", folded))
    if female != male:
        return "female" if female else "male"
    return None
