"""Diagnosis matching for ``casebank-score/2``: clinical wording read, never a silent 0.

An answer and each of the case's answers are read into a ``Phrase``: its head (the condition
named before any clause), its clauses ("due to", "secondary to", "with", "complicated by",
"in", a comma's or a parenthesis's addition, and the cause in "gliclazide-induced"), what it
excludes ("without aura"), and its qualifiers (side, severity, stage; hedges such as
"probable" are dropped). Words are compared after folding UK and US spellings, a short list
of synonyms, the catalog's abbreviations and connecting words, in any order.

An answer then relates to each of the case's answers as ``equal``, ``more_specific`` (it says
more, and everything more it says is something the case says of its diagnosis),
``less_specific`` (it leaves out what the case's answer says), ``unexplained`` (it says more,
and not all of it is in the case) or ``unrelated``. The credit (docs/scoring.md):

1. an answer the case lists, read the same way, earns what the case gives it;
2. a side, or an exclusion, the case contradicts ("left" for a right-sided case, "with aura"
   for "without aura") earns 0;
3. the diagnosis or an accepted answer, equal or more specific: 1;
4. a partial-credit answer, equal or more specific: its share;
5. a differential diagnosis the case names as such: 0;
6. anything said that the case does not say: undecided (a judge item, ``diagnosis.equivalent``;
   a "no" leaves the best share of step 4, or 0);
7. less specific than an accepted answer and given no partial credit: 0;
8. anything else: undecided.

A code (ICD-10, ICD-11, SNOMED CT) is an answer too: the case's code, or an ICD-10 code below
it, earns 1; the ICD-10 category above it is less specific; another code is undecided.
"""

from __future__ import annotations

import re
import unicodedata
from collections.abc import Iterable, Mapping
from dataclasses import dataclass, field
from typing import Any

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
)
# Words that name the same thing, folded to one spelling (the first of each list).
_SYNONYMS = {
    word: group[0]
    for group in (
        ("vein", "venous"),
        ("ureteric", "ureteral"),
        ("stone", "calculus", "calculi", "stones"),
        ("drug", "medication", "medicine", "drugs", "medications"),
        ("bleeding", "hemorrhage", "bleed", "hemorrhagic"),
        ("infarction", "infarct"),
        ("embolism", "emboli", "embolus"),
        ("fibroid", "leiomyoma", "myoma"),
        ("kidney", "renal"),
        ("heart", "cardiac"),
        ("bilateral", "both"),
    )
    for word in group
}
_PHRASES = {"menorrhagia": "heavy menstrual bleeding"}
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
        "patient", "known"
    ]
)  # fmt: skip
_KEEP_NEXT = frozenset(["type", "stage", "grade", "class", "group"])
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
# Words that start a clause: what caused it, what came with it, where it happened.
_CONNECTORS = (
    "on a background of",
    "on background of",
    "as a result of",
    "secondary to",
    "due to",
    "caused by",
    "because of",
    "precipitated by",
    "triggered by",
    "provoked by",
    "induced by",
    "complicated by",
    "associated with",
    "related to",
    "resulting from",
    "with",
    "from",
    "after",
    "following",
    "in",
    "plus",
)
# The same words written before the head ("gliclazide-induced hypoglycaemia"): what comes
# before them is a cause.
_POSTFIX = frozenset(
    [
        "induced", "associated", "related", "provoked", "triggered", "precipitated", "mediated"
    ]
)  # fmt: skip
_NEGATION = "without"
# An answer that names nothing ("Unknown", "Not sure") is no diagnosis, not a question.
_NO_ANSWER = frozenset(
    [
        "unknown", "unclear", "uncertain", "unsure", "not", "sure", "none", "nil", "na", "idk"
    ]
)  # fmt: skip


@dataclass(frozen=True)
class Phrase:
    """A diagnosis as read: the words of its head, of each clause, what it excludes, and its
    qualifiers (``side:left``, ``severity:mild``, ``stage:3b``)."""

    text: str
    head: frozenset[str]
    clauses: tuple[frozenset[str], ...]
    excluded: frozenset[str]
    qualifiers: frozenset[str]

    @property
    def words(self) -> frozenset[str]:
        return self.head.union(*self.clauses)

    @property
    def key(self) -> tuple[frozenset[str], frozenset[str], frozenset[str], frozenset[str]]:
        """Equal keys are the same answer, whatever the word order and connecting words."""
        return self.head, self.words, self.excluded, self.qualifiers

    def kind(self, prefix: str) -> frozenset[str]:
        return frozenset(q for q in self.qualifiers if q.startswith(prefix))


def _fold(word: str) -> str:
    for pattern, replacement in _SPELLING:
        word = pattern.sub(replacement, word)
    if len(word) > 4 and word.endswith("s") and not word.endswith(("ss", "us", "is", "sis")):
        word = word[:-1]
    return _SYNONYMS.get(word, word)


def _tokens(text: str, abbreviations: Mapping[str, str]) -> list[str]:
    """The words of a text: folded, abbreviations expanded, prefixes joined on."""
    out: list[str] = []
    for raw in re.findall(r"[a-z0-9]+", text):
        expansion = abbreviations.get(raw) or _PHRASES.get(raw)
        out.extend(expansion.split() if expansion else [raw])
    joined: list[str] = []
    for word in out:
        if joined and joined[-1] in _JOINED:
            joined[-1] += word
        else:
            joined.append(word)
    return [_fold(w) for w in joined]


def _clean(text: str) -> str:
    text = unicodedata.normalize("NFKC", text).casefold().replace("’", "'")
    text = re.sub(r"'s\b|(?<=s)'", "", text)
    text = text.replace("life-threatening", "lifethreatening").replace(
        "life threatening", "lifethreatening"
    )
    return _HEDGES.sub(" ", text)


def _segments(text: str) -> list[str]:
    """The text, then what its parentheses add, then what its commas and colons add."""
    inner = re.findall(r"\(([^()]*)\)", text)
    rest = re.sub(r"\([^()]*\)", " ", text)
    return [*re.split(r"[,;:]", rest), *inner]


def _split(words: list[str]) -> tuple[list[str], list[list[str]], list[str]]:
    """Head words, clauses and excluded words of one segment's words."""
    head: list[str] = []
    clauses: list[list[str]] = []
    excluded: list[str] = []
    current = head
    i = 0
    while i < len(words):
        step = _connector(words, i)
        if step:
            current = []
            clauses.append(current)
            i += step
        elif words[i] == _NEGATION:
            current = excluded
            i += 1
        elif words[i] in _POSTFIX and current is head and head:
            clauses.append(list(head))  # "gliclazide induced hypoglycemia": a cause first
            head.clear()
            i += 1
        else:
            current.append(words[i])
            i += 1
    return head, clauses, excluded


def _connector(words: list[str], i: int) -> int:
    for phrase in _CONNECTORS:
        parts = phrase.split()
        if words[i : i + len(parts)] == parts:
            return len(parts)
    return 0


def _content(words: Iterable[str]) -> tuple[set[str], set[str]]:
    """The words that name things, and the qualifiers among them."""
    content: set[str] = set()
    qualifiers: set[str] = set()
    listed = list(words)
    skip = False
    for i, word in enumerate(listed):
        following = listed[i + 1] if i + 1 < len(listed) else ""
        if skip:
            skip = False
        elif word in _STAGED and following:
            qualifiers.add(f"{word}:{_ROMAN.get(following, following)}")
            skip = True
        elif word in _KEEP_NEXT and following:
            content |= {word, _ROMAN.get(following, following)}
            skip = True
        elif word in SIDES:
            qualifiers.add(f"side:{word}")
        elif word in SEVERITIES:
            qualifiers.add(f"severity:{word}")
        elif following == "degree" and word in _ORDINAL:
            content.add(_ORDINAL[word])
        elif word not in _FILLER:
            content.add(word)
    return content, qualifiers


def read(text: str, abbreviations: Mapping[str, str] = {}) -> Phrase:
    """A diagnosis as ``Phrase`` (``abbreviations``: folded short form -> expansion)."""
    heads: set[str] = set()
    clauses: list[frozenset[str]] = []
    excluded: set[str] = set()
    qualifiers: set[str] = set()
    for number, segment in enumerate(_segments(_clean(text))):
        head, inner, negated = _split(_tokens(segment, abbreviations))
        parts = [head, *[c for clause in inner for c in _and_clauses(clause)]]
        for index, part in enumerate(parts):
            words, found = _content(part)
            qualifiers |= found
            if index == 0 and number == 0:
                heads |= words
            elif words:
                clauses.append(frozenset(words))
        words, found = _content(negated)
        excluded |= words
        qualifiers |= found
    return Phrase(
        text, frozenset(heads), tuple(clauses), frozenset(excluded), frozenset(qualifiers)
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


def relate(answer: Phrase, accepted: Phrase, vocabulary: frozenset[str] | None) -> str:
    """How ``answer`` relates to one of the case's answers. With ``vocabulary`` (the words the
    case uses of its diagnosis), what the answer says beyond ``accepted`` must be in it, or
    the relation is ``unexplained``; without, anything more is ``more_specific``."""
    if not answer.head or not accepted.head:
        return UNRELATED
    if answer.head == accepted.head or answer.head > accepted.head:
        head_less = False
    elif answer.head < accepted.head:
        head_less = True
    else:
        return UNRELATED
    extra_head = answer.head - accepted.head
    uncovered = [
        c
        for c in accepted.clauses
        if not any(c <= s for s in answer.clauses) and not c <= extra_head
    ]
    extra = [s for s in answer.clauses if not any(c <= s for c in accepted.clauses)]
    said = set(extra_head).union(*extra) | answer.excluded - accepted.excluded
    if vocabulary is not None and not said <= vocabulary:
        return UNEXPLAINED
    if head_less or uncovered:
        return LESS
    return MORE if said or extra else EQUAL


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
    differential: list[Phrase]
    listed: dict[tuple[frozenset[str], ...], float]
    vocabulary: frozenset[str]
    sides: frozenset[str]
    severities: frozenset[str]
    stages: frozenset[str]
    excluded: frozenset[str]
    codes: dict[str, frozenset[str]]
    abbreviations: Mapping[str, str]
    _seen: dict[str, Match] = field(default_factory=dict, repr=False)

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
        relations = [(relate(phrase, a, self.vocabulary), a.text) for a in self.full]
        for relation, text in relations:
            if relation in (EQUAL, MORE) and self._qualified(phrase):
                return Match(1.0, relation, text)
        share, by = self._partial(phrase)
        unexplained = any(r == UNEXPLAINED for r, _ in relations) or not self._qualified(phrase)
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
        best: tuple[float | None, str | None] = (None, None)
        for accepted, share in self.partial:
            words = self.vocabulary | accepted.words
            sides = self.sides | accepted.kind("side:")
            fits = relate(phrase, accepted, words) in (EQUAL, MORE)
            if fits and phrase.kind("side:") <= sides and (best[0] is None or share > best[0]):
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
        return bool(phrase.words & self.excluded) or bool(phrase.excluded & self.vocabulary)

    def _qualified(self, phrase: Phrase) -> bool:
        """Every side, severity and stage the answer gives is one the case gives."""
        return (
            phrase.kind("side:") <= self.sides
            and phrase.kind("severity:") <= self.severities
            and phrase.kind("stage:") | phrase.kind("grade:") | phrase.kind("class:") <= self.stages
        )

    def _code(self, answer: str) -> Match | None:
        found = _CODE.match(answer.casefold())
        if found is None or not any(self.codes.values()):
            return None
        code = found.group(2).upper()
        system = (found.group(1) or "").replace("-", "").replace(" ", "")
        system = {"icd10cm": "icd10", "snomedct": "snomed", "sctid": "snomed"}.get(system, system)
        shapes = (
            [system] if system else [s for s, shape in _CODE_SHAPES.items() if shape.match(code)]
        )
        if not shapes or not any(_CODE_SHAPES[s].match(code) for s in shapes):
            return None
        for name in shapes:
            for known in self.codes.get(name, ()):
                if code == known or (name == "icd10" and code.startswith(known)):
                    return Match(1.0, EQUAL if code == known else MORE, f"{name} {known}")
                if name == "icd10" and known.startswith(code):
                    return Match(0.0, LESS, f"{name} {known}")
        return Match(None, UNRELATED)


def _texts(value: Any) -> list[str]:
    return [v for v in value if isinstance(v, str)] if isinstance(value, list) else []


def _dict(value: Any) -> Mapping[str, Any]:
    return value if isinstance(value, dict) else {}


def diagnosis_key(data: Mapping[str, Any], abbreviations: Mapping[str, str]) -> DiagnosisKey:
    """What matching needs of one case (``abbreviations``: the catalog's, as written)."""
    folded = {
        " ".join(re.findall(r"[a-z0-9]+", _clean(k))): " ".join(re.findall(r"[a-z0-9]+", _clean(v)))
        for k, v in abbreviations.items()
    }
    truth = _dict(data.get("ground_truth"))
    scoring = _dict(data.get("scoring"))
    accepted = _dict(scoring.get("acceptable_answers"))
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
    # A differential entry that is the diagnosis said otherwise, or more or less of it, is
    # no evidence against an answer; only the other conditions are.
    differential = [
        p
        for p in (read(t, folded) for t in _texts(truth.get("differential")))
        if p.key not in listed and all(relate(p, a, None) == UNRELATED for a in full)
    ]
    codes = {
        system: frozenset(c.upper() for c in _texts(values))
        for system, values in _dict(accepted.get("codes")).items()
    }
    return DiagnosisKey(
        final=final,
        full=full,
        partial=partial,
        differential=differential,
        listed=listed,
        vocabulary=frozenset().union(*(p.words for p in full))
        - frozenset().union(*(p.excluded for p in full)),
        sides=frozenset().union(*(p.kind("side:") for p in full)),
        severities=frozenset().union(*(p.kind("severity:") for p in full)),
        stages=frozenset(q for p in full for q in p.qualifiers if q.split(":")[0] in _STAGED),
        excluded=frozenset().union(*(p.excluded for p in full)),
        codes=codes,
        abbreviations=folded,
    )
