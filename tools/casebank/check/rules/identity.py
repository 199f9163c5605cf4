"""Identity: a case's id is its file name, and no two files claim the same id."""

from __future__ import annotations

from collections.abc import Iterator

from casebank.check.engine import CaseContext, FileFinding, Finding, RepositoryContext, rule
from casebank.check.problem import Severity
from casebank.format.layout import case_id_from_path


@rule(
    "CB302",
    "case-id-matches-file",
    Severity.ERROR,
    "case_id equals the file name without its extension.",
)
def check_case_id_matches_file(ctx: CaseContext) -> Iterator[Finding]:
    """A case's identity is its `case_id`, and the file is named after it, so that a case is
    found by its id and two files can never silently claim one case.

    Bad (in `cases/chest_pain_002.yaml`):

        case_id: chest_pain_001

    Good (in `cases/chest_pain_002.yaml`):

        case_id: chest_pain_002
    """
    case_id = ctx.get("case_id")
    expected = case_id_from_path(ctx.doc.file)
    if isinstance(case_id, str) and case_id != expected:
        yield Finding(
            ("case_id",),
            f"`case_id` is `{case_id}` but the file is named `{expected}`",
            f"make them equal: set `case_id: {expected}`, or rename the file to "
            f"`{case_id}` with the same extension",
        )


@rule(
    "CB303",
    "duplicate-case-id",
    Severity.ERROR,
    "Two case files claim the same case_id.",
    target="repository",
)
def check_duplicate_case_ids(repo: RepositoryContext) -> Iterator[FileFinding]:
    """Case ids are unique across the repository. Two files can claim one id when they differ
    only in extension (`a.yaml` and `a.json`); a `case_id` that names another file is CB302.

    Bad:

        cases/asthma_001.yaml   (case_id: asthma_001)
        cases/asthma_001.json   (case_id: asthma_001)

    Good:

        cases/asthma_001.yaml   (case_id: asthma_001)
        cases/asthma_002.json   (case_id: asthma_002)
    """
    by_id: dict[str, list[str]] = {}
    for relative in repo.case_files:
        by_id.setdefault(case_id_from_path(relative), []).append(relative)
    for relative in repo.checked:
        claimants = by_id.get(case_id_from_path(relative), [])
        if len(claimants) > 1:
            others = ", ".join(p for p in claimants if p != relative)
            yield FileFinding(
                relative,
                f"case id `{case_id_from_path(relative)}` is also claimed by {others}",
                "keep one file per case: delete or rename the other",
                path="case_id",
            )
