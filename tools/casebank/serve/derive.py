"""Answers the case itself determines: never a catalog default (docs/serving.md).

A vital sign, a bedside observation, a computed score, or anything else that the examination,
the history or the listed results determine is not given a catalog default. The oracle answers
it from the case, or says it is not available and why. This module finds those answers, from
what the case records:

- ``Facts``: read once per case: every examination finding and measurement, by the catalog
  test it is a reading of (a structured finding ``heart rate: {value: 112}``, or a clause of the
  examination's text such as "HR 112/min, BP 98/62 mmHg"); the level of consciousness; whether
  the patient breathes air or oxygen; and numeric listed results by test.
- ``Facts.finding``: the examination finding that is a reading of a test ("capillary refill
  time"), or a clause of the examination's text that names it ("Romberg negative").
- ``FORMULAS``: scores and calculations computed by a documented formula from inputs the case
  holds (NEWS2, qSOFA, CURB-65, mean arterial pressure, eGFR by CKD-EPI 2021, ...). Each gives
  its result and the inputs it used, or names the inputs the case lacks: a score is never
  computed from a guess.

Everything here is pure: it reads the case's data and the catalog, and returns results shaped
like a case's own (``type``, ``value``, ``unit``, ``flag``, ``note``).
"""

from __future__ import annotations

import math
import re
from collections.abc import Callable, Iterator, Mapping
from dataclasses import dataclass, field
from functools import cached_property, lru_cache
from typing import Any

from casebank.format.catalog import Catalog, CatalogTest, fold

Entry = Mapping[str, Any]
Lookup = Callable[[str], tuple[str, Entry] | None]  # test name -> (results path, entry)


@dataclass(frozen=True)
class Reading:
    """One measurement or finding the case records: its value, unit and where it is."""

    value: Any
    unit: str | None
    origin: str  # the document path, dotted ("physical_exam.vital_signs.heart rate")
    flag: str | None = None
    note: str | None = None

    @property
    def number(self) -> float | None:
        value = self.value
        if isinstance(value, (int, float)) and not isinstance(value, bool):
            return float(value)
        if isinstance(value, str):
            found = re.match(r"\s*[<>≤≥]?\s*(\d+(?:\.\d+)?)", value)
            return float(found.group(1)) if found else None
        return None

    def of_side(self, side: str | None) -> bool:
        """Whether this reading is of ``side`` (``on_side``), by where it is and what it says."""
        return on_side(f"{self.origin} {self.value} {self.note or ''}", side)

    def result(self) -> dict[str, Any]:
        """The reading served as a result."""
        kind = "lab_value" if isinstance(self.value, (int, float)) else "text_report"
        out: dict[str, Any] = {"type": kind, "value": self.value}
        if self.unit:
            out["unit"] = self.unit
        if self.flag:
            out["flag"] = self.flag
        if self.note:
            out["note"] = self.note
        return out


@dataclass(frozen=True)
class Derived:
    """A result computed or read from the case, with the inputs it came from."""

    result: dict[str, Any]
    inputs: tuple[str, ...]

    @property
    def origin(self) -> str:
        return ", ".join(dict.fromkeys(self.inputs))


@dataclass(frozen=True)
class Missing:
    """A formula the case cannot feed: the inputs it does not record."""

    inputs: tuple[str, ...]


# --- reading the examination ---------------------------------------------------------------

# A clause of examination text that records a measurement: (catalog test, pattern, unit).
# Only the clinical spellings of each (HR, BP, RR, SpO2, temperature); the value is group 1.
_MEASURES: tuple[tuple[str, re.Pattern[str], str], ...] = tuple(
    (name, re.compile(pattern, re.IGNORECASE), unit)
    for name, pattern, unit in (
        (
            "Heart rate",
            r"\b(?:HR|heart rate|pulse(?: rate)?|apex rate|apical rate)\s*(?:of\s*|is\s*|:\s*)?"
            r"(\d{2,3})\s*(?:/\s*min|bpm|beats)",
            "/min",
        ),
        (
            "Blood pressure",
            r"\b(?:BP|blood pressure)\s*(?:of\s*|is\s*|:\s*)?(\d{2,3}\s*/\s*\d{2,3})",
            "mmHg",
        ),
        (
            "Respiratory rate",
            r"\b(?:RR|respiratory rate|resp(?:iratory)? rate|respirations)\s*(?:of\s*|is\s*|"
            r":\s*)?(\d{1,2})\b",
            "/min",
        ),
        (
            "Oxygen saturation",
            r"\b(?:SpO2|SpO₂|sats|saturations?|oxygen saturations?|O2 sats)\s*(?:of\s*|is\s*|"
            r":\s*)?(\d{2,3})\s*%",
            "%",
        ),
        (
            "Temperature",
            r"\b(?:temperature|temp|T)\s*(?:of\s*|is\s*|:\s*)?(\d{2}(?:\.\d)?)\s*°?\s*C\b",
            "°C",
        ),
        ("Glasgow Coma Scale", r"\bGCS\s*(?:of\s*|is\s*|:\s*)?(\d{1,2})\b", "points"),
        (
            "Capillary refill time",
            r"\bcapillary refill(?: time)?\s*(?:of\s*|is\s*|:\s*)?(?:under\s*|<\s*)?"
            r"(\d(?:\.\d)?)\s*(?:s\b|sec)",
            "s",
        ),
    )
)
# A clause of examination text: up to a semicolon, or a full stop that ends a sentence (not
# the point of a decimal: "37.6 °C").
_CLAUSE = re.compile(r"(?:[^.;]|(?<=\d)\.(?=\d))+")
_DIGIT = re.compile(r"\d")
_PRESSURE = re.compile(r"\b(?:BP|blood pressure)\s*(\d{2,3}\s*/\s*\d{2,3})", re.IGNORECASE)
_LEFT = re.compile(r"\b(?:left|lt)\b", re.IGNORECASE)
_RIGHT = re.compile(r"\b(?:right|rt)\b", re.IGNORECASE)
_BOTH = re.compile(r"\b(?:both|bilateral(?:ly)?|each|equal(?:ly)?|symmetric(?:al|ally)?)\b", re.I)


def on_side(text: str, side: str | None) -> bool:
    """Whether ``text`` reads ``side``: any text for an order of no side; for "left" or
    "right", a text naming that side, or both sides alike ("both feet", "pupils equal"); for
    both sides, a text naming both or neither."""
    if side is None:
        return True
    left, right, both = (
        bool(_LEFT.search(text)),
        bool(_RIGHT.search(text)),
        bool(_BOTH.search(text)),
    )
    if side == "bilateral":
        return both or left == right
    named, other = (left, right) if side == "left" else (right, left)
    return named or (both and not other)


_AIR = re.compile(r"\b(?:room air|on air|in air|breathing air|air)\b", re.IGNORECASE)
_OXYGEN = re.compile(
    r"\b(?:oxygen|o2|l/min|litres|liters|fio2|nasal cannulae?|mask|venturi|cpap|niv|"
    r"high-flow)\b",
    re.IGNORECASE,
)


def _walk(value: Any, at: tuple[str, ...]) -> Iterator[tuple[tuple[str, ...], Any]]:
    """Every part of the examination, breadth first, with its path."""
    queue: list[tuple[tuple[str, ...], Any]] = [(at, value)]
    while queue:
        path, node = queue.pop(0)
        yield path, node
        if isinstance(node, dict) and "value" not in node:
            queue.extend(((*path, str(k)), v) for k, v in node.items())


def _key(name: str) -> str:
    return fold(name.replace("_", " "))


@lru_cache(maxsize=4096)
def mentions(names: tuple[str, ...]) -> re.Pattern[str] | None:
    """One pattern for a text that names any of ``names`` as a whole word, case aside (one
    search in place of one per name), or None when there is no name to look for."""
    if not names:
        return None
    either = "|".join(re.escape(n) for n in names)
    return re.compile(rf"(?<!\w)(?:{either})(?!\w)", re.IGNORECASE)


@dataclass
class Facts:
    """What one case records, read once: findings by test, consciousness, air or oxygen."""

    case: Mapping[str, Any]
    catalog: Catalog
    lookup: Lookup
    findings: dict[str, Reading] = field(default_factory=dict, init=False)
    texts: list[tuple[str, str]] = field(default_factory=list, init=False)
    # Blood pressures by the posture the examination names ("lying", "standing 3 minutes").
    postures: list[tuple[str, Reading]] = field(default_factory=list, init=False)
    arms: list[tuple[str, Reading]] = field(default_factory=list, init=False)  # by side

    def __post_init__(self) -> None:
        exam = self.case.get("physical_exam")
        if isinstance(exam, str):
            self.texts.append(("physical_exam", exam))
        elif isinstance(exam, dict):
            self._read(exam)

    @cached_property
    def clauses(self) -> list[tuple[str, list[str]]]:
        """The examination's texts in clauses (split at full stops and semicolons), with
        where each text is."""
        return [(origin, _CLAUSE.findall(text)) for origin, text in self.texts]

    def _read(self, exam: Mapping[str, Any]) -> None:
        for path, node in _walk(exam, ()):
            if not path:
                continue
            origin = ".".join(("physical_exam", *path))
            test = self._exam_test(path)
            if isinstance(node, str):
                self.texts.append((origin, node))
                if test is not None:
                    self.findings.setdefault(test.name, Reading(node, None, origin))
            if isinstance(node, dict) and "value" in node:
                self._posture(path, node, origin)
            if isinstance(node, dict) and "value" in node and test is not None:
                self.findings.setdefault(
                    test.name,
                    Reading(
                        node["value"], _text(node.get("unit")), origin,
                        _text(node.get("flag")), _text(node.get("note")),
                    ),
                )  # fmt: skip
        for origin, clauses in self.clauses:
            for clause in clauses:
                if not _DIGIT.search(clause):
                    continue  # every measure, and a pressure by posture, is read from digits
                for name, pattern, unit in _MEASURES:
                    if name in self.findings:
                        continue  # the first reading of a measure is the one kept
                    found = pattern.search(clause)
                    if found:
                        value: Any = found.group(1).replace(" ", "")
                        if name != "Blood pressure":
                            value = float(value) if "." in value else int(value)
                        self.findings[name] = Reading(value, unit, origin, note=clause.strip())
                self._postures_in(clause, origin)

    def _postures_in(self, clause: str, origin: str) -> None:
        """Blood pressures a clause of text gives by posture ("BP 112/70 mmHg lying; on
        sitting up ... BP 100/64 mmHg")."""
        posture = _POSTURE.search(clause)
        pressure = _PRESSURE.search(clause)
        if posture and pressure:
            reading = Reading(
                pressure.group(1).replace(" ", ""), "mmHg", origin, None, clause.strip()
            )
            self.postures.append((posture.group(0).casefold(), reading))

    def _posture(self, path: tuple[str, ...], node: Mapping[str, Any], origin: str) -> None:
        """Keep a blood pressure the examination gives by posture ("lying", "standing")."""
        if not _pressure(node["value"]):
            return
        arm = _ARM.search(_key(path[-1]))
        if arm is not None:
            reading = Reading(
                node["value"], _text(node.get("unit")), origin, None, _text(node.get("note"))
            )
            self.arms.append((arm.group(1), reading))
        if _POSTURE.search(" ".join(_key(p) for p in path[-2:])):
            reading = Reading(
                node["value"], _text(node.get("unit")), origin, None, _text(node.get("note"))
            )
            self.postures.append((_key(path[-1]), reading))

    def _exam_test(self, path: tuple[str, ...]) -> CatalogTest | None:
        """The test an examination heading is a reading of ("heart_rate", "BP right arm",
        "systolic" under "blood pressure")."""
        key = _key(path[-1])
        test = self.catalog.resolve(key)
        below_pressure = len(path) > 1 and _key(path[-2]).startswith("blood pressure")
        if test is None and key in ("systolic", "diastolic") and below_pressure:
            return self.catalog.resolve(f"{key} blood pressure")
        if test is None and key.startswith("blood pressure"):
            return self.catalog.resolve("Blood pressure")
        return test

    # --- single readings -------------------------------------------------------------------

    def reading(self, name: str) -> Reading | None:
        """The reading of test ``name``: the examination first (it is what the doctor finds at
        the bedside), then a listed result (the first of a series: the admission value)."""
        found = self.findings.get(name)
        if found is not None:
            return found
        if name in ("Systolic blood pressure", "Diastolic blood pressure"):
            pressure = self.findings.get("Blood pressure")
            parts = _pressure(pressure.value) if pressure is not None else None
            if pressure is not None and parts is not None:
                value = parts[0] if name.startswith("Systolic") else parts[1]
                return Reading(value, "mmHg", pressure.origin)
        listed = self.lookup(name)
        if listed is None:
            return None
        origin, entry = listed
        series = entry.get("series")
        if isinstance(series, list) and series and isinstance(series[0], dict):
            entry = series[0]
        if entry.get("status", "final") != "final" or "value" not in entry:
            return None
        return Reading(entry["value"], _text(entry.get("unit")), origin, _text(entry.get("flag")))

    def number(self, name: str) -> tuple[float, Reading] | None:
        found = self.reading(name)
        value = found.number if found is not None else None
        return None if value is None or found is None else (value, found)

    def finding(self, test: CatalogTest, side: str | None = None) -> Reading | None:
        """The examination's reading of ``test``: a finding named like it, or failing that a
        clause of the examination text that names it or one of its aliases. For an order of
        one side ("left ABPI"), only a reading of that side or of both (``on_side``): never
        the other side's, nor one that says no side."""
        found = self.findings.get(test.name)
        if found is not None and found.of_side(side):
            return found
        names = [n for n in (test.name, *test.aliases) if len(n) >= 4 or n.isupper()]
        called = {fold(n) for n in (test.name, *test.aliases)}
        for origin, text in self.texts:  # a section named for the test ("rectal": the DRE)
            section = fold(origin.rsplit(".", 1)[-1])
            named = {section, f"{section} examination", f"{section} exam"} & called
            if named and on_side(f"{origin} {text}", side):
                return Reading(text.strip(), None, origin)
        pattern = mentions(tuple(names))
        if pattern is None:
            return None
        for (origin, clauses), (_, text) in zip(self.clauses, self.texts, strict=True):
            if not pattern.search(text):
                continue  # a clause is a piece of its text, cut at a stop: none names the test
            for clause in clauses:
                if pattern.search(clause) and on_side(clause, side):
                    return Reading(clause.strip(), None, origin)
        return None

    # --- derived facts ---------------------------------------------------------------------

    def consciousness(self) -> tuple[str, str] | None:
        """Alert (``A``) or not (``CVPU``: new confusion, voice, pain, unresponsive), and
        where the case says so: a recorded GCS or AVPU first, then the examination's words."""
        gcs = self.number("Glasgow Coma Scale")
        if gcs is not None:
            return ("A" if gcs[0] >= 15 else "CVPU"), gcs[1].origin
        avpu = self.reading("AVPU scale")
        if avpu is not None and isinstance(avpu.value, str):
            level = avpu.value.strip()[:1].upper()
            confused = re.search(r"confus", avpu.value, re.IGNORECASE)  # ACVPU's C
            if level in "AVPU" and level:
                return ("A" if level == "A" and not confused else "CVPU"), avpu.origin
        for origin, text in self.texts:
            if _UNALERT.search(text):
                return "CVPU", origin
        for origin, text in self.texts:
            if _ALERT.search(text):
                return "A", origin
        return None

    def oriented(self) -> str | None:
        """Where the examination says the patient is alert and oriented (a GCS of 15)."""
        if any(_UNALERT.search(text) for _, text in self.texts):
            return None
        for origin, text in self.texts:
            if re.search(r"\balert\b", text, re.I) and re.search(
                r"\borien?tated\b|\boriented\b", text, re.I
            ):
                return origin
        return None

    def breathing(self) -> tuple[str, str] | None:
        """``air`` or ``oxygen`` at the time of the saturation reading, where the case says."""
        sats = self.reading("Oxygen saturation")
        if sats is None:
            return None
        words = " ".join(str(x) for x in (sats.value, sats.note or "") if x)
        if _OXYGEN.search(words):
            return "oxygen", sats.origin
        if _AIR.search(words):
            return "air", sats.origin
        # Oxygen is a treatment: an examination that records no oxygen anywhere was taken on air.
        if not any(_OXYGEN.search(text) for _, text in self.texts):
            return "air", sats.origin
        return None


_UNALERT = re.compile(
    r"(?<!no )(?<!not )(?<!without )\b(?:confused|confusion|disorientated|disoriented|drowsy|"
    r"responds? (?:only )?to (?:voice|pain)|unresponsive|obtunded|stuporose)\b",
    re.IGNORECASE,
)
# Words that record an alert patient: alert, oriented, holding a conversation, or looking well.
_ALERT = re.compile(
    r"(?<!not )(?<!less )\b(?:alert|orientated|oriented|talking|speaking|conversing|"
    r"chatty|articulate|answers questions|looks? well|well and comfortable)\b",
    re.IGNORECASE,
)


def _text(value: Any) -> str | None:
    return value if isinstance(value, str) else None


_SLASHED = re.compile(r"\s*(\d{2,3})\s*/\s*(\d{2,3})")


def _pressure(value: Any) -> tuple[int, int] | None:
    """A blood pressure written ``systolic/diastolic`` (a number is none)."""
    if not isinstance(value, str):
        return None
    found = _SLASHED.match(value)
    return (int(found.group(1)), int(found.group(2))) if found else None


# --- formulas --------------------------------------------------------------------------------


@dataclass(frozen=True)
class Formula:
    """A documented calculation: its name in the catalog (``derive:``), its source, and how
    it is computed from the case."""

    name: str
    title: str
    source: str
    compute: Callable[[Facts], Derived | Missing]


FORMULAS: dict[str, Formula] = {}


def formula(name: str, title: str, source: str) -> Callable[..., Any]:
    def register(compute: Callable[[Facts], Derived | Missing]) -> Callable[..., Any]:
        FORMULAS[name] = Formula(name, title, source, compute)
        return compute

    return register


class _Inputs:
    """Collects a formula's inputs, and the names of those the case does not hold."""

    def __init__(self, facts: Facts) -> None:
        self.facts = facts
        self.used: list[str] = []
        self.missing: list[str] = []

    def number(
        self, name: str, label: str | None = None, convert: Mapping[str, float] | None = None
    ) -> float:
        """The value of test ``name``, in its usual unit: ``convert`` maps another unit
        (folded, without spaces) to the factor that brings it there."""
        found = self.facts.number(name)
        if found is None:
            self.missing.append(label or name.casefold())
            return math.nan
        value, reading = found
        self.used.append(reading.origin)
        unit = (reading.unit or "").casefold().replace(" ", "")
        return value * (convert or {}).get(unit, 1.0)

    def celsius(self) -> float:
        found = self.facts.number("Temperature")
        if found is None:
            self.missing.append("temperature")
            return math.nan
        value, reading = found
        self.used.append(reading.origin)
        unit = (reading.unit or "").casefold()
        return (value - 32) * 5 / 9 if "f" in unit and "c" not in unit else value

    def age(self) -> float:
        patient = self.facts.case.get("patient")
        age = patient.get("age") if isinstance(patient, dict) else None
        if not isinstance(age, (int, float)) or isinstance(age, bool):
            self.missing.append("age")
            return math.nan
        self.used.append("patient.age")
        return float(age)

    def sex(self) -> str:
        patient = self.facts.case.get("patient")
        sex = patient.get("sex") if isinstance(patient, dict) else None
        if sex not in ("female", "male"):
            self.missing.append("sex")
            return ""
        self.used.append("patient.sex")
        return str(sex)

    def consciousness(self) -> str:
        found = self.facts.consciousness()
        if found is None:
            self.missing.append("level of consciousness")
            return ""
        self.used.append(found[1])
        return found[0]

    def breathing(self) -> str:
        found = self.facts.breathing()
        if found is None:
            self.missing.append("whether on air or oxygen")
            return ""
        self.used.append(found[1])
        return found[0]

    def done(self, result: dict[str, Any]) -> Derived | Missing:
        if self.missing:
            return Missing(tuple(dict.fromkeys(self.missing)))
        return Derived(result, tuple(self.used))


def _band(value: float, bands: tuple[tuple[float, int], ...]) -> int:
    """The points of the first band whose upper bound ``value`` does not exceed."""
    for upper, points in bands:
        if value <= upper:
            return points
    return bands[-1][1]


def _score(value: int, unit: str, high: bool, note: str) -> dict[str, Any]:
    return {
        "type": "lab_value",
        "value": value,
        "unit": unit,
        "flag": "high" if high else "normal",
        "note": note,
    }


_NEWS2_SOURCE = "Royal College of Physicians, National Early Warning Score (NEWS) 2, 2017"


@formula("news2", "National Early Warning Score 2 (SpO2 scale 1)", _NEWS2_SOURCE)
def _news2(facts: Facts) -> Derived | Missing:
    got = _Inputs(facts)
    if got.age() < 16:
        return Missing(("an adult patient (NEWS2 is for those aged 16 or over; use PEWS)",))
    rr = got.number("Respiratory rate")
    sats = got.number("Oxygen saturation")
    air = got.breathing()
    sbp = got.number("Systolic blood pressure", "blood pressure")
    hr = got.number("Heart rate")
    level = got.consciousness()
    temp = got.celsius()
    if got.missing:
        return got.done({})
    parts = {
        "respiration rate": _band(rr, ((8, 3), (11, 1), (20, 0), (24, 2), (math.inf, 3))),
        "SpO2 (scale 1)": _band(sats, ((91, 3), (93, 2), (95, 1), (math.inf, 0))),
        "air or oxygen": 2 if air == "oxygen" else 0,
        "systolic BP": _band(sbp, ((90, 3), (100, 2), (110, 1), (219, 0), (math.inf, 3))),
        "pulse": _band(hr, ((40, 3), (50, 1), (90, 0), (110, 1), (130, 2), (math.inf, 3))),
        "consciousness": 0 if level == "A" else 3,
        "temperature": _band(temp, ((35.0, 3), (36.0, 1), (38.0, 0), (39.0, 1), (math.inf, 2))),
    }
    total = sum(parts.values())
    risk = "high" if total >= 7 else "medium" if total >= 5 else "low"
    red = any(p == 3 for p in parts.values())
    shown = ", ".join(f"{k} {v}" for k, v in parts.items())
    note = (
        f"Computed from the recorded observations: {shown}. {risk.capitalize()} clinical risk"
        + (" (a single parameter scores 3)" if red and risk == "low" else "")
        + ". Scale 1 for SpO2; scale 2 applies only where a clinician has prescribed a target "
        "of 88–92 % for hypercapnic respiratory failure."
    )
    return got.done(_score(total, "points", total >= 5 or red, note))


@formula(
    "qsofa",
    "quick Sequential Organ Failure Assessment",
    "Singer M, et al. The Third International Consensus Definitions for Sepsis and Septic "
    "Shock (Sepsis-3). JAMA 2016;315:801-10",
)
def _qsofa(facts: Facts) -> Derived | Missing:
    got = _Inputs(facts)
    if got.age() < 18:
        return Missing(("an adult patient (qSOFA is validated in adults)",))
    rr = got.number("Respiratory rate")
    sbp = got.number("Systolic blood pressure", "blood pressure")
    level = got.consciousness()
    if got.missing:
        return got.done({})
    parts = {
        "respiratory rate 22/min or more": rr >= 22,
        "altered mentation": level != "A",
        "systolic BP 100 mmHg or less": sbp <= 100,
    }
    total = sum(parts.values())
    met = ", ".join(k for k, v in parts.items() if v) or "none of the three criteria"
    note = f"Computed from the recorded observations: {met}. 2 or more is positive."
    return got.done(_score(total, "points", total >= 2, note))


def _urea_mmol(got: _Inputs) -> float:
    """Urea in mmol/L, from a urea or a blood urea nitrogen result (BUN mg/dL × 0.357)."""
    found = got.facts.number("Urea") or got.facts.number("Blood urea nitrogen")
    if found is None:
        got.missing.append("urea")
        return math.nan
    value, reading = found
    got.used.append(reading.origin)
    unit = (reading.unit or "").casefold().replace(" ", "")
    return value * 0.357 if unit == "mg/dl" else value


def _curb(facts: Facts, with_urea: bool) -> Derived | Missing:
    got = _Inputs(facts)
    level = got.consciousness()
    urea = _urea_mmol(got) if with_urea else math.nan
    rr = got.number("Respiratory rate")
    sbp = got.number("Systolic blood pressure", "blood pressure")
    dbp = got.number("Diastolic blood pressure", "blood pressure")
    age = got.age()
    if got.missing:
        return got.done({})
    parts = {
        "new confusion": level != "A",
        "respiratory rate 30/min or more": rr >= 30,
        "systolic BP under 90 or diastolic 60 mmHg or less": sbp < 90 or dbp <= 60,
        "age 65 or over": age >= 65,
    }
    if with_urea:
        parts = {"urea over 7 mmol/L": urea > 7, **parts}
    total = sum(parts.values())
    met = ", ".join(k for k, v in parts.items() if v) or "no criterion"
    note = f"Computed from the case: {met}."
    return got.done(_score(total, "points", total >= 2, note))


_CURB_SOURCE = (
    "Lim WS, et al. Defining community acquired pneumonia severity on presentation to "
    "hospital. Thorax 2003;58:377-82; NICE NG138"
)


@formula("curb65", "CURB-65", _CURB_SOURCE)
def _curb65(facts: Facts) -> Derived | Missing:
    return _curb(facts, with_urea=True)


@formula("crb65", "CRB-65", _CURB_SOURCE)
def _crb65(facts: Facts) -> Derived | Missing:
    return _curb(facts, with_urea=False)


@formula(
    "mean_arterial_pressure",
    "Mean arterial pressure",
    "MAP = diastolic + (systolic - diastolic) / 3",
)
def _map(facts: Facts) -> Derived | Missing:
    got = _Inputs(facts)
    sbp = got.number("Systolic blood pressure", "blood pressure")
    dbp = got.number("Diastolic blood pressure", "blood pressure")
    if got.missing:
        return got.done({})
    value = round(dbp + (sbp - dbp) / 3)
    flag = "low" if value < 65 else "high" if value > 110 else "normal"
    note = "Calculated from the recorded blood pressure."
    return got.done(
        {"type": "lab_value", "value": value, "unit": "mmHg", "flag": flag, "note": note}
    )


@formula("body_mass_index", "Body mass index", "BMI = weight (kg) / height (m)²; WHO categories")
def _bmi(facts: Facts) -> Derived | Missing:
    got = _Inputs(facts)
    weight = got.number("Weight", convert={"lb": 0.4536, "[lb_av]": 0.4536})
    height = got.number("Height", convert={"m": 100.0, "in": 2.54, "[in_i]": 2.54})
    age = got.age()
    if got.missing:
        return got.done({})
    if age < 18:
        return Missing(("an adult patient (a child's BMI is read on a centile chart)",))
    value = round(weight / (height / 100) ** 2, 1)
    flag = "low" if value < 18.5 else "high" if value >= 25 else "normal"
    note = "Calculated from the recorded weight and height."
    return got.done(
        {"type": "lab_value", "value": value, "unit": "kg/m2", "flag": flag, "note": note}
    )


def _creatinine_mg_dl(got: _Inputs) -> float:
    found = got.facts.number("Creatinine")
    if found is None:
        got.missing.append("creatinine")
        return math.nan
    value, reading = found
    got.used.append(reading.origin)
    unit = (reading.unit or "").casefold().replace(" ", "")
    return value if unit == "mg/dl" else value / 88.4


@formula(
    "egfr_ckd_epi_2021",
    "eGFR, CKD-EPI 2021 creatinine equation",
    "Inker LA, et al. New creatinine- and cystatin C-based equations to estimate GFR without "
    "race. N Engl J Med 2021;385:1737-49",
)
def _egfr(facts: Facts) -> Derived | Missing:
    got = _Inputs(facts)
    scr = _creatinine_mg_dl(got)
    age = got.age()
    sex = got.sex()
    if got.missing:
        return got.done({})
    if age < 18:
        return Missing(("an adult patient (CKD-EPI is for adults; use the Schwartz equation)",))
    value = round(egfr_ckd_epi_2021(scr, age, sex))
    flag = "low" if value < 60 else "normal"
    note = "Estimated from the serum creatinine by the CKD-EPI 2021 equation."
    return got.done(
        {"type": "lab_value", "value": value, "unit": "mL/min/1.73m2", "flag": flag, "note": note}
    )


def egfr_ckd_epi_2021(creatinine_mg_dl: float, age: float, sex: str) -> float:
    female = sex == "female"
    kappa, alpha = (0.7, -0.241) if female else (0.9, -0.302)
    ratio = creatinine_mg_dl / kappa
    value = 142 * min(ratio, 1) ** alpha * max(ratio, 1) ** -1.200 * 0.9938**age
    return float(value * 1.012 if female else value)


@formula(
    "creatinine_clearance_cockcroft_gault",
    "Creatinine clearance, Cockcroft-Gault",
    "Cockcroft DW, Gault MH. Prediction of creatinine clearance from serum creatinine. "
    "Nephron 1976;16:31-41 (actual body weight)",
)
def _crcl(facts: Facts) -> Derived | Missing:
    got = _Inputs(facts)
    scr = _creatinine_mg_dl(got)
    age = got.age()
    sex = got.sex()
    weight = got.number("Weight", convert={"lb": 0.4536, "[lb_av]": 0.4536})
    if got.missing:
        return got.done({})
    value = round((140 - age) * weight * (0.85 if sex == "female" else 1) / (72 * scr))
    flag = "low" if value < 60 else "normal"
    note = "Calculated from age, actual body weight and serum creatinine (Cockcroft-Gault)."
    return got.done(
        {"type": "lab_value", "value": value, "unit": "mL/min", "flag": flag, "note": note}
    )


@formula("anion_gap", "Anion gap", "Anion gap = sodium - (chloride + bicarbonate), mmol/L")
def _anion_gap(facts: Facts) -> Derived | Missing:
    got = _Inputs(facts)
    sodium = got.number("Sodium")
    chloride = got.number("Chloride")
    bicarbonate = got.number("Bicarbonate")
    if got.missing:
        return got.done({})
    value = round(sodium - chloride - bicarbonate)
    flag = "high" if value > 16 else "low" if value < 4 else "normal"
    note = (
        "Calculated: sodium - (chloride + bicarbonate); reference 4–16 mmol/L (without potassium)."
    )
    return got.done(
        {"type": "lab_value", "value": value, "unit": "mmol/L", "flag": flag, "note": note}
    )


@formula(
    "corrected_calcium",
    "Albumin-adjusted calcium",
    "Payne RB, et al. Interpretation of serum calcium in patients with abnormal serum "
    "proteins. BMJ 1973;4:643-6: calcium + 0.02 × (40 - albumin g/L), mmol/L",
)
def _corrected_calcium(facts: Facts) -> Derived | Missing:
    got = _Inputs(facts)
    calcium = got.number("Calcium", convert={"mg/dl": 0.2495})
    albumin = got.number("Albumin", convert={"g/dl": 10.0})
    if got.missing:
        return got.done({})
    value = round(calcium + 0.02 * (40 - albumin), 2)
    flag = "high" if value > 2.6 else "low" if value < 2.2 else "normal"
    note = "Calculated from total calcium and albumin; reference 2.20–2.60 mmol/L."
    return got.done(
        {"type": "lab_value", "value": value, "unit": "mmol/L", "flag": flag, "note": note}
    )


@formula(
    "resting_ecg",
    "A 12-lead ECG where none is listed",
    "Under normal_unless_listed only: a normal tracing is served only where it agrees with the "
    "recorded pulse (regular, 60–100/min, in an adult); otherwise unavailable",
)
def _resting_ecg(facts: Facts) -> Derived | Missing:
    investigations = facts.case.get("investigations")
    policy = (
        investigations.get("results_generated_policy") if isinstance(investigations, dict) else None
    )
    pulse = facts.number("Heart rate")
    age = _age(facts)
    if policy not in ("normal_unless_listed", "generate_consistent") or pulse is None:
        return Missing(("a recorded ECG",))
    rate, reading = pulse
    words = f"{reading.value} {reading.note or ''}"
    if not 60 <= rate <= 100 or age is None or age < 16 or re.search(r"irregular", words, re.I):
        return Missing(
            ("a recorded ECG (the recorded pulse is not that of a normal sinus rhythm)",)
        )
    value = (
        f"Sinus rhythm, {rate:g}/min; normal axis and intervals; no ST-segment or T-wave change."
    )
    note = "No ECG is listed: the normal tracing the case's policy serves, as the pulse agrees."
    return Derived(
        {"type": "text_report", "value": value, "flag": "normal", "note": note}, (reading.origin,)
    )


_ARM = re.compile(r"\b(right|left)\b(?: upper)? arm\b", re.IGNORECASE)


@formula(
    "bilateral_arm_blood_pressure",
    "Blood pressure in both arms",
    "2024 ESC Guidelines for the management of peripheral arterial and aortic diseases (a "
    "systolic difference over 20 mmHg between the arms is a sign of aortic dissection); "
    "NICE NG136 (measure both arms; repeat if the difference is over 15 mmHg)",
)
def _both_arms(facts: Facts) -> Derived | Missing:
    sides = {side.casefold(): reading for side, reading in facts.arms}
    if "right" not in sides or "left" not in sides:
        return Missing(("a blood pressure in each arm",))
    right, left = _pressure(sides["right"].value), _pressure(sides["left"].value)
    if right is None or left is None:
        return Missing(("a blood pressure in each arm",))
    gap = abs(right[0] - left[0])
    value = (
        f"Right arm {sides['right'].value} mmHg, left arm {sides['left'].value} mmHg: "
        f"systolic difference {gap} mmHg."
    )
    flag = "abnormal" if gap > 20 else "indeterminate" if gap > 15 else "normal"
    note = "A systolic difference over 15 mmHg is repeated; over 20 mmHg is significant."
    result = {"type": "text_report", "value": value, "flag": flag, "note": note}
    return Derived(result, (sides["right"].origin, sides["left"].origin))


_POSTURE = re.compile(r"\b(?:lying|supine|sitting|seated|standing)\b", re.IGNORECASE)


@formula(
    "orthostatic_vital_signs",
    "Lying and standing blood pressure",
    "Consensus statement on the definition of orthostatic hypotension (Freeman R, et al. Clin "
    "Auton Res 2011;21:69-72): a fall of 20 mmHg systolic or 10 mmHg diastolic within 3 minutes "
    "of standing; abnormal too where a systolic is below 90 mmHg in any position",
)
def _orthostatic(facts: Facts) -> Derived | Missing:
    lying = [(w, r) for w, r in facts.postures if re.search(r"lying|supine", w, re.I)]
    upright = [(w, r) for w, r in facts.postures if re.search(r"standing", w, re.I)]
    upright = upright or [
        (w, r) for w, r in facts.postures if re.search(r"sitting|seated", w, re.I)
    ]
    if not lying or not upright:
        return Missing(("a lying and a standing (or sitting) blood pressure",))
    first = _pressure(lying[0][1].value)
    falls = [(w, r, _pressure(r.value)) for w, r in upright]
    assert first is not None
    dropped = any(
        p is not None and (first[0] - p[0] >= 20 or first[1] - p[1] >= 10) for _, _, p in falls
    )
    readings = [r for _, r in [lying[0], *upright]]
    pressures = [_pressure(r.value) for r in readings]
    low = any(p is not None and p[0] < 90 for p in pressures) or any(
        r.flag in ("low", "critical_low", "abnormal") for r in readings
    )
    shown = "; ".join(
        f"{w}: {r.value} mmHg" + (f" ({r.note})" if r.note else "") for w, r in [lying[0], *upright]
    )
    note = (
        "A fall of 20 mmHg systolic or 10 mmHg diastolic within 3 minutes of standing is "
        "orthostatic hypotension; a systolic below 90 mmHg in any position is hypotension."
    )
    result = {
        "type": "text_report",
        "value": shown,
        "flag": "abnormal" if dropped or low else "normal",
        "note": note,
    }
    return Derived(result, tuple(r.origin for _, r in [lying[0], *upright]))


_CORE_ROUTE = re.compile(r"\b(?:rectal|rectally|o?esophageal|bladder|core)\b", re.IGNORECASE)


@formula(
    "core_temperature",
    "Core temperature",
    "The temperature the examination records by a core route (rectal, oesophageal or bladder "
    "probe), as its own reading says; a tympanic, oral or axillary reading is not one",
)
def _core_temperature(facts: Facts) -> Derived | Missing:
    reading = facts.reading("Temperature")
    said = f"{reading.value} {reading.note or ''} {reading.origin}" if reading else ""
    if reading is None or not _CORE_ROUTE.search(said):
        return Missing(("a temperature taken by a core route (rectal, oesophageal or bladder)",))
    return Derived(flagged(facts, "Temperature", reading).result(), (reading.origin,))


@formula(
    "shock_index",
    "Shock index",
    "Allgöwer M, Burri C. Dtsch Med Wochenschr 1967;92:1947-50: heart rate / systolic BP; "
    "0.9 or more is raised",
)
def _shock_index(facts: Facts) -> Derived | Missing:
    got = _Inputs(facts)
    hr = got.number("Heart rate")
    sbp = got.number("Systolic blood pressure", "blood pressure")
    if got.missing:
        return got.done({})
    value = round(hr / sbp, 2)
    note = "Calculated: heart rate / systolic blood pressure; 0.9 or more is raised."
    return got.done(
        {
            "type": "lab_value",
            "value": value,
            "unit": "ratio",
            "flag": "high" if value >= 0.9 else "normal",
            "note": note,
        }
    )


@formula(
    "fib4",
    "FIB-4 index",
    "Sterling RK, et al. Hepatology 2006;43:1317-25: age × AST / (platelets × √ALT); under 1.3 "
    "low risk of advanced fibrosis, over 2.67 high",
)
def _fib4(facts: Facts) -> Derived | Missing:
    got = _Inputs(facts)
    age = got.age()
    ast = got.number("Aspartate aminotransferase", "AST")
    alt = got.number("Alanine aminotransferase", "ALT")
    platelets = got.number("Platelet count", "platelet count")
    if got.missing:
        return got.done({})
    value = round(age * ast / (platelets * math.sqrt(alt)), 2)
    band = "low" if value < 1.3 else "indeterminate" if value <= 2.67 else "high"
    flag = {"low": "normal", "indeterminate": "indeterminate", "high": "high"}[band]
    note = f"Calculated from age, AST, ALT and platelet count: {band} risk of advanced fibrosis."
    return got.done(
        {"type": "lab_value", "value": value, "unit": "ratio", "flag": flag, "note": note}
    )


@formula(
    "glasgow_coma_scale",
    "Glasgow Coma Scale",
    "Teasdale G, Jennett B. Lancet 1974;2:81-4: a recorded GCS, or 15/15 where the examination "
    "records the patient alert and oriented",
)
def _gcs(facts: Facts) -> Derived | Missing:
    origin = facts.oriented()
    if origin is None:
        return Missing(("a recorded GCS or level of consciousness",))
    note = "The examination records the patient alert and oriented."
    result = {"type": "text_report", "value": "15/15 (E4 V5 M6)", "flag": "normal", "note": note}
    return Derived(result, (origin,))


@formula(
    "avpu",
    "AVPU scale",
    "Alert, voice, pain, unresponsive: alert where the examination records it",
)
def _avpu(facts: Facts) -> Derived | Missing:
    found = facts.consciousness()
    if found is None or found[0] != "A":
        return Missing(("a recorded level of consciousness",))
    note = "The examination records the patient alert."
    return Derived(
        {"type": "qualitative", "value": "Alert", "flag": "normal", "note": note}, (found[1],)
    )


_HURTS = re.compile(r"pain|ache|hurt|sore|discomfort|pressure|tightness|burning|cramp|colic", re.I)
_PAIN = re.compile(r"\b(\d{1,2})\s*(?:/|out of)\s*10\b", re.IGNORECASE)


@formula(
    "pain_score",
    "Pain score (numeric rating scale, 0-10)",
    "The patient's own rating, where the history or the examination records it",
)
def _pain(facts: Facts) -> Derived | Missing:
    presentation = facts.case.get("presentation")
    story = (
        presentation.get("history_of_present_illness") if isinstance(presentation, dict) else None
    )
    texts = [*facts.texts]
    if isinstance(story, str):
        texts.insert(0, ("presentation.history_of_present_illness", story))
    for origin, text in texts:
        for clause in _CLAUSE.findall(text):
            found = _PAIN.search(clause)
            if found and _HURTS.search(clause):
                value = int(found.group(1))
                if value <= 10:
                    result = {
                        "type": "lab_value",
                        "value": value,
                        "unit": "/10",
                        "flag": "high" if value >= 4 else "normal",
                        "note": clause.strip(),
                    }
                    return Derived(result, (origin,))
    return Missing(("the patient's rating of the pain (ask the patient)",))


# Adult reference ranges for vital signs read from the examination without a flag of their own
# (the served result shows the range it was judged by). Children's ranges vary with age, so a
# child's unflagged reading stays unflagged.
ADULT_RANGES: dict[str, tuple[float, float]] = {
    "Heart rate": (60, 100),
    "Respiratory rate": (12, 20),
    "Systolic blood pressure": (100, 139),
    "Diastolic blood pressure": (60, 89),
    "Temperature": (36.0, 37.9),
    "Oxygen saturation": (95, 100),
}


def flagged(facts: Facts, name: str, reading: Reading) -> Reading:
    """``reading`` with a flag by the adult reference range, where it has none of its own."""
    if reading.flag is not None or _age(facts) is None or (_age(facts) or 0) < 16:
        return reading
    if name == "Blood pressure":
        parts = _pressure(reading.value)
        if parts is None:
            return reading
        sbp, dbp = ADULT_RANGES["Systolic blood pressure"], ADULT_RANGES["Diastolic blood pressure"]
        low = parts[0] < sbp[0] or parts[1] < dbp[0]
        high = parts[0] > sbp[1] or parts[1] > dbp[1]
        flag = "low" if low else "high" if high else "normal"
        return Reading(reading.value, reading.unit, reading.origin, flag, reading.note)
    limits = ADULT_RANGES.get(name)
    value = reading.number
    if limits is None or value is None:
        return reading
    flag = "low" if value < limits[0] else "high" if value > limits[1] else "normal"
    return Reading(reading.value, reading.unit, reading.origin, flag, reading.note)


def _age(facts: Facts) -> float | None:
    patient = facts.case.get("patient")
    age = patient.get("age") if isinstance(patient, dict) else None
    return float(age) if isinstance(age, (int, float)) and not isinstance(age, bool) else None


def derive(name: str, facts: Facts) -> Derived | Missing | None:
    """The formula ``name`` applied to the case (None: no such formula)."""
    found = FORMULAS.get(name)
    return None if found is None else found.compute(facts)
