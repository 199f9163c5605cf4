"""The global catalog of orderable tests and controlled vocabularies, as a lookup structure."""

from __future__ import annotations

import difflib
from collections.abc import Iterable
from dataclasses import dataclass, field
from typing import Any


@dataclass(frozen=True)
class CatalogTest:
    name: str
    category: str
    result_types: tuple[str, ...]
    aliases: tuple[str, ...] = ()
    unit: str | None = None
    units: tuple[str, ...] = ()
    components: tuple[str, ...] = ()
    loinc: str | None = None
    default_result: str | None = None

    @property
    def accepted_units(self) -> tuple[str, ...]:
        if self.unit and self.unit not in self.units:
            return (self.unit, *self.units)
        return self.units


def fold(name: str) -> str:
    """How test names are compared: case-insensitively, with runs of white space folded."""
    return " ".join(name.casefold().split())


@dataclass
class Catalog:
    tests: list[CatalogTest] = field(default_factory=list)
    tones: frozenset[str] = frozenset()
    specialties: frozenset[str] = frozenset()
    tags: frozenset[str] = frozenset()
    _index: dict[str, CatalogTest] = field(default_factory=dict, repr=False)
    _spellings: dict[str, str] = field(default_factory=dict, repr=False)

    def __post_init__(self) -> None:
        for test in self.tests:
            for spelling in (test.name, *test.aliases):
                # The first entry wins; the catalog rules report the clash.
                self._index.setdefault(fold(spelling), test)
                self._spellings.setdefault(fold(spelling), spelling)

    def resolve(self, name: str) -> CatalogTest | None:
        """The test a name or alias means, compared case-insensitively."""
        return self._index.get(fold(name))

    def suggest_test(self, name: str) -> str | None:
        """The closest known test name or alias, for a did-you-mean.

        A known name written out in full inside what was typed ("Lactic acid level" holds
        "Lactic acid") beats a merely similar spelling ("Folic acid level"); otherwise the
        closest spelling wins.
        """
        wanted = f" {fold(name)} "
        inside = [k for k in self._spellings if len(k) >= 3 and f" {k} " in wanted]
        if inside:
            return self._spellings[max(inside, key=len)]
        match = difflib.get_close_matches(fold(name), self._spellings, n=1, cutoff=0.6)
        return self._spellings[match[0]] if match else None


def did_you_mean(word: str, candidates: Iterable[str]) -> str:
    """`` (did you mean `x`?)`` or nothing, for appending to a message."""
    options = {fold(c): c for c in candidates}
    match = difflib.get_close_matches(fold(word), options, n=1, cutoff=0.6)
    return f" (did you mean `{options[match[0]]}`?)" if match else ""


def _strings(value: Any) -> tuple[str, ...]:
    if not isinstance(value, list):
        return ()
    return tuple(v for v in value if isinstance(v, str))


def _optional_str(value: Any) -> str | None:
    return value if isinstance(value, str) else None


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
                category=str(entry.get("category", "")),
                result_types=_strings(entry.get("result_types")),
                aliases=_strings(entry.get("aliases")),
                unit=_optional_str(entry.get("unit")),
                units=_strings(entry.get("units")),
                components=_strings(entry.get("components")),
                loinc=_optional_str(entry.get("loinc")),
                default_result=_optional_str(entry.get("default_result")),
            )
        )
    return Catalog(
        tests=tests,
        tones=frozenset(_strings(vocab.get("tones"))),
        specialties=frozenset(_strings(vocab.get("specialties"))),
        tags=frozenset(_strings(vocab.get("tags"))),
    )
