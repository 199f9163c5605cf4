"""Diagnosis matching for ``casebank-score/2``: clinical wording read, never a silent 0.

An answer and each of the case's answers are read into a ``Phrase``: its head (the condition
named before any clause), its clauses ("due to", "secondary to", "with", "complicated by",
"in", what a comma or a parenthesis adds, and the cause in "gliclazide-induced"), what it
excludes ("without aura"), and its qualifiers (side, severity, stage; hedges such as
"probable" are dropped). Words are compared after folding UK and US spellings, a short list
of synonyms, the catalog's abbreviations and connecting words, in any order.

An answer then relates to each of the case's answers as ``equal``, ``more_specific`` (it says
more, and everything more it says the case says too), ``less_specific`` (it leaves out what
the case's answer says), ``unexplained`` (it says more, and not all of it is in the case) or
``unrelated``. What the case "says" is its diagnosis and accepted answers, the answers it
gives partial credit, and the facts of the case (history, examination, results, severity),
less anything the case negates ("no perforation") and the words only its differential uses.
The credit (docs/scoring.md):

1. an answer the case lists, read the same way, earns what the case gives it;
2. a side, an exclusion or a kind the case contradicts ("left" for a right-sided case, "with
   aura" for "without aura", "distal" for a proximal thrombosis) earns 0;
3. the diagnosis or an accepted answer, equal or more specific: 1;
4. a partial-credit answer, equal or more specific: its share;
5. a differential diagnosis the case names as such: 0;
6. anything said that the case does not say: undecided (a judge item, ``diagnosis.equivalent``;
   a "no" leaves the best share of step 4, or 0);
7. less specific than an accepted answer and given no partial credit: 0;
8. anything else: undecided.

A code (ICD-10, ICD-11, SNOMED CT) is an answer too: the case's code earns 1; the ICD-10
category above it is less specific; a code below it (perhaps another kind) or any other code
is undecided.
"""

from __future__ import annotations

import re
import unicodedata
from collections.abc import Iterable, Mapping
from dataclasses import dataclass, field
from functools import cached_property, lru_cache
from typing import Any

from casebank.format.document import words_of

EQUAL, MORE, LESS, UNEXPLAINED, UNRELATED = (
    "equal",
    "more_specific",
    "less_specific",
    "unexplained",
    "unrelated",
)

# --- reading a phrase ------------------------------------------------------------------------

_SPELLING = (
    (re.compile(r"haem"), "hem"),
    (re.compile(r"(?<=[a-z])ae|^ae(?=[mst])"), "e"),
    (re.compile(r"oe(?=[dsltn]|a)"), "e"),
    (re.compile(r"is(e|ed|es|ing|ation|ations)$"), r"iz\1"),
    (re.compile(r"yse(d|s)?$"), r"yze\1"),
    (re.compile(r"our$"), "or"),
    (re.compile(r"tre$"), "ter"),
    (re.compile(r"sulph"), "sulf"),
    (re.compile(r"(?<=.{3})emic$"), "emia"),  # "hypoglycaemic episode" names hypoglycaemia
    (re.compile(r"(?<=.{3})otic$"), "osis"),  # "ketotic", "thrombotic"
    (re.compile(r"(?<=.{3})ally$"), "al"),  # "virally induced"
)
# Words that name the same thing, folded to one spelling (the first of each list).
_SYNONYMS = {
    word: group[0]
    for group in (
        ("vein", "venous"),
        ("ureteric", "ureteral"),
        ("stone", "calculus", "calculi", "stones"),
        ("calculous", "gallstone"),
        ("drug", "medication", "medicine", "drugs", "medications", "medicines"),
        ("bleeding", "hemorrhage", "bleed", "hemorrhagic"),
        ("infarction", "infarct"),
        ("embolism", "emboli", "embolus"),
        ("fibroid", "leiomyoma", "myoma"),
        ("kidney", "renal"),
        ("heart", "cardiac"),
        ("bilateral", "both"),
        ("aorta", "aortic"),
        ("diabete", "diabetic"),
        ("sepsis", "septic"),
        ("testis", "testicle", "testicular", "teste"),
        ("infection", "infective"),
        ("pneumococcal", "pneumoniae"),
        ("meningococcal", "meningitidis"),
        ("uncomplicated", "simple"),
        ("dilatation", "dilation"),
        ("sleepiness", "somnolence"),
        ("replacement", "arthroplasty"),
        ("postoperative", "postop"),
        ("first", "1st"),
        ("second", "2nd"),
        ("third", "3rd"),
        ("feature", "symptom"),
        ("cancer", "carcinoma"),
        ("hyperplasia", "hypertrophy", "enlargement"),
        ("metastasis", "metastases", "metastatic", "mets"),
        ("fracture", "fractured"),
        ("poisoning", "toxicity"),
        ("seizure", "fit", "convulsion"),
        ("sarcoidosis", "sarcoid"),
    )
    for word in group
}
_PHRASES = {
    "menorrhagia": "heavy menstrual bleeding",
    "echo": "echocardiography",
    "ectopic": "ectopic pregnancy",  # "a ruptured right tubal ectopic"
}
# Prefixes written apart or hyphenated ("pre-eclampsia", "non ST elevation"): joined on.
_JOINED = frozenset(
    [
        "pre", "post", "non", "anti", "sub", "hyper", "hypo", "peri", "intra", "extra", "para",
        "pseudo", "poly", "multi", "co"
    ]
)  # fmt: skip
_FILLER = frozenset(
    [
        "a", "an", "the", "of", "and", "or", "disease", "sided", "side", "segment", "mellitus",
        "patient", "known", "episode", "therapy", "treatment", "use", "at", "to"
    ]
)  # fmt: skip
_KEEP_NEXT = frozenset(["type", "stage", "grade", "class", "group", "hepatitis", "vitamin"])
_ROMAN = {"i": "1", "ii": "2", "iii": "3", "iv": "4", "v": "5"}
_ORDINAL = {"first": "1", "1st": "1", "second": "2", "2nd": "2", "third": "3", "3rd": "3"}
SIDES = frozenset(["left", "right", "bilateral", "unilateral"])
SEVERITIES = frozenset(["mild", "moderate", "severe", "lifethreatening", "massive"])
_STAGED = frozenset(["stage", "grade", "class"])
_HEDGES = re.compile(
    r"\b(?:most likely|more likely|likely|probable|probably|possible|possibly|suspected|"
    r"suspect|presumed|presumptive|query|questionable|working diagnosis(?: of)?|"
    r"diagnosis(?: of)?|impression(?: of)?|in keeping with|consistent with|suggestive of|"
    r"compatible with|picture of|clinically)\b"
)
# Words that start a clause: what caused it (a cause: its direction matters), what came with
# it or where it happened (context).
_CAUSES = (
    "as a result of",
    "secondary to",
    "due to",
    "caused by",
    "because of",
    "precipitated by",
    "triggered by",
    "provoked by",
    "induced by",
    "resulting from",
    "from",
    "after",
    "following",
)
_CONTEXT = (
    "on a background of",
    "on background of",
    "complicated by",
    "associated with",
    "related to",
    "leading to",
    "resulting in",
    "on",
    "causing",
    "affecting",
    "involving",
    "with",
    "in",
    "plus",
)
# Words after which the rest of a segment is management or reasoning, not the diagnosis
# ("... requiring acetylcysteine", "possible ESBL given recent travel").
_DROPS = frozenset(["requiring", "needing", "given", "for"])
_CONNECTORS = tuple((p.split(), p in _CAUSES) for p in (*_CAUSES, *_CONTEXT))
# The same connectors by their first word, each list in _CONNECTORS' order (the first that
# matches wins), so a word that starts none costs one dictionary lookup.
_CONNECTORS_FROM: dict[str, list[tuple[list[str], bool]]] = {}
for _parts, _cause in _CONNECTORS:
    _CONNECTORS_FROM.setdefault(_parts[0], []).append((_parts, _cause))
# Words that describe how a diagnosis was made or presents, never another condition.
DESCRIPTORS = frozenset(
    [
        "new", "newly", "diagnosed", "diagnosis", "onset", "duration", "typical", "positive",
        "confirmed", "proven", "presentation", "phenotype", "stage", "only", "involvement",
        "man", "woman", "male", "female", "boy", "girl", "child", "infant", "baby", "adult",
        "year", "old", "month", "week", "day", "aged", "elderly", "teenager", "term"
    ]
)  # fmt: skip
# The same words written before the head ("gliclazide-induced hypoglycaemia"): what comes
# before them is a cause.
_POSTFIX = frozenset(
    ["induced", "associated", "related", "provoked", "triggered", "precipitated", "mediated"]
)
_NEGATIONS = frozenset(["without", "no", "not"])
# An answer that names nothing ("Unknown", "Not sure") is no diagnosis, not a question.
_NO_ANSWER = frozenset(
    ["unknown", "unclear", "uncertain", "unsure", "not", "sure", "none", "nil", "na", "idk"]
)


@dataclass(frozen=True)
class Phrase:
    """A diagnosis as read: the words of its head, of each clause (the causes among them), what
    it excludes, and its qualifiers (``side:left``, ``severity:mild``, ``stage:3b``)."""

    text: str
    head: frozenset[str]
    clauses: tuple[frozenset[str], ...]
    causes: tuple[frozenset[str], ...]
    excluded: tuple[frozenset[str], ...]
    qualifiers: frozenset[str]

    @property
    def words(self) -> frozenset[str]:
        return self.head.union(*self.clauses)

    @property
    def excluded_words(self) -> frozenset[str]:
        return frozenset().union(*self.excluded)

    @property
    def key(self) -> tuple[frozenset[str], ...]:
        """Equal keys are the same answer, whatever the word order and connecting words."""
        return self.head, self.words, self.excluded_words, self.qualifiers

    def kind(self, prefix: str) -> frozenset[str]:
        return frozenset(q for q in self.qualifiers if q.startswith(prefix))


@lru_cache(maxsize=1 << 16)
def _fold(word: str) -> str:
    for pattern, replacement in _SPELLING:
        word = pattern.sub(replacement, word)
    if len(word) > 4 and word.endswith("s") and not word.endswith(("ss", "us", "is", "sis")):
        word = word[:-1]
    return _SYNONYMS.get(word, word)


_WORD = re.compile(r"[a-z0-9]+")
_POSSESSIVE = re.compile(r"'s\b|(?<=s)'")
_LIFE_THREATENING = re.compile(r"life[- ]threatening")
_BRACKETED = re.compile(r"\(([^()]*)\)")
_SEPARATORS = re.compile(r"[,;:]")


def _tokens(text: str, abbreviations: Mapping[str, str]) -> list[str]:
    """The words of a text: folded, abbreviations expanded, prefixes joined on."""
    joined: list[str] = []
    for raw in _WORD.findall(text):
        expansion = abbreviations.get(raw) or _PHRASES.get(raw)
        for word in expansion.split() if expansion else (raw,):
            if joined and joined[-1] in _JOINED:
                joined[-1] += word
            else:
                joined.append(word)
    return [_fold(w) for w in joined]


def _clean(text: str) -> str:
    if not text.isascii():  # ASCII is its own NFKC form
        text = unicodedata.normalize("NFKC", text).replace("’", "'")
    text = text.casefold()
    if "'" in text:
        text = _POSSESSIVE.sub("", text)
    if "threatening" in text:
        text = _LIFE_THREATENING.sub("lifethreatening", text)
    return _HEDGES.sub(" ", text)


def _segments(text: str) -> list[str]:
    """The text, then what its parentheses add, then what its commas and colons add."""
    if "(" not in text:
        return _SEPARATORS.split(text)
    inner = _BRACKETED.findall(text)
    rest = _BRACKETED.sub(" ", text)
    return [*_SEPARATORS.split(rest), *inner]


class _Parts:
    """One segment's head words, its clauses (words, is a cause) and its excluded words."""

    __slots__ = ("clauses", "excluded", "head")

    def __init__(self) -> None:
        self.head: list[str] = []
        self.clauses: list[tuple[list[str], bool]] = []
        self.excluded: list[list[str]] = []


def _split(words: list[str]) -> _Parts:
    """Head words, clauses and excluded words of one segment's words."""
    parts = _Parts()
    current = parts.head
    i = 0
    while i < len(words):
        word = words[i]
        if word in _CONNECTORS_FROM:
            step, cause = _connector(words, i)
            if step:
                current = []
                parts.clauses.append((current, cause))
                i += step
                continue
        i += 1
        if word in _DROPS:
            break
        if word in _NEGATIONS:
            current = []
            parts.excluded.append(current)
        elif word in _POSTFIX and current:
            # "gliclazide induced hypoglycemia": what came before is the cause of what follows
            parts.clauses.append((list(current), True))
            current.clear()
        else:
            current.append(word)
    return parts


def _connector(words: list[str], i: int) -> tuple[int, bool]:
    for parts, cause in _CONNECTORS_FROM.get(words[i], ()):
        if words[i : i + len(parts)] == parts:
            return len(parts), cause
    return 0, False


# The words ``_content`` reads for more than themselves.
_SPECIAL = _STAGED | _KEEP_NEXT | SIDES | SEVERITIES | _ORDINAL.keys() | _FILLER


def _content(words: Iterable[str]) -> tuple[set[str], set[str]]:
    """The words that name things, and the qualifiers among them."""
    content: set[str] = set()
    qualifiers: set[str] = set()
    listed = list(words)
    skip = False
    for i, word in enumerate(listed):
        if word not in _SPECIAL and not skip:  # most words: a plain word of the name
            if len(word) > 1:
                content.add(word)
            continue
        following = listed[i + 1] if i + 1 < len(listed) else ""
        if skip:
            skip = False
        # "stage 3b", "grade I", but "high-grade adhesive obstruction" names no grade
        elif (
            word in _STAGED
            and bool(following)
            and (len(following) <= 3 or any(c.isdigit() for c in following))
        ):
            qualifiers.add(f"{word}:{_ROMAN.get(following, following)}")
            skip = True
        elif word in _KEEP_NEXT and following:
            # one word: "type 1" is not "type" and a 1 the case says elsewhere
            content.add(f"{word}:{_ROMAN.get(following, following)}")
            skip = True
        elif word in SIDES:
            qualifiers.add(f"side:{word}")
        elif word in SEVERITIES:
            qualifiers.add(f"severity:{word}")
        elif following == "degree" and word in _ORDINAL:
            content.add(_ORDINAL[word])
        elif word not in _FILLER and len(word) > 1 and not (word in _KEEP_NEXT and not following):
            content.add(word)
    return content, qualifiers


def read(text: str, abbreviations: Mapping[str, str] = {}) -> Phrase:
    """A diagnosis as ``Phrase`` (``abbreviations``: folded short form -> expansion)."""
    heads: set[str] = set()
    clauses: list[frozenset[str]] = []
    causes: list[frozenset[str]] = []
    excluded: list[frozenset[str]] = []
    qualifiers: set[str] = set()
    for number, segment in enumerate(_segments(_clean(text))):
        parts = _split(_tokens(segment, abbreviations))
        pieces = [(parts.head, False)]
        pieces += [(c, cause) for clause, cause in parts.clauses for c in _and_clauses(clause)]
        for index, (piece, cause) in enumerate(pieces):
            words, found = _content(piece)
            qualifiers |= found
            if index == 0 and number == 0:
                heads |= words
            elif words:
                clauses.append(frozenset(words))
                if cause:
                    causes.append(frozenset(words))
        for negated in parts.excluded:
            words, found = _content(negated)
            qualifiers |= found
            if words:
                excluded.append(frozenset(words))
    return Phrase(
        text,
        frozenset(heads),
        tuple(clauses),
        tuple(causes),
        tuple(excluded),
        frozenset(qualifiers),
    )


def _and_clauses(words: list[str]) -> list[list[str]]:
    """A clause of several causes ("UTI, drugs and hyponatraemia"): one clause each."""
    out: list[list[str]] = [[]]
    for word in words:
        if word == "and":
            out.append([])
        else:
            out[-1].append(word)
    return [part for part in out if part]


# --- relating two phrases --------------------------------------------------------------------


@dataclass(frozen=True)
class Context:
    """What the case says, against which what an answer adds is read: ``named`` (the words of
    its diagnosis and the answers it credits: what may qualify the condition itself),
    ``said`` (those and the words of its facts: what a clause may add), ``absent`` (what it
    rules out or names only as another diagnosis: an answer may exclude these), and ``names``
    (the heads of its accepted names, so that a clause naming the diagnosis one way covers
    one naming it another way)."""

    named: frozenset[str]
    said: frozenset[str]
    absent: frozenset[str] = frozenset()
    names: tuple[frozenset[str], ...] = ()

    def widened(self, words: frozenset[str]) -> Context:
        return Context(self.named | words, self.said | words, self.absent, self.names)

    def names_it(self, words: frozenset[str]) -> bool:
        return any(words >= name for name in self.names)

    def rules_out(self, word: str) -> bool:
        """A "non-" word for what the case rules out ("non-perforated", "non-psychotic")."""
        if not word.startswith("non") or len(word) < 7:
            return False
        rest = _stem(word[3:])
        if any(_stem(n) == rest for n in self.named):
            return False  # "non-diabetic" of a diabetes: not ruled out, contradicted
        return any(_stem(a) == rest for a in self.absent)


def relate(answer: Phrase, accepted: Phrase, context: Context | None) -> str:
    """How ``answer`` relates to one of the case's answers. With ``context``, what the answer
    says beyond ``accepted`` must be something the case says, or the relation is
    ``unexplained``; without, anything more is ``more_specific``."""
    if not answer.head or not accepted.head:
        return UNRELATED
    if answer.head < accepted.head and accepted.head - answer.head <= answer.words:
        # "haemorrhage from a duodenal ulcer": what the head leaves out, a clause says
        return _relate_by_words(answer, accepted, context)
    if answer.head >= accepted.head or answer.head < accepted.head:
        return _relate_by_head(answer, accepted, context)
    return _relate_by_words(answer, accepted, context)


def _relate_by_head(answer: Phrase, accepted: Phrase, context: Context | None) -> str:
    names = context.names_it if context is not None else (lambda _: False)
    extra_head = answer.head - accepted.head

    def covers(mine: frozenset[str], theirs: frozenset[str]) -> bool:
        return theirs <= mine or (names(mine) and names(theirs))

    uncovered = [
        c
        for c in accepted.clauses
        if not c <= extra_head and not any(covers(s, c) for s in answer.clauses)
    ]
    extra = [s for s in answer.clauses if not any(covers(s, c) for c in accepted.clauses)]
    said = set(extra_head).union(*extra)
    excluding = answer.excluded_words - accepted.excluded_words
    claimed = set(extra_head).union(*(c for c in extra if c in answer.causes))
    verdict = _explained(said, excluding, context, claimed)
    if verdict is not None:
        return verdict
    if answer.head < accepted.head or uncovered:
        return LESS
    return MORE if said or excluding else EQUAL


def _relate_by_words(answer: Phrase, accepted: Phrase, context: Context | None) -> str:
    """Heads that differ because the words sit differently ("duodenal ulcer haemorrhage",
    "haemorrhage from a duodenal ulcer"): compared by all their words, unless one's head is
    the other's cause (hyponatraemia due to delirium is not delirium due to hyponatraemia)."""
    mine, theirs = answer.words, accepted.words
    if not (answer.head <= theirs and accepted.head <= mine):
        return UNRELATED
    if any(answer.head <= c for c in accepted.causes) or any(
        accepted.head <= c for c in answer.causes
    ):
        return UNRELATED
    if mine >= theirs:
        excluding = answer.excluded_words - accepted.excluded_words
        claimed = (answer.head | frozenset().union(*answer.causes)) - theirs
        verdict = _explained(set(mine - theirs), excluding, context, claimed)
        if verdict is not None:
            return verdict
        return MORE if mine > theirs or excluding else EQUAL
    return LESS if mine < theirs else UNRELATED


def _explained(
    said: set[str],
    excluding: frozenset[str],
    context: Context | None,
    qualifying: Iterable[str] = (),
) -> str | None:
    """None when everything the answer adds is something the case says: what qualifies the
    condition itself or claims its cause (``qualifying``: "hospital-acquired", "viral",
    "type 1", "alcohol-induced") from its diagnosis and credited answers, what a clause of
    context adds ("with a 4 kHz notch", "(K 7.1)") from its facts too."""
    if context is None:
        return None
    unsaid = {w for w in said - DESCRIPTORS - context.said if not context.rules_out(w)}
    unsaid |= {
        w
        for w in qualifying
        if w not in context.named and w not in DESCRIPTORS and not context.rules_out(w)
    }
    if "chronic" not in context.named:
        unsaid.discard("acute")  # an acute presentation of what the case never calls chronic
    if unsaid or not excluding <= context.said | context.absent:
        return UNEXPLAINED
    return None


def _stem(word: str) -> str:
    return re.sub(r"(ation|ion|ed|ic|osis|ive|e)$", "", word)


# --- the case's answers ----------------------------------------------------------------------

_CODE = re.compile(
    r"^\s*(?:(icd-?10(?:-cm)?|icd-?11|snomed(?: ct)?|sctid)\s*[:#]?\s*)?([a-z0-9.]+)\s*$"
)
_CODE_SHAPES = {
    "icd10": re.compile(r"^[A-Z][0-9][0-9A-Z](\.[0-9A-Z]{1,4})?$"),
    "icd11": re.compile(r"^[1-9A-X][A-Z][0-9][0-9A-Z](\.[0-9A-Z]{1,2})?$"),
    "snomed": re.compile(r"^[1-9][0-9]{5,17}$"),
}


@dataclass(frozen=True)
class Match:
    """What the matcher decided: ``credit`` (None: a judge decides), the relation, the case's
    answer it was decided by, and the credit a judge's "not equivalent" leaves (``floor``)."""

    credit: float | None
    relation: str
    matched: str | None = None
    floor: float = 0.0

    @property
    def pending(self) -> bool:
        return self.credit is None


@dataclass
class DiagnosisKey:
    """One case's answers, read once: what ``match`` compares an answer with."""

    final: str
    full: list[Phrase]
    partial: list[tuple[Phrase, float]]
    listed: dict[tuple[frozenset[str], ...], float]
    data: Mapping[str, Any]  # the case, read for its facts only when an answer needs them
    vocabulary: frozenset[str]  # the words of the diagnosis and its accepted answers
    sides: frozenset[str]
    excluded: tuple[frozenset[str], ...]
    codes: dict[str, frozenset[str]]
    abbreviations: Mapping[str, str]
    # The case's severity or stage as written: read only when an answer names a severity or
    # a stage (an answer the case lists never needs it).
    staging: str | None = None
    _seen: dict[str, Match] = field(default_factory=dict, repr=False)

    @cached_property
    def _qualifying(self) -> list[Phrase]:
        """The phrases whose severities and stages an answer may give: the case's answers
        and its severity or stage."""
        staging = [read(self.staging, self.abbreviations)] if self.staging is not None else []
        return [*self.full, *staging]

    @cached_property
    def severities(self) -> frozenset[str]:
        return frozenset().union(*(p.kind("severity:") for p in self._qualifying))

    @cached_property
    def stages(self) -> frozenset[str]:
        return frozenset().union(*(_staged(p) for p in self._qualifying))

    @cached_property
    def differential(self) -> list[Phrase]:
        """The other conditions of the differential, read on first need (an answer that is one
        of the case's own answers never needs them)."""
        # A differential entry that is the diagnosis said otherwise, or more or less of it, is
        # no evidence against an answer; only the other conditions are.
        others = [
            read(t, self.abbreviations)
            for t in _texts(_dict(self.data.get("ground_truth")).get("differential"))
        ]
        return [
            p
            for p in others
            if p.key not in self.listed and all(relate(p, a, None) == UNRELATED for a in self.full)
        ]

    @cached_property
    def context(self) -> Context:
        return _context(self.data, self.abbreviations, self.full, self.partial, self.differential)

    def match(self, answer: str) -> Match:
        found = self._seen.get(answer)
        if found is None:
            found = self._seen[answer] = self._decide(answer)
        return found

    def _decide(self, answer: str) -> Match:
        coded = self._code(answer)
        if coded is not None:
            return coded
        phrase = read(answer, self.abbreviations)
        if not phrase.head or phrase.head <= _NO_ANSWER:
            return Match(0.0, "no_diagnosis")
        if phrase.key in self.listed:
            return Match(self.listed[phrase.key], EQUAL, answer)
        if self._contradicts(phrase):
            return Match(0.0, "contradicts", self.final)
        relations = [(relate(phrase, a, self.context), a.text) for a in self.full]
        qualified = self._qualified(phrase)
        for relation, text in relations:
            if relation in (EQUAL, MORE) and qualified:
                return Match(1.0, relation, text)
        share, by = self._partial(phrase)
        unexplained = any(r == UNEXPLAINED for r, _ in relations) or not qualified
        different = self._differential(phrase)
        if different is not None and share is None:
            return Match(0.0, "differential", different)
        if unexplained:
            return Match(None, UNEXPLAINED, None, share or 0.0)
        if share is not None:
            return Match(share, "partial", by)
        less = next((t for r, t in relations if r == LESS), None)
        if less is not None:
            return Match(0.0, LESS, less)
        return Match(None, UNRELATED)

    def _partial(self, phrase: Phrase) -> tuple[float | None, str | None]:
        """The best share of a partial-credit answer the phrase is, or says more of, with no
        side or stage the case does not give (CKD G3a is no part of CKD G3b)."""
        best: tuple[float | None, str | None] = (None, None)
        staged = _staged(phrase)
        for accepted, share in self.partial:
            context = self.context.widened(accepted.words)
            sides = self.sides | accepted.kind("side:")
            fits = relate(phrase, accepted, context) in (EQUAL, MORE)
            fits = fits and phrase.kind("side:") <= sides
            fits = fits and (not staged or staged <= self.stages | _staged(accepted))
            if fits and (best[0] is None or share > best[0]):
                best = (share, accepted.text)
        return best

    def _differential(self, phrase: Phrase) -> str | None:
        for other in self.differential:
            if relate(phrase, other, None) in (EQUAL, MORE):
                return other.text
        return None

    def _contradicts(self, phrase: Phrase) -> bool:
        """The other side of a one-sided case, or what the case excludes said (or what it
        says excluded)."""
        sides = {q[5:] for q in phrase.kind("side:")}
        known = {q[5:] for q in self.sides}
        other = {"left", "right"} - known if known & {"left", "right"} else set()
        if "bilateral" not in known and sides & other:
            return True
        if any(e <= phrase.words for e in self.excluded):
            return True
        if any(e <= self.vocabulary for e in phrase.excluded):
            return True
        # "distal" for a proximal DVT, "type B" for A: in the condition named, not in what
        # the answer adds ("AKI on CKD", "the distal femoral vein")
        heads = frozenset().union(*(p.head for p in self.full))
        return any(
            a in phrase.head and b in heads and a not in self.vocabulary for a, b in _OPPOSITES
        )

    def _qualified(self, phrase: Phrase) -> bool:
        """Every side, severity and stage the answer gives is one the case gives."""
        severities, staged = phrase.kind("severity:"), _staged(phrase)
        return (
            phrase.kind("side:") <= self.sides
            and (not severities or severities <= self.severities)
            and (not staged or staged <= self.stages)
        )

    def _code(self, answer: str) -> Match | None:
        found = _CODE.match(answer.casefold())
        if found is None or not any(self.codes.values()):
            return None
        code = found.group(2).upper()
        system = (found.group(1) or "").replace("-", "").replace(" ", "")
        system = {"icd10cm": "icd10", "snomedct": "snomed", "sctid": "snomed"}.get(system, system)
        shapes = [system] if system else [s for s, form in _CODE_SHAPES.items() if form.match(code)]
        if not shapes or not any(_CODE_SHAPES[s].match(code) for s in shapes):
            return None
        for name in shapes:
            for known in self.codes.get(name, ()):
                if code == known:
                    return Match(1.0, EQUAL, f"{name} {known}")
                if name == "icd10" and code.startswith(known):
                    # a code below the case's may be the wrong subtype (G30.0 early onset
                    # under G30): a judge decides
                    return Match(None, UNEXPLAINED, f"{name} {known}")
                if name == "icd10" and known.startswith(code):
                    return Match(0.0, LESS, f"{name} {known}")
        return Match(None, UNRELATED)


# Words that name the other of two kinds of one condition: an answer saying one where the case
# says only the other contradicts it.
_OPPOSITE_PAIRS = (
    ("proximal", "distal"),
    ("acute", "chronic"),
    ("primary", "secondary"),
    ("upper", "lower"),
    ("central", "peripheral"),
    ("benign", "malignant"),
    ("complete", "incomplete"),
    ("early", "late"),
    ("type:a", "type:b"),
    ("type:1", "type:2"),
    ("infective", "noninfective"),
)
_OPPOSITES = tuple((a, b) for x, y in _OPPOSITE_PAIRS for a, b in ((x, y), (y, x)))


# --- what a case says ------------------------------------------------------------------------


def _staged(phrase: Phrase) -> frozenset[str]:
    return frozenset(q for q in phrase.qualifiers if q.split(":")[0] in _STAGED)


def _texts(value: Any) -> list[str]:
    return [v for v in value if isinstance(v, str)] if isinstance(value, list) else []


def _dict(value: Any) -> Mapping[str, Any]:
    return value if isinstance(value, dict) else {}


# What negates the words after it in a sentence ("no perforation"), or before it ("cultures
# negative", "cholangitis excluded").
_NEGATES_AFTER = frozenset(["no", "not", "without", "absent", "nil", "denies", "denied", "never"])
_NEGATES_BEFORE = frozenset(["negative", "excluded", "absent", "normal", "unremarkable"])
# The case's facts about this patient: not the family history (other people), nor the
# checklists of what to ask (key_history_points), nor what the patient does not know.
_FACTS = (
    ("patient", "age"),
    ("patient", "sex"),
    ("patient", "pmh"),
    ("patient", "meds"),
    ("patient", "allergies"),
    ("patient", "social_history"),
    ("presentation", "chief_complaint"),
    ("presentation", "history_of_present_illness"),
    ("physical_exam",),
    ("investigations", "results"),
    ("ground_truth", "severity_or_stage"),
)


def facts_of(
    data: Mapping[str, Any],
    abbreviations: Mapping[str, str],
    paths: Iterable[tuple[str, ...]] = (),
) -> tuple[set[str], set[str]]:
    """The words the case's facts affirm somewhere, and those they only ever negate."""
    affirmed: set[str] = set()
    negated: set[str] = set()
    for path in paths or _FACTS:
        value: Any = data
        for step in path:
            value = _dict(value).get(step)
        for text in words_of(value):
            # A negation reaches to the end of its sentence: "no ophthalmic, disseminated or
            # motor complication".
            for sentence in re.split(r"[.;:()\n]|\bbut\b", _clean(text)):
                words = _tokens(sentence, abbreviations)
                cut = [i for i, w in enumerate(words) if w in _NEGATES_AFTER]
                back = [i for i, w in enumerate(words) if w in _NEGATES_BEFORE]
                start = cut[0] if cut else len(words)
                stop = back[-1] if back else 0
                negated |= set(words[start:]) | set(words[:stop])
                affirmed |= set(words[stop:start])
    return affirmed, negated - affirmed


_folded_for: list[tuple[Mapping[str, str], dict[str, str]]] = []  # the last catalog's


def _folded(abbreviations: Mapping[str, str]) -> dict[str, str]:
    """The abbreviations folded as diagnoses are, once per catalog (the same mapping object
    is asked for again for every case of a run)."""
    if _folded_for and _folded_for[0][0] is abbreviations:
        return _folded_for[0][1]
    folded = {
        " ".join(re.findall(r"[a-z0-9]+", _clean(k))): " ".join(re.findall(r"[a-z0-9]+", _clean(v)))
        for k, v in abbreviations.items()
    }
    _folded_for[:] = [(abbreviations, folded)]
    return folded


def diagnosis_key(data: Mapping[str, Any], abbreviations: Mapping[str, str]) -> DiagnosisKey:
    """What matching needs of one case (``abbreviations``: the catalog's, as written)."""
    folded = _folded(abbreviations)
    truth = _dict(data.get("ground_truth"))
    accepted = _dict(_dict(data.get("scoring")).get("acceptable_answers"))
    given = truth.get("final_diagnosis")
    final = given if isinstance(given, str) else ""
    full = [read(t, folded) for t in [final, *_texts(accepted.get("final_diagnosis"))] if t]
    partial = [
        (read(text, folded), float(share))
        for text, share in _dict(accepted.get("partial_credit")).items()
        if isinstance(share, (int, float)) and not isinstance(share, bool)
    ]
    listed: dict[tuple[frozenset[str], ...], float] = {}
    for phrase, share in partial:
        listed[phrase.key] = max(share, listed.get(phrase.key, 0.0))
    for phrase in full:
        listed[phrase.key] = 1.0
    severity = truth.get("severity_or_stage")
    return DiagnosisKey(
        final=final,
        full=full,
        partial=partial,
        listed=listed,
        data=data,
        vocabulary=frozenset().union(*(p.words for p in full)),
        sides=frozenset().union(*(p.kind("side:") for p in full)),
        excluded=tuple(e for p in full for e in p.excluded),
        codes={
            system: frozenset(c.upper() for c in _texts(values))
            for system, values in _dict(accepted.get("codes")).items()
        },
        abbreviations=folded,
        staging=severity if isinstance(severity, str) else None,
    )


def _context(
    data: Mapping[str, Any],
    abbreviations: Mapping[str, str],
    full: list[Phrase],
    partial: list[tuple[Phrase, float]],
    differential: list[Phrase],
) -> Context:
    diagnosis = frozenset().union(*(p.words for p in full))
    credited = frozenset().union(*(p.words for p, share in partial if share > 0))
    # Other conditions: the differential's (its heads: "Anticholinergic drug toxicity", not the
    # drugs it names), the answers the case gives no credit, what the diagnosis excludes.
    elsewhere = frozenset().union(
        *(p.head for p in differential),
        *(p.words for p, share in partial if share == 0),
        *(p.excluded_words for p in full),
    )
    affirmed, negated = facts_of(data, abbreviations)
    staging, _ = facts_of(data, abbreviations, (("ground_truth", "severity_or_stage"),))
    # A number in a diagnosis's own name is one word with its kind ("type:1", above), so a
    # number in the facts is only ever a measurement.
    facts = frozenset(affirmed) - (elsewhere - diagnosis - credited)
    return Context(
        named=diagnosis | (frozenset(staging) - elsewhere),
        said=diagnosis | credited | facts,
        absent=frozenset(negated) | elsewhere,
        names=tuple(p.head for p in full if not p.clauses),
    )
