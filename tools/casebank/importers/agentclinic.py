"""AgentClinic OSCE records as draft casebank cases.

AgentClinic (Schmidgall et al., 2024; MIT licence) publishes its cases as JSON Lines, one
record per line::

    {"OSCE_Examination": {
        "Objective_for_Doctor": "...",
        "Patient_Actor": {"Demographics": "35-year-old female", "History": "...",
                          "Symptoms": {"Primary_Symptom": "...", "Secondary_Symptoms": [...]},
                          "Past_Medical_History": "...", "Social_History": "...",
                          "Review_of_Systems": "..."},
        "Physical_Examination_Findings": {"Vital_Signs": {...}, "Neurological_Examination": {...}},
        "Test_Results": {"Complete_Blood_Count": {"WBC": "15,000 /μL (elevated)", ...}, ...},
        "Correct_Diagnosis": "..."}}

:func:`convert` maps every part of a record to its field of the case format (docs/importing.md
has the table). What the source says is kept as it says it: numbers are read only where a unit
makes the reading certain, and the source text stays in the result's ``note``. What the source
does not say (the checklists, management, scoring, reference ranges) becomes a ``TODO``
placeholder, which validation reports (CB418) until an author fills it in. Test names are
written as the catalog's canonical name when the catalog knows them for certain (by name or
alias, or by the same words in another order); any other name is written as a placeholder
that keeps it, and is listed in :attr:`Conversion.unresolved`.

Results in AgentClinic nest freely: a heading (``Blood_Tests``, ``Imaging``) holds tests, a
test holds attributes (``Findings``, ``Comments``) or, for a panel, its members. A name is read
in its group first (``Culture`` under ``Stool_Test`` is a stool culture; ``WBC`` in a
urinalysis is the urine white cell count), then on its own.
"""

from __future__ import annotations

import re
import unicodedata
from collections.abc import Iterator
from dataclasses import dataclass, field
from typing import Any

from casebank.errors import CasebankError
from casebank.format import strictjson, units
from casebank.format.catalog import Catalog, CatalogTest, fold
from casebank.format.identifiers import is_case_id
from casebank.format.loader import MAX_FILE_BYTES
from casebank.format.names import key as name_key
from casebank.format.names import resolve_in, resolve_loosely, split_side, suggest
from casebank.format.scaffold import PLACEHOLDER
from casebank.format.schema import CASE_SCHEMA, EXAM_DEPTH
from casebank.format.text import FORBIDDEN_IN_TEXT
from casebank.importers import values

NAME = "AgentClinic"
CITATION = "AgentClinic (Schmidgall et al., 2024, https://github.com/SamuelSchmidgall/AgentClinic)"
LICENCE = "MIT"
MAX_RECORD_BYTES = MAX_FILE_BYTES  # a record becomes one case file, which the loader caps
MAX_DEPTH = 16  # objects and lists inside a record; real records nest 5 deep
MAX_INTEGER = 10**40 - 1  # larger than exact integers: such values are kept as text
MAX_VALUES = 5000  # values in one record; real records hold fewer than 200
CASE_STEM_LENGTH = 48

OSCE = "OSCE_Examination"
_KNOWN_OSCE = (
    "Objective_for_Doctor",
    "Patient_Actor",
    "Physical_Examination_Findings",
    "Test_Results",
    "Correct_Diagnosis",
)
_SHAPE_HINT = (
    'each line holds one JSON object {"OSCE_Examination": {"Patient_Actor": {...}, '
    '"Physical_Examination_Findings": {...}, "Test_Results": {...}, "Correct_Diagnosis": "..."}}'
)
# The characters the case loader refuses in a value (casebank.format.text): a draft must not
# hold them.
_CONTROL = FORBIDDEN_IN_TEXT
# Labels that say only "here is the result": dropped where a test has just the one.
_GENERIC = frozenset(
    [
        "findings",
        "finding",
        "result",
        "results",
        "report",
        "value",
        "values",
        "level",
        "levels",
        "analysis",
        "details",
        "interpretation",
        "description",
        "impression",
        "summary",
        "outcome",
        "observation",
        "observations",
    ]
)
_REMARKS = _GENERIC | {
    "other findings",
    "additional findings",
    "comments",
    "comment",
    "notes",
    "note",
    "remarks",
    "other",
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
_BLOODS = frozenset(["blood", "serum", "plasma", "whole blood", "venous blood", "capillary blood"])
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
_VITALS = frozenset(
    [
        "vital signs",
        "vitals",
        "temperature",
        "temp",
        "blood pressure",
        "bp",
        "heart rate",
        "pulse",
        "pulse rate",
        "respiratory rate",
        "respiration rate",
        "respirations",
        "oxygen saturation",
        "spo2",
        "o2 saturation",
        "saturation",
        "weight",
        "height",
        "bmi",
        "body mass index",
        "head circumference",
    ]
)
_NOTHING = re.compile(
    r"^(n/?a|none|nil|information not (provided|specified|available)|not (provided|specified|"
    r"available|applicable)|no (additional |relevant |pertinent |significant )?(information|"
    r"details|data)( (provided|given|available))?|no (additional |relevant |pertinent )?"
    r"(social |family )?history (provided|given|available))$"
)
_NO_HISTORY = re.compile(
    r"^(no|none|nil)( significant| notable| relevant| known)?( past| previous| prior)?"
    r"( medical| medical or surgical| medical or psychiatric)? (history|illnesses)"
    r"( reported| provided)?$"
)


class RecordError(CasebankError):
    """A record that cannot be converted: what is wrong (naming the field) and how to fix it."""


@dataclass(frozen=True)
class Unresolved:
    """A test name the draft could not give a catalog name, and what it was written as."""

    field: str  # where in the record: Test_Results.Stool_Test.Culture
    name: str  # the name as read: "Culture"
    written_as: str  # the placeholder key in the draft
    reason: str  # "not in the catalog", "not in the catalog; did you mean `Troponin`?"


@dataclass(frozen=True)
class Match:
    """A test name the draft writes as a catalog name."""

    field: str
    name: str  # as read
    test: str  # the catalog's name
    inferred: bool = False  # read as a near spelling or in context: for the author to check


@dataclass
class Conversion:
    case_id: str
    data: dict[str, Any]
    notes: list[str] = field(default_factory=list)  # what the importer decided, for review
    unresolved: list[Unresolved] = field(default_factory=list)
    matches: list[Match] = field(default_factory=list)  # names written as catalog names

    @property
    def resolved(self) -> int:
        return len(self.matches)


@dataclass(frozen=True)
class _Found:
    test: CatalogTest
    side: str | None = None
    inferred: bool = False  # by a spelling slip or the catalog's reading in context


def todo(what: str) -> str:
    """A placeholder in the form `casebank new` writes, which validation points at (CB418)."""
    return f"{PLACEHOLDER}: {what}"


# --- reading one line -----------------------------------------------------------------------


def parse_record(raw: bytes) -> dict[str, Any]:
    """One JSON Lines record as data; RecordError says what is wrong with it and how to fix it."""
    if len(raw) > MAX_RECORD_BYTES:
        raise RecordError(
            f"the record is {len(raw):,} bytes, more than the {MAX_RECORD_BYTES:,} a case may hold",
            "split the record, or shorten its text",
        )
    try:
        text = raw.decode("utf-8").lstrip("\ufeff")
    except UnicodeDecodeError as exc:
        raise RecordError(
            f"the line is not valid UTF-8 (byte {exc.start + 1})", "save the file as UTF-8"
        ) from None
    try:
        record = strictjson.loads(text, max_depth=MAX_DEPTH, max_integer=MAX_INTEGER)
    except strictjson.JSONProblem as problem:
        raise _json_refusal(problem) from None
    if not isinstance(record, dict):
        raise RecordError(f"the record is a JSON {_kind(record)}, not an object", _SHAPE_HINT)
    _check_values(record)
    osce = record.get(OSCE)
    if not isinstance(osce, dict):
        found = f"a {_kind(osce)}" if OSCE in record else "missing"
        keys = ", ".join(sorted(record)[:6]) or "none"
        hint = _SHAPE_HINT
        if {"question", "patient_info"} <= set(record):
            hint = (
                "this is an AgentClinic NEJM record (question, patient_info, physical_exams), "
                "a different format: the importer reads the OSCE records of "
                "agentclinic_medqa*.jsonl"
            )
        raise RecordError(f"`{OSCE}` is {found} (the record's keys: {keys})", hint)
    return record


def _json_refusal(problem: strictjson.JSONProblem) -> RecordError:
    """What the strict reader refused, in the importer's words."""
    subject = problem.subject[:40] + ("…" if len(problem.subject) > 40 else "")
    if problem.kind == "depth":
        return RecordError(f"the record nests deeper than {MAX_DEPTH} levels", _SHAPE_HINT)
    if problem.kind == "duplicate-key":
        return RecordError(
            f"the key `{subject}` appears twice in one object", "keep one of the two entries"
        )
    if problem.kind == "constant":
        return RecordError(
            f"`{subject}` is not a number a case can hold", "write the value as text"
        )
    if problem.kind == "number":
        return RecordError(f"the number `{subject}` is too large", "write the value as text")
    return RecordError(
        f"not valid JSON: {problem.message} (column {problem.column})",
        "each line must hold one complete JSON object; check quotes, commas and brackets "
        "near that column",
    )


def _kind(value: Any) -> str:
    names = {dict: "object", list: "list", str: "string", bool: "boolean", type(None): "null"}
    return names.get(type(value), "number")


def _check_values(record: dict[str, Any]) -> None:
    """Depth, size and characters, in one pass without recursion."""
    stack: list[tuple[Any, str, int]] = [(record, "", 0)]
    count = 0
    while stack:
        value, where, depth = stack.pop()
        count += 1
        if count > MAX_VALUES:
            raise RecordError(f"the record holds more than {MAX_VALUES} values", _SHAPE_HINT)
        if depth > MAX_DEPTH:
            raise RecordError(f"`{where}` nests deeper than {MAX_DEPTH} levels", _SHAPE_HINT)
        texts = [value] if isinstance(value, str) else []
        if isinstance(value, dict):
            texts.extend(value)
            stack.extend((v, _join(where, k), depth + 1) for k, v in value.items())
        elif isinstance(value, list):
            stack.extend((v, f"{where}[{i}]", depth + 1) for i, v in enumerate(value))
        for text in texts:
            bad = _CONTROL.search(text)
            if bad is not None:
                raise RecordError(
                    f"`{where or 'the record'}` holds the invisible control character "
                    f"U+{ord(bad.group()):04X}",
                    "remove it (it cannot be written to a case file)",
                )


def _join(where: str, key: str) -> str:
    return f"{where}.{key}" if where else key


# --- the case id ----------------------------------------------------------------------------


def case_stem(record: dict[str, Any]) -> str:
    """The start of the case id, from the diagnosis: ``Myasthenia gravis`` -> ``myasthenia_gravis``
    (the command adds ``_001``, ``_002``, ... to keep ids unique)."""
    diagnosis = _diagnosis(record)
    text = unicodedata.normalize("NFKD", diagnosis)
    text = "".join(c for c in text if not unicodedata.combining(c))
    text = re.sub(r"['’ʼ`]", "", text.casefold())
    words = re.findall(r"[a-z0-9]+", text)
    stem = ""
    for word in words:
        longer = f"{stem}_{word}" if stem else word
        if len(longer) > CASE_STEM_LENGTH and stem:
            break
        stem = longer[:CASE_STEM_LENGTH]
    stem = stem or "case"
    if not stem[0].isalpha():  # a case id starts with a letter: 22q11 deletion -> case_22q11_...
        stem = f"case_{stem}"[:CASE_STEM_LENGTH].rstrip("_")
    assert is_case_id(f"{stem}_001")
    return stem


def _diagnosis(record: dict[str, Any]) -> str:
    value = record[OSCE].get("Correct_Diagnosis")
    if isinstance(value, str) and value.strip():
        return value.strip()
    found = "missing" if value is None else f"a {_kind(value)}" if value != "" else "empty"
    raise RecordError(
        f"`{OSCE}.Correct_Diagnosis` is {found}",
        "give the diagnosis the case is built around as text, e.g. "
        '"Correct_Diagnosis": "Myasthenia gravis"',
    )


# --- the conversion -------------------------------------------------------------------------


def convert(
    record: dict[str, Any], case_id: str, catalog: Catalog, source: str, licence: str = LICENCE
) -> Conversion:
    """The draft case for one parsed record (see :func:`parse_record`). ``source`` names the
    record for the citation, e.g. ``agentclinic_medqa.jsonl line 12``."""
    return _Converter(catalog).convert(record, case_id, source, licence)


class _Converter:
    def __init__(self, catalog: Catalog) -> None:
        self.catalog = catalog
        self.notes: list[str] = []
        self.unresolved: list[Unresolved] = []
        self.matches: list[Match] = []
        self.names: dict[tuple[int, str], str] = {}  # (results map, key) -> the source's name

    def convert(
        self, record: dict[str, Any], case_id: str, source: str, licence: str
    ) -> Conversion:
        osce: dict[str, Any] = record[OSCE]
        diagnosis = _diagnosis(record)
        actor = self._section(osce, "Patient_Actor")
        data: dict[str, Any] = {
            "case_id": case_id,
            "metadata": self._metadata(osce),
            "patient": self._patient(actor),
            "presentation": self._presentation(actor),
            "physical_exam": self._exam(osce.get("Physical_Examination_Findings")),
            "ground_truth": {
                "final_diagnosis": diagnosis,
                "differential": [todo("ranked differential diagnosis, most likely first")],
            },
            "investigations": self._investigations(self._results(osce.get("Test_Results"))),
            "management_gold": {
                "diagnostic_plan": [todo("diagnostic steps (AgentClinic records have none)")],
                "treatment_plan": [todo("treatment steps (AgentClinic records have none)")],
                "contraindications": [todo("things that must not be done")],
                "follow_up": [todo("follow-up")],
            },
            "scoring": self._scoring(),
        }
        self._leftovers(record, osce)
        data["provenance"] = self._provenance(source, licence)
        return Conversion(case_id, data, self.notes, self.unresolved, self.matches)

    def _section(self, osce: dict[str, Any], key: str) -> dict[str, Any]:
        value = osce.get(key)
        if value is None:
            self.notes.append(f"The record has no `{key}`: its fields are placeholders.")
            return {}
        if not isinstance(value, dict):
            raise RecordError(
                f"`{OSCE}.{key}` is a {_kind(value)}, not an object",
                f'write it as an object of fields, e.g. "{key}": {{"Demographics": "..."}}',
            )
        return value

    # --- metadata, patient, presentation ---------------------------------------------------

    def _metadata(self, osce: dict[str, Any]) -> dict[str, Any]:
        objective = prose(osce.get("Objective_for_Doctor"))
        title = "short human title"
        if objective:
            title += f" (the source's objective: {objective})"
        return {
            "title": todo(title),
            "language": "en",
            "difficulty": todo("how hard the case is: easy, medium or hard"),
            "specialty": todo("main specialty, from the catalog's specialties"),
            "tags": [todo("keywords for search and filtering, from the catalog's tags")],
        }

    def _patient(self, actor: dict[str, Any]) -> dict[str, Any]:
        demographics = prose(actor.get("Demographics"))
        said = f" (the source says: {demographics})" if demographics else ""
        patient: dict[str, Any] = {
            "age": self._age(demographics),
            "sex": _sex(demographics) or todo(f"female, male or other{said}"),
            "persona": todo(f"how the patient comes across: occupation, manner, worries{said}"),
            "tone_presets": ["neutral"],
        }
        pmh, pmh_meds = self._history(actor.get("Past_Medical_History"))
        if pmh is not None:
            patient["pmh"] = pmh
        meds = pmh_meds + self._meds(actor)
        if meds:
            patient["meds"] = meds
        patient["allergies"] = [
            todo("allergies: the source does not say; list them, or write [] for none known")
        ]
        social = _joined(actor.get("Social_History"))
        if social:
            patient["social_history"] = social
        family = _joined(actor.get("Family_History"))
        if family:
            patient["family_history"] = [family]
        return patient

    def _age(self, demographics: str) -> int | float | str:
        text = demographics.casefold()
        match = re.search(r"(\d+(?:\.\d+)?)[\s-]*(year|yr|month|week|day)s?[\s-]*old", text)
        if match is not None:
            amount = float(match.group(1))
            per_year = {"year": 1, "yr": 1, "month": 12, "week": 52, "day": 365}[match.group(2)]
            if per_year == 1:
                return int(amount) if amount.is_integer() else amount
            age = round(amount / per_year, 3)
            self.notes.append(f"patient.age {age} (years) is `{match.group(0)}` in the source.")
            return age
        if re.search(r"\b(newborn|neonate|hours? old|hours? post delivery)\b", text):
            self.notes.append(f"patient.age 0 is the source's `{demographics}`.")
            return 0
        said = f" (the source says: {demographics})" if demographics else ""
        return todo(f"age in years{said}")

    def _history(self, value: Any) -> tuple[list[dict[str, Any]] | None, list[dict[str, Any]]]:
        """Past medical history as conditions, and any medications listed inside it."""
        if value is None:
            return None, []
        if isinstance(value, dict):
            conditions: list[dict[str, Any]] = []
            meds: list[dict[str, Any]] = []
            for key, item in value.items():
                label = humanize(key)
                if fold(label) in ("medications", "current medications", "drugs"):
                    meds += [{"name": t} for t in _items(item)]
                elif isinstance(item, list):
                    conditions += [{"condition": t, "notes": label} for t in _items(item)]
                elif text := prose(item):
                    conditions.append({"condition": label, "status": text})
            return conditions, meds
        if isinstance(value, list):
            return [{"condition": t} for t in _items(value)], []
        text = prose(value)
        if not text or _says_nothing(text):
            return None, []
        if _NO_HISTORY.match(_plain(text)):
            self.notes.append(f"patient.pmh is empty: the source says `{text}`.")
            return [], []
        return [{"condition": text}], []

    def _meds(self, actor: dict[str, Any]) -> list[dict[str, Any]]:
        meds: list[dict[str, Any]] = []
        for key in ("Current_Medications", "Medications"):
            value = actor.get(key)
            if isinstance(value, list):
                meds += [{"name": t} for t in _items(value)]
            elif isinstance(value, str) and re.fullmatch(r"[\w/ -]{1,40}", value.strip()):
                meds.append({"name": value.strip()})
        return meds

    def _presentation(self, actor: dict[str, Any]) -> dict[str, Any]:
        symptoms = actor.get("Symptoms")
        symptoms = symptoms if isinstance(symptoms, dict) else {"Primary_Symptom": symptoms}
        complaint = prose(symptoms.get("Primary_Symptom"))
        return {
            "chief_complaint": complaint or todo("the complaint in the patient's words"),
            "history_of_present_illness": self._story(actor, symptoms),
            "key_history_points": {
                "must_ask": [todo("questions a competent clinician must ask")],
                "nice_to_ask": [todo("questions that add value")],
                "red_flags": [todo("findings that must not be missed")],
            },
        }

    def _story(self, actor: dict[str, Any], symptoms: dict[str, Any]) -> str:
        """The history, then what else the patient would tell: further symptoms, the review of
        systems, medications given as prose, and any field the format has no place for."""
        parts = [prose(actor.get("History"))]
        others = _items(symptoms.get("Secondary_Symptoms"))
        if others:
            parts.append("Other symptoms: " + "; ".join(others) + ".")
        for key, value in symptoms.items():
            if key not in ("Primary_Symptom", "Secondary_Symptoms") and (text := _joined(value)):
                parts.append(f"{humanize(key)}: {text}")
        review = _joined(actor.get("Review_of_Systems"))
        if review:
            parts.append(f"Review of systems: {review}")
        for key in ("Medications", "Drug_History"):
            value = actor.get(key)
            if isinstance(value, str) and not self._meds({key: value}) and (text := prose(value)):
                parts.append(f"Medications: {text}")
        known = {
            "Demographics",
            "History",
            "Symptoms",
            "Past_Medical_History",
            "Social_History",
            "Family_History",
            "Review_of_Systems",
            "Current_Medications",
            "Medications",
            "Drug_History",
        }
        for key, value in actor.items():
            if key not in known and (text := _joined(value)):
                parts.append(f"{humanize(key)}: {text}")
                self.notes.append(f"`Patient_Actor.{key}` is in the history of present illness.")
        # One paragraph a line: a folded block shows them a blank line apart.
        story = "\n".join(p for p in parts if p)
        if not parts[0]:
            story = todo("the true story the simulated patient draws on" + (": " if story else ""))
            story += "\n".join(p for p in parts[1:] if p)
        return story

    # --- the physical examination ----------------------------------------------------------

    def _exam(self, value: Any) -> Any:
        if isinstance(value, str) and value.strip():
            return value.strip()
        if isinstance(value, dict):
            sections = self._exam_sections(value, "Physical_Examination_Findings", 1, False)
            if sections:
                return sections
        elif value is not None and not isinstance(value, str):
            raise RecordError(
                f"`{OSCE}.Physical_Examination_Findings` is a {_kind(value)}",
                "write the examination as an object of sections, or as text",
            )
        self.notes.append("The record gives no examination findings.")
        return {"general": todo("general appearance (the source gives no examination)")}

    def _exam_sections(
        self, value: dict[str, Any], where: str, depth: int, vital: bool
    ) -> dict[str, Any]:
        out: dict[str, Any] = {}
        for key, item in value.items():
            label = exam_label(key)
            here = _join(where, key)
            is_vital = vital or fold(label) in _VITALS
            if isinstance(item, dict) and depth < EXAM_DEPTH:
                found: Any = self._exam_sections(item, here, depth + 1, is_vital)
            elif isinstance(item, dict):
                found = flatten(item)
                self.notes.append(f"`{here}` nests deeper than {EXAM_DEPTH} levels: one text.")
            else:
                found = _finding(item) if is_vital else prose(item)
            if found:
                out[_unique(out, label)] = found
        return out

    # --- results ---------------------------------------------------------------------------

    def _results(self, value: Any) -> dict[str, Any]:
        out: dict[str, Any] = {}
        if value is None:
            self.notes.append("The record gives no test results.")
            return out
        if not isinstance(value, dict):
            raise RecordError(
                f"`{OSCE}.Test_Results` is a {_kind(value)}, not an object",
                'write the results as an object of tests, e.g. "Test_Results": '
                '{"Complete_Blood_Count": {"Hemoglobin": "14 g/dL"}}',
            )
        for key, item in value.items():
            self._result(out, key, item, f"Test_Results.{key}", None)
        return out

    def _result(
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
            self.notes.append(f"`{where}` is empty and was left out.")
        elif not isinstance(value, dict):
            test = found.test if found is not None else None
            self._place(out, found, _leaf(test, value), name, within, where)
        elif found is not None:
            self._test_group(out, found, name, value, where)
        elif self._is_heading(name, value):
            for sub_key, item in value.items():
                self._result(out, sub_key, item, f"{where}.{sub_key}", name)
        else:
            self._place(out, None, self._group(None, value), name, within, where)

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
                    self._place(members, member, entry, match.name, name, match.field)
            elif self._resolve(sub_name, name, test) is not None:
                others.append((key, item))
            else:
                attributes[key] = item
        # A panel's children that are not remarks ("Comments") are members the catalog does
        # not know: the panel keeps them, each as a placeholder.
        unknown = [k for k in attributes if fold(humanize(k)) not in _REMARKS]
        if test.is_panel and (members or unknown):
            entry = self._panel(members, attributes, name, where)
            self._place(out, found, entry, name, None, where)
        elif attributes:
            self._place(out, found, self._group(test, attributes), name, None, where)
        for key, item in others:
            self.notes.append(f"`{where}.{key}` is a test of its own: listed on its own.")
            self._result(out, key, item, f"{where}.{key}", name, test)

    def _members(
        self, panel: CatalogTest, key: str, value: Any, where: str
    ) -> list[tuple[Match, _Found, dict[str, Any]]] | None:
        """A member of ``panel`` and its result, or a sub-group of members (a CBC's
        ``Differential_Count``); None when ``key`` names no member."""
        member = self._member(panel, humanize(key))
        if member is not None:
            entry = self._group(member.test, value) if isinstance(value, dict) else None
            match = Match(where, humanize(key), member.test.name)
            return [(match, member, entry or _leaf(member.test, _text_of(value)))]
        if not isinstance(value, dict) or not value:
            return None
        found = []
        for sub_key, item in value.items():
            sub = self._member(panel, humanize(sub_key))
            if sub is None:
                return None
            match = Match(f"{where}.{sub_key}", humanize(sub_key), sub.test.name)
            found.append((match, sub, _leaf(sub.test, _text_of(item))))
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
                remarks.append(text if fold(label) in _GENERIC else f"{label}: {text}")
            else:
                written = self._unresolved(members, label, name, f"{where}.{key}")
                members[written] = _leaf(None, _text_of(item))
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
                if fold(humanize(label)) not in _GENERIC and isinstance(text, str):
                    text = f"{humanize(label)}: {text}"
                return _leaf(test, text)
        return _leaf(test, flatten(value))

    def _resolve(
        self, name: str, within: str | None, parent: CatalogTest | None = None
    ) -> _Found | None:
        """The catalog test ``name`` means, read in its group (``Culture`` under ``Stool
        Test`` is the stool culture), then on its own; each as written, then without a side
        (``X-ray of the Right Hand``). The group's own test is never the answer."""
        # A name that gives its own specimen (``Serum Glucose`` under a lumbar puncture) is read
        # as it says.
        # (``Blood`` alone under ``Urine Tests`` is what is measured: the urine blood.)
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

    def _place(
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
            self.unresolved.append(Unresolved(where, name, written, f"a second result for `{key}`"))
            key = _unique(out, written)
        else:
            self.matches.append(Match(where, name, key, found.inferred))
            self.names[(id(out), key)] = name
            if found.inferred:
                self.notes.append(f"`{where}`: `{name}` is read as the catalog's {key}.")
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
        written = _unique(siblings, todo(shown.replace("`", "")))
        self.unresolved.append(Unresolved(where, name, written, reason))
        return written

    def _investigations(self, results: dict[str, Any]) -> dict[str, Any]:
        listed = [k for k in results if not k.startswith(PLACEHOLDER)]
        shown = ", ".join(listed[:8]) + (", ..." if len(listed) > 8 else "")
        must = "tests that must be ordered"
        must += f" (the source gives results for: {shown})" if listed else ""
        return {
            "expected": {"must_order": [todo(must)], "optional": [], "should_not_order": []},
            "results": results,
            "results_generated_policy": todo(
                "normal_unless_listed (AgentClinic's rule: NORMAL READINGS for a test the "
                "record does not list) or unavailable_unless_listed; with normal_unless_listed, "
                "validation then names tests that would contradict a listed result (CB420)"
            ),
        }

    def _scoring(self) -> dict[str, Any]:
        weights = dict(_WEIGHTS)
        weights[todo("weigh the components for this case; these are the defaults")] = 0
        return {
            "weights": weights,
            "acceptable_answers": {
                "final_diagnosis": [todo("other names for the final diagnosis that count")]
            },
            "critical_safety_errors": [todo("errors that fail the answer whatever else it gets")],
        }

    def _leftovers(self, record: dict[str, Any], osce: dict[str, Any]) -> None:
        """Parts of the record the format has no field for: kept for the author, in the notes."""
        extra = [(k, v) for k, v in record.items() if k != OSCE]
        extra += [(f"{OSCE}.{k}", v) for k, v in osce.items() if k not in _KNOWN_OSCE]
        for key, value in extra:
            text = _joined(value)
            if text:
                self.notes.append(f"The source also gives `{key}`: {text}")

    def _provenance(self, source: str, licence: str) -> dict[str, Any]:
        lines = [
            f"Imported with `casebank import agentclinic` from {source}. Every TODO marks what "
            "the source does not give."
        ]
        lines += [f"- {note}" for note in self.notes]
        return {
            "source": "adapted",
            "licence": licence,
            "derived_from": f"{CITATION}, {source}",
            "notes": "\n".join(lines),
        }


_WEIGHTS: dict[str, float] = CASE_SCHEMA["scoring"]["schema"]["weights"]["meta"]["example"]


# --- text, names and values -----------------------------------------------------------------


def humanize(key: str) -> str:
    """A source key as words: ``Complete_Blood_Count`` -> ``Complete Blood Count``."""
    return " ".join(key.replace("_", " ").split())


def exam_label(key: str) -> str:
    """An examination section's name as the cases write it: ``Vital_Signs`` -> ``vital signs``
    (abbreviations such as ``ENT`` kept)."""
    words = humanize(key).split(" ")
    label = " ".join(w.lower() if w[:1].isupper() and w[1:].islower() else w for w in words)
    return label or "unnamed"


def prose(value: Any) -> str:
    """Text as written (stripped); other values as text (lists joined, objects flattened)."""
    if isinstance(value, str):
        return value.strip()
    if value is None:
        return ""
    return _joined(value)


def _joined(value: Any) -> str:
    """A value as one text, or empty when it says nothing (``N/A``, ``Not specified``)."""
    if isinstance(value, dict):
        parts = [f"{humanize(k)}: {t}" for k, v in value.items() if (t := _joined(v))]
        return " ".join(p if p.endswith((".", "?", "!")) else p + "." for p in parts)
    if isinstance(value, list):
        return "; ".join(_items(value))
    text = _scalar_text(value)
    return "" if _says_nothing(text) else text


def _items(value: Any) -> list[str]:
    """A list's items as texts, leaving out those that say nothing (``None reported``)."""
    items = value if isinstance(value, list) else [value] if value is not None else []
    texts = [_joined(item) for item in items]
    return [t for t in texts if t and not re.fullmatch(r"none( reported| known)?", _plain(t))]


def _scalar_text(value: Any) -> str:
    if isinstance(value, bool):
        return "yes" if value else "no"
    if value is None:
        return ""
    return str(value).strip()


def _plain(text: str) -> str:
    return " ".join(re.sub(r"[^\w\s/]", " ", text.casefold()).split())


def _says_nothing(text: str) -> bool:
    return not text or bool(_NOTHING.match(_plain(text)))


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


def _number(value: Any) -> int | float | None:
    """A JSON number a case can hold exactly (an integer beyond 2^53 is kept as text)."""
    if isinstance(value, bool) or not isinstance(value, int | float):
        return None
    return value if abs(value) <= values.MAX_EXACT_INTEGER or isinstance(value, float) else None


def _text_of(value: Any) -> Any:
    """A result value: a number as it is, anything else as text."""
    if _number(value) is not None:
        return value
    if isinstance(value, dict):
        return flatten(value)
    return prose(value)


def _unwrap(value: Any) -> Any:
    """``{"Results": {...}}`` is the group itself."""
    while isinstance(value, dict) and len(value) == 1:
        ((label, inner),) = value.items()
        if not isinstance(inner, dict) or fold(humanize(label)) not in _GENERIC:
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


def _unique(siblings: dict[str, Any], key: str) -> str:
    if key not in siblings:
        return key
    n = 2
    while f"{key} #{n}" in siblings:
        n += 1
    return f"{key} #{n}"


def _sided(entry: dict[str, Any], side: str | None) -> dict[str, Any]:
    return {**entry, "laterality": side} if side else entry


def _sex(demographics: str) -> str | None:
    text = demographics.casefold()
    female = bool(re.search(r"\b(female|woman|girl|lady|gravida|primigravida|mother)\b", text))
    male = bool(re.search(r"\b(male|man|boy|gentleman)\b", text))
    if female != male:
        return "female" if female else "male"
    return None


def _finding(value: Any) -> Any:
    """A vital sign: a measured finding where the text is a measurement, else the text."""
    if _number(value) is not None:
        return {"value": value}
    text = prose(value)
    if not text:
        return None
    pressure = values.blood_pressure(text)
    if pressure is not None:
        reading, flag = pressure
        unit = "mmHg" if re.search(r"mm\s*Hg", text) else None
        return _drop_none(
            {"value": reading, "unit": unit, "flag": flag, "note": f"Source text: {text}"}
        )
    measured = values.measurement(text)
    if measured is None:
        return text
    return _drop_none(
        {
            "value": measured.value,
            "unit": measured.unit,
            "flag": measured.flag,
            "note": f"Source text: {text}",
        }
    )


def _leaf(test: CatalogTest | None, value: Any) -> dict[str, Any]:
    """One result from one value: a lab value where a number with a unit the test accepts is
    certain, a status where the text stands in for a result, else qualitative or text."""
    if _number(value) is not None:
        if test is None or test.numeric:
            return _lab_value(value, None, None, f"Source text: {value}")
        value = str(value)
    text = prose(value)
    status = values.status_of(text)
    if status is not None:
        return {"type": _text_type(test, text), "status": status, "note": f"Source text: {text}"}
    measured = values.measurement(text)
    if measured is not None and _takes(test, measured.unit):
        return _lab_value(measured.value, measured.unit, measured.flag, f"Source text: {text}")
    if re.fullmatch(r"\s*[-+]?\d+(\.\d+)?\s*", text) and (test is None or test.numeric):
        number = values.number(text.strip())
        if number is not None:
            return _lab_value(number, None, None, f"Source text: {text}")
    kind = _text_type(test, text)
    flag = values.flag_of(text) if kind == "qualitative" else None
    return _drop_none({"type": kind, "value": text, "flag": flag})


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
    return _drop_none(
        {
            "type": "lab_value",
            "value": number,
            "unit": unit or todo("unit (the source gives the number alone)"),
            "reference_range": todo("reference range (the source gives none)"),
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
    return next((kind for kind in preferred if kind in allowed), preferred[0])


def _drop_none(entry: dict[str, Any]) -> dict[str, Any]:
    return {k: v for k, v in entry.items() if v is not None}
