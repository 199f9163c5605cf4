"""Text that must stay on its line: names, ids, titles and every key.

The loader refuses control characters however they are written (casebank.format.text); a line
break is a character a narrative needs, so it is refused only where a field is one line by
nature. A title with an escaped line break once wrote a fake ``## [1.2.0]`` section into
CHANGELOG.md.
"""

from __future__ import annotations

from collections.abc import Iterator
from typing import Any

from casebank.check.problem import Severity
from casebank.check.registry import CaseContext, Finding, rule
from casebank.format.document import Document, Path, format_path, texts_at
from casebank.format.orders import NamedTest
from casebank.format.text import LINE_BREAK, character_name

# Fields whose every text is one line (everything below them, for a mapping or a list).
ONE_LINE_FIELDS: tuple[Path, ...] = (
    ("case_id",),
    ("metadata",),
    ("ground_truth", "final_diagnosis"),
    ("ground_truth", "acceptable_answers"),
    ("provenance", "source"),
    ("provenance", "licence"),
    ("provenance", "derived_from"),
    ("acknowledged_warnings",),
)


def _keys(value: Any, at: Path) -> Iterator[Path]:
    """The path of every key in ``value`` (iteratively: the loader bounds the depth anyway)."""
    stack: list[tuple[Any, Path]] = [(value, at)]
    while stack:
        item, here = stack.pop()
        if isinstance(item, dict):
            for key, child in item.items():
                yield (*here, key)
                stack.append((child, (*here, key)))
        elif isinstance(item, list):
            stack.extend((child, (*here, i)) for i, child in enumerate(item))


def _broken(text: str, is_key: bool) -> str:
    """The first line break in ``text``, or "". A value's breaks at either end are how YAML's
    folded and literal blocks end, not part of the text."""
    found = LINE_BREAK.search(text if is_key else text.strip())
    return found.group(0) if found else ""


def one_line_breaks(doc: Document, named: list[NamedTest]) -> Iterator[Finding]:
    """Each one-line text or key that holds a line break (``named``: the case's named tests)."""
    data = doc.data
    seen: set[tuple[Path, bool]] = set()
    places: list[tuple[Path, str, bool]] = []
    for field in ONE_LINE_FIELDS:
        value: Any = data
        for step in field:
            value = value.get(step) if isinstance(value, dict) else None
        places += [(path, text, False) for path, text in texts_at(value, field)]
    places += [(t.path, t.name, t.is_key) for t in named]
    # Every key the loader read is in key_positions (a key is always text): one search over
    # them all finds whether any holds a break, before walking the data for each key's path.
    keys: list[Any] = [path[-1] for path in doc.key_positions]
    if LINE_BREAK.search("".join(keys)):
        places += [(path, str(path[-1]), True) for path in _keys(data, ())]
    # One search over every text finds whether any holds a break at all (nearly no case does);
    # only then is each read on its own, where a value's breaks at either end do not count.
    elif not LINE_BREAK.search(" ".join([text for _, text, _ in places])):
        return
    for path, text, is_key in places:
        char = _broken(text, is_key)
        if not char or (path, is_key) in seen:
            continue
        seen.add((path, is_key))
        what = "key" if is_key else "text"
        yield Finding(
            path,
            f"the {what} of `{_shown(path)}` holds a line break ({character_name(char)}), but "
            "it is one line: a title, a name or an id",
            "write it on one line; an escape such as \\n in double quotes is a line break too",
            at_key=is_key,
        )


def _shown(path: Path) -> str:
    return LINE_BREAK.sub(lambda m: f"\\u{ord(m.group(0)):04x}", format_path(path)) or "."


@rule(
    "CB310",
    "line-break-in-one-line-field",
    Severity.ERROR,
    "A title, name, id or key holds a line break.",
)
def check_one_line_fields(ctx: CaseContext) -> Iterator[Finding]:
    """Titles, ids, test names, diagnoses and keys are printed on one line: in the changelog,
    the pull request summary, the dataset card, reports and the terminal. A line break in one,
    usually an escape (`\\n`, `\\u2028`) in double quotes, would start a line of its own there
    (a title once wrote a fake release section into CHANGELOG.md). Narratives keep their line
    breaks.

    Bad:

        metadata:
          title: "Chest pain\\n\\n## [1.2.0] - 2030-01-01"

    Good:

        metadata:
          title: "Chest pain"
    """
    yield from one_line_breaks(ctx.doc, ctx.named_tests())
