"""Turn the bytes of a case file into data plus the line and column of every field.

The loader is the gate: it refuses anything unsafe or ambiguous before a rule sees it, and it is
total: any bytes give either a document or issues, never an exception. It reads YAML as a stream
of parser events from libyaml's C parser (required, so that every machine gives the same
verdicts) and builds plain JSON-like data itself, because that is the only way to

- see duplicate keys (PyYAML's constructor silently keeps the last one),
- refuse anchors and aliases before they expand (a "billion laughs" file is refused at its first
  anchor, in constant time),
- stop at an absurd nesting depth without recursing,
- record where each value came from, so every problem can name its line and column,
- resolve every plain scalar exactly as documented below, keeping the source text of those YAML
  1.1 reads as something other than what most authors mean.

The data model of a case is JSON: mappings with text keys, lists, text, numbers, booleans and
null. Plain scalars resolve as YAML 1.1 (PyYAML's resolver) does, with these decisions:

- ``null``, ``~`` and an empty value are null; ``true``/``false`` are booleans, and so are
  ``yes``/``no``/``on``/``off`` (YAML 1.1 says so), which the schema then explains where text is
  expected;
- decimal integers are integers; octal (``054``), hexadecimal (``0x36``), binary (``0b101``),
  base-60 (``12:30``) and underscored (``1_000``) numbers are reported (ambiguous-number), since
  YAML 1.1 and 1.2 read them differently and no author means them;
- ``1e3`` is text in YAML 1.1 (an exponent needs a decimal point and a sign); rules that need a
  number say so;
- timestamps stay text; numbers must be finite, and integers exact in a double (at most
  2**53 - 1 in size), or nothing later (hashing, diff, release) could represent them;
- an explicit tag must fit its value (``!!int abc`` and ``!!bool maybe`` are refused).

A JSON file is held to JSON's grammar (``json.loads``, with ``NaN`` and ``Infinity`` refused),
and parsed for positions as YAML after its surrogate-pair escapes are rewritten as the single
escapes YAML accepts.
"""

from __future__ import annotations

import math
import re
from collections.abc import Callable
from dataclasses import dataclass
from functools import lru_cache
from typing import Any

import yaml

from casebank.errors import SetupError
from casebank.format import strictjson
from casebank.format.document import Document, Mark, Path, format_path
from casebank.format.text import FORBIDDEN_IN_FILE, FORBIDDEN_IN_TEXT, character_name

try:  # libyaml's C parser: the pure-Python parser accepts and refuses different documents
    from yaml import CSafeLoader as _YamlLoader
except ImportError:  # pragma: no cover - exercised by a test that hides the C parser
    _YamlLoader = None  # type: ignore[assignment,misc]

MAX_FILE_BYTES = 1024 * 1024
MAX_DEPTH = 32
MAX_EXACT_INTEGER = 2**53 - 1  # I-JSON: beyond this, integers are not exact as doubles

JSONValue = None | bool | int | float | str | list[Any] | dict[str, Any]

_SAFE_TAG_PREFIX = "tag:yaml.org,2002:"
_SAFE_TAGS = {
    f"{_SAFE_TAG_PREFIX}{t}" for t in ("str", "int", "float", "bool", "null", "map", "seq")
}

# The loader's refusals and notes, by name. The check side gives each its rule code, severity
# and documentation (casebank.check.rules.loading); a test keeps the two lists equal.
ISSUES = (
    "yaml-syntax",
    "duplicate-key",
    "yaml-anchor",
    "multiple-documents",
    "top-level-not-mapping",
    "empty-file",
    "not-utf8",
    "file-too-large",
    "nesting-too-deep",
    "unsafe-tag",
    "ambiguous-number",
    "non-text-key",
    "non-finite-number",
    "unreadable-file",
    "number-out-of-range",
    "tag-mismatch",
    "control-character",
    "merge-conflict",
)
NOTES = frozenset({"ambiguous-number"})  # reported, but the document still loads
REFUSALS = frozenset(ISSUES) - NOTES  # the issues that refuse a file


@dataclass(frozen=True)
class LoadIssue:
    """Something the loader found: ``name`` is one of ISSUES; line and column are 1-based."""

    name: str
    line: int
    column: int
    message: str
    hint: str
    path: str = ""


@dataclass
class LoadResult:
    """``document`` is None when the file was refused; ``issues`` may hold notes either way."""

    document: Document | None
    issues: list[LoadIssue]


class _Refused(Exception):
    """Raised inside the builder for a problem that stops loading."""

    def __init__(self, issue: LoadIssue) -> None:
        super().__init__(issue.message)
        self.issue = issue


def load_issue(
    file: str, name: str, mark: Mark, message: str, hint: str, path: str = ""
) -> LoadIssue:
    """One loader issue (``file`` is accepted for symmetry with the callers' reports)."""
    assert name in ISSUES, name
    return LoadIssue(name, mark[0], mark[1], message, hint, path)


def require_parser() -> None:
    """Refuse to run without libyaml: verdicts must not depend on how PyYAML was built."""
    if _YamlLoader is None:
        raise SetupError(
            "PyYAML is installed without its C parser (libyaml), and casebank needs it so "
            "that every machine accepts and refuses the same files",
            "reinstall PyYAML from a binary wheel: "
            "`python -m pip install --force-reinstall --only-binary=:all: PyYAML`",
        )


def load_data(file: str, raw: bytes) -> Any:
    """The data of a file that must load (a catalog or case a command serves): a file that
    does not raises CasebankError naming its first problem's place and how to see them all."""
    from casebank.errors import CasebankError

    loaded = load_document(file, raw)
    if loaded.document is None:
        issue = loaded.issues[0]
        raise CasebankError(
            f"{file}:{issue.line}:{issue.column}: {issue.message}",
            f"run `casebank validate {file}`",
        )
    return loaded.document.data


def load_document(file: str, raw: bytes) -> LoadResult:
    """Load one case or catalog file. ``file`` is the repository-relative path used in reports."""
    require_parser()
    is_json = file.lower().endswith(".json")
    refusal = _refuse_bytes(file, raw, characters=is_json)
    if isinstance(refusal, LoadIssue):
        return LoadResult(None, [refusal])
    text = refusal
    if is_json:
        prepared = _prepare_json(file, text)
        if isinstance(prepared, LoadIssue):
            return LoadResult(None, [prepared])
        text = prepared
    builder = _Builder(file, json_scalars=is_json)
    try:
        data = builder.build(text)
    except _Refused as refused:
        return _not_loaded(file, text, is_json, [*builder.refusals, refused.issue])
    if builder.refusals:
        return _not_loaded(file, text, is_json, builder.refusals)
    if data is _NO_DOCUMENT or data is None:
        return LoadResult(
            None,
            [
                load_issue(
                    file,
                    "empty-file",
                    (1, 1),
                    "the file holds no data",
                    "start from `casebank new CASE_ID`, which writes every required field",
                )
            ],
        )
    if not isinstance(data, dict):
        return LoadResult(
            None,
            [
                load_issue(
                    file,
                    "top-level-not-mapping",
                    builder.positions.get((), (1, 1)),
                    f"the top level is a {_kind(data)}, but a case is a mapping of fields",
                    "start the file with `case_id: ...` and the other top-level fields",
                )
            ],
        )
    doc = Document(
        file,
        data,
        builder.positions,
        builder.key_positions,
        builder.plain_non_text,
        builder.plain_number_like,
        text,
    )
    return LoadResult(doc, builder.notes)


def _not_loaded(file: str, text: str, is_json: bool, refusals: list[LoadIssue]) -> LoadResult:
    """A file the builder refused: a YAML file's first control character if it holds one
    (libyaml's refusal names none, and ours may come before it), else the refusals."""
    bad = None if is_json else _forbidden(file, text)
    return LoadResult(None, [bad] if bad is not None else refusals)


# --- before parsing: bytes, characters, conflict markers ------------------------------------

_CONFLICT = re.compile(r"^(<{7}|={7}|>{7})(?: |$)", re.MULTILINE)


def _position(text: str, offset: int) -> Mark:
    line = text.count("\n", 0, offset) + 1
    return line, offset - (text.rfind("\n", 0, offset) + 1) + 1


def _refuse_bytes(file: str, raw: bytes, *, characters: bool) -> str | LoadIssue:
    """The file's text, or the first reason not to parse it at all. ``characters``: look for
    control characters now; a YAML file leaves them to libyaml (see :func:`_forbidden`)."""
    if len(raw) > MAX_FILE_BYTES:
        return load_issue(
            file,
            "file-too-large",
            (1, 1),
            f"the file is {len(raw):,} bytes; the cap is {MAX_FILE_BYTES:,} bytes",
            "shorten the narrative, or move large material into attachments",
        )
    try:
        text = raw.decode("utf-8")
    except UnicodeDecodeError as exc:
        line = raw.count(b"\n", 0, exc.start) + 1
        column = exc.start - (raw.rfind(b"\n", 0, exc.start) + 1) + 1
        return load_issue(
            file,
            "not-utf8",
            (line, column),
            f"byte 0x{raw[exc.start]:02x} at offset {exc.start} is not valid UTF-8",
            "save the file as UTF-8 (most editors offer it under 'Save with encoding')",
        )
    text = text.removeprefix("\ufeff")
    # Substring searches first (C speed): the line-anchored search only where a marker may be.
    maybe = "<<<<<<<" in text or "=======" in text or ">>>>>>>" in text
    conflict = _CONFLICT.search(text) if maybe else None
    bad = _forbidden(file, text) if characters or conflict is not None else None
    if bad is not None:
        return bad
    if conflict is not None:
        return load_issue(
            file,
            "merge-conflict",
            _position(text, conflict.start()),
            f"an unresolved merge conflict: git's `{conflict.group(1)}` marker is still in "
            "the file",
            "keep the version you want between the `<<<<<<<`, `=======` and `>>>>>>>` "
            "lines, and delete the three marker lines",
        )
    return text


def _forbidden(file: str, text: str) -> LoadIssue | None:
    """The first control character in the file's text, as an issue.

    libyaml refuses exactly these characters (``yaml_parser_update_buffer``: anything but tab,
    line feed, carriage return, printable ASCII, NEL and the printable ranges above it) as it
    reads, so a YAML file that parses holds none. Its refusal names no character and can come
    after a refusal of ours (a duplicate key above it); so a YAML file is searched only when
    it did not load, and the first control character, if there is one, is what is reported.
    A test holds libyaml to the same set, character by character."""
    bad = FORBIDDEN_IN_FILE.search(text)
    if bad is None:
        return None
    char = bad.group(0)
    name = {"\x00": "NUL"}.get(char, f"U+{ord(char):04X}")
    return load_issue(
        file,
        "control-character",
        _position(text, bad.start()),
        f"the file holds the invisible control character {name} here, which YAML and "
        "JSON do not allow",
        "delete it (it usually comes from pasting out of a PDF or a word processor); "
        "write a line break or a space instead if one was meant",
    )


# --- JSON -----------------------------------------------------------------------------------

# A \\u escape not itself escaped (an odd number of backslashes before the u).
_ESCAPE = r"(?<!\\)((?:\\\\)*)\\u"
_PAIR = re.compile(_ESCAPE + r"(d[89ab][0-9a-f]{2})\\u(d[c-f][0-9a-f]{2})", re.IGNORECASE)
_LONE = re.compile(_ESCAPE + r"(d[89a-f][0-9a-f]{2})", re.IGNORECASE)


def _prepare_json(file: str, text: str) -> str | LoadIssue:
    """Hold the file to JSON's grammar, then make it parseable by YAML for positions."""

    try:
        strictjson.loads(text, max_depth=MAX_DEPTH)
    except strictjson.JSONProblem as problem:
        # A duplicate key is left to the builder, which names both places.
        if problem.kind != "duplicate-key":
            return _json_issue(file, problem)

    def join(match: re.Match[str]) -> str:
        high, low = int(match.group(2), 16), int(match.group(3), 16)
        code = 0x10000 + ((high - 0xD800) << 10) + (low - 0xDC00)
        return f"{match.group(1)}\\U{code:08X}"

    # json.dumps writes a character outside the Basic Multilingual Plane (an emoji) as a
    # surrogate pair; YAML wants it as one escape. Same line, so positions stay right.
    text = _PAIR.sub(join, text)
    lone = _LONE.search(text)
    if lone is not None:
        return load_issue(
            file,
            "yaml-syntax",
            _position(text, lone.start() + len(lone.group(1))),
            f"`\\u{lone.group(2)}` is half of a surrogate pair, not a character",
            "write the character itself, or both halves of its escape",
        )
    return text


_JSON_ISSUES = {
    "syntax": ("yaml-syntax", "check for a missing comma, quote or bracket just before this point"),
    "constant": ("non-finite-number", "write a real number, or null if there is none"),
    "number": ("number-out-of-range", "write a smaller number, or put it in quotes if it is text"),
    "depth": ("nesting-too-deep", f"keep mappings and lists within {MAX_DEPTH} levels"),
}


def _json_issue(file: str, problem: strictjson.JSONProblem) -> LoadIssue:
    name, hint = _JSON_ISSUES[problem.kind]
    message = {
        "syntax": f"invalid JSON: {problem.message}",
        "constant": f"{problem.message} (Python's json.dumps writes it for an infinite or "
        "undefined float)",
    }.get(problem.kind, problem.message)
    return load_issue(file, name, (problem.line, problem.column), message, hint)


def _kind(value: object) -> str:
    if value is None:
        return "null"
    return {
        bool: "boolean",
        int: "number",
        float: "number",
        str: "text",
        list: "list",
        dict: "mapping",
    }.get(type(value), type(value).__name__)


_NO_DOCUMENT = object()


class _Frame:
    """An open mapping or list: where it is, and for a mapping the key waiting for its value
    and the keys seen so far."""

    __slots__ = ("container", "is_list", "mark", "path", "pending_key", "pending_path", "seen")

    def __init__(self, container: Any, path: Path, mark: Mark, is_list: bool) -> None:
        self.container = container
        self.path = path
        self.mark = mark
        self.is_list = is_list
        self.pending_key: str | None = None
        self.pending_path: Path = path  # (*path, pending_key) while a key waits
        self.seen: dict[str, Mark] = {}


class _Builder:
    """Builds JSON-like data from parser events, iteratively, recording positions."""

    def __init__(self, file: str, *, json_scalars: bool) -> None:
        self.file = file
        self.json_scalars = json_scalars
        self.positions: dict[Path, Mark] = {}
        self.key_positions: dict[Path, Mark] = {}
        self.plain_non_text: dict[Path, str] = {}
        self.plain_number_like: dict[Path, str] = {}
        self.refusals: list[LoadIssue] = []  # refuse the document
        self.notes: list[LoadIssue] = []  # reported, but the document is still checked

    def refuse(self, name: str, mark: Mark, message: str, hint: str, path: Path = ()) -> _Refused:
        return _Refused(load_issue(self.file, name, mark, message, hint, format_path(path)))

    def build(self, text: str) -> Any:
        self.text = text
        try:
            return self._build(text)
        except yaml.MarkedYAMLError as exc:
            raise self._syntax(exc) from None
        except yaml.YAMLError as exc:
            position = getattr(exc, "position", None)
            where = _position(text, position) if isinstance(position, int) else (1, 1)
            raise self.refuse(
                "yaml-syntax", where, f"YAML syntax error: {exc}", "check indentation and quoting"
            ) from None

    def _syntax(self, exc: yaml.MarkedYAMLError) -> _Refused:
        """A syntax error, placed and explained where the mistake usually is."""
        what = exc.problem or exc.context or "invalid YAML"
        context = exc.context or ""
        mark = exc.problem_mark or exc.context_mark
        message, hint = f"YAML syntax error: {what}", _syntax_hint(what)
        if "'\\t'" in what or "tab" in what or self._char_at(mark) == "\t":
            message = "a tab character is used here; YAML indents and separates with spaces"
            hint = "replace the tab with spaces (set your editor to insert spaces for Tab)"
        elif context.startswith("while scanning a quoted scalar") and exc.context_mark:
            mark = exc.context_mark  # where the quote opens, not where the file ends
            message = "this quoted text is never closed"
            hint = 'add the closing quote at the end of the text (a quote inside it needs \\")'
        elif context.startswith(("while parsing a flow", "while scanning a flow")) and (
            exc.context_mark
        ):
            mark = exc.context_mark
            message = f"this {context.split('a flow ')[-1]} is never closed"
            hint = "add the closing `]` or `}`, or a comma between items"
        where = (mark.line + 1, mark.column + 1) if mark else (1, 1)
        return self.refuse("yaml-syntax", where, message, hint)

    def _char_at(self, mark: Any) -> str:
        """The character a parser error points at (libyaml's messages do not say which)."""
        if mark is None:
            return ""
        lines = self.text.split("\n")
        line = lines[mark.line] if 0 <= mark.line < len(lines) else ""
        return line[mark.column] if 0 <= mark.column < len(line) else ""

    def _build(self, text: str) -> Any:
        """The event-to-node path: libyaml's events, read in one loop (no generator between),
        with the common cases inline: a plain scalar that no implicit type can start (most of
        a case) costs a few type tests, its path and a store."""
        parser = _YamlLoader(text)
        try:
            return self._build_from(parser.get_event)
        finally:
            parser.dispose()

    def _build_from(self, get_event: Callable[[], Any]) -> Any:
        stack: list[_Frame] = []
        frame: _Frame | None = None  # stack[-1]
        result: Any = _NO_DOCUMENT
        documents = 0
        positions = self.positions
        key_positions = self.key_positions
        plain_non_text = self.plain_non_text
        yaml_scalars = not self.json_scalars
        # Only an escape (a backslash in double quotes) can put a control character or half a
        # surrogate pair into a text: the file itself was checked for both before parsing.
        escapes = "\\" in self.text
        resolved_first = _RESOLVED_FIRST
        scalar_event, mapping_start, sequence_start = (
            yaml.ScalarEvent,
            yaml.MappingStartEvent,
            yaml.SequenceStartEvent,
        )
        mapping_end, sequence_end = yaml.MappingEndEvent, yaml.SequenceEndEvent
        stream_end = yaml.StreamEndEvent
        while True:
            event = get_event()
            kind = type(event)
            if kind is mapping_end or kind is sequence_end:
                done = stack.pop()
                value: Any = done.container
                path: Path = done.path
                mark: Mark = done.mark
                frame = stack[-1] if stack else None
            elif kind is scalar_event or kind is mapping_start or kind is sequence_start:
                start = event.start_mark
                mark = (start.line + 1, start.column + 1) if start is not None else (1, 1)
                if event.anchor is not None:
                    raise self.refuse(
                        "yaml-anchor",
                        mark,
                        f"anchor `&{event.anchor}` is not allowed",
                        "remove the `&name` and write repeated content out in full",
                    )
                if frame is None:
                    path = ()
                elif frame.is_list:
                    path = (*frame.path, len(frame.container))
                elif frame.pending_key is not None:
                    path = frame.pending_path
                elif kind is scalar_event:  # this node is a key
                    path = frame.path
                else:
                    raise self.refuse(
                        "non-text-key",
                        mark,
                        "a mapping or list is used as a key",
                        "keys are plain field names; check the indentation of this line",
                        frame.path,
                    )
                tag = event.tag
                if kind is not scalar_event:
                    if tag is not None:
                        self._check_tag(event, mark, path)
                    if len(stack) >= MAX_DEPTH:
                        raise self.refuse(
                            "nesting-too-deep",
                            mark,
                            f"mappings and lists nest more than {MAX_DEPTH} levels deep",
                            "flatten the structure; no case field nests this deep",
                        )
                    frame = _Frame(
                        {} if kind is mapping_start else [], path, mark, kind is sequence_start
                    )
                    stack.append(frame)
                    continue
                if tag is None and yaml_scalars:
                    style = event.style
                    value = event.value
                    if not style:  # plain: text unless an implicit type can start it
                        if not value or value[0] in resolved_first:
                            text = value
                            value = self._plain(text, mark, path)
                            if not isinstance(value, str):
                                plain_non_text[path] = text
                    elif style == '"' and escapes:  # only an escape can write a control
                        value = self._scalar(event, mark, path)
                else:
                    if tag is not None:
                        self._check_tag(event, mark, path)
                    value = self._scalar(event, mark, path)
            elif kind is yaml.DocumentStartEvent:
                documents += 1
                if documents > 1:
                    start = event.start_mark
                    raise self.refuse(
                        "multiple-documents",
                        (start.line + 1, start.column + 1) if start is not None else (1, 1),
                        "the file holds more than one YAML document (a second `---`)",
                        "keep one case per file: move the second document into its own file",
                    )
                continue
            elif kind is yaml.AliasEvent:
                start = event.start_mark
                raise self.refuse(
                    "yaml-anchor",
                    (start.line + 1, start.column + 1) if start is not None else (1, 1),
                    f"alias `*{event.anchor}` refers to another part of the file",
                    "write the repeated content out in full; anchors and aliases are not allowed",
                )
            elif kind is stream_end:
                break
            else:  # the stream's start, a document's end
                continue
            # A finished value (a scalar, or a mapping or list just closed) joins its parent.
            if frame is None:
                positions[()] = mark
                result = value
            elif frame.is_list:
                frame.container.append(value)
                positions[path] = mark
            elif frame.pending_key is None:  # a key: the common case inline, else _take_key
                if type(value) is str and value not in frame.seen:
                    frame.seen[value] = mark
                    frame.pending_key = value
                    frame.pending_path = key_path = (*frame.path, value)
                    key_positions[key_path] = mark
                else:
                    self._take_key(frame, value, mark)
            else:
                frame.container[frame.pending_key] = value
                frame.pending_key = None
                positions[path] = mark
        return None if result is _NO_DOCUMENT and documents else result

    def _take_key(self, frame: _Frame, key: Any, mark: Mark) -> None:
        path = (*frame.path, str(key))
        if not isinstance(key, str):
            source = self.plain_non_text.pop(frame.path, str(key))
            raise self.refuse(
                "non-text-key",
                mark,
                f"the key `{source}` is read as {_kind(key)} {key!r}, not text",
                f'put the key in quotes: "{source}":',
                frame.path,
            )
        if key in frame.seen:
            first = frame.seen[key]
            why = (
                "JSON readers disagree about which of the two they keep"
                if self.json_scalars
                else "YAML would silently keep only the last one"
            )
            self.refusals.append(
                load_issue(
                    self.file,
                    "duplicate-key",
                    mark,
                    f"`{key}` appears twice in this mapping (first on line {first[0]}); {why}",
                    f"remove one of the two `{key}` entries, or merge their content",
                    format_path(path),
                )
            )
        else:
            frame.seen[key] = mark
        frame.pending_key = key
        frame.pending_path = path
        self.key_positions[path] = mark

    def _check_tag(self, event: Any, mark: Mark, path: Path) -> None:
        tag = event.tag
        if tag is None or tag == "!" or tag in _SAFE_TAGS:
            return
        raise self.refuse(
            "unsafe-tag",
            mark,
            f"the tag `{tag}` is not allowed",
            "remove the `!!...` or `!...` tag; a case holds only text, numbers, lists and mappings",
            path,
        )

    def _scalar(self, event: yaml.ScalarEvent, mark: Mark, path: Path) -> JSONValue:
        text = event.value
        tag = event.tag
        plain = not event.style and tag in (None, "!") and event.implicit[0]
        # Only an escape in double quotes can make half a surrogate pair: the text itself was
        # decoded as strict UTF-8, which has none.
        if event.style == '"' and _SURROGATE.search(text):
            raise self.refuse(
                "yaml-syntax",
                mark,
                "this text holds half of a surrogate pair (an escape such as \\ud83d), "
                "which is not a character",
                "write the character itself, or its full escape (\\U0001F600)",
                path,
            )
        if event.style == '"':  # only an escape can put a control character in the text
            self._check_escapes(text, mark, path)
        if tag == f"{_SAFE_TAG_PREFIX}str" or (not plain and tag in (None, "!")):
            return text
        if self.json_scalars:
            value = self._json(text, mark, path)
        elif tag in (None, "!"):
            value = self._plain(text, mark, path)
        else:
            value = self._tagged(tag, text, mark, path)
        if not isinstance(value, str):
            self.plain_non_text[path] = text
        return value

    def _check_escapes(self, text: str, mark: Mark, path: Path) -> None:
        bad = FORBIDDEN_IN_TEXT.search(text)
        if bad is None:
            return
        name = character_name(bad.group(0))
        raise self.refuse(
            "control-character",
            mark,
            f"an escape in this text (such as \\e, \\0 or \\u{ord(bad.group(0)):04x}) writes the "
            f"invisible control character {name} into it",
            "delete the escape; write a line break in a block scalar (|) if one was meant",
            path,
        )

    def _json(self, text: str, mark: Mark, path: Path) -> JSONValue:
        if text in ("true", "false", "null"):
            return {"true": True, "false": False, "null": None}[text]
        if any(c in text for c in ".eE"):
            return self._finite(float(text), text, mark, path)
        return self._exact(text, mark, path)

    def _plain(self, text: str, mark: Mark, path: Path) -> JSONValue:
        if text and text[0] not in _RESOLVED_FIRST:  # no implicit type starts this way
            return text
        kind = _resolve(text)
        if kind == "str":
            if NUMBER_LIKE.match(text):
                self.plain_number_like[path] = text
            return text
        if kind == "null":
            return None
        if kind == "bool":
            return bool(_construct("bool", text))
        if AMBIGUOUS_NUMBER.match(text) or "_" in text:
            return self._ambiguous(kind, text, mark, path)
        if kind == "int":
            return self._exact(text, mark, path)
        if kind == "float":
            return self._finite(_float(text), text, mark, path)
        return text  # timestamps (kept as text), merge key '<<', and anything else

    def _ambiguous(self, kind: str, text: str, mark: Mark, path: Path) -> JSONValue:
        """A number YAML 1.1 reads in a way nobody means: reported, and kept as YAML 1.1 reads
        it where that is a representable number (else as the text written)."""
        value: JSONValue
        try:
            value = _yaml11_int(text) if kind == "int" else _float(text)
        except (ValueError, ArithmeticError):
            value = text
        if isinstance(value, int) and abs(value) > MAX_EXACT_INTEGER:
            value = text
        if isinstance(value, float) and not math.isfinite(value):
            value = text
        shown = f"the number {value!r}" if not isinstance(value, str) else "a malformed number"
        self.notes.append(
            load_issue(
                self.file,
                "ambiguous-number",
                mark,
                f"`{text}` is read by YAML 1.1 as {shown}, not as written "
                f"({_AMBIGUITY.get(_kind_of_number(text), 'YAML versions disagree about it')})",
                f'write "{text}" in quotes if it is text, or the plain decimal number',
                format_path(path),
            )
        )
        return value

    def _tagged(self, tag: str, text: str, mark: Mark, path: Path) -> JSONValue:
        """An explicitly tagged scalar: the value must be one the tag can hold."""
        kind = tag.removeprefix(_SAFE_TAG_PREFIX)
        fits = _resolve(text) == kind or (kind == "float" and _resolve(text) == "int")
        if not fits:
            raise self.refuse(
                "tag-mismatch",
                mark,
                f"`!!{kind} {text}`: `{text}` is not a {_TAG_NAMES.get(kind, kind)}",
                f"remove the `!!{kind}` tag and write the value plainly (quote it if it is text)",
                path,
            )
        if kind == "null":
            return None
        if kind == "bool":
            return bool(_construct("bool", text))
        if kind == "int":
            return self._exact(text, mark, path)
        return self._finite(_float(text), text, mark, path)

    def _exact(self, text: str, mark: Mark, path: Path) -> int:
        digits = text.replace("_", "").lstrip("+-")
        if len(digits) > 16 or abs(int(text.replace("_", ""))) > MAX_EXACT_INTEGER:
            raise self.refuse(
                "number-out-of-range",
                mark,
                f"`{text[:40]}{'…' if len(text) > 40 else ''}` is too large to be stored "
                f"exactly (integers are at most {MAX_EXACT_INTEGER:,} in size)",
                "write a smaller number, or put it in quotes if it is an identifier",
                path,
            )
        return int(text.replace("_", ""))

    def _finite(self, value: float, text: str, mark: Mark, path: Path) -> float:
        if math.isfinite(value):
            return value
        special = text.lower().lstrip("+-") in (".inf", ".nan", "nan", "infinity")
        raise self.refuse(
            "non-finite-number" if special else "number-out-of-range",
            mark,
            f"`{text}` is not a finite number"
            if special
            else f"`{text}` is too large to be a number",
            "write a real number, or put the text in quotes",
            path,
        )


_SURROGATE = re.compile("[\ud800-\udfff]")
_RESOLVER = yaml.resolver.Resolver()
_CONSTRUCTOR = yaml.constructor.SafeConstructor()
# The first characters PyYAML's resolver dispatches on: a plain scalar starting otherwise is
# text (a number-like text starts with a digit, a sign or a point, all in this set too).
_RESOLVED_FIRST = frozenset(c for c in _RESOLVER.yaml_implicit_resolvers if c)
assert None not in _RESOLVER.yaml_implicit_resolvers  # no resolver for every first character
# Leading-zero octals (054), hex (0x36), binary (0b101) and base-60 numbers (12:30) are YAML 1.1
# features nobody means.
AMBIGUOUS_NUMBER = re.compile(
    r"^[-+]?(0[0-7_]+|0x[0-9a-fA-F_]*|0b[01_]*|[0-9][0-9_]*(:[0-5]?[0-9])+(\.[0-9_]*)?)$"
)
# Plain text that looks like a number to a reader (YAML 1.1 reads it as text).
NUMBER_LIKE = re.compile(r"^[-+]?(\d+\.?\d*|\.\d+)([eE][-+]?\d+)$")
_AMBIGUITY = {
    "octal": "a leading zero makes it octal",
    "hex": "0x makes it hexadecimal",
    "binary": "0b makes it binary",
    "sexagesimal": "a colon makes it base 60",
    "underscore": "YAML 1.1 ignores the underscores, YAML 1.2 reads text",
}
_TAG_NAMES = {"int": "whole number", "float": "number", "bool": "boolean", "null": "null"}


def _kind_of_number(text: str) -> str:
    digits = text.lstrip("+-")
    if digits.startswith("0x"):
        return "hex"
    if digits.startswith("0b"):
        return "binary"
    if ":" in digits:
        return "sexagesimal"
    if digits.startswith("0") and len(digits) > 1 and "." not in digits:
        return "octal"
    return "underscore"


@lru_cache(maxsize=4096)
def _resolve(text: str) -> str:
    """What YAML 1.1 (PyYAML's resolver) makes of a plain scalar: str, null, bool, int,
    float, timestamp, merge or value. Cached: 300 full-size cases resolve 41,879 scalars
    that start like a number, and 912 distinct ones."""
    tag: str = _RESOLVER.resolve(yaml.ScalarNode, text, (True, False))  # type: ignore[no-untyped-call]
    return tag.removeprefix(_SAFE_TAG_PREFIX)


def _construct(kind: str, text: str) -> Any:
    """The value PyYAML's safe constructor makes of a plain scalar it resolved as ``kind``
    (int, float or bool): YAML 1.1's bases, base 60, underscores, infinities and NaN."""
    node = yaml.ScalarNode(_SAFE_TAG_PREFIX + kind, text)
    return getattr(_CONSTRUCTOR, f"construct_yaml_{kind}")(node)


def _yaml11_int(text: str) -> int:
    return int(_construct("int", text))


def _float(text: str) -> float:
    return float(_construct("float", text))


def _syntax_hint(what: str) -> str:
    if "mapping values are not allowed" in what:
        return "text containing ': ' must be quoted, e.g. title: \"Pain: acute\""
    if "could not find expected ':'" in what or "expected <block end>" in what:
        return "check the indentation of this line against the lines above it"
    if "found character" in what or "found undefined" in what:
        return "put the value in double quotes"
    return "check indentation and quoting on this line and the one before it"
