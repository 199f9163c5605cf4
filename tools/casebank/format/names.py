"""Matching test names the way a clinician means them, and suggesting only what is safe.

A did-you-mean that names a clinically different test is worse than none: "CD4 count" is not a
red cell count, and a tumour marker is not ionised calcium. So a name is compared as a set of
normalised words (case, punctuation, word order, British spellings, filler words such as
"level" or "test", common modality and site words, and clinicians' shorthand all folded:
"trop I" is "Troponin I", "blood cx x2" is "Blood cultures", "CT head w/o contrast" is the
non-contrast CT head, "MSU MC&S" is a urine culture), and a suggestion is made only on a strong
match:

1. the same words as a catalog name or alias, in any order ("Ultrasound of the Neck" is
   "Neck ultrasound"); or
2. every word paired one to one with a word of a catalog name or alias, where each pair is
   equal or, for words of five letters or more without digits, a near-miss of spelling
   ("Troponine", "Haemoglobn"). Words with digits must match exactly (CD4 is not CD8), and no
   word may be left over on either side.

Anything else gets no suggestion, and the message says how to ask for the test to be added. A
reading that the spellings of two tests share ("Pleural fluid MC&S", an alias of the analysis,
reads as the pleural fluid culture) is neither's. Candidates come from rapidfuzz (token-sort
similarity), which is imported only when a name is unknown. The tests measure it on real-world
names (``tests/data/test-names.yaml``), on hand-labelled slips and look-alikes
(``tests/data/test-name-suggestions.yaml``) and on clinician shorthand from order sets and
notes (``tests/data/test-shorthand.yaml``): no reading may name a different test.
"""

from __future__ import annotations

import re
import unicodedata
from collections.abc import Iterable, Mapping, Sequence
from functools import lru_cache
from typing import TYPE_CHECKING, Any

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
        # how an order is placed, never which test it is: "repeat lactate", "set of obs",
        # "ABG on air", "CBC, auto diff" ("serial" is not: serial peak flows are a test)
        "repeat",
        "stat",
        "hourly",
        "set",
        "air",
        "room",
        "auto",
        "routine",
        "iv",
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
# Words that, alone, are no one test, though beside a specimen they are ("C&S", "smear",
# "drug level": culture, smear, drug of what?).
ALONE = frozenset(["culture", "smear", "drug"])
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
    # Clinicians' shorthand for a word of a test name (order sets and notes; the labelled
    # forms are in tests/data/test-shorthand.yaml).
    "cx": "culture",
    "bcx": "blood culture",
    "ucx": "urine culture",
    "bx": "biopsy",
    "trop": "troponin",
    "tropi": "troponin i",
    "tropt": "troponin t",
    "trpi": "troponin i",
    "tropnt": "troponin t",
    "tni": "troponin i",
    "tnt": "troponin t",
    "ctni": "troponin i",
    "ctnt": "troponin t",
    "ctn": "troponin",
    "hstrop": "hs troponin",
    "hstni": "hs troponin i",
    "hstnt": "hs troponin t",
    "diff": "differential",
    "abdo": "abdomen",
    "uss": "ultrasound",
    "sono": "ultrasound",
    "lytes": "electrolyte",
    "coag": "coagulation",
    "chem": "chemistry",
    "preg": "pregnancy",
    "procal": "procalcitonin",
    "hapto": "haptoglobin",
    "mag": "magnesium",
    "gluc": "glucose",
    "chol": "cholesterol",
    "bili": "bilirubin",
    "art": "arterial",
    "resp": "respiratory",
    "hep": "hepatitis",
    "ab": "antibody",
    "quant": "quantitative",
    "micro": "microscopy",
    "tele": "telemetry",
    "cap": "capillary",
    "bg": "blood glucose",
    "lab": "laboratory",
    "bhcg": "beta hcg",
    "vit": "vitamin",
    "gc": "gonorrhea",
    "flu": "influenza",
    "spiro": "spirometry",
    "mammo": "mammography",
    "lat": "lateral",
    "brain": "head",
    "u": "urine",
    "ua": "urinalysis",
    "hb": "hemoglobin",
    "hgb": "hemoglobin",
    "le": "lower extremity",
    "glc": "glucose",
    "prot": "protein",
    "o2sat": "o2 saturation",
    "bps": "bp",
    "bgs": "blood glucose",
}
# Phrases written several ways, read as one before the words are split (in catalog names and in
# what is looked up alike, so each form matches the others).
_PHRASES = (
    (re.compile(r"(?<=\w)['’]s\b"), "s"),  # "LFT's" are LFTs
    # with and without contrast is a contrast study ("MRI brain w/wo")
    (
        re.compile(r"\bwith\s+and\s+without\s+(?:iv\s+)?contrast\b|\bw/\s*(?:and\s+w/o|wo)\b"),
        " contrast ",
    ),
    (re.compile(r"\b(?:w/o|wo)\s*$"), " noncontrast "),  # "head CT w/o": without contrast
    (re.compile(r"\bw/o\b"), " without "),
    (re.compile(r"\bw/\s*"), " with "),
    (re.compile(r"\bu/a\b"), " ua "),
    (re.compile(r"\bb/p\b"), " bp "),
    (re.compile(r"\bu/s\b"), " us "),
    (re.compile(r"\b(?:m\s*c\s*&\s*s|c\s*&\s*s)\b"), " culture "),
    (re.compile(r"\bhigh[- ]sensitivity\b"), " hs "),
    (
        re.compile(r"\b(?:non[- ]?contrast|non[- ]?con|without\s+(?:iv\s+)?contrast|unenhanced)\b"),
        " noncontrast ",
    ),
    (re.compile(r"\bcardiac troponins?\b"), " troponin "),
    (re.compile(r"\b12[- ]?leads?\b"), " ecg "),
    (re.compile(r"\b24\s*-?\s*(?:h|hr|hrs|hour|hours)\b"), " 24hour "),
    # "x2", "× 3": how many samples, not which test
    (re.compile(r"(?<![a-z0-9])[x×]\s?\d+(?![a-z0-9])"), " "),
    (re.compile(r"\b\d\s*views?\b"), " "),
)
# What every phrase above needs somewhere in the name: a name without any of these is unchanged
# by all of them, and nearly 9 catalog names in 10 skip the 16 replacements. A new phrase adds
# its own need here and its example to tests/test_names_corpus.py, which checks the two agree.
_PHRASE_NEEDS = re.compile(r"['’/&\d]|with|wo|high|non|unenhanced|cardiac")
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


@lru_cache(maxsize=65536)
def _spell(word: str) -> str:
    """A word in American spelling and singular ("haemoglobins": "hemoglobin"). Cached: a
    catalog's 8,000 spellings share a few thousand words, and every spelling is keyed when a
    name is first resolved loosely."""
    for british, american in _SPELLING:
        word = word.replace(british, american)
    if len(word) > 3 and word.endswith("ies"):
        return word[:-3] + "y"
    if len(word) > 3 and word.endswith("s") and not word.endswith(("ss", "us", "is")):
        return word[:-1]
    return word


def folded(name: str) -> str:
    """A test name as the phrases above read it: one case, one form of each character, and "x ray"
    as one word."""
    text = unicodedata.normalize("NFKC", name).casefold().replace("x-ray", "xray")
    return text.replace("x ray", "xray").replace("_", " ")


@lru_cache(maxsize=65536)
def words(name: str) -> tuple[str, ...]:
    """The normalised words of a test name, sorted and each once (word order never matters)."""
    text = folded(name)
    if _PHRASE_NEEDS.search(text):
        for pattern, replacement in _PHRASES:
            text = pattern.sub(replacement, text)
    out: set[str] = set()
    for raw in _WORD.findall(text):
        spelled = _spell(raw)
        meaning = SYNONYMS.get(raw, SYNONYMS.get(spelled, spelled))
        for word in meaning.split():
            word = _spell(word)
            if word and word not in FILLER:
                out.add(word)
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
    """Every catalog spelling by its key, for exact and near matching. A key that two tests'
    spellings share (``ambiguous``, told by :func:`index_of`) matches neither."""

    def __init__(self, spellings: Iterable[str]) -> None:
        self.by_key: dict[str, str] = {}
        for spelling in spellings:
            self.by_key.setdefault(key(spelling), spelling)
        self.keys = list(self.by_key)
        self.ambiguous: frozenset[str] | None = None

    @classmethod
    def restored(cls, stored: Mapping[str, Any]) -> NameIndex:
        """The index :meth:`stored` gave, as it was (raising ValueError for anything else)."""
        by_key, ambiguous = stored.get("by_key"), stored.get("ambiguous")
        if not (
            isinstance(by_key, dict)
            and all(isinstance(k, str) and isinstance(v, str) for k, v in by_key.items())
            and isinstance(ambiguous, list)
            and all(isinstance(k, str) for k in ambiguous)
        ):
            raise ValueError("not a stored name index")
        index = cls(())
        index.by_key, index.keys, index.ambiguous = by_key, list(by_key), frozenset(ambiguous)
        return index

    def stored(self) -> dict[str, Any]:
        """The index as JSON data, for remembering between runs (building it reads every
        spelling of the catalog: most of a `results` that orders a test by a loose name)."""
        return {"by_key": self.by_key, "ambiguous": sorted(self.ambiguous or ())}

    def exact(self, name: str) -> str | None:
        found = key(name)
        if not found or set(found.split()) <= GENERIC or found in ALONE:
            return None
        if found in (self.ambiguous or ()):
            return None
        return self.by_key.get(found)

    def suggest(self, name: str) -> str | None:
        exact = self.exact(name)
        if exact is not None:
            return exact
        wanted = key(name)
        if not wanted or set(wanted.split()) <= GENERIC or wanted in ALONE:
            return None
        from rapidfuzz import fuzz, process

        query = words(name)
        for found, _score, _ in process.extract(
            wanted, self.keys, scorer=fuzz.token_sort_ratio, limit=SHORTLIST, score_cutoff=70
        ):
            if found not in (self.ambiguous or ()) and _pairs(query, tuple(found.split())):
                return self.by_key[found]
        return None


def index_of(catalog: Catalog) -> NameIndex:
    """The catalog's name index, knowing which keys two tests share: "Pleural fluid MC&S" (an
    alias of the analysis) and "Pleural fluid culture" read alike, so that reading is neither's."""
    if catalog.name_index is None and catalog.name_memory is not None:
        catalog.name_index = catalog.name_memory.recall()
    if catalog.name_index is None:
        catalog.name_index = NameIndex(catalog.spellings().values())
    index: NameIndex = catalog.name_index
    if index.ambiguous is None:
        meanings: dict[str, set[str]] = {}
        for spelling in catalog.spellings().values():
            test = catalog.resolve(spelling)
            if test is not None:
                meanings.setdefault(key(spelling), set()).add(test.name)
        index.ambiguous = frozenset(k for k, names in meanings.items() if len(names) > 1)
        if catalog.name_memory is not None:
            catalog.name_memory.remember(index)
    return index


def suggest(name: str, catalog: Catalog) -> str | None:
    """A catalog name or alias that clearly means ``name``, or None when none does."""
    return index_of(catalog).suggest(name)


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
# A side written short before the site: "L knee XR", "Rt wrist X-ray", "bilat hips".
_SHORT_SIDE = re.compile(r"^\s*(l|r|lt|rt|bilat|b/l)\.?\s+(?=\S)", re.IGNORECASE)
_SHORT = {"l": "left", "lt": "left", "r": "right", "rt": "right", "bilat": "bilateral"}


def split_side(name: str) -> tuple[str, str] | None:
    """The name without its one side word, and the side as a `laterality` value ("X-Ray Left
    Knee": "X-Ray Knee", "left"; "both" is bilateral; "L knee XR" too, where the rest names a
    site that comes in pairs, so that "L spine" is never a left spine); None when the name
    states no side, or more than one."""
    short = _SHORT_SIDE.match(name)
    if short is not None and not _SIDE.search(name):
        rest = name[short.end() :]
        if set(words(rest)) & PAIRED_SITES:
            return rest.strip(), _SHORT.get(short.group(1).casefold(), "bilateral")
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
    return index_of(catalog).exact(name)


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
    index = index_of(catalog)
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
            spelling = index_of(catalog).exact(text)
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
    r"|\b\d+\s*units?(?:\s+of\s+(?:blood|red cells|packed red cells|rbcs?|prbcs?))?\b"
    r"|\b(?:at presentation|on arrival|on admission|now|stat|urgent|urgently|repeat|repeated"
    r"|serial|baseline|initial|timed|post[- ]ingestion|at triage|on (?:room )?air|in (?:room )?air"
    r"|seated|clinic|cath|catheter)\b"
    r"|\b(?:after|once) (?:the )?(?:seizure|fit|convulsion)s?(?: (?:has )?(?:stopped|ended))?\b",
    re.IGNORECASE,
)


def clean_order(name: str) -> str:
    """An order with its timing and repetition taken out ("Paracetamol level at 4 hours" is
    "Paracetamol level"), or the name itself when nothing else is left: what the scorer
    resolves when the name as written is not a test."""
    cleaned = " ".join(_TIMING.sub(" ", name).split()).strip(" ,;:-")
    return cleaned or name
