"""Controlled vocabularies: specialties, tags and tones come from the catalog."""

from __future__ import annotations

from collections.abc import Iterator

from casebank.check.problem import Severity
from casebank.check.registry import CaseContext, Finding, rule
from casebank.format.catalog import did_you_mean


@rule(
    "CB412",
    "unknown-specialty",
    Severity.WARNING,
    "A specialty not in the catalog's vocabulary.",
    needs_catalog=True,
)
def check_specialty(ctx: CaseContext) -> Iterator[Finding]:
    """`emergency_medcine` and `emergency_medicine` would split the dataset in two. New
    specialties are added to `vocabularies.specialties` in catalog.yaml.

    Bad:

        specialty: emergency_medcine

    Good:

        specialty: emergency_medicine
    """
    assert ctx.catalog is not None
    specialty = ctx.get("metadata", "specialty")
    if isinstance(specialty, str) and specialty not in ctx.catalog.specialties:
        yield Finding(
            ("metadata", "specialty"),
            f"specialty `{specialty}` is not in the catalog's vocabulary"
            + did_you_mean(specialty, ctx.catalog.specialties),
            "use a specialty listed under `vocabularies.specialties` in catalog.yaml, "
            "or add it there",
        )


@rule(
    "CB413",
    "unknown-tag",
    Severity.WARNING,
    "A tag not in the catalog's vocabulary.",
    needs_catalog=True,
)
def check_tags(ctx: CaseContext) -> Iterator[Finding]:
    """Tags are for search and filtering; a misspelt tag hides a case from its filter.

    Bad:

        tags: [chestpain]

    Good:

        tags: [chest_pain]
    """
    assert ctx.catalog is not None
    for path, tag in ctx.texts("metadata", "tags"):
        if tag not in ctx.catalog.tags:
            yield Finding(
                path,
                f"tag `{tag}` is not in the catalog's vocabulary"
                + did_you_mean(tag, ctx.catalog.tags),
                "use a tag listed under `vocabularies.tags` in catalog.yaml, or add it there",
            )


@rule(
    "CB414",
    "unknown-tone",
    Severity.ERROR,
    "A tone preset the simulator does not support.",
    needs_catalog=True,
)
def check_tones(ctx: CaseContext) -> Iterator[Finding]:
    """The spec: `tone_presets` is a subset of the supported tones, which catalog.yaml lists
    under `vocabularies.tones`.

    Bad:

        tone_presets: [grumpy]

    Good:

        tone_presets: [irritated]
    """
    assert ctx.catalog is not None
    for path, tone in ctx.texts("patient", "tone_presets"):
        if tone not in ctx.catalog.tones:
            yield Finding(
                path,
                f"tone `{tone}` is not a supported tone" + did_you_mean(tone, ctx.catalog.tones),
                f"use one of: {', '.join(sorted(ctx.catalog.tones))}",
            )
