"""`casebank new CASE_ID`: scaffold a case with every required field and a comment on each."""

from __future__ import annotations

import argparse
import os
import re
from pathlib import Path

from casebank.errors import CasebankError, UsageError
from casebank.repo import CASE_SUFFIXES, CASES_DIR, find_root
from casebank.schema import CASE_ID_PATTERN

HELP = "Start a new case: write cases/CASE_ID.yaml with every required field to fill in."

TEMPLATE = """\
# yaml-language-server: $schema=../schema/case.schema.json
# A new case. Replace every TODO; `casebank validate {path}` points at each one left.
# Field reference: docs/schema.md. Checks: docs/rules.md. How to contribute: CONTRIBUTING.md.
case_id: {case_id}  # equals the file name; never change it once released

metadata:
  title: "TODO: a short title, e.g. Acute chest pain in a smoker"
  language: en  # cases are written in English
  difficulty: null  # easy, medium or hard
  specialty: "TODO: one specialty from catalog.yaml, e.g. emergency_medicine"
  tags: ["TODO: keywords from catalog.yaml, e.g. chest_pain"]

patient:
  age: null  # in years; for infants a fraction (0.5 = six months)
  sex: null  # female, male or other
  persona: "TODO: who the patient is and how they come across"
  tone_presets: [neutral]  # from catalog.yaml: neutral, anxious, irritated, ...
  # Optional, structured: pmh, meds, allergies; also social_history, family_history.
  allergies: []  # e.g. [{{substance: penicillin, reaction: rash}}]; [] means none known

presentation:
  chief_complaint: "TODO: the complaint in the patient's own words"
  history_of_present_illness: >
    TODO: the true story the simulated patient draws on. Symptoms and timeline only;
    never name the diagnosis.
  key_history_points:
    must_ask: ["TODO: a question a competent clinician must ask"]
    nice_to_ask: ["TODO: a question that adds value"]
    red_flags: ["TODO: a finding that must not be missed"]

physical_exam:  # optional: one narrative, or system -> findings
  general: "TODO: general appearance"

ground_truth:
  final_diagnosis: "TODO: the diagnosis the case is built around"
  differential: ["TODO: the differential, most likely first"]

investigations:
  expected:
    must_order: ["TODO: tests from catalog.yaml that must be ordered"]
    optional: []  # reasonable but not required tests
    should_not_order: []  # wasteful or harmful tests
  results:  # one entry per test; give one for every must_order test
    "TODO: test name from catalog.yaml":
      type: text_report  # lab_value (value, unit, reference_range), qualitative, panel
      value: "TODO: the result"
  results_generated_policy: normal_unless_listed  # tests not listed return normal

management_gold:
  diagnostic_plan: ["TODO: diagnostic steps"]
  treatment_plan: ["TODO: treatment steps, with standard doses"]
  contraindications: ["TODO: what must not be done"]
  follow_up: ["TODO: follow-up"]

scoring:
  weights:  # must sum to 1.0
    diagnosis: 0.35
    diagnostics: 0.25
    treatment: 0.30
    safety: 0.10
  acceptable_answers:
    final_diagnosis: ["TODO: other names for the diagnosis that count as correct"]
  critical_safety_errors: ["TODO: an error that fails the answer"]
"""


def case_template(case_id: str) -> str:
    """A new case's text; also committed as docs/case-template.yaml for the web editor."""
    return TEMPLATE.format(case_id=case_id, path=f"{CASES_DIR}/{case_id}.yaml")


def register(parser: argparse.ArgumentParser) -> None:
    parser.add_argument(
        "case_id",
        metavar="CASE_ID",
        help="the new case's id: lowercase words joined by _, e.g. sepsis_002",
    )
    parser.add_argument("--root", type=Path, help="repository root")


def run(args: argparse.Namespace) -> int:
    case_id: str = args.case_id
    if not re.match(CASE_ID_PATTERN, case_id):
        raise UsageError(
            f"`{case_id}` is not a valid case id: use lowercase letters and digits "
            "joined by single underscores, e.g. chest_pain_002"
        )
    root = find_root(args.root)
    folder = root / CASES_DIR
    existing = [p for p in (folder / f"{case_id}{s}" for s in CASE_SUFFIXES) if p.exists()]
    if existing:
        raise CasebankError(
            f"case `{case_id}` already exists: {existing[0].relative_to(root)}",
            "choose another id, or edit the existing file",
        )
    folder.mkdir(exist_ok=True)
    relative = f"{CASES_DIR}/{case_id}.yaml"
    content = case_template(case_id)
    # O_EXCL: never overwrite a file that appeared since the check above.
    fd = os.open(root / relative, os.O_WRONLY | os.O_CREAT | os.O_EXCL, 0o644)
    with os.fdopen(fd, "w", encoding="utf-8") as out:
        out.write(content)
    print(f"wrote {relative}: fill in every TODO, then run `casebank validate {relative}`")
    return 0
