"""AgentClinic NEJM image records (``agentclinic_nejm*.jsonl``) as draft cases.

::

    {"image_url": "https://csvc.nejm.org/ContentServer/images?id=IC20240111&width=1500",
     "question": "A 55-year-old woman presented ... On physical examination, ... What is the
                  most likely diagnosis?",
     "patient_info": "For your role as a patient, you are a 55-year-old woman who ...",
     "physical_exams": "1. Dermoscopy findings: ... 2. Skin biopsy results: ...",
     "answers": [{"text": "Contact dermatitis", "correct": false}, ...],
     "type": ["dermatology"]}

- ``question``, the question stem, is the examiner's: it is quoted in ``provenance.notes`` and
  the title's placeholder, gives the patient's age and sex, and its examination sentences
  ("On physical examination, ...") become ``physical_exam``.
- ``patient_info`` is what the simulated patient knows: the history of present illness.
- ``physical_exams`` is what AgentClinic's measurement agent reads out on request: each
  ``Label: text`` item in it is a result under its catalog name (or a placeholder key that
  keeps the label), an examination item is a finding, and prose that names no test is one
  result under a placeholder key. Text that says the source has no results ("The provided
  text does not contain specific instrument readings") is no result.
- ``answers``: the correct one is the final diagnosis; the differential is it, then the
  distractors, in the source's order (not a ranking: the author ranks them).
- ``image_url`` is the image the question is about: a result with the image as an attachment
  (its name from the image's id), which a maintainer fetches later; nothing is fetched here.
"""

from __future__ import annotations

import re
from typing import Any
from urllib.parse import parse_qs, urlsplit

from casebank.format.scaffold import is_stand_in
from casebank.importers.base import Conversion, Job, Log, Record, RecordError
from casebank.importers.draft import blank, finish, start
from casebank.importers.exam import stand_in_finding
from casebank.importers.results import Results, investigations, unique
from casebank.importers.text import age_of, exam_label, kind, sex_of

from .records import CITATION, COMMAND, NEJM_HINT, POLICY

_SENTENCE = re.compile(r"(?<=[.?!])\s+(?=[A-Z0-9])")
# A sentence that reports the examination, not a test ("Microscopic examination of urine").
_EXAM_SENTENCE = re.compile(
    r"\b(on|at|upon|during) (the )?(\w+ )?exam(ination)?\b|\b(physical|clinical|skin|"
    r"neurologic(al)?|ophthalmologic|abdominal|cardiac) exam(ination)? (showed|revealed|was|"
    r"disclosed|demonstrated|found|noted)|^(examination|exam) (of|showed|revealed)",
    re.IGNORECASE,
)
_TEST_WORDS = re.compile(
    r"microscop|histolog|biops|stain|specimen|smear|imaging|\bCT\b|MRI|radiograph|ultrason|"
    r"\bscan\b|tomograph|angiogra|endoscop|culture|laborator|level of|assay",
    re.IGNORECASE,
)
# AgentClinic's words for "the case has no test results".
_NO_RESULTS = re.compile(
    r"\b(does not|doesn't|did not|do not) (contain|provide|include|mention|specify|give|list)\b"
    r"|\bno (specific |numerical |further )?(instrument readings|test results|readings)\b"
    r"|\bnot (mentioned|provided|specified|available|included|given) in the (provided |given )?"
    r"(text|case|report)|\bcannot (generate|provide|specify|extract)|\bwithout (additional|"
    r"further) information",
    re.IGNORECASE,
)
# Where a text begins with "For your role as a patient, ..." (AgentClinic's prompt to the actor).
_ROLE = re.compile(
    r"^(for (your|the) (role as (a |the )?patient( actor)?|patient actor)[^:,.]*[:,]\s*)",
    re.IGNORECASE,
)
_ITEM_BREAK = re.compile(r"(?:^|\s)(?:[-•*]|\d{1,2}[.)])\s+(?=[A-Z(])")
_RUN_IN = re.compile(r"^([^:]{2,80}:\s+.*\S)\s+([A-Z][^:.]{2,60}):$")
_ITEM = re.compile(r"^([^:]{2,80}?):\s+(\S.*)$", re.DOTALL)
_LEAD_IN = re.compile(
    r"\b(includ\w*|following|information|case report|instrument|extracted)\b", re.IGNORECASE
)
_EXAM_LABEL = re.compile(
    r"\b(exam|examination|auscultation|palpation|inspection|percussion|general appearance)\b",
    re.IGNORECASE,
)
_TRAILING = frozenset(
    ["findings", "finding", "results", "result", "report", "readings", "reading", "shows"]
)


def diagnosis(record: Record) -> str:
    return _answers(record.data)[0]


def convert(record: Record, job: Job) -> Conversion:
    """The draft case for one NEJM record."""
    log = Log()
    source = record.data
    stem = _text(source, "question", required=True)
    answer, distractors = _answers(source)
    data = start(job.case_id)
    first = _SENTENCE.split(stem)[0]
    data["metadata"]["title"] = blank("metadata.title", f"the source's question: {first}")
    types = _types(source)
    if types:
        data["metadata"]["specialty"] = blank(
            "metadata.specialty", f"the source's image type: {', '.join(types)}"
        )
    _patient(data["patient"], first, _text(source, "patient_info"), log)
    _story(data["presentation"], first, _text(source, "patient_info"), log)
    reading = _Readings(job, log)
    reading.read(_text(source, "physical_exams"))
    exam = _exam(stem, reading.findings, log)
    if exam is not None:
        data["physical_exam"] = exam
    _truth(data["ground_truth"], answer, distractors, log)
    image = _image(source, job.case_id, types, log)
    if image is not None:
        reading.results.update(image)
    investigations(reading.results, data["investigations"], POLICY)
    log.notes.append(f"The source's question: {stem}")
    citation = f"{CITATION}, {job.source}"
    data = finish(data, command=COMMAND, citation=citation, licence=job.licence, notes=log.notes)
    return Conversion.of(job.case_id, data, log)


def _truth(truth: dict[str, Any], answer: str, distractors: list[str], log: Log) -> None:
    truth["final_diagnosis"] = answer
    truth["differential"] = [answer, *distractors]
    if distractors:
        log.notes.append(
            "ground_truth.differential is the diagnosis, then the source's other answers in its "
            "order: rank them, and add what else belongs."
        )


def _text(source: dict[str, Any], key: str, required: bool = False) -> str:
    value = source.get(key)
    if value is None and not required:
        return ""
    if not isinstance(value, str) or (required and not value.strip()):
        found = "missing" if value is None else f"a {kind(value)}" if value != "" else "empty"
        raise RecordError(f"`{key}` is {found}, not text", NEJM_HINT)
    return value.strip()


def _answers(source: dict[str, Any]) -> tuple[str, list[str]]:
    """The correct answer, and the others in order."""
    answers = source.get("answers")
    if not isinstance(answers, list) or not answers:
        found = f"a {kind(answers)}" if answers != [] else "empty"
        raise RecordError(f"`answers` is {found}, not a list of answers", NEJM_HINT)
    correct: list[str] = []
    others: list[str] = []
    for i, answer in enumerate(answers):
        text = answer.get("text") if isinstance(answer, dict) else None
        right = answer.get("correct") if isinstance(answer, dict) else None
        if not isinstance(text, str) or not text.strip() or not isinstance(right, bool):
            raise RecordError(
                f"`answers[{i}]` is not an answer with `text` and `correct` (true or false)",
                'write each answer as {"text": "Exogenous ochronosis", "correct": true}',
            )
        (correct if right else others).append(text.strip())
    if len(correct) != 1:
        raise RecordError(
            f"`answers` marks {len(correct)} answers correct, not one",
            'mark the diagnosis the case is built around `"correct": true`, the others false',
        )
    return correct[0], others


def _types(source: dict[str, Any]) -> list[str]:
    value = source.get("type")
    if value is None:
        return []
    if not isinstance(value, list) or not all(isinstance(t, str) for t in value):
        raise RecordError(f"`type` is a {kind(value)}, not a list of words", NEJM_HINT)
    return [t.strip() for t in value if t.strip()]


def _patient(patient: dict[str, Any], first: str, info: str, log: Log) -> None:
    """Age and sex from the stem's first sentence (or the patient's script)."""
    for words in (first, info):
        age = age_of(words)
        if age is not None:
            patient["age"] = age.years
            if age.written is not None:
                log.notes.append(f"patient.age {age.years} (years) is `{age.written}`.")
            break
    else:
        patient["age"] = blank("patient.age", f"the source says: {first}")
    patient["sex"] = sex_of(first) or sex_of(info) or blank("patient.sex", f"the source: {first}")
    patient["persona"] = blank("patient.persona", f"the source says: {first}")
    patient["allergies"] = [blank("patient.allergies", "the source does not say")]


def _story(presentation: dict[str, Any], first: str, info: str, log: Log) -> None:
    presentation["chief_complaint"] = blank(
        "presentation.chief_complaint", f"the source's question begins: {first}"
    )
    script = _ROLE.sub("", info).strip()
    if script and is_stand_in(script):
        log.notes.append(f"`patient_info` says only `{script}`: the history is a placeholder.")
    elif script:
        presentation["history_of_present_illness"] = script[:1].upper() + script[1:]
        log.notes.append(
            "presentation.history_of_present_illness is the source's script for the patient "
            "actor (`patient_info`), addressed to the actor: retell it as the patient's story."
        )


def _exam(stem: str, findings: dict[str, Any], log: Log) -> Any:
    """The examination the stem reports, and examination items of ``physical_exams``."""
    said = [
        s
        for s in _SENTENCE.split(stem)
        if _EXAM_SENTENCE.search(s) and not _TEST_WORDS.search(s) and not s.endswith("?")
    ]
    if said:
        log.notes.append(
            "physical_exam is from the source's question: check it names no image panel "
            "(`(left)`, `as shown`)."
        )
    if not findings:
        return " ".join(said) if said else None
    return {"examination": " ".join(said), **findings} if said else findings


class _Readings:
    """``physical_exams``: items as results under catalog names, examination items as
    findings, prose that names no test as one result for the author to split."""

    def __init__(self, job: Job, log: Log) -> None:
        self.log = log
        self.reader = Results(job.catalog, log)
        self.results: dict[str, Any] = {}
        self.findings: dict[str, Any] = {}

    def read(self, text: str) -> None:
        if not text or is_stand_in(text):
            self.log.notes.append("The record gives no test results.")
            return
        groups, prose = _itemize(text.replace("**", ""))
        remarks = [p for p in prose if _NO_RESULTS.search(p)]
        prose = [p for p in prose if p not in remarks]
        for remark in remarks:
            self.log.notes.append(f"`physical_exams` says: {remark}")
        for heading, items in groups:
            for label, value in items:
                self._item(heading, label, value)
        if prose:
            key = unique(self.results, blank("investigations.results", _PROSE))
            self.results[key] = {"type": "text_report", "value": "\n".join(prose)}
            self.log.notes.append("`physical_exams` gives some results as prose: split them.")

    def _item(self, heading: str | None, label: str, value: str) -> None:
        where = f"physical_exams.{label}"
        name = _name(label)
        if _EXAM_LABEL.search(name) and self.reader.resolve(name, heading) is None:
            key = unique(self.findings, exam_label(name))
            self.findings[key] = stand_in_finding(value) if is_stand_in(value) else value
            return
        self.reader.result(self.results, name, value, where, heading)


_PROSE = "for the tests this text reports: the source gives them as prose, list each on its own"


def _itemize(text: str) -> tuple[list[tuple[str | None, list[tuple[str, str]]]], list[str]]:
    """``Label: text`` items grouped under their headings (``Imaging results:``), and the
    sentences that are no item."""
    groups: list[tuple[str | None, list[tuple[str, str]]]] = [(None, [])]
    prose: list[str] = []
    for segment in _segments(text):
        if segment.endswith(":"):
            heading = segment[:-1].strip()
            lead_in = len(heading) > 40 or _LEAD_IN.search(heading)
            groups.append((None if lead_in else heading, []))
            continue
        match = _ITEM.match(segment)
        if match is not None and ". " not in match.group(1):
            label, value = match.group(1).strip(), match.group(2).strip()
            if label.casefold() in ("result", "results") and prose:
                label = prose.pop()  # "Ultrasound of the abdomen - Result: Normal"
            groups[-1][1].append((label, value))
        else:
            prose.append(segment)
    return [g for g in groups if g[1]], prose


def _segments(text: str) -> list[str]:
    """The text's lines and list items; an item run into the next heading ("Tests for HIV:
    Negative Imaging results:") is two segments."""
    found = []
    for line in text.splitlines():
        for part in _ITEM_BREAK.split(line):
            part = part.strip(" -")
            tail = _RUN_IN.match(part) if part.endswith(":") else None
            found += [tail.group(1), f"{tail.group(2)}:"] if tail else [part] if part else []
    return found


def _name(label: str) -> str:
    """A label as a test name: ``Skin biopsy results`` is ``Skin biopsy``."""
    words = label.split()
    while len(words) > 1 and words[-1].casefold() in _TRAILING:
        words.pop()
    return " ".join(words)


def _image(
    source: dict[str, Any], case_id: str, types: list[str], log: Log
) -> dict[str, Any] | None:
    """The image as a result that names it as an attachment, for a maintainer to fetch."""
    url = _text(source, "image_url")
    if not url:
        return None
    parts = urlsplit(url)
    if parts.scheme not in ("http", "https") or not parts.netloc:
        raise RecordError("`image_url` is not a web address", NEJM_HINT)
    ids = parse_qs(parts.query).get("id") or [parts.path.rsplit("/", 1)[-1]]
    image_id = re.sub(r"[^A-Za-z0-9._-]", "", ids[0]).strip(".") or "image"
    file = f"{image_id}.jpg"
    shows = f"; the source's image type: {', '.join(types)}" if types else ""
    key = blank("investigations.results", f"for the test image {image_id} shows{shows}")
    log.notes.append(
        f"The image {image_id} is at {url}: fetch it into cases/{case_id}/attachments/{file} "
        "(rename it, here and in `attachments`, if it is not a JPEG). It is the publisher's "
        "image, not under AgentClinic's licence: check that you may include it. CB422 points "
        "at it until the file is there."
    )
    value = blank("investigations.results.*.value", "what the image shows", example=False)
    return {key: {"type": "text_report", "value": value, "attachments": [file]}}
