"""Identity: a case's id is its file name, and no two files claim the same id."""

from __future__ import annotations

from collections.abc import Iterator

from casebank.check.problem import Severity
from casebank.check.registry import CaseContext, FileFinding, Finding, RepositoryContext, rule
from casebank.format.layout import ATTACHMENTS_DIR, CASE_SUFFIXES, CASES_DIR, case_id_from_path


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


@rule(
    "CB307",
    "misplaced-file",
    Severity.ERROR,
    "A file under cases/ that is neither a case file nor an attachment.",
    target="repository",
)
def check_misplaced_files(repo: RepositoryContext) -> Iterator[FileFinding]:
    """A case file sits directly in `cases/` (`cases/<case_id>.yaml`); a case's files sit in
    `cases/<case_id>/attachments/`. A case file in a subfolder would be skipped by releases,
    so every command refuses it, the same way, instead of skipping it silently.

    Bad:

        cases/cardiology/chest_pain_002.yaml

    Good:

        cases/chest_pain_002.yaml
        cases/chest_pain_002/attachments/ecg.png
    """
    for relative in repo.misplaced:
        name = relative.rsplit("/", 1)[-1]
        if name.lower().endswith(CASE_SUFFIXES):
            hint = f"move it to {CASES_DIR}/{name} (case files sit directly in {CASES_DIR}/)"
        else:
            hint = (
                f"move it to {CASES_DIR}/<case_id>/attachments/ if it belongs to a case, "
                "or out of cases/"
            )
        yield FileFinding(relative, "this file is neither a case file nor an attachment", hint)


@rule(
    "CB308",
    "symlink",
    Severity.ERROR,
    "A symbolic link under cases/.",
    target="repository",
)
def check_symlinks(repo: RepositoryContext) -> Iterator[FileFinding]:
    """A link could point anywhere, even outside the repository, and git stores the link, not
    the content, so a release could never hold the case. Links are never followed and always
    refused.

    Bad:

        cases/chest_pain_002.yaml -> ../drafts/chest_pain.yaml

    Good:

        cases/chest_pain_002.yaml (a regular file)
    """
    for relative in repo.symlinks:
        yield FileFinding(
            relative,
            "this is a symbolic link; casebank reads only regular files",
            "replace the link with the file itself (copy it in place)",
        )


@rule(
    "CB309",
    "orphan-attachments",
    Severity.ERROR,
    "An attachments folder for a case id that has no case file.",
    target="repository",
)
def check_orphan_attachments(repo: RepositoryContext) -> Iterator[FileFinding]:
    """Attachments belong to a case: `cases/<case_id>/attachments/` needs
    `cases/<case_id>.yaml` (or .yml, .json). A folder named after a renamed or misspelt case
    would otherwise be silently left out.

    Bad:

        cases/chest_pain_02/attachments/ecg.png     # but the case is chest_pain_002

    Good:

        cases/chest_pain_002/attachments/ecg.png
    """
    ids = {case_id_from_path(f) for f in repo.case_files}
    for case_id in repo.attachment_folders:
        if case_id not in ids:
            yield FileFinding(
                f"{CASES_DIR}/{case_id}/{ATTACHMENTS_DIR}",
                f"these attachments belong to no case: there is no case `{case_id}`",
                f"rename the folder after its case, or add {CASES_DIR}/{case_id}.yaml",
            )
