"""Loader refusals: files casebank will not read, because they are unsafe or ambiguous.

The loader (``casebank.loader``) raises these before any other rule runs; this module gives each
its documentation. A refused file gets no further checks until it loads.
"""

from __future__ import annotations

from casebank.check.problem import Severity
from casebank.check.registry import Rule, rule
from casebank.format.loader import ISSUES

_DOCS = {
    "yaml-syntax": """
        The file could not be parsed. The position is where the parser gave up; the mistake is
        often on that line or the one before it (a missing quote, a colon inside unquoted text,
        inconsistent indentation).

        Bad:

            title: Chest pain: acute

        Good:

            title: "Chest pain: acute"
        """,
    "duplicate-key": """
        YAML silently keeps only the last of two equal keys, so half of what was written would
        vanish. casebank refuses the file instead.

        Bad:

            patient:
              age: 54
              age: 45

        Good:

            patient:
              age: 54
        """,
    "yaml-anchor": """
        Anchors (`&name`) and aliases (`*name`) let one part of a file repeat another; they make
        a case hard to review and can expand exponentially ("billion laughs"). Write content out.

        Bad:

            must_ask: &q ["Onset"]
            nice_to_ask: *q

        Good:

            must_ask: ["Onset"]
            nice_to_ask: ["Onset"]
        """,
    "multiple-documents": """
        One file holds one case. A second `---` starts a second YAML document.

        Bad:

            case_id: a
            ---
            case_id: b

        Good:

            case_id: a
        """,
    "top-level-not-mapping": """
        A case is a mapping of fields (`case_id:`, `metadata:`, ...), not a list or a value.

        Bad:

            - case_id: a

        Good:

            case_id: a
        """,
    "empty-file": """
        The file has no data (it may hold only comments).

        Bad:

            # to do

        Good:

            case_id: chest_pain_002
        """,
    "not-utf8": """
        Case files are UTF-8. A file saved in another encoding (Windows-1252, Latin-1) shows
        garbled accents and symbols such as `µ` or `–`.

        Bad:

            unit: "\\xb5mol/L"   # a Latin-1 byte

        Good:

            unit: "µmol/L"      # saved as UTF-8
        """,
    "file-too-large": """
        A case file is at most 1 MiB; real cases are a few kilobytes. The cap keeps a hostile
        or mistaken file from exhausting memory.

        Bad:

            history_of_present_illness: "<5 MB of pasted text>"

        Good:

            history_of_present_illness: "Two hours of crushing chest pain ..."
        """,
    "nesting-too-deep": """
        No field of the format nests more than a few levels; 32 is the cap.

        Bad:

            a: [[[[[[[[[[[[[[[[[[[[[[[[[[[[[[[[[1]]]]]]]]]]]]]]]]]]]]]]]]]]]]]]]]

        Good:

            a: [1]
        """,
    "unsafe-tag": """
        Tags such as `!!python/object` ask a YAML loader to build program objects; casebank
        accepts only plain text, numbers, booleans, lists and mappings.

        Bad:

            value: !!python/object/apply:os.system ["ls"]

        Good:

            value: "text"
        """,
    "ambiguous-number": """
        YAML 1.1 reads `054` as the octal number 44, `0x36` as the hexadecimal 54, `0b101` as
        the binary 5, `12:30` as the base-60 number 750, and `1_000` as 1000; YAML 1.2 and JSON
        read them differently, and no author means them. Quote the value if it is text, or
        write the number plainly.

        Bad:

            patient:
              age: 054

        Good:

            patient:
              age: 54
        """,
    "non-text-key": """
        Keys are field or test names. An unquoted `yes`, `no`, `on` or a number as a key is read
        as a boolean or a number; a list or mapping cannot be a key.

        Bad:

            results:
              no: {type: qualitative, value: "Negative"}

        Good:

            results:
              "no": {type: qualitative, value: "Negative"}
        """,
    "non-finite-number": """
        `.inf` and `.nan` are not numbers a result can hold, and JSON cannot represent them.

        Bad:

            value: .inf

        Good:

            value: 1000
        """,
    "number-out-of-range": """
        A case is JSON-like data, and JSON numbers are doubles: an integer beyond 2^53 - 1
        (9,007,199,254,740,991) cannot be stored exactly, and a float beyond about 1.8e308 is
        infinite. Either would make the case unhashable, so it could never be released.

        Bad:

            value: 123456789012345678901234567890

        Good:

            value: "123456789012345678901234567890"   # an identifier, as text

    """,
    "tag-mismatch": """
        An explicit YAML tag says what a value is; the value must be one. Without the check,
        `!!bool maybe` would silently become false.

        Bad:

            value: !!int abc

        Good:

            value: abc
    """,
    "control-character": """
        Invisible control characters (NUL, backspace, form feed, ...) usually arrive by pasting
        out of a PDF or a word processor. YAML and JSON refuse them; casebank says exactly
        where the character is. An escape in double quotes (`"\\e"`, `"\\0"`, `"\\r"`,
        `"\\u009b"`) would put the same characters in the text, where they could drive the
        terminal of whoever reads it, so it is refused the same way.

        Bad:

            title: "Chest pain<NUL>"
            title: "Chest pain\\e[2J"

        Good:

            title: "Chest pain"
    """,
    "merge-conflict": """
        A merge left git's conflict markers in the file. Keep the version you want and delete
        the marker lines.

        Bad:

            <<<<<<< HEAD
            title: "Chest pain"
            =======
            title: "Acute chest pain"
            >>>>>>> feature

        Good:

            title: "Acute chest pain"
    """,
    "unreadable-file": """
        The file could not be read from disk (permissions, a broken link, a folder in its place).

        Bad:

            cases/chest_pain_002.yaml -> a link to a missing file

        Good:

            cases/chest_pain_002.yaml (a regular, readable file)
        """,
}

# Each of the loader's issues is a load rule: (code, summary), documented in _DOCS.
_CODES = {
    "yaml-syntax": ("CB101", "The file is not valid YAML (or JSON for .json files)."),
    "duplicate-key": ("CB102", "A key appears twice in one mapping."),
    "yaml-anchor": ("CB103", "Anchors (&) and aliases (*) are not allowed."),
    "multiple-documents": ("CB104", "A case file holds exactly one YAML document."),
    "top-level-not-mapping": ("CB105", "The top level must be a mapping of fields."),
    "empty-file": ("CB106", "The file holds no data."),
    "not-utf8": ("CB107", "The file's bytes are not valid UTF-8."),
    "file-too-large": ("CB108", "The file is larger than the size cap (1 MiB)."),
    "nesting-too-deep": ("CB109", "Mappings and lists nest deeper than 32 levels."),
    "unsafe-tag": ("CB110", "Only plain YAML types are allowed; no !!python/... tags."),
    "ambiguous-number": ("CB111", "A number YAML 1.1 reads surprisingly (054, 12:30)."),
    "non-text-key": ("CB112", "Every mapping key must be text."),
    "non-finite-number": ("CB113", "Numbers must be finite (.inf and .nan refused)."),
    "unreadable-file": ("CB114", "The file could not be read."),
    "number-out-of-range": ("CB115", "A number too large to be stored exactly (beyond 2^53)."),
    "tag-mismatch": ("CB116", "An explicit tag the value does not fit (!!int abc)."),
    "control-character": ("CB117", "An invisible control character (NUL and the like)."),
    "merge-conflict": ("CB118", "Unresolved git merge-conflict markers."),
}
assert set(_CODES) == set(ISSUES) == set(_DOCS), "every loader issue is a documented load rule"

LOAD_RULES: dict[str, Rule] = {
    name: rule(code, name, Severity.ERROR, summary, target="load", doc=_DOCS[name])
    for name, (code, summary) in _CODES.items()
}
