"""AgentClinic OSCE records (``agentclinic_medqa*.jsonl``) as draft cases.

::

    {"OSCE_Examination": {
        "Objective_for_Doctor": "...",
        "Patient_Actor": {"Demographics": "35-year-old female", "History": "...",
                          "Symptoms": {"Primary_Symptom": "...", "Secondary_Symptoms": [...]},
                          "Past_Medical_History": "...", "Social_History": "...",
                          "Review_of_Systems": "..."},
        "Physical_Examination_Findings": {"Vital_Signs": {...}, "Neurological_Examination": {...}},
        "Test_Results": {"Complete_Blood_Count": {"WBC": "15,000 /μL (elevated)", ...}, ...},
        "Correct_Diagnosis": "..."}}

Each part of a record goes to its field of the case format (docs/importing.md has the table);
the examination and the results are read by the shared readers (``importers.exam``,
``importers.results``). Everything else is the scaffold's placeholder.
"""

from __future__ import annotations

import re
from typing import Any, NamedTuple

from casebank.format.catalog import fold
from casebank.format.scaffold import is_stand_in
from casebank.importers import exam
from casebank.importers.base import Conversion, Job, Log, Record, RecordError
from casebank.importers.draft import blank, finish, start
from casebank.importers.results import Results, investigations
from casebank.importers.text import (
    age_of,
    humanize,
    items,
    joined,
    kind,
    plain,
    prose,
    says_nothing,
    sex_of,
)

from .records import CITATION, COMMAND, OSCE, POLICY

KNOWN = (
    "Objective_for_Doctor",
    "Patient_Actor",
    "Physical_Examination_Findings",
    "Test_Results",
    "Correct_Diagnosis",
)
# Patient_Actor fields with a place of their own; any other goes into the history.
_ACTOR_FIELDS = frozenset(
    [
        *("Demographics", "History", "Symptoms", "Past_Medical_History", "Social_History"),
        *("Family_History", "Review_of_Systems", "Current_Medications", "Medications"),
        "Drug_History",
    ]
)
_NO_HISTORY = re.compile(
    r"^(no|none|nil)( significant| notable| relevant| known)?( past| previous| prior)?"
    r"( medical| medical or surgical| medical or psychiatric)? (history|illnesses)"
    r"( reported| provided)?$"
)


def diagnosis(record: Record) -> str:
    value = record.data[OSCE].get("Correct_Diagnosis")
    if isinstance(value, str) and value.strip():
        return value.strip()
    found = "missing" if value is None else f"a {kind(value)}" if value != "" else "empty"
    raise RecordError(
        f"`{OSCE}.Correct_Diagnosis` is {found}",
        "give the diagnosis the case is built around as text, e.g. "
        '"Correct_Diagnosis": "Myasthenia gravis"',
    )


def convert(record: Record, job: Job) -> Conversion:
    """The draft case for one OSCE record."""
    log = Log()
    osce: dict[str, Any] = record.data[OSCE]
    actor = _section(osce, "Patient_Actor", log)
    data = start(job.case_id)
    _metadata(data["metadata"], osce)
    _patient(data["patient"], actor, log)
    _presentation(data["presentation"], actor, log)
    found = _exam(osce.get("Physical_Examination_Findings"), log)
    if found is not None:
        data["physical_exam"] = found
    data["ground_truth"]["final_diagnosis"] = diagnosis(record)
    results = Results(job.catalog, log).read(osce.get("Test_Results"), "Test_Results")
    investigations(results, data["investigations"], POLICY)
    _leftovers(record.data, osce, log)
    citation = f"{CITATION}, {job.source}"
    data = finish(data, command=COMMAND, citation=citation, licence=job.licence, notes=log.notes)
    return Conversion.of(job.case_id, data, log)


def _section(osce: dict[str, Any], key: str, log: Log) -> dict[str, Any]:
    value = osce.get(key)
    if value is None:
        log.notes.append(f"The record has no `{key}`: its fields are placeholders.")
        return {}
    if not isinstance(value, dict):
        raise RecordError(
            f"`{OSCE}.{key}` is a {kind(value)}, not an object",
            f'write it as an object of fields, e.g. "{key}": {{"Demographics": "..."}}',
        )
    return value


def _metadata(metadata: dict[str, Any], osce: dict[str, Any]) -> None:
    objective = prose(osce.get("Objective_for_Doctor"))
    if objective:
        metadata["title"] = blank("metadata.title", f"the source's objective: {objective}")


def _patient(patient: dict[str, Any], actor: dict[str, Any], log: Log) -> None:
    demographics = prose(actor.get("Demographics"))
    said = f"the source says: {demographics}" if demographics else ""
    age = age_of(demographics)
    patient["age"] = age.years if age is not None else blank("patient.age", said)
    if age is not None and age.written is not None:
        log.notes.append(f"patient.age {age.years} (years) is `{age.written}` in the source.")
    patient["sex"] = sex_of(demographics) or blank("patient.sex", said)
    patient["persona"] = blank("patient.persona", said)
    pmh, pmh_meds = _history(actor.get("Past_Medical_History"), log)
    if pmh is not None:
        patient["pmh"] = pmh
    meds = pmh_meds + _meds(actor)
    if meds:
        patient["meds"] = meds
    patient["allergies"] = [blank("patient.allergies", "the source does not say")]
    for key, path in (("Social_History", "social_history"), ("Family_History", "family_history")):
        text = _told(actor.get(key), f"patient.{path}", log, f"Patient_Actor.{key}")
        if text:
            patient[path] = [text] if path == "family_history" else text


def _told(value: Any, path: str, log: Log, where: str) -> str:
    """What the patient tells of one part of the history; a stand-in (``Not provided``) is the
    field's placeholder, for the author to fill in or delete."""
    text = joined(value)
    if text:
        return text
    said = prose(value) if not isinstance(value, dict | list) else ""
    if said and is_stand_in(said):
        log.notes.append(f"`{where}` says only `{said}`: a placeholder.")
        context = f"the source says only `{said}`; fill it in, or delete the field"
        return blank(path, context, example=False)
    return ""


def _history(value: Any, log: Log) -> tuple[list[dict[str, Any]] | None, list[dict[str, Any]]]:
    """Past medical history as conditions, and any medications listed inside it."""
    if value is None:
        return None, []
    if isinstance(value, dict):
        conditions: list[dict[str, Any]] = []
        meds: list[dict[str, Any]] = []
        for key, item in value.items():
            label = humanize(key)
            if fold(label) in ("medications", "current medications", "drugs"):
                meds += [{"name": t} for t in items(item)]
            elif isinstance(item, list):
                conditions += [{"condition": t, "notes": label} for t in items(item)]
            elif text := joined(item):
                conditions.append({"condition": label, "status": text})
        return conditions, meds
    if isinstance(value, list):
        return [{"condition": t} for t in items(value)], []
    text = prose(value)
    if text and is_stand_in(text):
        log.notes.append(f"`Patient_Actor.Past_Medical_History` says only `{text}`.")
        said = f"the source says only `{text}`; write [] for none"
        return [{"condition": blank("patient.pmh.[].condition", said, example=False)}], []
    if not text or says_nothing(text):
        return None, []
    if _NO_HISTORY.match(plain(text)):
        log.notes.append(f"patient.pmh is empty: the source says `{text}`.")
        return [], []
    return [{"condition": text}], []


def _meds(actor: dict[str, Any]) -> list[dict[str, Any]]:
    meds: list[dict[str, Any]] = []
    for key in ("Current_Medications", "Medications"):
        value = actor.get(key)
        if isinstance(value, list):
            meds += [{"name": t} for t in items(value)]
        elif isinstance(value, str) and re.fullmatch(r"[\w/ -]{1,40}", value.strip()):
            meds += [] if says_nothing(value.strip()) else [{"name": value.strip()}]
    return meds


def _presentation(presentation: dict[str, Any], actor: dict[str, Any], log: Log) -> None:
    symptoms = actor.get("Symptoms")
    symptoms = symptoms if isinstance(symptoms, dict) else {"Primary_Symptom": symptoms}
    complaint = prose(symptoms.get("Primary_Symptom"))
    if complaint and not says_nothing(complaint):
        presentation["chief_complaint"] = complaint
    story = _story(actor, symptoms, log)
    if story.history:
        presentation["history_of_present_illness"] = "\n".join([story.history, *story.more])
    elif story.more:
        said = "the source gives no history; what it gives besides is below"
        presentation["history_of_present_illness"] = "\n".join(
            [blank("presentation.history_of_present_illness", said), *story.more]
        )


class _Story(NamedTuple):
    history: str  # the history itself
    more: list[str]  # paragraphs of what else the patient would tell


def _story(actor: dict[str, Any], symptoms: dict[str, Any], log: Log) -> _Story:
    """The history, then what else the patient would tell: further symptoms, the review of
    systems, medications given as prose, and any field the format has no place for. One
    paragraph a line: a folded block shows them a blank line apart."""
    history = prose(actor.get("History"))
    more = []
    others = items(symptoms.get("Secondary_Symptoms"))
    if others:
        more.append("Other symptoms: " + "; ".join(others) + ".")
    for key, value in symptoms.items():
        if key not in ("Primary_Symptom", "Secondary_Symptoms") and (text := joined(value)):
            more.append(f"{humanize(key)}: {text}")
    review = joined(actor.get("Review_of_Systems"))
    if review:
        more.append(f"Review of systems: {review}")
    for key in ("Medications", "Drug_History"):
        value = actor.get(key)
        if isinstance(value, str) and not _meds({key: value}) and (text := joined(value)):
            more.append(f"Medications: {text}")
    for key, value in actor.items():
        if key not in _ACTOR_FIELDS and (text := joined(value)):
            more.append(f"{humanize(key)}: {text}")
            log.notes.append(f"`Patient_Actor.{key}` is in the history of present illness.")
    if says_nothing(history):
        history = ""
    return _Story(history, more)


def _exam(value: Any, log: Log) -> Any:
    """The examination as text or sections; None when the record gives none (the scaffold's
    placeholder stays)."""
    if isinstance(value, str) and value.strip() and not says_nothing(value.strip()):
        return value.strip()
    if isinstance(value, dict):
        found = exam.sections(value, "Physical_Examination_Findings", log)
        if found:
            return found
    elif value is not None and not isinstance(value, str):
        raise RecordError(
            f"`{OSCE}.Physical_Examination_Findings` is a {kind(value)}",
            "write the examination as an object of sections, or as text",
        )
    log.notes.append("The record gives no examination findings.")
    return None


def _leftovers(record: dict[str, Any], osce: dict[str, Any], log: Log) -> None:
    """Parts of the record the format has no field for: kept for the author, in the notes."""
    extra = [(k, v) for k, v in record.items() if k != OSCE]
    extra += [(f"{OSCE}.{k}", v) for k, v in osce.items() if k not in KNOWN]
    for key, value in extra:
        text = joined(value)
        if text:
            log.notes.append(f"The source also gives `{key}`: {text}")
