"""Units with UCUM semantics: equivalent spellings are one unit, and units compare by dimension.

A unit as clinicians write it (``×10^9/L``, ``/mm³``, ``cells/µL``, ``mmHg``, ``seconds``,
``mEq/L``, ``°C``) is first rewritten as a UCUM code (``10*9/L``, ``/mm3``, ``/uL``,
``mm[Hg]``, ``s``, ``meq/L``, ``Cel``); the code is then read by ucumvert (the UCUM grammar for
pint) into a dimension and a factor. Two units are interchangeable for a test when their
dimensions are equal: ``/mm3``, ``/µL`` and ``10*3/uL`` are all a count per volume. Arbitrary
units keep their own dimension (an international unit is not a count, a pH is not a ratio, a
score is not a percentage).

ucumvert and pint take most of a second to import, so the facts for every unit the package
knows of (``units.json``, next to this module) are computed once, committed, and checked by a
test against ucumvert; ucumvert is imported only for a unit outside that table. Regenerate the
table with ``python -m casebank.format.units --write``.
"""

from __future__ import annotations

import json
import re
import sys
import unicodedata
from dataclasses import dataclass
from functools import cache, lru_cache
from pathlib import Path
from typing import Any

TABLE = Path(__file__).with_name("units.json")

# Clinical spellings that are words, not UCUM symbols (compared case-insensitively).
_WORDS = {
    "seconds": "s",
    "second": "s",
    "sec": "s",
    "secs": "s",
    "minutes": "min",
    "minute": "min",
    "mins": "min",
    "hours": "h",
    "hour": "h",
    "hrs": "h",
    "hr": "h",
    "days": "d",
    "day": "d",
    "weeks": "wk",
    "week": "wk",
    "months": "mo",
    "month": "mo",
    "years": "a",
    "year": "a",
    "yrs": "a",
    "bpm": "/min",
    "beats/min": "/min",
    "breaths/min": "/min",
    "points": "{score}",
    "point": "{score}",
    "score": "{score}",
    "ratio": "1",
    "index": "1",
    "ph": "[pH]",
    "mmhg": "mm[Hg]",
    "cmh2o": "cm[H2O]",
    "°c": "Cel",
    "℃": "Cel",
    "°f": "[degF]",
    "degc": "Cel",
    "db": "dB",
    "db hl": "dB",
    "lb": "[lb_av]",
    "lbs": "[lb_av]",
    "in": "[in_i]",
    "inch": "[in_i]",
    "inches": "[in_i]",
    "ft": "[ft_i]",
    "oz": "[oz_av]",
}
# Rewrites of clinical spellings into UCUM, in order.
_REWRITES: tuple[tuple[re.Pattern[str], str], ...] = tuple(
    (re.compile(pattern, flags), replacement)
    for pattern, replacement, flags in (
        (r"\s*\b(?:FEU|DDU)\b", "", 0),  # D-dimer's equivalence annotation: not a unit
        (r"/\s*24\s*(?:h|hr|hrs|hours)$", "/(24.h)", 0),
        # words after a unit describe it ("% predicted", "U/g Hb"): a UCUM annotation
        (r"^(\S+)\s+([A-Za-z]{2,}[A-Za-z ]*)$", r"\1{\2}", 0),
        (r"\s+", "", 0),
        (r"^[x×X*·]?10\^?\*?(\d+)(?=/)", r"10*\1", 0),  # ×10^9/L, x10^9/L, 10^9/L, 10*9/L
        (r"^[x×X*·]10\*(\d+)", r"10*\1", 0),
        (r"^cells?/", "/", 0),
        (r"^(?:counts?|particles?)/", "/", 0),
        (r"^copies/", "{copies}/", 0),
        (r"/hpf$", "/[HPF]", re.IGNORECASE),
        (r"/lpf$", "/[LPF]", re.IGNORECASE),
        (r"(?<![\[A-Za-z])([munpk]?)IU(?![\w\]])", r"\1[IU]", 0),
        (r"(?<![\[A-Za-z])([munpk]?)iU(?![\w\]])", r"\1[iU]", 0),
        # named arbitrary units of immunoassays and coagulation
        (r"^(GPL|MPL|APL)U?(?=/)", r"{\1'U}", 0),
        (r"^(RU|BU|EU|AU|kUA|UA|kAU)(?=/)", r"{\1}", 0),
        (r"^(MoM|INR)$", r"{\1}", 0),
        (r"mEq", "meq", 0),
        (r"mOsm", "mosm", 0),
        (r"mcg", "ug", 0),
        (r"mmHg", "mm[Hg]", 0),
        (r"cmH2O", "cm[H2O]", 0),
        (r"^ppb$", "[ppb]", 0),
        (r"^ppm$", "[ppm]", 0),
        (r"/1\.73m2$", "/{1.73_m2}", 0),
        (r"/(?:24h|24hr|24hours)$", "/(24.h)", 0),
        (r"/day$", "/d", 0),
        (r"/hr$", "/h", 0),
        (r"^°C$", "Cel", 0),
    )
)
# Arbitrary units: each is a dimension of its own.
_ARBITRARY = ("[IU]", "[iU]", "[pH]", "[HPF]", "[LPF]", "{score}", "dB")
_MICRO = ("µ", "μ")  # the micro sign and the Greek letter mu: both mean micro
_EXPECTED_NON_ASCII = set("µμ°×²³⁹⁰¹⁴⁵⁶⁷⁸·–℃")


@dataclass(frozen=True)
class Unit:
    """A unit as written, the UCUM code it means, and its size in its dimension's base units."""

    written: str
    ucum: str
    dimension: str  # e.g. "[length]^-3"; arbitrary units add their own ("[IU]")
    factor: float  # the size of one unit in the base units of its dimension


def to_ucum(text: str) -> str:
    """The UCUM code a clinical spelling means (not checked: see :func:`parse`)."""
    unit = unicodedata.normalize("NFKC", text).strip()
    for sign in _MICRO:
        unit = unit.replace(unicodedata.normalize("NFKC", sign), "u").replace(sign, "u")
    word = _WORDS.get(unit.casefold())
    if word is not None:
        return word
    for pattern, replacement in _REWRITES:
        unit = pattern.sub(replacement, unit)
    return _WORDS.get(unit.casefold(), unit)


@cache
def _table() -> dict[str, Any]:
    try:
        loaded = json.loads(TABLE.read_text(encoding="utf-8"))
    except (OSError, ValueError):
        return {}
    return loaded if isinstance(loaded, dict) else {}


@cache
def parse(text: str) -> Unit | None:
    """The unit ``text`` means, or None when it is not a unit (UCUM) can read."""
    if not text or not text.strip():
        return None
    code = to_ucum(text)
    known = _table().get(code)
    if known is None:
        known = compute(code)
    if known is None:
        return None
    dimension, factor = known
    return Unit(text, code, dimension, factor)


_PREFIX_FACTORS = {"": "1", "m": "10*-3", "u": "10*-6", "n": "10*-9", "p": "10*-12", "k": "10*3"}


def compute(code: str) -> tuple[str, float] | None:
    """The dimension and factor of a UCUM code, from ucumvert (slow to import; see TABLE).

    An annotation attached to a unit describes it (``%{predicted}``, ``mg/g{creatinine}``); an
    annotation standing alone is an arbitrary unit of its own (``{copies}/mL``, ``{RU}/mL``)."""
    marks = sorted({a for a in _ARBITRARY if a in code})
    marks += sorted(set(re.findall(r"(?:^|(?<=[/.(]))(\{[^}]*\})", code)) - set(marks))
    base = code
    for mark in ("[IU]", "[iU]"):  # a prefixed arbitrary unit keeps its prefix as a factor
        base = re.sub(rf"([munpk]?){re.escape(mark)}", lambda m: _PREFIX_FACTORS[m.group(1)], base)
    for mark in ("[pH]", "[HPF]", "[LPF]", "dB"):
        base = base.replace(mark, "1")
    base = re.sub(r"(?<=[\w%\]])\{[^}]*\}", "", base)  # descriptive annotations
    base = re.sub(r"\{[^}]*\}", "1", base)
    if re.fullmatch(r"[1/.()]*", base):
        base = "1"
    try:
        quantity = _registry().from_ucum(base) if base != "1" else None
        if quantity is None:
            dims: dict[str, float] = {}
            factor = 1.0
        else:
            reduced = quantity.to_base_units()
            dims = dict(reduced.dimensionality)
            factor = float(reduced.magnitude)
    except Exception:
        return None
    parts = [f"{name}^{power:g}" for name, power in sorted(dims.items()) if power]
    parts += marks
    return " ".join(parts) or "1", factor


@cache
def _registry() -> Any:
    from ucumvert import PintUcumRegistry

    class Registry:
        def __init__(self) -> None:
            self.inner = PintUcumRegistry()

        def from_ucum(self, code: str) -> Any:
            try:
                return self.inner.from_ucum(code)
            except Exception as exc:
                raise ValueError(code) from exc

    return Registry()


def readable(text: str) -> bool:
    try:
        return parse(text) is not None
    except ValueError:
        return False


def same_dimension(a: str, b: str) -> bool:
    """Whether a value in unit ``a`` can be given in unit ``b`` (both readable)."""
    first, second = safe_parse(a), safe_parse(b)
    return first is not None and second is not None and first.dimension == second.dimension


def safe_parse(text: str) -> Unit | None:
    try:
        return parse(text)
    except ValueError:
        return None


# Temperatures are affine, not proportional: kelvin = value * scale + offset. The table's
# factor (one degree in kelvin) cannot convert them, so each scale is stated here.
_TEMPERATURES = {"K": (1.0, 0.0), "Cel": (1.0, 273.15), "[degF]": (5 / 9, 459.67 * 5 / 9)}


def convert(value: float, written: str, wanted: str) -> float | None:
    """``value`` in unit ``written`` expressed in unit ``wanted``; None when one of the two is
    not a unit or they measure different things (mass and amount of substance need a molar
    mass, which a unit does not carry)."""
    first, second = safe_parse(written), safe_parse(wanted)
    if first is None or second is None or first.dimension != second.dimension:
        return None
    if first.dimension == "[temperature]^1":
        into, out = _TEMPERATURES.get(first.ucum), _TEMPERATURES.get(second.ucum)
        if into is None or out is None:
            return None
        return (value * into[0] + into[1] - out[1]) / out[0]
    return value * first.factor / second.factor


def _half_step(value: float) -> float:
    """Half of the last written decimal place of ``value``: 14.9 was written to ±0.05."""
    text = repr(float(value))
    if "e" in text or "E" in text:
        return abs(value) * 5e-16
    decimals = len(text.split(".")[1].rstrip("0")) if "." in text else 0
    return 0.5 * 10.0**-decimals


def same_quantity(a: float, a_unit: str, b: float, b_unit: str) -> bool | None:
    """Whether ``a a_unit`` and ``b b_unit`` are one measurement written two ways (14.9 g/dL
    and 149 g/L are), each read to the precision it is written with; None when the units cannot
    be converted into each other, so that nothing can be said."""
    b_as_a = convert(b, b_unit, a_unit)
    a_as_b = convert(a, a_unit, b_unit)
    if b_as_a is None or a_as_b is None:
        return None
    return _within(a, b_as_a) or _within(b, a_as_b)


def _within(written: float, converted: float) -> bool:
    # 1e-9: the float error of a conversion, relative
    return abs(written - converted) <= _half_step(written) + 1e-9 * abs(written)


# How a UCUM code's pieces are shown to people (a case may write `Cel` or `mm[Hg]`, which the
# format accepts as UCUM; a page or a report shows °C and mmHg). Whole-unit words first.
_DISPLAY_WHOLE = {"Cel": "°C", "[degF]": "°F", "1": "", "{score}": "points"}
_DISPLAY_PARTS: tuple[tuple[re.Pattern[str], str], ...] = tuple(
    (re.compile(pattern), replacement)
    for pattern, replacement in (
        (r"/\(24\.h\)", "/24 h"),
        (r"\bCel\b", "°C"),
        (r"\[degF\]", "°F"),
        (r"\[(?:IU|iU)\]", "IU"),
        (r"\[pH\]", "pH"),
        (r"\[HPF\]", "HPF"),
        (r"\[LPF\]", "LPF"),
        (r"\[(lb|in|ft|oz)_(?:av|i)\]", r"\1"),
        (r"\[([A-Za-z0-9]+)\]", r"\1"),  # mm[Hg], cm[H2O]: the brackets are UCUM's only
        (r"(?<=\S)\{([^}]*)\}", r" \1"),  # %{predicted}: a word that describes the unit
        (r"\{([^}]*)\}", r"\1"),  # {copies}/mL, {joints}: an annotation is read as a word
        (r"^10\*(-?\d+)", r"×10^\1"),
        (r"(?<![A-Za-z])u(?=(?:mol|g|L|IU|U|m)\b)", "µ"),
        (r"\bmeq\b", "mEq"),
        (r"\bmosm\b", "mOsm"),
        (r"(?<=[A-Za-z])\.(?=[A-Za-z])", "·"),  # mPa.s: UCUM's product dot
    )
)


@lru_cache(maxsize=4096)
def display(written: str) -> str:
    """A unit as a page or a report shows it: UCUM spellings a reader would trip over become
    their usual clinical form (``Cel`` → ``°C``, ``mm[Hg]`` → ``mmHg``, ``umol/L`` →
    ``µmol/L``); anything else is shown as written. Never changes the case's data. Cached: a
    site shows a few dozen distinct units (75 in 1,000 full-size cases) tens of thousands of
    times, 16 substitutions each."""
    text = written.strip()
    if text in _DISPLAY_WHOLE:
        return _DISPLAY_WHOLE[text]
    for pattern, replacement in _DISPLAY_PARTS:
        text = pattern.sub(replacement, text)
    return text


_DIMENSIONS = {
    "[length]^-3 [substance]^1": "an amount-of-substance concentration",
    "[length]^-3 [mass]^1": "a mass concentration",
    "[length]^-3": "a count per volume",
    "[length]^-3 [substance]^1 [time]^-1": "an enzyme activity per volume",
    "[length]^-3 [IU]": "international units per volume",
    "[time]^1": "a time",
    "[time]^-1": "a rate per time",
    "[temperature]^1": "a temperature",
    "[length]^-1 [mass]^1 [time]^-2": "a pressure",
    "[length]^3": "a volume",
    "[length]^3 [time]^-1": "a flow",
    "[mass]^1": "a mass",
    "[length]^1": "a length",
    "[length]^-2 [mass]^1": "a mass per area",
    "[length]^1 [time]^-1": "a speed",
    "1": "a ratio or percentage",
    "{score}": "a score",
    "[pH]": "a pH",
}


def describe(unit: Unit | None) -> str:
    """The kind of quantity a unit measures, in words."""
    if unit is None:
        return "not a unit"
    return _DIMENSIONS.get(unit.dimension, f"a quantity of dimension {unit.dimension}")


def lookalikes(text: str) -> list[str]:
    """Characters in ``text`` that look like others (``х`` Cyrillic ha for x), by name."""
    found = []
    for char in dict.fromkeys(text):
        if ord(char) > 127 and char not in _EXPECTED_NON_ASCII:
            name = unicodedata.name(char, f"U+{ord(char):04X}")
            found.append(f"`{char}` ({name.lower()})")
    return found


# Spellings the package knows: their UCUM facts are in TABLE (plus the catalog's, by a test).
COMMON = (
    "mmol/L",
    "µmol/L",
    "umol/L",
    "nmol/L",
    "pmol/L",
    "mol/L",
    "mg/L",
    "g/L",
    "g/dL",
    "mg/dL",
    "µg/L",
    "ug/L",
    "ng/mL",
    "ng/L",
    "pg/mL",
    "µg/mL",
    "ug/mL",
    "µg/dL",
    "mg/mL",
    "U/L",
    "IU/L",
    "mIU/L",
    "mIU/mL",
    "IU/mL",
    "U/mL",
    "kU/L",
    "mU/L",
    "×10^9/L",
    "×10^12/L",
    "10^9/L",
    "10*9/L",
    "10*12/L",
    "10*3/uL",
    "10*6/uL",
    "/µL",
    "/uL",
    "/mm3",
    "/mm³",
    "cells/µL",
    "cells/mm3",
    "%",
    "fL",
    "pg",
    "s",
    "seconds",
    "sec",
    "min",
    "minutes",
    "h",
    "hours",
    "d",
    "days",
    "mm/h",
    "mm/hr",
    "mmHg",
    "cmH2O",
    "kPa",
    "/min",
    "bpm",
    "°C",
    "Cel",
    "°F",
    "mOsm/kg",
    "mOsm/L",
    "mL/min/1.73m²",
    "mL/min/1.73m2",
    "mL/min",
    "mL",
    "L",
    "L/min",
    "copies/mL",
    "mg/24h",
    "g/24h",
    "mmol/24h",
    "mg/day",
    "ratio",
    "points",
    "score",
    "pH",
    "kg",
    "g",
    "mg",
    "cm",
    "mm",
    "m",
    "kg/m²",
    "kg/m2",
    "dB",
    "Hz",
    "m/s",
    "mg/g",
    "mg/mmol",
    "mEq/L",
    "meq/L",
    "/hpf",
    "/lpf",
    "years",
    "months",
    "weeks",
    "ms",
    "cm/s",
    "mL/kg",
    "mL/kg/h",
    "µg/kg/min",
    "ug/kg/min",
    "nmol/L/h",
    "mmol/mol",
    "µIU/mL",
    "uIU/mL",
    "mm2",
    "cm2",
    "U/g",
    "mg/kg",
    "ng/dL",
    "pg/dL",
    "µg/24h",
    "ug/24h",
    "lb",
    "in",
)


def write_table(extra: list[str]) -> dict[str, Any]:
    """Recompute the table for COMMON and ``extra`` spellings with ucumvert."""
    table: dict[str, Any] = {}
    for spelling in sorted({*COMMON, *extra}):
        code = to_ucum(spelling)
        try:
            facts = compute(code)
        except ValueError:
            facts = None
        if facts is not None:
            table[code] = [facts[0], facts[1]]
    return dict(sorted(table.items()))


def render_table(table: dict[str, Any]) -> str:
    """One unit per line, so that a change of the table reads well in a diff."""
    rows = [
        f"  {json.dumps(code, ensure_ascii=False)}: {json.dumps(facts, ensure_ascii=False)}"
        for code, facts in table.items()
    ]
    return "{\n" + ",\n".join(rows) + "\n}\n"


def catalog_units(catalog_text: str) -> list[str]:
    """Every unit spelling a catalog or case file names (the values of `unit:` and `units:`)."""
    import yaml

    found: list[str] = []
    stack: list[object] = [yaml.load(catalog_text, Loader=yaml.CSafeLoader)]
    while stack:
        node = stack.pop()
        if isinstance(node, dict):
            for key, value in node.items():
                if key == "unit" and isinstance(value, str):
                    found.append(value)
                elif key == "units" and isinstance(value, list):
                    found += [u for u in value if isinstance(u, str)]
                else:
                    stack.append(value)
        elif isinstance(node, list):
            stack.extend(node)
    return found


if __name__ == "__main__":  # python -m casebank.format.units --write [catalog.yaml ...]
    extra: list[str] = []
    for name in sys.argv[2:]:
        extra += catalog_units(Path(name).read_text(encoding="utf-8"))
    rendered = render_table(write_table(extra))
    if sys.argv[1:2] == ["--write"]:
        TABLE.write_text(rendered, encoding="utf-8")
        print(f"wrote {TABLE}")
    else:
        sys.stdout.write(rendered)
