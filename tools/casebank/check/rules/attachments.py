"""Attachments: names that mean one file everywhere, and content that cannot run as a page.

The names follow the identifier policy (casebank.format.identifiers), the content the
allow-list (casebank.format.attachments). Both are published in bundles and on the website.
"""

from __future__ import annotations

from collections.abc import Iterator

from casebank.check.problem import Severity
from casebank.check.registry import FileFinding, RepositoryContext, rule
from casebank.format.identifiers import attachment_name_problem, colliding_names
from casebank.format.layout import attachment_path


@rule(
    "CB311",
    "attachment-name",
    Severity.ERROR,
    "An attachment's name is not NFC, not printable, not portable or too long.",
    target="repository",
)
def check_attachment_names(repo: RepositoryContext) -> Iterator[FileFinding]:
    """An attachment's name is part of the release (its path is hashed) and becomes a file
    name in every checkout, export and website. It must be in Unicode NFC form (macOS writes
    é as e plus an accent, which is another name), printable (a line break in a name breaks
    `sha256sum -c SHA256SUMS`), free of what Windows refuses (`<>:"|?*\\`, a trailing dot or
    space) and at most 128 characters (`MAX_ATTACHMENT_NAME`).

    Bad:

        cases/chest_pain_002/attachments/ecg<TAB>strip.png
        cases/chest_pain_002/attachments/ecg: 12 lead.png

    Good:

        cases/chest_pain_002/attachments/ecg-12-lead.png
    """
    for case_id, verdicts in sorted(repo.attachments.items()):
        for name in sorted(verdicts):
            problem = attachment_name_problem(name)
            if problem:
                yield FileFinding(
                    attachment_path(case_id, name),
                    problem,
                    "rename the file with letters, digits, spaces, dots, hyphens and "
                    "underscores, and rename it where a result's `attachments` names it",
                )


@rule(
    "CB312",
    "attachment-names-collide",
    Severity.ERROR,
    "Two attachments whose names differ only in case or Unicode normalisation.",
    target="repository",
)
def check_attachment_collisions(repo: RepositoryContext) -> Iterator[FileFinding]:
    """macOS and Windows store `ECG.png` and `ecg.png` (or `é` composed and decomposed) as one
    file, so a checkout there would silently keep only one of the two, and the release would
    hash a file the checkout does not have.

    Bad:

        cases/chest_pain_002/attachments/ECG.png
        cases/chest_pain_002/attachments/ecg.png

    Good:

        cases/chest_pain_002/attachments/ecg-rest.png
        cases/chest_pain_002/attachments/ecg-exercise.png
    """
    for case_id, verdicts in sorted(repo.attachments.items()):
        for name, earlier in sorted(colliding_names(verdicts).items()):
            yield FileFinding(
                attachment_path(case_id, name),
                f"this name and `{earlier[0]}` name one file on macOS and "
                "Windows, which ignore case and Unicode normalisation",
                "give one of the two a different name",
            )


@rule(
    "CB313",
    "attachment-type",
    Severity.ERROR,
    "An attachment that is not PNG, JPEG, PDF, plain text or sanitised SVG, by its content.",
    target="repository",
)
def check_attachment_types(repo: RepositoryContext) -> Iterator[FileFinding]:
    """Attachments are published next to the website's pages, where a browser opens them on
    the site's own origin: an HTML page or an SVG with a script would run there, outside the
    pages' content security policy. So an attachment is a PNG or JPEG image, a PDF without
    JavaScript, plain text (.txt, .csv) or a sanitised SVG, decided by its bytes, not its
    name; an SVG must hold no script, event handler, style sheet, embedded document or
    reference outside the file; and the name's extension must say what the content is.

    Bad:

        cases/chest_pain_002/attachments/ecg.svg      # <svg onload="...">, or a <script>
        cases/chest_pain_002/attachments/report.html

    Good:

        cases/chest_pain_002/attachments/ecg.svg      # shapes and text only
        cases/chest_pain_002/attachments/report.pdf
    """
    for case_id, verdicts in sorted(repo.attachments.items()):
        for name, verdict in sorted(verdicts.items()):
            if verdict.problem and not attachment_name_problem(name):  # one problem at a time
                yield FileFinding(attachment_path(case_id, name), verdict.problem, verdict.hint)
