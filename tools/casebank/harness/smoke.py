"""``casebank/smoke``: a scripted, deterministic model for the offline demo and smoke runs.

``inspect eval casebank/osce --model casebank/smoke`` runs the whole pipeline (task, solver,
tools, oracle, scorer, judge, log) with no network, no API key and no tokenizer download: every
output states its own token usage (words counted). It is not a clinician and scores poorly on
purpose; what it shows is that each part works and that the same run gives the same log.

It tells its parts apart by what it is sent, as any model must:

- **the doctor** (sent the station's tools): asks the patient one question (``QUESTION``),
  examines the vital signs, orders ``TESTS`` one by one, then calls ``final_answer`` with the
  presenting complaint, in the patient's words from the opening message, as its diagnosis,
  the tests it ordered and ``PLAN``;
- **the patient** (its system prompt is ``grounding.PATIENT_RULES`` and its facts): answers
  every question with the first sentence of the history of the presenting complaint in its
  facts, or the complaint itself, so it says nothing its view does not hold;
- **the judge** (``grounding.JUDGE_RULES``): replies ``{"met": false}`` to every item, so no
  item is left pending and every score is complete (treatment 0; no contraindication or
  critical error committed).
"""

from __future__ import annotations

import json
import re
from typing import Any

import yaml
from inspect_ai.model import (
    ChatMessage,
    GenerateConfig,
    ModelAPI,
    ModelOutput,
    ModelUsage,
    modelapi,
)
from inspect_ai.tool import ToolChoice, ToolInfo

from casebank.harness.grounding import JUDGE_RULES, PATIENT_RULES

MODEL = "smoke"
QUESTION = "What brings you in today?"
EXAMINE = "vital signs"
TESTS = ("CBC", "Basic metabolic panel", "ECG")
PLAN = ("Review the results with a senior colleague", "Safety-net advice and follow-up")
_COMPLAINT = re.compile(r'they say: "(.*)"\s*$', re.DOTALL)
_FACTS = re.compile(r"The facts \(YAML\):\n\n(.*?)\nYou do not know:", re.DOTALL)
_SENTENCE = re.compile(r"^(.+?[.!?])(?:\s|$)", re.DOTALL)


@modelapi(name="casebank")
def casebank_models() -> type[ModelAPI]:
    return SmokeModel


class SmokeModel(ModelAPI):
    """``casebank/smoke``: the scripted doctor, patient and judge described above."""

    def __init__(
        self,
        model_name: str,
        base_url: str | None = None,
        api_key: str | None = None,
        config: GenerateConfig | None = None,
        **model_args: Any,
    ) -> None:
        if model_name != MODEL:
            raise ValueError(
                f"casebank/{model_name}: casebank provides one model, casebank/{MODEL} "
                "(the scripted smoke model, docs/harness.md)"
            )
        super().__init__(model_name, base_url, api_key, [], config or GenerateConfig())

    async def generate(
        self,
        input: list[ChatMessage],
        tools: list[ToolInfo],
        tool_choice: ToolChoice,
        config: GenerateConfig,
    ) -> ModelOutput:
        if tools:
            output = doctor(input, {t.name for t in tools})
        else:
            first = input[0].text if input else ""
            if first.startswith(PATIENT_RULES):
                text = patient(first)
            elif first.startswith(JUDGE_RULES):
                text = json.dumps({"met": False, "reason": "the smoke model marks no item met"})
            else:
                text = "I am casebank's scripted smoke model; I only play the OSCE station."
            output = ModelOutput.from_content(f"casebank/{MODEL}", text)
        heard = sum(len(m.text.split()) for m in input)
        said = max(1, len(output.completion.split()))
        output.usage = ModelUsage(input_tokens=heard, output_tokens=said, total_tokens=heard + said)
        return output


def doctor(messages: list[ChatMessage], tools: set[str]) -> ModelOutput:
    """The doctor's next step, counted by the tool results it has seen."""
    step = sum(1 for m in messages if m.role == "tool")
    script: list[tuple[str, dict[str, Any]]] = [
        ("ask_patient", {"question": QUESTION}),
        ("examine", {"part": EXAMINE}),
        *(("order_test", {"name": name}) for name in TESTS),
    ]
    if step < len(script) and script[step][0] in tools:
        name, arguments = script[step]
    else:
        name = "final_answer"
        arguments = {"diagnosis": _complaint(messages), "tests": list(TESTS), "plan": list(PLAN)}
    if name not in tools:
        return ModelOutput.from_content(
            f"casebank/{MODEL}", f"Diagnosis: {_complaint(messages)}\nPlan: {'; '.join(PLAN)}"
        )
    return ModelOutput.for_tool_call(
        f"casebank/{MODEL}", name, arguments, tool_call_id=f"smoke-{step + 1}"
    )


def _complaint(messages: list[ChatMessage]) -> str:
    for message in messages:
        if message.role == "user":
            found = _COMPLAINT.search(message.text)
            if found:
                return found.group(1).strip() or "No diagnosis"
    return "No diagnosis"


def patient(prompt: str) -> str:
    """The first sentence of the history of the presenting complaint, from the facts."""
    found = _FACTS.search(prompt)
    facts = yaml.safe_load(found.group(1)) if found else None
    presentation = facts.get("presentation") if isinstance(facts, dict) else None
    if not isinstance(presentation, dict):
        return "I don't know."
    story = presentation.get("history_of_present_illness")
    if isinstance(story, str) and story.strip():
        first = _SENTENCE.match(story.strip())
        return " ".join((first.group(1) if first else story).split())
    complaint = presentation.get("chief_complaint")
    return str(complaint) if complaint else "I don't know."
