"""Reading a value as another format writes it: a measurement, a word, a status, or a report.

Outside datasets write results as text: ``"15,000 /μL (elevated)"``, ``"36.6°C (97.9°F)"``,
``"Pending"``. An importer turns such text into casebank's structure only where the reading is
certain, and keeps the text as written wherever it is not:

- a measurement is a number (digits, with optional thousands commas and decimals) followed by a
  unit casebank reads with UCUM semantics, then at most a parenthesis; the number is never
  rounded, rescaled or guessed, and anything else (``<40%``, ``2.5 x 3.5 cm``, ``4/5``) stays
  text;
- a flag (``high``, ``low``, ``normal``) is read only from plain words that say so;
- a status (pending, not done, unavailable) replaces words that stand in for a result.
"""

from __future__ import annotations

import re
from dataclasses import dataclass

from casebank.format import units
from casebank.format.results import is_placeholder_result

MAX_SIGNIFICANT_DIGITS = 15  # beyond this a double does not hold the number as written
MAX_EXACT_INTEGER = 2**53 - 1

_NUMBER = r"[-+]?(?:\d{1,3}(?:,\d{3})+|\d+)(?:\.\d+)?"
_MEASURE = re.compile(rf"^\s*({_NUMBER})(?![\d,.])\s*([^()]*?)\s*(?:\(([^()]*)\))?\s*\.?\s*$")
_PRESSURE = re.compile(r"^\s*(\d{2,3}\s*/\s*\d{2,3})\s*(mm\s*Hg)?\s*(?:\(([^()]*)\))?\s*\.?\s*$")
# A unit followed by words that describe the measurement: "98% on room air".
_UNIT_THEN_WORDS = re.compile(r"^(\S+)\s+((?:on|at|in|with|while|after|before)\b.*)$")
_TEMPERATURES = frozenset({"Cel", "[degF]", "K"})

_HIGH = re.compile(r"\b(elevated|high|raised|increased|above normal)\b")
_LOW = re.compile(r"\b(low|decreased|reduced|depressed|below normal)\b")
_NORMAL = re.compile(r"^(normal|within normal limits|within normal range|wnl)$")

# "(reference range, 13-115)", "(Reference range: 5 to 40 U/L)", "(normal 3.5–5.0)"
_REFERENCE = re.compile(
    rf"^(?:reference range|reference|normal range|normal|ref\.?|rr)\s*[,:]?\s*({_NUMBER})\s*"
    rf"(?:to|-|–|—)\s*({_NUMBER})\s*(\S*)\s*$"
)
_PENDING = re.compile(r"^(pending|awaiting|awaited|to follow|results? pending)\b")
_NOT_DONE = re.compile(r"^(not (done|performed|indicated|obtained|tested|required))\b")


@dataclass(frozen=True)
class Measurement:
    """A number and its unit, read from text; ``tail`` is what followed the unit."""

    value: int | float
    unit: str
    flag: str | None
    tail: str
    reference: str | None = None  # the reference range the text gives beside it: "5–40"


def number(text: str) -> int | float | None:
    """The number ``text`` writes (``15,000`` is 15000), or None when a double cannot hold it
    exactly as written."""
    plain = text.replace(",", "")
    digits = re.sub(r"[^0-9]", "", plain).lstrip("0")
    if len(digits) > MAX_SIGNIFICANT_DIGITS:
        return None
    if re.fullmatch(r"[-+]?\d+", plain):
        value = int(plain)
        return value if abs(value) <= MAX_EXACT_INTEGER else None
    return float(plain)


def readable_unit(text: str) -> str | None:
    """``text`` as a unit casebank reads, written as the source wrote it (spaces inside a unit,
    as in ``mm Hg``, are closed up); None when it is not plainly a unit."""
    for candidate in (text, re.sub(r"\s+", "", text)):
        if candidate and _plainly_a_unit(candidate):
            return candidate
    return None


def _plainly_a_unit(text: str) -> bool:
    if len(text) > 24 or not re.search(r"[A-Za-z%µμ°]", text) or re.match(r"^/\s*\d", text):
        return False
    parsed = units.safe_parse(text)
    if parsed is None or ("{" in parsed.ucum and "{" not in text):
        return False  # words read as a UCUM annotation ("mm Hg" as mm{Hg}) are not a unit
    # "K/uL" parses as kelvin per microlitre: a temperature only where one is meant.
    return "temperature" not in parsed.dimension or parsed.ucum in _TEMPERATURES


def flag_of(words: str) -> str | None:
    """``high``, ``low`` or ``normal`` where plain words say exactly one of them."""
    folded = " ".join(words.casefold().split()).strip(". ")
    if _NORMAL.match(folded):
        return "normal"
    high, low = bool(_HIGH.search(folded)), bool(_LOW.search(folded))
    if high != low:
        return "high" if high else "low"
    return None


def measurement(text: str) -> Measurement | None:
    """A number with a unit, read from the whole of ``text``, or None."""
    match = _MEASURE.match(text)
    if match is None:
        return None
    value = number(match.group(1))
    rest, aside = match.group(2), match.group(3)
    if value is None or not rest:
        return None
    unit, tail = readable_unit(rest), ""
    if unit is None and (split := _UNIT_THEN_WORDS.match(rest)) is not None:
        unit, tail = readable_unit(split.group(1)), split.group(2)
    if unit is None:
        return None
    flag = flag_of(aside) if aside else None
    return Measurement(value, unit, flag, tail, reference_range(aside or "", unit))


def reference_range(aside: str, unit: str) -> str | None:
    """``5–40`` from ``reference range, 5 to 40`` (written as casebank writes a range), where
    the text gives no unit or the measurement's own; None otherwise."""
    match = _REFERENCE.match(" ".join(aside.casefold().split()))
    if match is None or match.group(3) not in ("", unit.casefold()):
        return None
    low, high = number(match.group(1)), number(match.group(2))
    if low is None or high is None or low > high:
        return None
    return f"{match.group(1).replace(',', '')}–{match.group(2).replace(',', '')}"


def blood_pressure(text: str) -> tuple[str, str | None] | None:
    """``("125/80", flag)`` from ``125/80 mmHg`` (the pair stays text, as written)."""
    match = _PRESSURE.match(text)
    if match is None:
        return None
    aside = match.group(3)
    return re.sub(r"\s+", "", match.group(1)), flag_of(aside) if aside else None


def status_of(text: str) -> str | None:
    """``pending``, ``not_done`` or ``unavailable`` where ``text`` stands in for a result."""
    folded = " ".join(text.casefold().split()).strip(". ")
    if _PENDING.match(folded):
        return "pending"
    if _NOT_DONE.match(folded):
        return "not_done"
    if is_placeholder_result(text):
        return "unavailable"
    return None


def is_short(text: str) -> bool:
    """A word or a few (``Positive``, ``Present (elevated)``): a qualitative result rather than
    a report."""
    return "\n" not in text and len(text.split()) <= 4 and len(text) <= 40
