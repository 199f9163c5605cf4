"""Clinical content: the patient's script must not give the answer away, and the gold treatment
must not do what the case itself forbids."""

from __future__ import annotations

import re
from collections.abc import Iterable, Iterator, Sequence
from functools import lru_cache

from casebank.check.problem import Severity
from casebank.check.registry import CaseContext, Finding, rule
from casebank.format.catalog import fold
from casebank.format.document import format_path
from casebank.serve.views import texts


@lru_cache(maxsize=4096)
def _word_pattern(term: str) -> re.Pattern[str]:
    """``term`` as whole words (case folded, any white space between them). Cached: the drug
    names of the allergy check recur in every case."""
    words = [re.escape(w) for w in fold(term).split()]
    return re.compile(r"(?<![\w-])" + r"\s+".join(words) + r"(?![\w-])")


def _bounded(text: str, at: int) -> bool:
    """No word character or hyphen at ``text[at]`` (or ``at`` is outside the text)."""
    if at < 0 or at >= len(text):
        return True
    char = text[at]
    return not (char.isalnum() or char in "_-")


def find_phrase(text: str, words: Sequence[str]) -> int | None:
    """Where ``words`` stand in ``text`` as whole words, any white space between them (what
    ``_word_pattern`` matches), or None. Both already folded. No regular expression: a case's
    own terms are new in every case, and compiling a pattern for each costs more than the
    search (a third of a cold validation once did)."""
    if not words:
        return None
    first = words[0]
    start = text.find(first)
    while start != -1:
        if _bounded(text, start - 1):
            at = start + len(first)
            for word in words[1:]:
                gap = at
                while gap < len(text) and text[gap].isspace():
                    gap += 1
                if gap == at or not text.startswith(word, gap):
                    break
                at = gap + len(word)
            else:
                if _bounded(text, at):
                    return start
        start = text.find(first, start + 1)
    return None


def diagnosis_terms(ctx: CaseContext) -> list[str]:
    """The final diagnosis, its parts around a parenthesis, and every accepted answer."""
    terms: list[str] = []
    final = ctx.get("ground_truth", "final_diagnosis")
    if isinstance(final, str):
        terms.append(final)
        outer = re.sub(r"\s*\([^)]*\)", "", final).strip()
        terms.append(outer)
        terms.extend(m.strip() for m in re.findall(r"\(([^)]*)\)", final))
    terms.extend(
        answer for _, answer in ctx.texts("scoring", "acceptable_answers", "final_diagnosis")
    )
    unique = {fold(t): t for t in terms if len(fold(t)) >= 2}
    return list(unique.values())


@rule(
    "CB408",
    "diagnosis-leak",
    Severity.WARNING,
    "The final diagnosis or an accepted answer appears in what the patient says.",
)
def check_diagnosis_leak(ctx: CaseContext) -> Iterator[Finding]:
    """Everything in the patient view (the patient section, the chief complaint and the history
    of present illness: what the schema gives the simulated patient) is the patient's script.
    If it names the diagnosis, the case tests reading, not reasoning.
    Matching is case-insensitive, on whole words. A patient who genuinely knows their diagnosis
    (a known condition) can acknowledge this warning with a reason.

    Bad:

        final_diagnosis: "Pulmonary embolism"
        history_of_present_illness: "Sudden breathlessness; worried it is a pulmonary embolism."

    Good:

        final_diagnosis: "Pulmonary embolism"
        history_of_present_illness: "Sudden breathlessness and sharp pain on breathing in."
    """
    terms = {fold(term): term for term in diagnosis_terms(ctx)}
    if not terms:
        return
    # The longest term first, so that a text naming "acute pancreatitis" reports that term.
    wanted = [(t.split(), shown) for t, shown in sorted(terms.items(), key=lambda i: -len(i[0]))]
    script = [(path, fold(text)) for path, text in texts(ctx.data, "patient")]
    # One search per term over the whole script first: nearly no case names its diagnosis.
    # NUL (never in a value) ends each text, so a phrase cannot run from one into the next.
    whole = "\0".join([folded for _, folded in script])
    if all(find_phrase(whole, words) is None for words, _ in wanted):
        return
    for path, folded in script:
        # The leftmost mention; at one place, the longest term (as a regex alternation would).
        hits = [
            (at, i) for i, (w, _) in enumerate(wanted) if (at := find_phrase(folded, w)) is not None
        ]
        if hits:
            term = wanted[min(hits)[1]][1]
            yield Finding(
                path,
                f"`{format_path(path)}` names the diagnosis (`{term}`), which the "
                "simulated patient would give away",
                "describe symptoms and events in the patient's words instead of the diagnosis",
            )


_NEGATION = re.compile(
    r"^(do not|don't|never|avoid|no|not|without)\s+"
    r"((give|giving|use|using|start|starting|administer|administering|"
    r"prescribe|prescribing|perform|performing|order|ordering)\s+)?"
)


@rule(
    "CB406",
    "treatment-repeats-contraindication",
    Severity.ERROR,
    "A treatment step that repeats something the case lists as contraindicated.",
)
def check_treatment_vs_contraindications(ctx: CaseContext) -> Iterator[Finding]:
    """What `contraindications` forbids cannot also be a step of `treatment_plan`. The check
    compares each contraindication, with its leading "do not (give)"/"avoid" and any remark in
    parentheses removed, against each treatment step (case-insensitive, whole words).

    Bad:

        treatment_plan: ["Thrombolysis with alteplase"]
        contraindications: ["Thrombolysis (recent intracranial haemorrhage)"]

    Good:

        treatment_plan: ["Urgent neurosurgical review"]
        contraindications: ["Thrombolysis (recent intracranial haemorrhage)"]
    """
    steps = [
        (path, step, fold(step)) for path, step in ctx.texts("management_gold", "treatment_plan")
    ]
    for c_path, contraindication in ctx.texts("management_gold", "contraindications"):
        core = _NEGATION.sub("", fold(re.sub(r"\s*\([^)]*\)", "", contraindication)))
        if len(core) < 6:
            continue
        words = core.split()
        for s_path, step, folded in steps:
            if find_phrase(folded, words) is not None:
                yield Finding(
                    s_path,
                    f"treatment step `{step}` repeats the contraindication "
                    f"`{contraindication}` ({format_path(c_path)})",
                    "remove the step, or correct the contraindication",
                )


# Drug classes an allergy record commonly names, with the members a treatment plan might use.
DRUG_CLASSES: dict[str, tuple[str, ...]] = {
    "penicillin": (
        "penicillin",
        "amoxicillin",
        "ampicillin",
        "flucloxacillin",
        "dicloxacillin",
        "piperacillin",
        "benzylpenicillin",
        "phenoxymethylpenicillin",
        "co-amoxiclav",
        "amoxicillin-clavulanate",
        "nafcillin",
        "oxacillin",
        "cloxacillin",
        "temocillin",
        "ticarcillin",
    ),
    "sulfonamide": (
        "sulfamethoxazole",
        "co-trimoxazole",
        "trimethoprim-sulfamethoxazole",
        "sulfadiazine",
        "sulfasalazine",
    ),
    "sulfa": (
        "sulfamethoxazole",
        "co-trimoxazole",
        "trimethoprim-sulfamethoxazole",
        "sulfadiazine",
        "sulfasalazine",
    ),
    "nsaid": (
        "ibuprofen",
        "naproxen",
        "diclofenac",
        "ketorolac",
        "indomethacin",
        "aspirin",
        "celecoxib",
        "etoricoxib",
        "mefenamic acid",
    ),
    "aspirin": ("aspirin", "acetylsalicylic acid"),
    "macrolide": ("erythromycin", "clarithromycin", "azithromycin"),
    "fluoroquinolone": ("ciprofloxacin", "levofloxacin", "moxifloxacin", "ofloxacin"),
    "tetracycline": ("tetracycline", "doxycycline", "minocycline", "lymecycline"),
    "cephalosporin": (
        "cefalexin",
        "cephalexin",
        "cefuroxime",
        "ceftriaxone",
        "cefotaxime",
        "ceftazidime",
        "cefazolin",
        "cefepime",
        "cefixime",
    ),
    "opioid": (
        "morphine",
        "codeine",
        "oxycodone",
        "fentanyl",
        "tramadol",
        "hydromorphone",
        "diamorphine",
    ),
}


def drugs_for(substance: str) -> set[str]:
    """The substance itself and, for a class name (or its plural), the class's members."""
    name = fold(substance)
    drugs = {name}
    for cls, members in DRUG_CLASSES.items():
        if re.search(rf"(?<![\w-]){re.escape(cls)}s?(?![\w-])", name):
            drugs.update(members)
    return drugs


_NEGATED_BEFORE = re.compile(
    r"\b(avoid|avoiding|not|no|never|without|instead of|rather than|"
    r"allerg\w*|contraindicated)\b[^.;]*$"
)


def _mentions(step: str, drugs: Iterable[str]) -> str | None:
    folded = fold(step)
    for drug in sorted(drugs):
        for match in _word_pattern(drug).finditer(folded):
            if not _NEGATED_BEFORE.search(folded[: match.start()]):
                return drug
    return None


@rule(
    "CB407",
    "treatment-allergy-conflict",
    Severity.ERROR,
    "A treatment step names a drug the patient is recorded as allergic to.",
)
def check_treatment_vs_allergies(ctx: CaseContext) -> Iterator[Finding]:
    """A gold treatment plan must not give the patient a drug they are allergic to, nor a member
    of an allergy's drug class (a penicillin allergy excludes amoxicillin). Steps that name the
    drug only to avoid it ("instead of amoxicillin") are not flagged; prefer to say so in
    `contraindications`.

    Bad:

        patient:
          allergies: [{substance: penicillin, reaction: anaphylaxis}]
        management_gold:
          treatment_plan: ["Amoxicillin 500 mg three times daily"]

    Good:

        patient:
          allergies: [{substance: penicillin, reaction: anaphylaxis}]
        management_gold:
          treatment_plan: ["Doxycycline 200 mg on day 1, then 100 mg daily"]
    """
    allergies = ctx.get("patient", "allergies")
    if not isinstance(allergies, list):
        return
    substances = [
        a["substance"]
        for a in allergies
        if isinstance(a, dict) and isinstance(a.get("substance"), str)
    ]
    for path, step in ctx.texts("management_gold", "treatment_plan"):
        for substance in substances:
            drug = _mentions(step, drugs_for(substance))
            if drug is not None:
                yield Finding(
                    path,
                    f"treatment step `{step}` gives {drug}, but the patient is "
                    f"allergic to {substance}",
                    "choose an alternative the patient can take, and record the "
                    "allergy in `contraindications`",
                )
                break
