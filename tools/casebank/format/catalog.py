"""The global catalog of orderable tests and controlled vocabularies, as a lookup structure.

Names are compared folded (case-insensitively, runs of white space as one space). Beyond names,
the catalog states how tests relate, which the results oracle and the contradiction rule rely
on: a panel's components (and names that mean a component only inside that panel), tests whose
result answers another test (``answers``), and families of tests that report the same thing
(``family``, and imaging of one site by one modality).
"""

from __future__ import annotations

from collections.abc import Iterable, Mapping
from dataclasses import dataclass, field, fields
from functools import lru_cache
from typing import Any

# A cost's band, for comparing an amount from one schedule with a tier: the upper bound of
# each band in the schedule's own currency (an ordinal band, not an exchange rate).
COST_BANDS = (("low", 25.0), ("medium", 150.0), ("high", 750.0))


@dataclass(frozen=True)
class Cost:
    """What a test costs: an amount from a public schedule, or a relative tier."""

    amount: float | None = None
    currency: str | None = None
    year: int | None = None
    source: str | None = None
    tier: str | None = None
    code: str | None = None

    @property
    def band(self) -> str | None:
        """low, medium, high or very_high: the tier, or the band the amount falls in."""
        if self.tier is not None:
            return self.tier
        if self.amount is None:
            return None
        return next((band for band, upper in COST_BANDS if self.amount < upper), "very_high")


@dataclass(frozen=True)
class Burden:
    """What a test costs the patient besides money."""

    invasive: str = "none"  # none | minimal | invasive
    radiation_msv: float | None = 0.0  # None: no cited table gives the dose
    contrast: str = "none"  # none | iodinated | gadolinium
    sedation: bool = False


@dataclass(frozen=True)
class CatalogTest:
    """One orderable test of the catalog, its fields as the catalog's entry states them."""

    name: str
    kind: str
    result_types: tuple[str, ...]
    aliases: tuple[str, ...] = ()
    specimen: str | None = None
    modality: str | None = None
    site: str | None = None
    sex: str | None = None  # the one sex it is done for (female, male), if only one
    family: str | None = None
    unit: str | None = None
    units: tuple[str, ...] = ()
    components: tuple[str, ...] = ()
    component_aliases: Mapping[str, str] = field(default_factory=dict)
    answers: tuple[str, ...] = ()
    loinc: str | None = None
    default_result: str | None = None
    derive: str | None = None  # the formula that computes it from the case (serve/derive.py)
    cost: Cost | None = None
    burden: Burden | None = None

    @property
    def accepted_units(self) -> tuple[str, ...]:
        if self.unit and self.unit not in self.units:
            return (self.unit, *self.units)
        return self.units

    @property
    def is_panel(self) -> bool:
        return "panel" in self.result_types

    @property
    def numeric(self) -> bool:
        return "lab_value" in self.result_types

    @property
    def family_key(self) -> str | None:
        """What groups this test with related ones: its family, or for imaging its modality
        and site together."""
        if self.family:
            return f"family:{fold(self.family)}"
        if self.kind == "imaging" and self.modality and self.site:
            return f"imaging:{fold(self.modality)}:{fold(self.site)}"
        return None


# The specimens that are one blood sample, drawn from a vein or a finger: a panel member given
# on one may stand in for another's (an arterial gas's pO2 never stands in for a venous one's).
BLOOD_SPECIMENS = frozenset(
    {"blood", "serum", "plasma", "whole blood", "venous blood", "capillary blood"}
)


@lru_cache(maxsize=1 << 16)
def fold(name: str) -> str:
    """How test names are compared: case-insensitively, with runs of white space folded.
    Cached: a run folds the same few thousand names again and again."""
    return " ".join(name.casefold().split())


@dataclass
class Catalog:
    """The catalog's tests and vocabularies, with the indexes that resolve a name to its test
    and relate tests to one another."""

    tests: list[CatalogTest] = field(default_factory=list)
    tones: frozenset[str] = frozenset()
    specialties: frozenset[str] = frozenset()
    tags: frozenset[str] = frozenset()
    specimens: frozenset[str] = frozenset()
    modalities: frozenset[str] = frozenset()
    abbreviations: Mapping[str, str] = field(default_factory=dict)
    _index: dict[str, CatalogTest] = field(default_factory=dict, repr=False)
    _spellings: dict[str, str] = field(default_factory=dict, repr=False)
    _answered_by: dict[str, list[CatalogTest]] = field(default_factory=dict, repr=False)
    _families: dict[str, list[CatalogTest]] = field(default_factory=dict, repr=False)
    _panels_of: dict[str, list[CatalogTest]] = field(default_factory=dict, repr=False)
    # Per run, one resolution per distinct name as written, and per panel its own names (the
    # panel's aliases for members, then its members' names and aliases), each built once.
    _resolved: dict[str, CatalogTest | None] = field(
        default_factory=dict, repr=False, compare=False
    )
    _panel_names: dict[int, tuple[CatalogTest, dict[str, CatalogTest | None], frozenset[str]]] = (
        field(default_factory=dict, repr=False, compare=False)
    )
    _members: dict[int, tuple[CatalogTest, tuple[CatalogTest, ...]]] = field(
        default_factory=dict, repr=False, compare=False
    )
    # The name index casebank.format.names builds for this catalog (names.index_of), kept here
    # so it is built once per catalog; the catalog itself knows nothing of names.
    name_index: Any = field(default=None, repr=False, compare=False)
    # Where that index is remembered between runs, if anywhere (an object with ``recall()``,
    # giving the index or None, and ``remember(index)``: commands.memory.RememberedNames).
    name_memory: Any = field(default=None, repr=False, compare=False)

    def __post_init__(self) -> None:
        for test in self.tests:
            for spelling in (test.name, *test.aliases):
                # The first entry wins; the catalog rules report the clash.
                self._index.setdefault(fold(spelling), test)
                self._spellings.setdefault(fold(spelling), spelling)
        for test in self.tests:
            for answered in test.answers:
                self._answered_by.setdefault(fold(answered), []).append(test)
            if test.family_key is not None:
                self._families.setdefault(test.family_key, []).append(test)
            for component in test.components:
                self._panels_of.setdefault(fold(component), []).append(test)

    def resolve(self, name: str, panel: CatalogTest | None = None) -> CatalogTest | None:
        """The test a name or alias means. Inside ``panel``, the panel's own names for its
        members come first (``WBC`` in a urinalysis), then its members' names and aliases."""
        if panel is not None:
            member = self._names_in(panel)[1].get(fold(name))
            if member is not None:
                return member
        try:
            return self._resolved[name]
        except KeyError:
            found = self._resolved[name] = self._index.get(fold(name))
            return found

    def _names_in(
        self, panel: CatalogTest
    ) -> tuple[CatalogTest, dict[str, CatalogTest | None], frozenset[str]]:
        """``panel``'s own names (folded) -> the member each means, and its components'
        names folded; built on first use. A panel alias whose target is not in the catalog
        maps to None: it hides the members' names, and resolution falls back to the catalog."""
        entry = self._panel_names.get(id(panel))
        if entry is not None and entry[0] is panel:
            return entry
        names: dict[str, CatalogTest | None] = {}
        for local, target in panel.component_aliases.items():
            names.setdefault(fold(local), self._index.get(fold(target)))
        for member_name in panel.components:
            member = self._index.get(fold(member_name))
            if member is not None:
                for spelling in (member.name, *member.aliases):
                    names.setdefault(fold(spelling), member)
        entry = (panel, names, frozenset(fold(c) for c in panel.components))
        self._panel_names[id(panel)] = entry
        return entry

    def is_component(self, panel: CatalogTest, test: CatalogTest) -> bool:
        """Whether ``panel`` lists ``test`` by its name among its components."""
        return fold(test.name) in self._names_in(panel)[2]

    def spellings(self) -> Mapping[str, str]:
        """Every name and alias, folded -> as written."""
        return self._spellings

    def answered_by(self, test: CatalogTest) -> list[CatalogTest]:
        """The tests whose result answers a request for ``test`` (catalog ``answers``)."""
        return list(self._answered_by.get(fold(test.name), []))

    def family_of(self, test: CatalogTest) -> list[CatalogTest]:
        """The other tests of ``test``'s family (empty when it has none)."""
        key = test.family_key
        return [t for t in self._families.get(key, []) if t is not test] if key else []

    def panels_containing(self, test: CatalogTest) -> list[CatalogTest]:
        return list(self._panels_of.get(fold(test.name), []))

    def components_of(self, panel: CatalogTest) -> list[CatalogTest]:
        """The catalog tests ``panel``'s components name (found once per panel and run)."""
        entry = self._members.get(id(panel))
        if entry is None or entry[0] is not panel:
            found = tuple(
                t for c in panel.components if (t := self._index.get(fold(c))) is not None
            )
            entry = self._members[id(panel)] = (panel, found)
        return list(entry[1])

    def related(self, test: CatalogTest) -> list[CatalogTest]:
        """Tests whose result bears on ``test``'s: its family, what it answers and what
        answers it, and panels it belongs to or members it has."""
        found: dict[str, CatalogTest] = {}
        groups: Iterable[Iterable[CatalogTest]] = (
            self.family_of(test),
            self.answered_by(test),
            (t for a in test.answers if (t := self._index.get(fold(a))) is not None),
            self.panels_containing(test),
            self.components_of(test),
        )
        for group in groups:
            for other in group:
                if other is not test:
                    found.setdefault(other.name, other)
        return list(found.values())


# How close a mistyped case id must be to a real one to be suggested: a slip ("valid_cas",
# "chest_pain_01"), never another word ("delta" is not "beta").
CASE_ID_CUTOFF = 0.85


def closest(word: str, candidates: Iterable[str], cutoff: float = 0.6) -> str | None:
    """The candidate most like ``word`` (compared folded), if at least ``cutoff`` alike by
    rapidfuzz's ratio (0 to 1); ties go to the candidate that sorts last, as difflib's did."""
    from rapidfuzz import fuzz, process

    options = {fold(c): c for c in candidates}
    # extractOne keeps the first of equal scores: offer the candidates last-first.
    found = process.extractOne(
        fold(word), sorted(options, reverse=True), scorer=fuzz.ratio, score_cutoff=cutoff * 100
    )
    return options[found[0]] if found is not None else None


def did_you_mean(word: str, candidates: Iterable[str], cutoff: float = 0.6) -> str:
    """`` (did you mean `x`?)`` or nothing, for appending to a message about a field name, a
    vocabulary word or (with ``CASE_ID_CUTOFF``) a case id; test names use the clinically safe
    ``names.suggest``."""
    match = closest(word, candidates, cutoff)
    return f" (did you mean `{match}`?)" if match is not None else ""


def _strings(value: Any) -> tuple[str, ...]:
    if not isinstance(value, list):
        return ()
    return tuple(v for v in value if isinstance(v, str))


def _optional_str(value: Any) -> str | None:
    return value if isinstance(value, str) else None


def _text_map(value: Any) -> dict[str, str]:
    if not isinstance(value, dict):
        return {}
    return {k: v for k, v in value.items() if isinstance(k, str) and isinstance(v, str)}


def _number(value: Any) -> float | None:
    if isinstance(value, (int, float)) and not isinstance(value, bool) and value >= 0:
        return float(value)
    return None


def _cost(value: Any) -> Cost | None:
    if not isinstance(value, dict):
        return None
    year = value.get("year")
    return Cost(
        amount=_number(value.get("amount")),
        currency=_optional_str(value.get("currency")),
        year=year if isinstance(year, int) and not isinstance(year, bool) else None,
        source=_optional_str(value.get("source")),
        tier=_optional_str(value.get("tier")),
        code=_optional_str(value.get("code")),
    )


def _burden(value: Any) -> Burden | None:
    if not isinstance(value, dict):
        return None
    sedation = value.get("sedation")
    return Burden(
        invasive=_optional_str(value.get("invasive")) or "none",
        radiation_msv=_number(value.get("radiation_msv")),
        contrast=_optional_str(value.get("contrast")) or "none",
        sedation=sedation if isinstance(sedation, bool) else False,
    )


def build_catalog(data: dict[str, Any]) -> Catalog:
    """Build a catalog from loaded data, taking what is usable even from a flawed file.

    The catalog's own problems are reported by the catalog rules; here a malformed entry is
    simply skipped, so one bad entry does not make every case report unknown tests.
    """
    vocab = data.get("vocabularies")
    vocab = vocab if isinstance(vocab, dict) else {}
    tests: list[CatalogTest] = []
    entries = data.get("tests")
    for entry in entries if isinstance(entries, list) else []:
        if not isinstance(entry, dict) or not isinstance(entry.get("name"), str):
            continue
        tests.append(
            CatalogTest(
                name=entry["name"],
                kind=str(entry.get("kind", "")),
                result_types=_strings(entry.get("result_types")),
                aliases=_strings(entry.get("aliases")),
                specimen=_optional_str(entry.get("specimen")),
                modality=_optional_str(entry.get("modality")),
                site=_optional_str(entry.get("site")),
                sex=_optional_str(entry.get("sex")),
                family=_optional_str(entry.get("family")),
                unit=_optional_str(entry.get("unit")),
                units=_strings(entry.get("units")),
                components=_strings(entry.get("components")),
                component_aliases=_text_map(entry.get("component_aliases")),
                answers=_strings(entry.get("answers")),
                loinc=_optional_str(entry.get("loinc")),
                default_result=_optional_str(entry.get("default_result")),
                derive=_optional_str(entry.get("derive")),
                cost=_cost(entry.get("cost")),
                burden=_burden(entry.get("burden")),
            )
        )
    return Catalog(
        tests=tests,
        tones=frozenset(_strings(vocab.get("tones"))),
        specialties=frozenset(_strings(vocab.get("specialties"))),
        tags=frozenset(_strings(vocab.get("tags"))),
        specimens=frozenset(_strings(vocab.get("specimens"))),
        modalities=frozenset(_strings(vocab.get("modalities"))),
        abbreviations=_text_map(vocab.get("abbreviations")),
    )


# --- the catalog as it is remembered between runs ----------------------------------------------

_TEST_FIELDS = tuple(f.name for f in fields(CatalogTest))
# Where a stored test's row holds a tuple (stored as a list), and a cost or burden (the list of
# its fields' values).
_TUPLES = tuple(i for i, f in enumerate(fields(CatalogTest)) if f.type.startswith("tuple"))
_NESTED = tuple(
    (_TEST_FIELDS.index(name), kind) for name, kind in (("cost", Cost), ("burden", Burden))
)
_VOCABULARIES = ("tones", "specialties", "tags", "specimens", "modalities")


def stored_catalog(catalog: Catalog) -> dict[str, Any]:
    """``catalog`` as JSON data that :func:`restored_catalog` reads back as the same catalog,
    about twice as quick as :func:`build_catalog` builds it from the file's data (no field is
    checked again): a remembered one-case command builds no catalog."""
    return {
        "fields": list(_TEST_FIELDS),
        "tests": [[_plain(getattr(t, name)) for name in _TEST_FIELDS] for t in catalog.tests],
        "vocabularies": {name: sorted(getattr(catalog, name)) for name in _VOCABULARIES},
        "abbreviations": dict(catalog.abbreviations),
    }


def _plain(value: Any) -> Any:
    if isinstance(value, (Cost, Burden)):
        return [getattr(value, f.name) for f in fields(value)]
    if isinstance(value, tuple):
        return list(value)
    return dict(value) if isinstance(value, Mapping) else value


def restored_catalog(stored: Mapping[str, Any]) -> Catalog:
    """The catalog :func:`stored_catalog` stored; ValueError (or KeyError, TypeError) for data
    it did not give, such as a memory written by another casebank."""
    if stored["fields"] != list(_TEST_FIELDS):
        raise ValueError("stored by a catalog of other fields")
    tests = []
    for row in stored["tests"]:
        if not isinstance(row, list) or len(row) != len(_TEST_FIELDS):
            raise ValueError("not a stored test")
        for i in _TUPLES:
            row[i] = tuple(row[i])
        for i, kind in _NESTED:
            if row[i] is not None:
                row[i] = kind(*row[i])
        tests.append(CatalogTest(*row))
    words = {name: frozenset(stored["vocabularies"][name]) for name in _VOCABULARIES}
    return Catalog(
        tests=tests,
        tones=words["tones"],
        specialties=words["specialties"],
        tags=words["tags"],
        specimens=words["specimens"],
        modalities=words["modalities"],
        abbreviations=dict(stored["abbreviations"]),
    )


def load_catalog(raw: bytes, file: str = "catalog.yaml") -> Catalog:
    """The catalog in ``raw`` as a lookup, unchecked (the catalog rules check it); a file that
    does not load raises CasebankError naming its place and how to see why."""
    from casebank.format.loader import load_data

    return build_catalog(load_data(file, raw))


def catalog_if_it_loads(raw: bytes, file: str = "catalog.yaml") -> Catalog | None:
    """The catalog in ``raw``, or None where it does not load (validation reports why)."""
    from casebank.errors import CasebankError

    try:
        return load_catalog(raw, file)
    except CasebankError:
        return None
