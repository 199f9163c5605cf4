"""Matching test names the way a clinician means them, and suggesting only what is safe.

A did-you-mean that names a clinically different test is worse than none: "CD4 count" is not a
red cell count, and a tumour marker is not ionised calcium. So a name is compared as a set of
normalised words (case, punctuation, word order, British spellings, filler words such as
"level" or "test", and common modality and site words all folded), and a suggestion is made
only on a strong match:

1. the same words as a catalog name or alias, in any order ("Ultrasound of the Neck" is
   "Neck ultrasound"); or
2. every word paired one to one with a word of a catalog name or alias, where each pair is
   equal or, for words of five letters or more without digits, a near-miss of spelling
   ("Troponine", "Haemoglobn"). Words with digits must match exactly (CD4 is not CD8), and no
   word may be left over on either side.

Anything else gets no suggestion, and the message says how to ask for the test to be added.
Candidates come from rapidfuzz (token-sort similarity), which is imported only when a name is
unknown. The tests measure it on real-world names (``tests/data/test-names.yaml``) and on
hand-labelled slips and look-alikes (``tests/data/test-name-suggestions.yaml``): no suggestion
may name a different test.
"""

from __future__ import annotations

import re
import unicodedata
from collections.abc import Iterable, Sequence
from functools import lru_cache
from typing import TYPE_CHECKING

if TYPE_CHECKING:
    from casebank.format.catalog import Catalog, CatalogTest

# Words that never change which test is meant.
FILLER = frozenset(
    [
        "a",
        "an",
        "and",
        "the",
        "of",
        "for",
        "in",
        "on",
        "with",
        "to",
        "test",
        "tests",
        "level",
        "levels",
        "measurement",
        "measurements",
        "study",
        "studies",
        "scan",
        "scans",
        "assay",
        "assays",
        "screen",
        "screening",
        "count",
        "value",
        "values",
        "result",
        "results",
        "investigation",
        "analysis",
        "serum",
    ]
)
# Words that, alone, name a kind of sample or a department, never one test ("Blood tests",
# "Urine", "Biochemistry" are headings): a name made only of them matches nothing.
GENERIC = frozenset(
    [
        "blood",
        "bloods",
        "urine",
        "stool",
        "plasma",
        "sputum",
        "fluid",
        "tissue",
        "chemistry",
        "biochemistry",
        "hematology",
        "microbiology",
        "radiology",
        "lab",
        "laboratory",
        "labs",
        "panel",
        "profile",
        "xray",
        "ultrasound",
        "ct",
        "mri",
        "physical",
        "exam",
        "examination",
        "general",
        "other",
        "antibody",
        "antigen",
    ]
)
# Words that name the same thing, folded to one spelling.
SYNONYMS = {
    "xr": "xray",
    "radiograph": "xray",
    "radiography": "xray",
    "film": "xray",
    "films": "xray",
    "cxr": "chest xray",
    "us": "ultrasound",
    "usg": "ultrasound",
    "ultrasonography": "ultrasound",
    "sonography": "ultrasound",
    "sonogram": "ultrasound",
    "computed": "ct",
    "tomography": "",
    "cat": "ct",
    "magnetic": "mri",
    "resonance": "",
    "imaging": "",
    "mr": "mri",
    "ekg": "ecg",
    "electrocardiogram": "ecg",
    "electrocardiography": "ecg",
    "abdominal": "abdomen",
    "abd": "abdomen",
    "pelvic": "pelvis",
    "thoracic": "chest",
    "thorax": "chest",
    "hepatic": "liver",
    "renal": "kidney",
    "kidneys": "kidney",
    "cranial": "head",
    "leucocyte": "leukocyte",
    "leucocytes": "leukocyte",
    "wbc": "white blood cell",
    "rbc": "red blood cell",
}
_SPELLING = (
    ("haem", "hem"),
    ("oesoph", "esoph"),
    ("oestr", "estr"),
    ("foet", "fet"),
    ("anaem", "anem"),
    ("paed", "ped"),
    ("aem", "em"),
    ("tumour", "tumor"),
    ("colour", "color"),
    ("isation", "ization"),
    ("yse", "yze"),
    ("sulph", "sulf"),
    ("caes", "ces"),
)
_WORD = re.compile(r"[a-z0-9]+")
# A spelling slip: the same first letter and a normalised similarity of at least this, counting
# a swap of two neighbouring letters as one slip (optimal string alignment): one slip in a word
# of seven letters or more ("Troponine", "Calcuim"); never "Wrist" for "Waist" or "Endoscopy"
# for "Fundoscopy".
NEAR_MISS = 0.85
SHORTLIST = 8


def _spell(word: str) -> str:
    for british, american in _SPELLING:
        word = word.replace(british, american)
    if len(word) > 3 and word.endswith("ies"):
        return word[:-3] + "y"
    if len(word) > 3 and word.endswith("s") and not word.endswith(("ss", "us", "is")):
        return word[:-1]
    return word


@lru_cache(maxsize=65536)
def words(name: str) -> tuple[str, ...]:
    """The normalised words of a test name, sorted (word order never matters)."""
    text = unicodedata.normalize("NFKC", name).casefold().replace("x-ray", "xray")
    text = text.replace("x ray", "xray").replace("_", " ")
    out: list[str] = []
    for raw in _WORD.findall(text):
        for word in SYNONYMS.get(raw, raw).split():
            word = _spell(word)
            if word and word not in FILLER:
                out.append(word)
    return tuple(sorted(out))


def key(name: str) -> str:
    """A test name reduced to what it means: equal keys are the same test."""
    return " ".join(words(name))


def _pairs(query: tuple[str, ...], candidate: tuple[str, ...]) -> bool:
    """Every word pairs one to one: equal, or a near-miss of a long word without digits."""
    if len(query) != len(candidate):
        return False
    from rapidfuzz.distance import OSA

    left = list(candidate)
    for word in query:
        match = next((c for c in left if c == word), None)
        if match is None and len(word) >= 5 and not any(ch.isdigit() for ch in word):
            match = next(
                (
                    c
                    for c in left
                    if len(c) >= 5
                    and c[0] == word[0]
                    and not any(ch.isdigit() for ch in c)
                    and OSA.normalized_similarity(word, c) >= NEAR_MISS
                ),
                None,
            )
        if match is None:
            return False
        left.remove(match)
    return not left


class NameIndex:
    """Every catalog spelling by its key, for exact and near matching."""

    def __init__(self, spellings: Iterable[str]) -> None:
        self.by_key: dict[str, str] = {}
        for spelling in spellings:
            self.by_key.setdefault(key(spelling), spelling)
        self.keys = list(self.by_key)

    def exact(self, name: str) -> str | None:
        found = key(name)
        if not found or set(found.split()) <= GENERIC:
            return None
        return self.by_key.get(found)

    def suggest(self, name: str) -> str | None:
        exact = self.exact(name)
        if exact is not None:
            return exact
        wanted = key(name)
        if not wanted or set(wanted.split()) <= GENERIC:
            return None
        from rapidfuzz import fuzz, process

        query = words(name)
        for found, _score, _ in process.extract(
            wanted, self.keys, scorer=fuzz.token_sort_ratio, limit=SHORTLIST, score_cutoff=70
        ):
            if _pairs(query, tuple(found.split())):
                return self.by_key[found]
        return None


def suggest(name: str, catalog: Catalog) -> str | None:
    """A catalog name or alias that clearly means ``name``, or None when none does."""
    return catalog.name_index().suggest(name)


# Words of the body sites that come in pairs: only a test of such a site is ordered with a side.
PAIRED_SITES = frozenset(
    [
        "eye", "orbit", "ear", "breast", "axilla", "lung", "kidney", "ureter", "adrenal",
        "testis", "testicle", "scrotum", "ovary", "shoulder", "arm", "elbow", "forearm", "wrist",
        "hand", "finger", "thumb", "hip", "thigh", "femur", "knee", "leg", "ankle", "foot", "toe",
        "heel", "limb", "extremity", "carotid", "temporal", "temporomandibular", "sacroiliac",
        "salivary", "parotid",
    ]
)  # fmt: skip
_SIDE = re.compile(r"\b(left|right|bilateral|both)\b", re.IGNORECASE)


def split_side(name: str) -> tuple[str, str] | None:
    """The name without its one side word, and the side as a `laterality` value ("X-Ray Left
    Knee": "X-Ray Knee", "left"; "both" is bilateral); None when the name states no side, or
    more than one."""
    sides = {m.casefold().replace("both", "bilateral") for m in _SIDE.findall(name)}
    if len(sides) != 1:
        return None
    return " ".join(_SIDE.sub(" ", name).split()), sides.pop()


def suggest_sided(name: str, catalog: Catalog) -> tuple[str, str] | None:
    """For an unknown name that carries a side ("X-Ray Left Knee"): the catalog spelling the
    rest clearly means and the side, to be written as the order's or result's `laterality`.
    Only for a test of a paired site: "Right heart catheterisation" is not a heart
    catheterisation on the right."""
    split = split_side(name)
    if split is None:
        return None
    rest, side = split
    spelling = suggest(rest, catalog)
    test = catalog.resolve(spelling) if spelling is not None else None
    if spelling is None or test is None or not set(words(test.site or "")) & PAIRED_SITES:
        return None
    return spelling, side


def resolve_loosely(name: str, catalog: Catalog) -> str | None:
    """The catalog spelling whose words are exactly ``name``'s (no spelling slips): how an
    importer or a harness maps an outside name onto the catalog without guessing."""
    return catalog.name_index().exact(name)


def resolve_in(
    name: str, within: str | Sequence[str] | None, catalog: Catalog
) -> CatalogTest | None:
    """The test ``name`` means when read under the heading ``within`` (a panel, a procedure,
    a specimen: "Na" under "Urinalysis" is urine sodium; a list of headings, outermost first,
    when a heading's own heading decides), or None. What an importer uses for names from
    outside: catalog names and aliases first (a panel's own names for its members before all
    others), then the same words as a catalog spelling, then the name with its heading
    ("Culture" under "Stool test" is a stool culture), then a safe suggestion."""
    headings = [within] if isinstance(within, str) else list(within or ())
    named = [t for h in headings if (t := _heading(h, catalog)) is not None]
    panel = named[-1] if named else None
    within = headings[-1] if headings else None
    test = catalog.resolve(name, panel=panel)
    index = catalog.name_index()
    if test is None:
        spelling = index.exact(name) or (index.exact(f"{within} {name}") if within else None)
        spelling = spelling or index.suggest(name)
        test = catalog.resolve(spelling) if spelling else None
    specimen = None
    for heading in reversed(headings):  # the innermost heading that implies a specimen
        specimen = _specimen_of(heading, _heading(heading, catalog), catalog)
        if specimen:
            break
    if test is not None and specimen and test.specimen and test.specimen != specimen:
        for base in dict.fromkeys((name, test.name, *test.aliases)):
            other = index.exact(f"{specimen} {base}")
            found = catalog.resolve(other) if other else None
            if found is not None and found.specimen == specimen:
                return found
    return test


def _heading(within: str, catalog: Catalog) -> CatalogTest | None:
    """The test a heading names: itself, or its longest leading words that name one
    ("Arthrocentesis of Right Knee" is a joint aspiration)."""
    parts = within.replace("_", " ").split()
    for end in range(len(parts), 0, -1):
        text = " ".join(parts[:end])
        found = catalog.resolve(text)
        if found is None:
            spelling = catalog.name_index().exact(text)
            found = catalog.resolve(spelling) if spelling else None
        if found is not None:
            return found
    return None


def _specimen_of(within: str | None, panel: CatalogTest | None, catalog: Catalog) -> str | None:
    """The specimen a heading implies: its test's, or the one its words name ("Urine")."""
    if not within:
        return None
    if panel is not None and panel.specimen:
        return panel.specimen
    heading = f" {key(within)} "
    named = [s for s in catalog.specimens if f" {key(s)} " in heading and key(s)]
    return max(named, key=len) if named else None


# What an order may say besides the test: when it is taken and how often. "Paracetamol level
# at 4 hours", "Troponin at 0 and 1 h", "Repeat lactate", "Serial troponins (x2)". A 24-hour
# collection is another test, not a timing, and stays.
_TIMING = re.compile(
    r"\(.*?\)"
    r"|\b(?:at|after|from|by)?\s*(?!24\b)\d+(?:\.\d+)?(?:\s*(?:,|and|&|\+|/|-|–|then|to)\s*\d+(?:\.\d+)?)*"
    r"[\s-]*(?:h|hr|hrs|hour|hours|min|mins|minute|minutes)\b(?:\s+(?:post|after)[\w\s-]*$)?"
    r"|\b(?:x|×)\s*\d+\b|\b\d+\s*(?:x|×)\b"
    r"|\b(?:at presentation|on arrival|on admission|now|stat|urgent|urgently|repeat|repeated"
    r"|serial|baseline|initial|timed|post[- ]ingestion)\b",
    re.IGNORECASE,
)


def clean_order(name: str) -> str:
    """An order with its timing and repetition taken out ("Paracetamol level at 4 hours" is
    "Paracetamol level"), or the name itself when nothing else is left: what the scorer
    resolves when the name as written is not a test."""
    cleaned = " ".join(_TIMING.sub(" ", name).split()).strip(" ,;:-")
    return cleaned or name
