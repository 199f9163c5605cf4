"""Test results from another format, under the catalog's names: one reader for every importer.

Outside formats nest results freely: a heading (``Blood_Tests``, ``Imaging``) holds tests, a
test holds attributes (``Findings``, ``Comments``) or, for a panel, its members. :class:`Results`
reads each level for what it is. A name is read in its group first (``Culture`` under
``Stool_Test`` is a stool culture; ``WBC`` in a urinalysis is the urine white cell count), then
on its own; a name the catalog does not know for certain is kept in a placeholder key, so that
nothing is lost and nothing is guessed. Each value becomes the result its text states
(:func:`leaf`): a number only where a unit the test accepts makes the reading certain.
"""

from __future__ import annotations

import re
from collections.abc import Iterator
from dataclasses import dataclass
from typing import Any

from casebank.format import units
from casebank.format.catalog import BLOOD_SPECIMENS, Catalog, CatalogTest, fold
from casebank.format.names import key as name_key
from casebank.format.names import resolve_in, resolve_loosely, split_side, suggest
from casebank.format.scaffold import is_stand_in
from casebank.importers import values
from casebank.importers.base import Log, Match, RecordError, Unresolved
from casebank.importers.draft import PLACEHOLDER, blank, todo
from casebank.importers.text import flatten, humanize, kind, prose

# Labels that say only "here is the result": dropped where a test has just the one.
GENERIC = frozenset(
    [
        *("findings", "finding", "result", "results", "report", "value", "values", "level"),
        *("levels", "analysis", "details", "interpretation", "description", "impression"),
        *("summary", "outcome", "observation", "observations"),
    ]
)
_REMARKS = GENERIC | {
    *("other findings", "additional findings", "comments", "comment", "notes", "note"),
    *("remarks", "other"),
}
# Words (as ``names.key`` normalises them) that say where a sample comes from or how tests are
# grouped, never which test is meant.
_HEADING_WORDS = frozenset(
    [
        *("blood", "urine", "stool", "serum", "plasma", "lab", "laboratory", "labs", "work"),
        *("works", "basic", "routine", "other", "additional", "special", "general"),
        *("chemistry", "biochemistry", "hematology", "hematologic", "panel", "profile"),
        *("initial", "repeat", "investigation", "microbiology", "serology", "radiology"),
        *("xray", "ct", "mri", "ultrasound"),
    ]
)
_BLOODS = BLOOD_SPECIMENS
# Words of a group's name that say which specimen its tests are of.
_SPECIMEN_WORDS = {
    "arthrocentesis": "synovial fluid",
    "joint aspiration": "synovial fluid",
    "joint fluid": "synovial fluid",
    "synovial": "synovial fluid",
    "lumbar puncture": "cerebrospinal fluid",
    "spinal tap": "cerebrospinal fluid",
    "csf": "cerebrospinal fluid",
    "thoracentesis": "pleural fluid",
    "pleural": "pleural fluid",
    "paracentesis": "peritoneal fluid",
    "ascitic": "peritoneal fluid",
    "urinalysis": "urine",
}
_RESULT = "investigations.results.*"
_NUMBER_ALONE = "the source gives the number alone"
_NO_RANGE = "the source gives none"


@dataclass(frozen=True)
class _Found:
    test: CatalogTest
    side: str | None = None
    inferred: bool = False  # by a spelling slip or the catalog's reading in context


class Results:
    """Reads one record's results into ``investigations.results``, logging each name."""

    def __init__(self, catalog: Catalog, log: Log) -> None:
        self.catalog = catalog
        self.log = log
        self.names: dict[tuple[int, str], str] = {}  # (results map, key) -> the source's name

    def read(self, value: Any, where: str) -> dict[str, Any]:
        """The results of a mapping of tests (``where`` names it in the record)."""
        out: dict[str, Any] = {}
        if value is None:
            self.log.notes.append("The record gives no test results.")
            return out
        if not isinstance(value, dict):
            raise RecordError(
                f"`{where}` is a {kind(value)}, not an object",
                'write the results as an object of tests, e.g. "Test_Results": '
                '{"Complete_Blood_Count": {"Hemoglobin": "14 g/dL"}}',
            )
        for key, item in value.items():
            self.result(out, key, item, f"{where}.{key}", None)
        return out

    def result(
        self,
        out: dict[str, Any],
        key: str,
        value: Any,
        where: str,
        within: str | None,
        parent: CatalogTest | None = None,
    ) -> None:
        name = humanize(key)
        found = self._resolve(name, within, parent)
        value = _unwrap(value)
        if (isinstance(value, dict) and not value) or value is None or value == "":
            self.log.notes.append(f"`{where}` is empty and was left out.")
        elif not isinstance(value, dict):
            test = found.test if found is not None else None
            self.place(out, found, leaf(test, value), name, within, where)
        elif found is not None:
            self._test_group(out, found, name, value, where)
        elif self._is_heading(name, value):
            for sub_key, item in value.items():
                self.result(out, sub_key, item, f"{where}.{sub_key}", name)
        else:
            self.place(out, None, self._group(None, value), name, within, where)

    def _is_heading(self, name: str, value: dict[str, Any]) -> bool:
        """A group of tests (``Blood_Tests``), rather than one test's attributes."""
        return any(
            isinstance(item, dict) or self._resolve(humanize(key), name) is not None
            for key, item in value.items()
        )

    def _test_group(
        self, out: dict[str, Any], found: _Found, name: str, value: dict[str, Any], where: str
    ) -> None:
        """A catalog test written as a group: its members (for a panel), other tests listed
        under it (each then listed on its own), and the attributes of its own result."""
        test = found.test
        members: dict[str, Any] = {}
        others: list[tuple[str, Any]] = []
        attributes: dict[str, Any] = {}
        for key, item in value.items():
            sub_name, sub_where = humanize(key), f"{where}.{key}"
            merged = self._members(test, key, item, sub_where) if test.is_panel else None
            if merged is not None:
                for match, member, entry in merged:
                    self.place(members, member, entry, match.name, name, match.field)
            elif self._resolve(sub_name, name, test) is not None:
                others.append((key, item))
            else:
                attributes[key] = item
        # A panel's children that are not remarks ("Comments") are members the catalog does
        # not know: the panel keeps them, each as a placeholder.
        unknown = [k for k in attributes if fold(humanize(k)) not in _REMARKS]
        if test.is_panel and (members or unknown):
            entry = self._panel(members, attributes, name, where)
            self.place(out, found, entry, name, None, where)
        elif attributes:
            self.place(out, found, self._group(test, attributes), name, None, where)
        for key, item in others:
            self.log.notes.append(f"`{where}.{key}` is a test of its own: listed on its own.")
            self.result(out, key, item, f"{where}.{key}", name, test)

    def _members(
        self, panel: CatalogTest, key: str, value: Any, where: str
    ) -> list[tuple[Match, _Found, dict[str, Any]]] | None:
        """A member of ``panel`` and its result, or a sub-group of members (a CBC's
        ``Differential_Count``); None when ``key`` names no member."""
        member = self._member(panel, humanize(key))
        if member is not None:
            entry = self._group(member.test, value) if isinstance(value, dict) else None
            match = Match(where, humanize(key), member.test.name)
            return [(match, member, entry or leaf(member.test, _text_of(value)))]
        if not isinstance(value, dict) or not value:
            return None
        found = []
        for sub_key, item in value.items():
            sub = self._member(panel, humanize(sub_key))
            if sub is None:
                return None
            match = Match(f"{where}.{sub_key}", humanize(sub_key), sub.test.name)
            found.append((match, sub, leaf(sub.test, _text_of(item))))
        return found

    def _member(self, panel: CatalogTest, name: str) -> _Found | None:
        for reading, side in _readings(name):
            test = self.catalog.resolve(reading, panel=panel) or self._loosely(reading)
            if test is not None and _is_member(panel, test):
                return _Found(test, side)
        for reading, side in _readings(name):
            test = resolve_in(reading, panel.name, self.catalog)
            if test is not None and _is_member(panel, test):
                return _Found(test, side, inferred=True)
        return None

    def _panel(
        self, members: dict[str, Any], attributes: dict[str, Any], name: str, where: str
    ) -> dict[str, Any]:
        """A panel result: its members, then what else the source gives with it (remarks in
        the note; anything else a member the catalog does not know, as a placeholder)."""
        remarks = []
        for key, item in attributes.items():
            label = humanize(key)
            if fold(label) in _REMARKS and (text := prose(_text_of(item))):
                remarks.append(text if fold(label) in GENERIC else f"{label}: {text}")
            else:
                written = self._unresolved(members, label, name, f"{where}.{key}")
                members[written] = leaf(None, _text_of(item))
        entry: dict[str, Any] = {"type": "panel"}
        if remarks:
            entry["note"] = " ".join(remarks)
        entry["components"] = members
        return entry

    def _group(self, test: CatalogTest | None, value: dict[str, Any]) -> dict[str, Any]:
        """One result from a test's attributes: the single value itself, or every attribute
        as a line of text."""
        if len(value) == 1:
            ((label, item),) = value.items()
            if not isinstance(item, dict | list):
                text = _text_of(item)
                if fold(humanize(label)) not in GENERIC and isinstance(text, str):
                    text = f"{humanize(label)}: {text}"
                return leaf(test, text)
        return leaf(test, flatten(value))

    def resolve(self, name: str, within: str | None = None) -> CatalogTest | None:
        """The catalog test ``name`` means under the heading ``within``, or None."""
        found = self._resolve(name, within)
        return found.test if found is not None else None

    def _resolve(
        self, name: str, within: str | None, parent: CatalogTest | None = None
    ) -> _Found | None:
        """The catalog test ``name`` means, read in its group (``Culture`` under ``Stool
        Test`` is the stool culture), then on its own; each as written, then without a side
        (``X-ray of the Right Hand``). The group's own test is never the answer."""
        # A name that gives its own specimen (``Serum Glucose`` under a lumbar puncture) is read
        # as it says. (``Blood`` alone under ``Urine Tests`` is what is measured: urine blood.)
        named = self._specimen(name, None) or re.search(r"\b(blood|serum|plasma)\b", name, re.I)
        own = bool(named) and len(name.split()) > 1
        specimen = None if own else self._specimen(within, parent)
        for reading, side in _readings(name):
            grouped = [self._words(f"{reading} {within}")] if within else []
            if specimen is not None:
                grouped.append(self.catalog.resolve(f"{specimen} {reading}"))
                grouped.append(self._words(f"{specimen} {reading}"))
            plain = [self.catalog.resolve(reading), self._loosely(reading)]
            if specimen is not None:  # a blood test is not what a urine or joint fluid group holds
                plain = [t for t in plain if t is None or t.specimen not in _BLOODS]
            for test in (*grouped, *plain):
                if test is not None and test is not parent:
                    return _Found(test, side)
        # Last, the catalog's own reading of outside names (a panel's members by their
        # heading, a safe spelling slip): written, and noted for the author to check.
        for reading, side in _readings(name):
            test = resolve_in(reading, within, self.catalog)
            if test is None or test is parent:
                continue
            if specimen is None or test.specimen not in _BLOODS:
                return _Found(test, side, inferred=True)
        return None

    def _specimen(self, within: str | None, parent: CatalogTest | None) -> str | None:
        """The specimen a group is of, other than blood: its test's (a urinalysis: urine), or
        one its name says (``Urine Tests``, ``Arthrocentesis of Right Knee``)."""
        if parent is not None and parent.specimen:
            return parent.specimen if parent.specimen not in _BLOODS else None
        words = f" {' '.join(re.findall(r'[a-z0-9]+', (within or '').casefold()))} "
        for word, specimen in _SPECIMEN_WORDS.items():
            if f" {word} " in words:
                return specimen
        for specimen in sorted(self.catalog.specimens - _BLOODS, key=len, reverse=True):
            if f" {specimen} " in words:
                return specimen
        return None

    def _words(self, name: str) -> CatalogTest | None:
        spelling = resolve_loosely(name, self.catalog)
        return self.catalog.resolve(spelling) if spelling is not None else None

    def _loosely(self, name: str) -> CatalogTest | None:
        """The test whose name has the same words as ``name``, unless those words only say
        where a sample comes from (``Blood Tests`` and ``Blood count`` both reduce to `blood`)."""
        return None if _only_headings(name) else self._words(name)

    def place(
        self,
        out: dict[str, Any],
        found: _Found | None,
        entry: dict[str, Any],
        name: str,
        within: str | None,
        where: str,
    ) -> None:
        """Write one result under its catalog name, or a placeholder key that keeps its own."""
        if found is None:
            out[self._unresolved(out, name, within, where)] = entry
            return
        key = found.test.name
        if key in out:
            first = self.names.get((id(out), key))
            if first is not None and first != name and "note" not in out[key]:
                out[key] = {**out[key], "note": f"Source name: {first}."}
            written = todo(f"{name} (a second result for {key}; merge the two)")
            self.log.unresolved.append(
                Unresolved(where, name, written, f"a second result for `{key}`")
            )
            key = unique(out, written)
        else:
            self.log.matches.append(Match(where, name, key, found.inferred))
            self.names[(id(out), key)] = name
            if found.inferred:
                self.log.notes.append(f"`{where}`: `{name}` is read as the catalog's {key}.")
        out[key] = _sided(entry, found.side)

    def _unresolved(
        self, siblings: dict[str, Any], name: str, within: str | None, where: str
    ) -> str:
        """The placeholder key for a name the catalog does not know, recorded for the report."""
        reason = "not in the catalog"
        hint = None if _only_headings(name) else suggest(name, self.catalog)
        in_fluid = self._specimen(within, None) is not None
        hinted = self.catalog.resolve(hint) if hint is not None else None
        if hinted is not None and in_fluid and hinted.specimen in _BLOODS:
            hint = None  # a blood test is not what a urine or joint fluid group holds
        if hint is not None:
            reason += f"; did you mean `{_canonical(self.catalog, hint)}`?"
        shown = f"{name} (under {within}; {reason})" if within else f"{name} ({reason})"
        written = unique(siblings, todo(shown.replace("`", "")))
        self.log.unresolved.append(Unresolved(where, name, written, reason))
        return written


def investigations(results: dict[str, Any], skeleton: dict[str, Any], policy: str) -> None:
    """Fill the draft's ``investigations`` with ``results``: the must-order blank names the
    tests the source gives results for, and the results policy is a blank that says what the
    source's own rule is (``policy``), for the author to choose knowingly."""
    listed = [k for k in results if not k.startswith(PLACEHOLDER)]
    shown = ", ".join(listed[:8]) + (", ..." if len(listed) > 8 else "")
    given = f"the source gives results for: {shown}" if listed else ""
    skeleton["expected"]["must_order"] = [blank("investigations.expected.must_order", given)]
    skeleton["results"] = results
    skeleton["results_generated_policy"] = blank("investigations.results_generated_policy", policy)


# --- one value as a result -----------------------------------------------------------------


def leaf(test: CatalogTest | None, value: Any) -> dict[str, Any]:
    """One result from one value: a lab value where a number with a unit the test accepts is
    certain, a status where the text says the result is pending or was not done, a placeholder
    where the text only stands in for a result, else qualitative or text."""
    if exact_number(value) is not None:
        if test is None or test.numeric:
            return _lab_value(value, None, None, f"Source text: {value}")
        value = str(value)
    text = prose(value)
    status = values.status_of(text)
    if status in ("pending", "not_done"):
        return {"type": _text_type(test, text), "status": status, "note": f"Source text: {text}"}
    if status is not None or is_stand_in(text):
        said = f"the source says only `{text}`; write the result, or state `status: unavailable`"
        return {"type": _text_type(test, text), "value": blank(f"{_RESULT}.value", said)}
    measured = values.measurement(text)
    if measured is not None and _takes(test, measured.unit):
        entry = _lab_value(measured.value, measured.unit, measured.flag, f"Source text: {text}")
        return {**entry, "reference_range": measured.reference or entry["reference_range"]}
    if re.fullmatch(r"\s*[-+]?\d+(\.\d+)?\s*", text) and (test is None or test.numeric):
        number = values.number(text.strip())
        if number is not None:
            return _lab_value(number, None, None, f"Source text: {text}")
    kind_ = _text_type(test, text)
    # Where the words say normal, high or low the flag follows; other reports are left for the
    # author to judge (CB449 points at each).
    return drop_none({"type": kind_, "value": text, "flag": values.flag_of(text)})


def _takes(test: CatalogTest | None, unit: str) -> bool:
    """Whether a value in ``unit`` can be this test's lab value (unknown tests take any)."""
    if test is None:
        return True
    if not test.numeric:
        return False
    accepted = [u for u in test.accepted_units if units.safe_parse(u) is not None]
    return not accepted or any(units.same_dimension(unit, u) for u in accepted)


def _lab_value(
    number: int | float, unit: str | None, flag: str | None, note: str
) -> dict[str, Any]:
    return drop_none(
        {
            "type": "lab_value",
            "value": number,
            "unit": unit or blank(f"{_RESULT}.unit", _NUMBER_ALONE, example=False),
            "reference_range": blank(f"{_RESULT}.reference_range", _NO_RANGE, example=False),
            "flag": flag,
            "note": note,
        }
    )


def _text_type(test: CatalogTest | None, text: str) -> str:
    """qualitative for a word or a few, text_report for a report, as the catalog allows."""
    preferred = ["qualitative", "text_report"] if values.is_short(text) else ["text_report"]
    preferred += ["qualitative", "text_report"]
    if test is None:
        return preferred[0]
    allowed = set(test.result_types) | ({"qualitative"} if test.numeric else set())
    return next((k for k in preferred if k in allowed), preferred[0])


def drop_none(entry: dict[str, Any]) -> dict[str, Any]:
    return {k: v for k, v in entry.items() if v is not None}


def exact_number(value: Any) -> int | float | None:
    """A JSON number a case can hold exactly (an integer beyond 2^53 is kept as text)."""
    if isinstance(value, bool) or not isinstance(value, int | float):
        return None
    return value if abs(value) <= values.MAX_EXACT_INTEGER or isinstance(value, float) else None


def _text_of(value: Any) -> Any:
    """A result value: a number as it is, anything else as text."""
    if exact_number(value) is not None:
        return value
    if isinstance(value, dict):
        return flatten(value)
    return prose(value)


def _unwrap(value: Any) -> Any:
    """``{"Results": {...}}`` is the group itself."""
    while isinstance(value, dict) and len(value) == 1:
        ((label, inner),) = value.items()
        if not isinstance(inner, dict) or fold(humanize(label)) not in GENERIC:
            break
        value = inner
    return value


def _readings(name: str) -> Iterator[tuple[str, str | None]]:
    yield name, None
    split = split_side(name)
    if split is not None:
        yield split


def _only_headings(name: str) -> bool:
    return set(name_key(name).split()) <= _HEADING_WORDS


def _is_member(panel: CatalogTest, test: CatalogTest) -> bool:
    return fold(test.name) in {fold(c) for c in panel.components}


def _canonical(catalog: Catalog, spelling: str) -> str:
    test = catalog.resolve(spelling)
    return test.name if test is not None else spelling


def unique(siblings: dict[str, Any], key: str) -> str:
    """``key``, or ``key #2``, ``#3``, ... where a sibling already has it."""
    if key not in siblings:
        return key
    n = 2
    while f"{key} #{n}" in siblings:
        n += 1
    return f"{key} #{n}"


def _sided(entry: dict[str, Any], side: str | None) -> dict[str, Any]:
    return {**entry, "laterality": side} if side else entry
