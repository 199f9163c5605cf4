"""Served truth: what the oracle would serve must agree with the whole case, and give nothing away.

The oracle answers what a case does not list from the case itself (docs/serving.md): a vital
sign from the examination, a score by its formula, a catalog default only for a specimen test
or an imaging study. These rules compare what it would serve with the examination, the
history and the listed results, once per case (the oracle and the facts it reads are shared by
every rule through the case context), and look at every served text for the answer.
"""

from __future__ import annotations

import re
from collections.abc import Iterator, Mapping
from typing import Any

from casebank.check.problem import Severity
from casebank.check.registry import CaseContext, Finding, rule
from casebank.check.rules.references import oracle
from casebank.format.catalog import CatalogTest, fold
from casebank.format.document import Document, Path

_CASE_DETERMINED = ("bedside", "assessment")


def _facts(ctx: CaseContext) -> Any:
    return oracle(ctx).facts


def _listed(ctx: CaseContext) -> list[tuple[str, CatalogTest, dict[str, Any]]]:
    """Each final listed result with the test it is (the first point of a series), found
    once per case: four rules read them."""

    def compute() -> list[tuple[str, CatalogTest, dict[str, Any]]]:
        found = []
        results = ctx.get("investigations", "results")
        for key, entry in results.items() if isinstance(results, dict) else ():
            test = ctx.resolve(key)
            if test is None or not isinstance(entry, dict):
                continue
            if entry.get("status", "final") != "final":
                continue
            series = entry.get("series")
            if isinstance(series, list) and series and isinstance(series[0], dict):
                entry = series[0]
            found.append((key, test, entry))
        return found

    listed: list[tuple[str, CatalogTest, dict[str, Any]]] = ctx.memo("served_listed", compute)
    return listed


def _number(value: Any) -> float | None:
    if isinstance(value, (int, float)) and not isinstance(value, bool):
        return float(value)
    found = re.match(r"\s*(\d+(?:\.\d+)?)", str(value)) if isinstance(value, str) else None
    return float(found.group(1)) if found else None


# --- the catalog ----------------------------------------------------------------------------


def _entries(doc: Document) -> Iterator[tuple[Path, dict[str, Any]]]:
    tests = doc.data.get("tests")
    for i, entry in enumerate(tests if isinstance(tests, list) else []):
        if isinstance(entry, dict):
            yield ("tests", i), entry


@rule(
    "CB520",
    "default-for-case-determined",
    Severity.ERROR,
    "A catalog default for a test the case itself determines (an observation, a score).",
    target="catalog",
)
def check_default_kind(doc: Document) -> Iterator[Finding]:
    """A default result is served when a case lists none, so it may be given only where a
    normal result is plausible for any patient: a laboratory, microbiology, imaging or
    procedure test, or a bedside test done on a specimen (a urine dipstick, a capillary
    glucose). A vital sign, a bedside observation, a score or a scale is what the case's own
    examination, history or results determine: a default would overwrite them (a pain score of
    0/10 in renal colic, a NEWS2 of 0 in shock). Leave it without a default; give it
    `derive:` where a documented formula computes it from the case.

    Bad:

        - name: Pain score
          kind: assessment
          result_types: [lab_value]
          default_result: "0/10 (no pain)"

    Good:

        - name: Pain score
          kind: assessment
          derive: pain_score
          result_types: [lab_value]
    """
    for path, entry in _entries(doc):
        if entry.get("kind") not in _CASE_DETERMINED or "default_result" not in entry:
            continue
        if entry.get("specimen") is not None:
            continue
        yield Finding(
            (*path, "default_result"),
            f"`{entry.get('name')}` is a {entry.get('kind')} test the case determines: a "
            "default would overwrite what the case records",
            "remove `default_result`; add `derive:` if a documented formula computes it",
        )


@rule(
    "CB521",
    "unknown-formula",
    Severity.ERROR,
    "A catalog test's `derive` names no formula the oracle knows.",
    target="catalog",
)
def check_formula(doc: Document) -> Iterator[Finding]:
    """`derive` names the formula that computes a test's result from the case
    (docs/serving.md lists them, with their sources). A name that is no formula would leave
    the test unanswerable where the case holds every input.

    Bad:

        - name: National Early Warning Score 2
          kind: assessment
          derive: news

    Good:

        - name: National Early Warning Score 2
          kind: assessment
          derive: news2
    """
    from casebank.serve.derive import FORMULAS

    for path, entry in _entries(doc):
        name = entry.get("derive")
        if name is not None and name not in FORMULAS:
            yield Finding(
                (*path, "derive"),
                f"`{name}` is not a formula the oracle knows",
                f"use one of {', '.join(sorted(FORMULAS))}",
            )


# --- contradictions -------------------------------------------------------------------------

_MEASURED = (
    "Heart rate",
    "Respiratory rate",
    "Oxygen saturation",
    "Temperature",
    "Systolic blood pressure",
    "Diastolic blood pressure",
    "Blood pressure",
    "Glasgow Coma Scale",
)


def _exam_reading(ctx: CaseContext, name: str) -> Any:
    facts = _facts(ctx)
    found = facts.findings.get(name)
    if found is None and name in ("Systolic blood pressure", "Diastolic blood pressure"):
        pressure = facts.findings.get("Blood pressure")
        found = facts.reading(name) if pressure is not None else None
    return found


def _members(test: CatalogTest, entry: dict[str, Any], ctx: CaseContext) -> Iterator[Any]:
    """(test, result, path inside the results entry) for a result and each of its members."""
    yield test, entry, ()
    components = entry.get("components")
    for member, sub in components.items() if isinstance(components, dict) else ():
        found = ctx.catalog.resolve(member, panel=test) if ctx.catalog else None
        if found is not None and isinstance(sub, dict):
            yield found, sub, ("components", member)


@rule(
    "CB440",
    "listed-disagrees-with-exam",
    Severity.ERROR,
    "A listed vital sign or GCS that the examination records with another value.",
    needs_catalog=True,
)
def check_listed_against_exam(ctx: CaseContext) -> Iterator[Finding]:
    """The examination and the results are served side by side: a heart rate of 110 in the
    results beside 112 in the examination, or a blood pressure listed as 120/80 where the
    examination records 148/86, contradicts itself. The first value of a series is the one
    compared (the examination is the presentation). Give both the same value, or say in the
    result's `at` or a series when it was taken later.

    Bad:

        physical_exam:
          vital_signs:
            heart rate: {value: 112, unit: /min}
        investigations:
          results:
            Heart rate: {type: lab_value, value: 96, unit: /min, reference_range: "60–100"}

    Good:

        physical_exam:
          vital_signs:
            heart rate: {value: 112, unit: /min}
        investigations:
          results:
            Heart rate:
              type: lab_value
              series:
                - {at: "on arrival", value: 112, unit: /min, reference_range: "60–100"}
                - {at: "after 1 L of fluid", value: 96, unit: /min, reference_range: "60–100"}
    """
    for key, test, entry in _listed(ctx):
        for member, result, inner in _members(test, entry, ctx):
            if member.name not in _MEASURED or "value" not in result:
                continue
            seen = _exam_reading(ctx, member.name)
            if seen is None or seen.origin.startswith("investigations"):
                continue
            if _differs(member.name, result.get("value"), seen.value):
                yield Finding(
                    ("investigations", "results", key, *inner),
                    f"`{member.name}` is {result.get('value')} here, but the examination "
                    f"({seen.origin}) records {seen.value}",
                    "give both the same value, or make this a series saying when each was taken",
                    at_key=True,
                )


def _differs(name: str, listed: Any, seen: Any) -> bool:
    if name == "Blood pressure":
        a = re.findall(r"\d+", str(listed))[:2]
        b = re.findall(r"\d+", str(seen))[:2]
        return len(a) == 2 and len(b) == 2 and a != b
    x, y = _number(listed), _number(seen)
    return x is not None and y is not None and abs(x - y) > 1e-9


# Stated values a formula recomputes, with the tolerance a rounding slip allows.
_TOLERANCE = {
    "news2": 0,
    "qsofa": 0,
    "curb65": 0,
    "crb65": 0,
    "mean_arterial_pressure": 2,
    "body_mass_index": 0.3,
    "egfr_ckd_epi_2021": 2,
    "creatinine_clearance_cockcroft_gault": 3,
    "anion_gap": 1,
    "corrected_calcium": 0.03,
}


@rule(
    "CB441",
    "stated-score-mismatch",
    Severity.WARNING,
    "A listed score or calculation that its formula, fed from the case, does not give.",
    needs_catalog=True,
)
def check_stated_scores(ctx: CaseContext) -> Iterator[Finding]:
    """A score the case states is served as stated; where the case holds every input, its
    formula (docs/serving.md) must give the same value, or the two answers a doctor can get
    disagree: an eGFR a few units off CKD-EPI 2021 for the listed creatinine, a NEWS2 that the
    recorded observations do not add up to. A score whose note or value gives its items in
    brackets ("heart rate 128 (2)") must also add up to its total, as must a GCS given with
    its components ("13/15 (E3 V4 M6)"). Correct the value, or the inputs; where the stated
    value was taken at another time than the inputs, say so with a series.

    Bad:

        results:
          Creatinine: {type: lab_value, value: 159, unit: µmol/L, reference_range: "60–110"}
          Estimated glomerular filtration rate:
            {type: lab_value, value: 45, unit: mL/min/1.73m2, reference_range: ">90"}

    Good:

        results:
          Creatinine: {type: lab_value, value: 159, unit: µmol/L, reference_range: "60–110"}
          Estimated glomerular filtration rate:
            {type: lab_value, value: 41, unit: mL/min/1.73m2, reference_range: ">90"}
    """
    from casebank.serve.derive import Derived, derive

    facts = _facts(ctx)
    for key, test, entry in _listed(ctx):
        stated = _number(entry.get("value"))
        if stated is None:
            continue
        if test.derive in _TOLERANCE:
            computed = derive(test.derive, facts)
            if isinstance(computed, Derived):
                value = computed.result.get("value")
                if (
                    isinstance(value, (int, float))
                    and abs(value - stated) > _TOLERANCE[test.derive]
                ):
                    yield Finding(
                        ("investigations", "results", key),
                        f"`{key}` is stated as {entry.get('value')}, but the case's own "
                        f"inputs give {value} ({computed.origin})",
                        "correct the value or its inputs; a later value belongs in a series",
                        at_key=True,
                    )
                    continue
        items = _items(entry)
        if items is not None and abs(sum(items) - stated) > 1e-9:
            yield Finding(
                ("investigations", "results", key),
                f"`{key}` is stated as {entry.get('value')}, but the items it gives add "
                f"up to {sum(items):g}",
                "correct the total or the items",
                at_key=True,
            )


_GCS_PARTS = re.compile(r"\bE\s*(\d)\s*,?\s*V\s*(\d|T)\s*,?\s*M\s*(\d)\b")
_BRACKETED = re.compile(r"\((\d+)\)")


def _items(entry: Mapping[str, Any]) -> list[float] | None:
    """The item scores a score's text states: GCS components, or two or more bracketed
    points ("respiratory rate 28 (3), SpO2 93% (2)")."""
    texts = " ".join(str(entry.get(k, "")) for k in ("value", "note"))
    parts = _GCS_PARTS.search(texts)
    if parts and "T" not in parts.groups():
        return [float(p) for p in parts.groups()]
    bracketed = [float(b) for b in _BRACKETED.findall(str(entry.get("note", "")))]
    return bracketed if len(bracketed) >= 2 else None


@rule(
    "CB442",
    "other-analyte",
    Severity.ERROR,
    "A numeric result declared to answer a test that measures another analyte.",
    needs_catalog=True,
)
def check_analyte(ctx: CaseContext) -> Iterator[Finding]:
    """`answers:` serves a listed result for another test's order. Between two numeric
    laboratory tests that is true only when the catalog relates them (a panel and its member):
    a troponin T result is not a troponin I, and a serum sodium is not a urine sodium. Order
    and list the test that was measured.

    Bad:

        results:
          Troponin T:
            type: lab_value
            value: 48
            unit: ng/L
            reference_range: "<14"
            answers: [Troponin I]

    Good:

        results:
          Troponin T: {type: lab_value, value: 48, unit: ng/L, reference_range: "<14"}
    """
    assert ctx.catalog is not None
    results = ctx.get("investigations", "results")
    for key, entry in results.items() if isinstance(results, dict) else ():
        test = ctx.resolve(key)
        answers = entry.get("answers") if isinstance(entry, dict) else None
        if test is None or not isinstance(answers, list) or not _measured(test):
            continue
        for i, name in enumerate(answers):
            other = ctx.resolve(name) if isinstance(name, str) else None
            if other is None or other is test or not _measured(other):
                continue
            if other in ctx.catalog.related(test) and other.family != test.family:
                continue
            if other in ctx.catalog.components_of(test) or test in ctx.catalog.components_of(other):
                continue
            yield Finding(
                ("investigations", "results", key, "answers", i),
                f"`{key}` ({test.name}) measures another analyte than `{name}` ({other.name})",
                f"remove `{name}` from `answers`, and list its own result if it was measured",
            )


def _measured(test: CatalogTest) -> bool:
    return test.kind in ("lab", "microbiology") and test.result_types == ("lab_value",)


@rule(
    "CB443",
    "default-contradicts-history",
    Severity.ERROR,
    "A default the policy would serve that the history contradicts (a negative pregnancy test "
    "in pregnancy).",
    needs_catalog=True,
)
def check_default_against_history(ctx: CaseContext) -> Iterator[Finding]:
    """Under `normal_unless_listed` a test the case does not list comes back normal. Where
    the history says otherwise, that default is false: a negative pregnancy test in a woman
    at 35 weeks. List the test's result.

    Bad:

        presentation:
          history_of_present_illness: "At 35 weeks of her first pregnancy she has a headache."
        investigations:
          results_generated_policy: normal_unless_listed    # a pregnancy test would be negative

    Good:

        investigations:
          results:
            Urine pregnancy test: {type: qualitative, value: "Positive", flag: abnormal}
    """
    served = oracle(ctx)
    story = " ".join(
        str(ctx.get(*path) or "")
        for path in (
            ("presentation", "history_of_present_illness"),
            ("presentation", "chief_complaint"),
        )
    )
    if not _PREGNANT.search(story):
        return
    for name in ("Urine pregnancy test", "Serum hCG", "Pregnancy test"):
        answer = served.answer(name)
        if answer.source == "policy":
            yield Finding(
                ("investigations", "results"),
                f"the history says the patient is pregnant, but `{answer.test}` would be "
                "served the catalog's negative result",
                f"list `{answer.test}` with its positive result",
                at_key=True,
            )
            return


_PREGNANT = re.compile(
    r"\b(?:\d+\s*(?:weeks?|/40)(?:'|’)?\s*(?:pregnant|gestation)"
    r"|weeks? of (?:her )?(?:\w+ )?pregnancy|is pregnant|currently pregnant|gravid|antenatal)\b",
    re.IGNORECASE,
)


_SEVERE = re.compile(r"\b(?:severe|excruciating|agonising|agonizing|worst|unbearable)\b", re.I)
_MILD = re.compile(r"\b(?:no pain|pain-free|painless|mild discomfort)\b", re.I)


@rule(
    "CB444",
    "pain-disagrees-with-story",
    Severity.WARNING,
    "A listed pain score that the presenting story contradicts.",
    needs_catalog=True,
)
def check_pain(ctx: CaseContext) -> Iterator[Finding]:
    """A pain score is the patient's own rating. One of 0–3 beside a story of severe or
    excruciating pain, or of 7 or more beside a painless presentation, gives the doctor two
    answers. Correct the score or the story.

    Bad:

        presentation:
          history_of_present_illness: "Sudden severe left loin pain, the worst she has known."
        investigations:
          results:
            Pain score: {type: lab_value, value: 2, unit: /10, reference_range: "0"}

    Good:

        investigations:
          results:
            Pain score: {type: lab_value, value: 9, unit: /10, reference_range: "0", flag: high}
    """
    story = str(ctx.get("presentation", "history_of_present_illness") or "")
    for key, test, entry in _listed(ctx):
        if test.derive != "pain_score":
            continue
        value = _number(entry.get("value"))
        if value is None:
            continue
        if (value <= 3 and _SEVERE.search(story)) or (value >= 7 and _MILD.search(story)):
            yield Finding(
                ("investigations", "results", key),
                f"`{key}` is {entry.get('value')}, but the story describes "
                f"{'severe' if value <= 3 else 'little or no'} pain",
                "correct the score or the story",
                at_key=True,
            )


@rule(
    "CB445",
    "consciousness-disagrees-with-exam",
    Severity.WARNING,
    "A listed GCS or AVPU that the examination's description of the patient contradicts.",
    needs_catalog=True,
)
def check_consciousness(ctx: CaseContext) -> Iterator[Finding]:
    """A GCS of 15 or an AVPU of Alert beside an examination that describes the patient as
    drowsy, confused or responding only to voice (or a GCS under 15 beside "alert and
    oriented") gives two answers about the same patient. Correct one of them.

    Bad:

        physical_exam:
          general: "Drowsy, opens eyes to voice, confused."
        investigations:
          results:
            Glasgow Coma Scale: {type: lab_value, value: 15, unit: points}

    Good:

        investigations:
          results:
            Glasgow Coma Scale: {type: text_report, value: "13/15 (E3 V4 M6)", flag: abnormal}
    """
    facts = _facts(ctx)
    described = _described(facts)
    if described is None:
        return
    level, origin = described
    for key, test, entry in _listed(ctx):
        if test.name == "Glasgow Coma Scale":
            value = _number(entry.get("value"))
            agrees = value is None or (value >= 15) == (level == "A")
        elif test.name == "AVPU scale":
            text = str(entry.get("value", "")).strip()[:1].upper()
            # AVPU has no C: a confused patient who is awake is A on it.
            agrees = not text or (text == "A") == (level in ("A", "C"))
        else:
            continue
        if not agrees:
            words = {"A": "alert", "C": "confused", "VPU": "not awake"}[level]
            yield Finding(
                ("investigations", "results", key),
                f"`{key}` is {entry.get('value')}, but the examination ({origin}) "
                f"describes the patient as {words}",
                "correct the score or the description",
                at_key=True,
            )


_ASLEEP = re.compile(
    r"(?<!no )(?<!not )\b(?:drowsy|responds? (?:only )?to (?:voice|pain)|unresponsive|"
    r"obtunded|stuporose|comatose|rousable)\b",
    re.IGNORECASE,
)
_CONFUSED = re.compile(
    r"(?<!no )(?<!not )(?<!without )\b(?:confused|confusion|disorientated|disoriented)\b",
    re.IGNORECASE,
)


def _described(facts: Any) -> tuple[str, str] | None:
    """What the examination's words say of the level of consciousness: ``A`` (alert),
    ``C`` (awake but confused) or ``VPU`` (not awake), and where."""
    for pattern, level in ((_ASLEEP, "VPU"), (_CONFUSED, "C")):
        for origin, text in facts.texts:
            if pattern.search(text):
                return level, origin
    for origin, text in facts.texts:
        if re.search(r"(?<!not )\balert\b", text, re.I):
            return "A", origin
    return None


# --- what served text gives away ------------------------------------------------------------


def _answers(ctx: CaseContext) -> list[str]:
    """The diagnosis as the case accepts it: the final diagnosis, accepted answers and
    partial-credit answers, folded to words."""
    names: list[Any] = [ctx.get("ground_truth", "final_diagnosis")]
    accepted = ctx.get("scoring", "acceptable_answers")
    if isinstance(accepted, dict):
        variants = accepted.get("final_diagnosis")
        names += variants if isinstance(variants, list) else []
        partial = accepted.get("partial_credit")
        names += list(partial) if isinstance(partial, dict) else []
    return [w for n in names if isinstance(n, str) and (w := _words(n))]


def _words(text: str) -> str:
    return " ".join(re.findall(r"[\w']+", fold(text)))


def names_answer(text: str, answers: list[str]) -> str | None:
    """The accepted answer ``text`` names (as whole words), or None."""
    words = f" {_words(text)} "
    for answer in answers:
        if f" {answer} " in words:
            return answer
    return None


def served_notes(ctx: CaseContext) -> list[tuple[Path, str]]:
    """Every served note: on results, their members and series points, and on examination
    findings, in the case's order (found once per case: two rules read them)."""

    def compute() -> list[tuple[Path, str]]:
        found: list[tuple[Path, str]] = []
        results = ctx.get("investigations", "results")
        for key, entry in results.items() if isinstance(results, dict) else ():
            _notes(entry, ("investigations", "results", key), found)
        exam = ctx.get("physical_exam")
        if isinstance(exam, dict):
            _notes(exam, ("physical_exam",), found)
        return found

    notes: list[tuple[Path, str]] = ctx.memo("served_notes", compute)
    return notes


def _notes(value: Any, at: Path, found: list[tuple[Path, str]]) -> None:
    """The notes in ``value`` appended to ``found`` (one call per mapping or list, none per
    text: a full-size case holds hundreds of values and a few notes)."""
    if isinstance(value, dict):
        for key, item in value.items():
            if key == "note" and isinstance(item, str):
                found.append(((*at, key), item))
            elif key != "examiner_note" and isinstance(item, (dict, list)):
                _notes(item, (*at, key), found)
    elif isinstance(value, list):
        for i, item in enumerate(value):
            if isinstance(item, (dict, list)):
                _notes(item, (*at, i), found)


@rule(
    "CB446",
    "served-note-names-diagnosis",
    Severity.ERROR,
    "A note served with a result or finding that names the diagnosis or an accepted answer.",
)
def check_note_leaks(ctx: CaseContext) -> Iterator[Finding]:
    """A result's `note` is part of the report and is served to the doctor (and a
    finding's to whoever examines). One that names the final diagnosis or an accepted answer
    tells the doctor the answer the rubric then scores. Commentary for the examiner goes in
    `examiner_note`, which is never served.

    Bad:

        Progesterone:
          type: lab_value
          value: 14
          unit: nmol/L
          note: "Low, as in a failing or ectopic pregnancy."

    Good:

        Progesterone:
          type: lab_value
          value: 14
          unit: nmol/L
          examiner_note: "Low, as in a failing or ectopic pregnancy; it does not locate it."
    """
    answers = _answers(ctx)
    for path, note in served_notes(ctx):
        named = names_answer(note, answers)
        if named is not None:
            yield Finding(
                path,
                f"this note is served with the result, and names the diagnosis (`{named}`)",
                "move it to `examiner_note`, which is never served",
            )


# Commentary that tells the doctor what to think or do: the examiner's, never the report's.
COMMENTARY = re.compile(
    r"\b(?:not indicated|not needed|unnecessary|not required|not useful|adds nothing|"
    r"not the right test|should not (?:be )?(?:done|ordered|requested)|must not delay|"
    r"contraindicated|confirms the diagnosis|key finding|diagnostic of|rules? out|"
    r"excludes the diagnosis|as expected in|typical of this)\b",
    re.IGNORECASE,
)


@rule(
    "CB447",
    "served-commentary",
    Severity.WARNING,
    "A served note that comments on the case rather than reporting the result.",
)
def check_note_commentary(ctx: CaseContext) -> Iterator[Finding]:
    """A served note says what the report says (the sample, the method, a comment the
    laboratory prints). Commentary for the examiner (whether a test is indicated, what a
    result means for the diagnosis, what must be done next) steers the doctor and belongs in
    `examiner_note`. A note giving a neutral reason a test was not done is fine: "Not
    performed: the patient could not stand".

    Bad:

        Elective stress test:
          type: text_report
          status: not_done
          note: "Contraindicated in acute STEMI."

    Good:

        Elective stress test:
          type: text_report
          status: not_done
          note: "Not performed."
          examiner_note: "Contraindicated in acute STEMI."
    """
    for path, note in served_notes(ctx):
        found = COMMENTARY.search(note)
        if found:
            yield Finding(
                path,
                f"this served note comments on the case (`{found.group(0)}`)",
                "keep what the report says in `note`; move the commentary to `examiner_note`",
            )


@rule(
    "CB448",
    "attachment-name-gives-away",
    Severity.ERROR,
    "An attachment whose file name holds the case id or names the diagnosis.",
)
def check_attachment_names(ctx: CaseContext) -> Iterator[Finding]:
    """Attachments are served with their results, under their file names. A name that holds
    the case id (which names the diagnosis) or the diagnosis itself gives the answer away.
    Name the file by what it shows (`audiogram.svg`, `ecg-12-lead.png`).

    Bad:

        results:
          Pure-tone audiometry:
            type: text_report
            value: "Bilateral 4 kHz notch."
            attachments: [noise_induced_hearing_loss_001-audiogram.svg]

    Good:

        results:
          Pure-tone audiometry:
            type: text_report
            value: "Bilateral 4 kHz notch."
            attachments: [audiogram.svg]
    """
    case_id = ctx.get("case_id")
    answers = _answers(ctx)
    results = ctx.get("investigations", "results")
    for key, entry in results.items() if isinstance(results, dict) else ():
        files = entry.get("attachments") if isinstance(entry, dict) else None
        for i, name in enumerate(files if isinstance(files, list) else []):
            if not isinstance(name, str):
                continue
            words = re.sub(r"[^a-z0-9]+", " ", name.casefold())
            named = names_answer(words, answers)
            if (isinstance(case_id, str) and case_id in name) or named:
                yield Finding(
                    ("investigations", "results", key, "attachments", i),
                    f"the attachment name `{name}` gives the answer away",
                    "rename the file by what it shows (`audiogram.svg`)",
                )


@rule(
    "CB449",
    "result-without-judgement",
    Severity.WARNING,
    "A listed result that says neither normal nor abnormal.",
)
def check_judged(ctx: CaseContext) -> Iterator[Finding]:
    """A harness, a grader and a doctor all read a result's flag to know whether it is
    normal. A report or a qualitative result without a flag, whose words do not say "normal"
    or "negative", leaves them to guess (a number is judged by its reference range, which
    another rule requires). Give `flag: normal` or the abnormal flag it deserves.

    Bad:

        ECG: {type: text_report, value: "ST elevation in II, III and aVF."}

    Good:

        ECG: {type: text_report, value: "ST elevation in II, III and aVF.", flag: abnormal}
    """
    from casebank.format.results import is_placeholder_result, judgement

    results = ctx.get("investigations", "results")
    for key, entry in results.items() if isinstance(results, dict) else ():
        if not isinstance(entry, dict) or entry.get("status", "final") != "final":
            continue
        if entry.get("type") not in ("text_report", "qualitative") or "flag" in entry:
            continue
        value = entry.get("value")
        if isinstance(value, str) and (is_placeholder_result(value) or "TODO" in value):
            continue  # a placeholder, reported as one
        if judgement(entry) == "unknown":
            yield Finding(
                ("investigations", "results", key),
                f"`{key}` says neither normal nor abnormal",
                "add `flag: normal`, or the abnormal flag it deserves",
                at_key=True,
            )
