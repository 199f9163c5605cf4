"""Every rule casebank checks, one family per module. Importing this package registers them."""

from __future__ import annotations

from casebank.check.rules import (  # noqa: F401  (imported for their registrations)
    acknowledgements,
    attachments,
    catalog_entries,
    content,
    examination,
    grounding,
    identity,
    internal,
    loading,
    placeholders,
    provenance,
    references,
    results,
    schema,
    scoring,
    served,
    text,
    vocabulary,
)
