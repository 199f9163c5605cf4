"""The identifier policy: what a case id and an attachment name may be. One definition, checked
at every entry point: the schema (a case file's ``case_id``), the file names under ``cases/``,
every command-line argument that names a case, manifests, and the site.

A case id matches ``^[a-z][a-z0-9_]{2,63}$`` and is made of words joined by single underscores
(``chest_pain_001``): safe in a path, a URL, a shell and a file name on every system, and short
enough for every file the tools derive from it (``cases/<id>.html``, ``attachments/<id>/...``).

An attachment name (its path below ``cases/<case_id>/attachments/``) is NFC-normalised
Unicode, printable, free of the characters Windows forbids in file names, at most
``MAX_ATTACHMENT_NAME`` characters, and unique among the case's attachments ignoring case and
normalisation, so that it names one file on macOS and Windows checkouts too.
"""

from __future__ import annotations

import re
import unicodedata
from collections.abc import Iterable

from casebank.errors import CasebankError
from casebank.format.text import for_terminal

# ^[a-z][a-z0-9_]{2,63}$ (DESIGN.md), in words of letters and digits joined by single underscores.
# Python's `$` also matches just before a final line feed (Cerberus, the fast path and JSON
# Schema all read this one pattern): `(?!\n)` makes the end the end in every engine.
CASE_ID_PATTERN = r"^(?=[a-z][a-z0-9_]{2,63}$)[a-z0-9]+(?:_[a-z0-9]+)*$(?!\n)"
CASE_ID_WORDS = (
    "3 to 64 characters: a lowercase letter first, then lowercase letters and digits, in "
    "words joined by single underscores"
)
CASE_ID_EXAMPLE = "chest_pain_001"
_CASE_ID = re.compile(CASE_ID_PATTERN)

MAX_ATTACHMENT_NAME = 128
_WINDOWS_FORBIDDEN = frozenset('<>:"|?*\\')


def is_case_id(text: object) -> bool:
    return isinstance(text, str) and _CASE_ID.match(text) is not None


def require_case_id(text: str) -> str:
    """``text`` if it is a case id, else CasebankError saying what one is. Used as the
    argparse ``type`` of every command-line case id, so a path never reaches a file lookup."""
    if not is_case_id(text):
        raise CasebankError(
            f"`{for_terminal(text)}` is not a valid case id: a case id is {CASE_ID_WORDS}",
            f"give the case's id, e.g. {CASE_ID_EXAMPLE} (the file name in cases/ without "
            "its extension)",
        )
    return text


def attachment_name_problem(name: str) -> str:
    """What is wrong with an attachment's name (its path below attachments/), or ""."""
    if len(name) > MAX_ATTACHMENT_NAME:
        return f"the name is {len(name)} characters long; the most is {MAX_ATTACHMENT_NAME}"
    if not unicodedata.is_normalized("NFC", name):
        return (
            "the name is not in Unicode NFC form (a letter and its accent are stored apart, "
            "as macOS writes them), so it can name two different files"
        )
    for char in name:
        if not char.isprintable() and char != " ":
            return f"the name holds the invisible character U+{ord(char):04X}"
        if char in _WINDOWS_FORBIDDEN:
            return f"the name holds `{char}`, which Windows does not allow in a file name"
    for part in name.split("/"):
        if part in ("", ".", "..") or part != part.strip() or part.endswith("."):
            return (
                f"the part `{part}` of the name is empty, a dot folder, or starts or ends "
                "with a space or ends with a dot (which Windows drops)"
            )
    return ""


def attachment_key(name: str) -> str:
    """What two names share when one file system would store them as one file."""
    folded = unicodedata.normalize("NFC", name).casefold()
    return unicodedata.normalize("NFC", folded)


def colliding_names(names: Iterable[str]) -> dict[str, list[str]]:
    """Each name that shares its ``attachment_key`` with an earlier one -> those earlier ones
    (NFC names first, so that the decomposed spelling is the one said to collide)."""
    first: dict[str, list[str]] = {}
    collisions: dict[str, list[str]] = {}
    for name in sorted(names, key=lambda n: (not unicodedata.is_normalized("NFC", n), n)):
        seen = first.setdefault(attachment_key(name), [])
        if seen:
            collisions[name] = list(seen)
        seen.append(name)
    return collisions
