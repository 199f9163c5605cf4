"""What a set of cases covers: by specialty and difficulty, the patients' sex and age, the
distinct diagnoses. One computation, read by README's table (`casebank coverage`), the site's
index and the export's dataset card, so the three can never say different things."""

from __future__ import annotations

from collections import Counter
from collections.abc import Iterable, Mapping
from dataclasses import dataclass, field
from typing import Any

from casebank.format.schema import DIFFICULTIES

# Age bands as every view names them: (label, lower age included, upper age excluded).
AGE_BANDS: tuple[tuple[str, float, float], ...] = (
    ("children (under 18)", 0, 18),
    ("adults (18–64)", 18, 65),
    ("older adults (65+)", 65, float("inf")),
)
AGE_UNSTATED = "age unstated"


def age_band(age: object) -> str:
    """The band a patient's age falls in (``AGE_UNSTATED`` where the case states none)."""
    if not isinstance(age, (int, float)) or isinstance(age, bool):
        return AGE_UNSTATED
    return next((label for label, low, high in AGE_BANDS if low <= age < high), AGE_UNSTATED)


def _section(data: Mapping[str, Any], name: str) -> Mapping[str, Any]:
    value = data.get(name)
    return value if isinstance(value, Mapping) else {}


@dataclass
class Coverage:
    """Counts over cases: (specialty, difficulty), sex, age band, and distinct diagnoses."""

    table: Counter[tuple[str, str]] = field(default_factory=Counter)
    sexes: Counter[str] = field(default_factory=Counter)
    ages: Counter[str] = field(default_factory=Counter)
    diagnoses: set[str] = field(default_factory=set)

    @classmethod
    def of(cls, cases: Iterable[Mapping[str, Any]]) -> Coverage:
        found = cls()
        for data in cases:
            found.add(data)
        return found

    def add(self, data: Mapping[str, Any]) -> None:
        """Count one more case (a reader that streams its cases counts each as it passes)."""
        meta, patient = _section(data, "metadata"), _section(data, "patient")
        specialty = str(meta.get("specialty") or "unstated")
        self.table[(specialty, str(meta.get("difficulty") or "unstated"))] += 1
        self.sexes[str(patient.get("sex") or "unstated")] += 1
        self.ages[age_band(patient.get("age"))] += 1
        final = _section(data, "ground_truth").get("final_diagnosis")
        if isinstance(final, str):
            self.diagnoses.add(final.casefold())

    @property
    def total(self) -> int:
        return sum(self.table.values())

    @property
    def specialties(self) -> list[str]:
        return sorted({s for s, _ in self.table})

    @property
    def levels(self) -> list[str]:
        """The difficulties present, in the schema's order, then any others."""
        present = {level for _, level in self.table}
        return [d for d in DIFFICULTIES if d in present] + sorted(present - set(DIFFICULTIES))

    def count(self, specialty: str | None = None, level: str | None = None) -> int:
        return sum(
            n for (s, lv), n in self.table.items() if specialty in (None, s) and level in (None, lv)
        )

    def age_counts(self) -> list[tuple[str, int]]:
        """(band, cases) for every band with a case, youngest first."""
        labels = [label for label, _, _ in AGE_BANDS] + [AGE_UNSTATED]
        return [(label, self.ages[label]) for label in labels if self.ages[label]]
