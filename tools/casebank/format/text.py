"""The text policy: which characters casebank refuses in a file and in a value, and how text is
made safe to print on a terminal. The one home of these character sets; the loader, the rules,
the importers and the command-line boundary all use them from here.

- In a file's text: C0 controls other than tab, line feed and carriage return, DEL, C1
  controls other than NEL (a YAML line break), lone surrogates and the non-characters YAML
  forbids (``FORBIDDEN_IN_FILE``). A JSON file is searched before parsing; libyaml refuses the
  same characters as it reads a YAML file, which is searched when it does not load.
- In a value, after YAML or JSON unescaping (``"\\e"``, ``"\\0"``, ``"\\u009b"``): the same, and
  the carriage return, which no YAML line break leaves in a value (``FORBIDDEN_IN_TEXT``).
- In a one-line field (a title, an id, a test name): no line break of any kind (``LINE_BREAK``).
- On a terminal, whatever a value holds: every control character, line and paragraph
  separator, bidirectional override and lone surrogate is shown as ``\\uXXXX``
  (:func:`for_terminal`), which is also what JSON and double-quoted YAML read back as the same
  character, so escaped JSON output stays the same JSON.
"""

from __future__ import annotations

import re
import unicodedata

_CONTROLS = "\x00-\x08\x0b\x0c\x0e-\x1f\x7f\x80-\x84\x86-\x9f"
_NOT_CHARACTERS = "\ud800-\udfff\ufffe\uffff"

FORBIDDEN_IN_FILE = re.compile(f"[{_CONTROLS}{_NOT_CHARACTERS}]")
FORBIDDEN_IN_TEXT = re.compile(f"[{_CONTROLS}\r{_NOT_CHARACTERS}]")
LINE_BREAK = re.compile("[\n\r\x0b\x0c\x1c-\x1e\x85\u2028\u2029]")
# What a terminal (or a CI log, which renders escape codes) must never receive raw: controls
# (tab and line feed excepted), separators, the bidirectional controls that reorder what is
# shown (CVE-2021-42574), and lone surrogates (git paths decoded with surrogateescape).
_UNSAFE_ON_TERMINAL = re.compile(
    "[\x00-\x08\x0b-\x1f\x7f-\x9f\u061c\u200e\u200f\u2028-\u202e\u2066-\u2069\ud800-\udfff]"
)
_NAMES = {"\x00": "NUL", "\x1b": "ESC", "\x7f": "DEL", "\r": "carriage return", "\x85": "NEL"}


def character_name(char: str) -> str:
    """A character as a message names it: ``ESC (U+001B)``, ``LINE SEPARATOR (U+2028)``."""
    code = f"U+{ord(char):04X}"
    name = _NAMES.get(char) or unicodedata.name(char, "")
    if char == "\n":
        name = "line feed"
    return f"{name} ({code})" if name else code


def _escaped(match: re.Match[str]) -> str:
    return f"\\u{ord(match.group(0)):04x}"


def for_terminal(text: str) -> str:
    """``text`` with every character a terminal would obey (an escape sequence, a carriage
    return, a bidirectional override) written as ``\\uXXXX`` instead."""
    return _UNSAFE_ON_TERMINAL.sub(_escaped, text)


def unsafe_on_terminal(text: str) -> bool:
    return _UNSAFE_ON_TERMINAL.search(text) is not None
