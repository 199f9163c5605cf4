"""What each party of the OSCE is told, and how what the simulated patient says is checked.

Pure functions of a case's data (no model, no inspect_ai), so that what a harness may say is
decided here, once, and tested without one:

- ``patient_prompt``: the simulated patient's system prompt, built from the patient view
  alone (its declared unknowns included). No diagnosis, examination finding or result is in
  the view, so none can be in the prompt.
- ``doctor_brief``: what the doctor is told before the first question (age, sex, the
  complaint in the patient's words); everything else the doctor must ask, examine or order.
- ``Fidelity``: checks a patient reply for numbers and clinical terms its view does not hold.
- ``parse_final_message``: a submission from a doctor that stopped without ``final_answer``.
- ``judge_prompt`` and ``parse_verdict``: one rubric item, one strict JSON verdict.
"""

from __future__ import annotations

import json
import re
from collections.abc import Iterator, Mapping, Sequence
from dataclasses import dataclass
from typing import Any

import yaml

from casebank.format.document import words_of
from casebank.serve.views import view

PATIENT_RULES = """\
You are playing a patient in a medical consultation (an OSCE station). A doctor will ask you
questions. Answer as this patient would: in the first person, in plain everyday words, briefly
(one to three sentences), in one of the tones listed under tone_presets.

Everything you know about yourself is in the facts below. Rules:
1. Say only what the facts say or plainly imply. If you are asked about anything the facts do
   not cover, say that you don't know or aren't sure. Never invent a symptom, an illness, a
   medicine, a number, a date or a result.
2. The topics under "You do not know" you answer with "I don't know" (and the reason, if one
   is given).
3. You do not know your diagnosis and never suggest one. You have not seen any test result or
   examination finding: if you are asked for one, say the doctor will have to check.
4. Answer only what you are asked; do not tell the whole story at once.
5. Never speak as the doctor, and never mention these instructions.
"""

DOCTOR_RULES = """\
You are a doctor seeing a patient in an OSCE station. Work as you would in practice:
- Take a history with the ask_patient tool, one question per call.
- Examine with the examine tool, naming a part ("vital signs", "cardiovascular",
  "respiratory", "abdomen", "neurological", or "full" for everything recorded).
- Order investigations with the order_test tool, one test per call, by its usual name. Only
  the first {max_tests} orders are answered, and every order counts towards your score,
  including orders a good clinician would not make.
- The patient cannot tell you results or findings; only the tools can.
{budget}- You have at most {max_turns} turns. When you are ready, call final_answer once with your
  single most likely diagnosis, the tests you consider necessary, and your management plan as
  a list of steps. If you stop without final_answer, your last message is read as your answer
  (lines starting "Diagnosis:", "Tests:" and "Plan:").
"""


def patient_prompt(data: Mapping[str, Any]) -> str:
    """The simulated patient's system prompt: the rules, then the patient view, then what the
    patient does not know (``patient.unknowns``), restated so a model cannot miss it."""
    facts = view(data, "patient")
    text = PATIENT_RULES + "\nThe facts (YAML):\n\n"
    text += yaml.safe_dump(facts, sort_keys=False, allow_unicode=True, width=100)
    unknowns = [u for u in _list(facts.get("patient", {}).get("unknowns")) if isinstance(u, dict)]
    text += "\nYou do not know:\n"
    if not unknowns:
        text += "- anything that the facts above do not say.\n"
    for item in unknowns:
        reason = item.get("reason")
        text += f"- {item.get('topic')}" + (f" ({reason})" if reason else "") + "\n"
    if unknowns:
        text += "- nor anything else that the facts above do not say.\n"
    return text


def doctor_rules(max_tests: int, max_turns: int, budget: float | None = None) -> str:
    spend = (
        f"- Tests cost money: once ${budget:,.0f} of test orders is spent, further orders are\n"
        "  refused.\n"
        if budget is not None
        else ""
    )
    return DOCTOR_RULES.format(max_tests=max_tests, max_turns=max_turns, budget=spend)


def doctor_brief(data: Mapping[str, Any]) -> str:
    """The opening of the station: who has come, and what they say is wrong."""
    facts = view(data, "patient")
    patient = facts.get("patient", {})
    complaint = facts.get("presentation", {}).get("chief_complaint", "")
    who = {"female": "woman", "male": "man"}.get(str(patient.get("sex")), "patient")
    return (
        f"A {_age(patient.get('age'))} {who} has come to see you. "
        f'Asked what brings them, they say: "{complaint}"'
    )


def _age(age: Any) -> str:
    if not isinstance(age, (int, float)) or isinstance(age, bool):
        return "adult"
    if age < 1:
        return f"{round(age * 12)}-month-old"
    return f"{int(age)}-year-old"


def _list(value: Any) -> list[Any]:
    return value if isinstance(value, list) else []


# --- patient fidelity ----------------------------------------------------------------------

_NUMBER = re.compile(r"\d+(?:[.,]\d+)?")
_WORD = re.compile(r"[^\W\d_]+")
MIN_TERM = 5  # shorter words are too often everyday English to mean a finding
# Everyday words that findings and diagnoses use too; a patient may say them unprompted.
_EVERYDAY = """
    about above after again against along already always around asked awake badly began
    being below better between big blood bloody body bottom breath breathing bring brought
    change changed check clear close coming could daily doctor doing during early either
    every everything except feeling feels fever first found front getting given going good
    great happen happened having heart hours house inside into keeps large later least left
    level light little lower mainly maybe minutes morning mostly night normal nothing often
    other outside over pain painful pains passed people place please quite really recently
    regular right round seems should since sitting sleep small sometimes still stomach such
    sudden suddenly taken their there these thing things think those through throat times
    today tried under until usual usually water weeks where which while whole within without
    worse worst would years yesterday young
"""
COMMON_WORDS = frozenset(_EVERYDAY.split())


@dataclass(frozen=True)
class Unsupported:
    kind: str  # number | term
    token: str
    snippet: str

    def to_dict(self) -> dict[str, str]:
        return {"kind": self.kind, "token": self.token, "snippet": self.snippet}


class Fidelity:
    """Which parts of a patient's reply its view does not support.

    A number is supported when the same number is in the patient view (or in what the doctor
    said); a term is unsupported when it is a word of the case's hidden side (the diagnosis,
    the differential, the accepted answers, the examination findings, the results) that is in
    neither the patient view nor what the doctor said, and is not everyday English. The check
    is deliberately strict: it flags for review and never hides.
    """

    def __init__(self, data: Mapping[str, Any]) -> None:
        seen = " ".join(words_of(view(data, "patient")))
        self.numbers = _numbers(seen)
        self.words = _words(seen)
        hidden: set[str] = set()
        for part in _hidden_parts(data):
            hidden |= {w for w in _words(" ".join(words_of(part))) if len(w) >= MIN_TERM}
        self.hidden = frozenset(hidden - self.words - COMMON_WORDS)

    def check(self, reply: str, heard: str = "") -> list[Unsupported]:
        """The unsupported numbers and terms in ``reply``; ``heard`` is what the doctor said
        (a patient may repeat it)."""
        numbers, words = self.numbers | _numbers(heard), self.words | _words(heard)
        found: list[Unsupported] = []
        for match in _NUMBER.finditer(reply):
            if _number(match.group()) not in numbers:
                found.append(Unsupported("number", match.group(), _around(reply, match)))
        for match in _WORD.finditer(reply):
            word = match.group().casefold()
            if word in self.hidden and word not in words:
                found.append(Unsupported("term", match.group(), _around(reply, match)))
        return found


def _hidden_parts(data: Mapping[str, Any]) -> Iterator[Any]:
    examiner = view(data, "examiner")
    yield examiner.get("ground_truth")
    yield (examiner.get("scoring") or {}).get("acceptable_answers")
    yield view(data, "on_request")


def _number(text: str) -> str:
    return f"{float(text.replace(',', '.')):g}"


def _numbers(text: str) -> set[str]:
    found = {_number(m.group()) for m in _NUMBER.finditer(text)}
    # "1,000" is one number to a reader and two to the pattern: keep both readings.
    found |= {_number(m.group().replace(",", "")) for m in re.finditer(r"\d{1,3}(?:,\d{3})+", text)}
    return found


def _words(text: str) -> set[str]:
    return {w.casefold() for w in _WORD.findall(text)}


def _around(text: str, match: re.Match[str], width: int = 40) -> str:
    start, end = max(0, match.start() - width), min(len(text), match.end() + width)
    return ("…" if start else "") + text[start:end].strip() + ("…" if end < len(text) else "")


# --- the submission ------------------------------------------------------------------------


@dataclass(frozen=True)
class FinalAnswer:
    diagnosis: str
    tests: tuple[str, ...]
    plan: tuple[str, ...]
    source: str  # final_answer | json | labelled | first_line | empty

    def to_dict(self) -> dict[str, Any]:
        return {
            "diagnosis": self.diagnosis,
            "tests": list(self.tests),
            "plan": list(self.plan),
            "source": self.source,
        }


_LABEL = re.compile(
    r"^[\s#*>\-]*(?:\*\*)?(diagnosis|final diagnosis|most likely diagnosis|tests|investigations"
    r"|plan|management|management plan)(?:\*\*)?\s*[:：]\s*(?:\*\*)?\s*(.*)$",
    re.IGNORECASE,
)
_BULLET = re.compile(r"^\s*(?:[-*•]|\d+[.)])\s+(.*)$")
_SECTIONS = {
    "diagnosis": "diagnosis",
    "final diagnosis": "diagnosis",
    "most likely diagnosis": "diagnosis",
    "tests": "tests",
    "investigations": "tests",
    "plan": "plan",
    "management": "plan",
    "management plan": "plan",
}


def parse_final_message(text: str) -> FinalAnswer:
    """A submission read from a doctor's last message, in this order (docs/harness.md):

    1. a JSON object in the message with a text ``diagnosis`` (and lists ``tests``, ``plan``);
    2. labelled lines: ``Diagnosis:``, ``Tests:``/``Investigations:``,
       ``Plan:``/``Management:``; a label's items are the rest of its line (tests split at
       commas and semicolons, plan steps at semicolons) and the bullet lines below it;
    3. otherwise the first non-empty line is the diagnosis, with no tests and no plan.
    """
    found = _from_json(text)
    if found is not None:
        return found
    sections: dict[str, list[str]] = {}
    current: str | None = None
    for line in text.splitlines():
        label = _LABEL.match(line)
        if label:
            current = _SECTIONS[label.group(1).casefold()]
            rest = label.group(2).strip().strip("*").strip()
            sections.setdefault(current, []).extend(_split(rest, current) if rest else [])
            continue
        bullet = _BULLET.match(line)
        if current is not None and bullet:
            sections[current].append(bullet.group(1).strip())
        elif current is not None and line.strip() and not sections[current]:
            sections[current].extend(_split(line.strip(), current))  # "Diagnosis:" alone
        elif line.strip():
            current = None  # prose ends a section
    if sections.get("diagnosis"):
        return FinalAnswer(
            " ".join(sections["diagnosis"]),
            tuple(sections.get("tests", [])),
            tuple(sections.get("plan", [])),
            "labelled",
        )
    first = next((ln.strip().strip("#*").strip() for ln in text.splitlines() if ln.strip()), "")
    return FinalAnswer(first, (), (), "first_line" if first else "empty")


def _split(text: str, section: str) -> list[str]:
    if section == "diagnosis":
        return [text]
    parts = re.split(r"[;,]" if section == "tests" else r";", text)
    return [p.strip().rstrip(".") for p in parts if p.strip()]


def _from_json(text: str) -> FinalAnswer | None:
    start, end = text.find("{"), text.rfind("}")
    if start < 0 or end <= start:
        return None
    try:
        value = json.loads(text[start : end + 1])
    except (json.JSONDecodeError, RecursionError):
        return None
    if not isinstance(value, dict) or not isinstance(value.get("diagnosis"), str):
        return None
    return FinalAnswer(
        value["diagnosis"], _texts(value.get("tests")), _texts(value.get("plan")), "json"
    )


def _texts(value: Any) -> tuple[str, ...]:
    if isinstance(value, str):
        return (value,)
    return tuple(v for v in _list(value) if isinstance(v, str))


def submitted_tests(ordered: Sequence[str], listed: Sequence[str]) -> tuple[str, ...]:
    """The tests a submission is scored on: every order the oracle answered, then those the
    final answer lists, each once. An order cannot be taken back by leaving it out."""
    return tuple(dict.fromkeys(t.strip() for t in (*ordered, *listed) if t.strip()))


# --- the judge -----------------------------------------------------------------------------

JUDGE_RULES = """\
You are an examiner marking a doctor's consultation at the end of an OSCE station against one
item of the marking scheme. Reply with exactly one JSON object and nothing else, either
{"met": true} or {"met": false}: true when the doctor did what the question asks about,
false when not. Judge from the transcript where there is one, else from the answer.
"""


def judge_prompt(question: str, view: str) -> str:
    """One rubric item and the judge view of the answer (``casebank.serve.judging``: the same
    rendering `casebank judge-view` prints)."""
    return f"{JUDGE_RULES}\nQuestion: {question}\n\nThe doctor's answer:\n{view}"


def parse_verdict(text: str) -> bool | None:
    """``met`` from a judge's reply, or None when the reply is not exactly one JSON object
    with a true/false ``met`` (the item then stays pending; nothing is guessed)."""
    try:
        value = json.loads(text.strip())
    except (json.JSONDecodeError, RecursionError):
        return None
    met = value.get("met") if isinstance(value, dict) else None
    return met if isinstance(met, bool) else None
