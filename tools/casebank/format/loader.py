"""Turn the bytes of a case file into data plus the line and column of every field.

The loader is the gate: it refuses anything unsafe or ambiguous before a rule sees it. It reads
YAML as a stream of parser events (libyaml's C parser where available) and builds plain JSON-like
data itself, because that is the only way to

- see duplicate keys (PyYAML's constructor silently keeps the last one),
- refuse anchors and aliases before they expand (a "billion laughs" file is refused at its first
  anchor, in constant time),
- stop at an absurd nesting depth without recursing,
- record where each value came from, so every problem can name its line and column,
- remember the source text of plain scalars that YAML 1.1 turns into something other than text
  (``no`` → false, ``054`` → 44, ``12:30`` → 750), for messages that say "quote it".

The data model of a case is JSON: mappings with text keys, lists, text, numbers, booleans and
null. Timestamps stay text; non-finite numbers are refused.
"""

from __future__ import annotations

import json
import math
import re
from collections.abc import Iterator
from dataclasses import dataclass, field
from typing import Any

import yaml

from casebank.format.document import Document, Mark, Path, format_path

try:  # the C parser is an order of magnitude faster; fall back quietly where it is missing
    from yaml import CSafeLoader as _YamlLoader
except ImportError:  # pragma: no cover - exercised only without libyaml
    from yaml import SafeLoader as _YamlLoader  # type: ignore[assignment]

MAX_FILE_BYTES = 1024 * 1024
MAX_DEPTH = 32

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
)


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


def load_document(file: str, raw: bytes) -> LoadResult:
    """Load one case or catalog file. ``file`` is the repository-relative path used in reports."""
    if len(raw) > MAX_FILE_BYTES:
        return LoadResult(
            None,
            [
                load_issue(
                    file,
                    "file-too-large",
                    (1, 1),
                    f"the file is {len(raw):,} bytes; the cap is {MAX_FILE_BYTES:,} bytes",
                    "shorten the narrative, or move large material into attachments",
                )
            ],
        )
    try:
        text = raw.decode("utf-8")
    except UnicodeDecodeError as exc:
        line = raw.count(b"\n", 0, exc.start) + 1
        column = exc.start - (raw.rfind(b"\n", 0, exc.start) + 1) + 1
        return LoadResult(
            None,
            [
                load_issue(
                    file,
                    "not-utf8",
                    (line, column),
                    f"byte 0x{raw[exc.start]:02x} at offset {exc.start} is not valid UTF-8",
                    "save the file as UTF-8 (most editors offer it under 'Save with encoding')",
                )
            ],
        )
    text = text.removeprefix("\ufeff")
    is_json = file.lower().endswith(".json")
    if is_json:
        problem = _check_json_syntax(file, text)
        if problem is not None:
            return LoadResult(None, [problem])
    builder = _Builder(file, json_scalars=is_json)
    try:
        data = builder.build(text)
    except _Refused as refused:
        return LoadResult(None, [*builder.refusals, refused.issue])
    if builder.refusals:
        return LoadResult(None, builder.refusals)
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
    doc = Document(file, data, builder.positions, builder.key_positions, builder.plain_non_text)
    return LoadResult(doc, builder.notes)


def _check_json_syntax(file: str, text: str) -> LoadIssue | None:
    """JSON files are held to JSON's grammar; YAML's looser one only serves for positions."""

    def no_duplicates(pairs: list[tuple[str, Any]]) -> dict[str, Any]:
        return dict(pairs)  # duplicates are reported by the builder, with positions

    try:
        json.loads(text, object_pairs_hook=no_duplicates)
    except json.JSONDecodeError as exc:
        return load_issue(
            file,
            "yaml-syntax",
            (exc.lineno, exc.colno),
            f"invalid JSON: {exc.msg}",
            "check for a missing comma or quote just before this point",
        )
    except RecursionError:
        return load_issue(
            file,
            "nesting-too-deep",
            (1, 1),
            "the JSON nests too deeply to read",
            f"keep mappings and lists within {MAX_DEPTH} levels",
        )
    return None


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


@dataclass
class _Frame:
    container: Any
    path: Path
    mark: Mark
    pending_key: str | None = None
    pending_key_mark: Mark = (1, 1)
    seen: dict[str, Mark] = field(default_factory=dict)


class _Builder:
    """Builds JSON-like data from parser events, iteratively, recording positions."""

    def __init__(self, file: str, *, json_scalars: bool) -> None:
        self.file = file
        self.json_scalars = json_scalars
        self.positions: dict[Path, Mark] = {}
        self.key_positions: dict[Path, Mark] = {}
        self.plain_non_text: dict[Path, str] = {}
        self.refusals: list[LoadIssue] = []  # refuse the document
        self.notes: list[LoadIssue] = []  # reported, but the document is still checked

    def refuse(self, name: str, mark: Mark, message: str, hint: str, path: Path = ()) -> _Refused:
        return _Refused(load_issue(self.file, name, mark, message, hint, format_path(path)))

    def build(self, text: str) -> Any:
        try:
            return self._build(yaml.parse(text, Loader=_YamlLoader))
        except yaml.MarkedYAMLError as exc:
            mark = exc.problem_mark or exc.context_mark
            where = (mark.line + 1, mark.column + 1) if mark else (1, 1)
            what = exc.problem or exc.context or "invalid YAML"
            raise self.refuse(
                "yaml-syntax",
                where,
                f"YAML syntax error: {what}",
                _syntax_hint(what),
            ) from None
        except yaml.YAMLError as exc:
            raise self.refuse(
                "yaml-syntax",
                (1, 1),
                f"YAML syntax error: {exc}",
                "check indentation and quoting",
            ) from None

    def _build(self, events: Iterator[yaml.Event]) -> Any:
        stack: list[_Frame] = []
        result: Any = _NO_DOCUMENT
        documents = 0
        for event in events:
            start = event.start_mark
            mark = (start.line + 1, start.column + 1) if start is not None else (1, 1)
            if isinstance(event, yaml.DocumentStartEvent):
                documents += 1
                if documents > 1:
                    raise self.refuse(
                        "multiple-documents",
                        mark,
                        "the file holds more than one YAML document (a second `---`)",
                        "keep one case per file: move the second document into its own file",
                    )
                continue
            if isinstance(event, yaml.AliasEvent):
                raise self.refuse(
                    "yaml-anchor",
                    mark,
                    f"alias `*{event.anchor}` refers to another part of the file",
                    "write the repeated content out in full; anchors and aliases are not allowed",
                )
            if isinstance(event, (yaml.ScalarEvent, yaml.CollectionStartEvent)):
                if event.anchor is not None:
                    raise self.refuse(
                        "yaml-anchor",
                        mark,
                        f"anchor `&{event.anchor}` is not allowed",
                        "remove the `&name` and write repeated content out in full",
                    )
                value_path = self._path_for_new_value(stack, mark, event)
                self._check_tag(event, mark, value_path)
                if isinstance(event, yaml.ScalarEvent):
                    value = self._scalar(event, mark, value_path)
                    if not stack:
                        self.positions[()] = mark
                        result = value
                    else:
                        self._attach(stack[-1], value, value_path, mark)
                    continue
                if len(stack) >= MAX_DEPTH:
                    raise self.refuse(
                        "nesting-too-deep",
                        mark,
                        f"mappings and lists nest more than {MAX_DEPTH} levels deep",
                        "flatten the structure; no case field nests this deep",
                    )
                container: Any = {} if isinstance(event, yaml.MappingStartEvent) else []
                stack.append(_Frame(container, value_path, mark))
                continue
            if isinstance(event, yaml.CollectionEndEvent):
                frame = stack.pop()
                if stack:
                    self._attach(stack[-1], frame.container, frame.path, frame.mark)
                else:
                    self.positions[()] = frame.mark
                    result = frame.container
        return None if result is _NO_DOCUMENT and documents else result

    def _path_for_new_value(self, stack: list[_Frame], mark: Mark, event: yaml.Event) -> Path:
        if not stack:
            return ()
        frame = stack[-1]
        if isinstance(frame.container, list):
            return (*frame.path, len(frame.container))
        if frame.pending_key is None:  # this node is a key
            if not isinstance(event, yaml.ScalarEvent):
                raise self.refuse(
                    "non-text-key",
                    mark,
                    "a mapping or list is used as a key",
                    "keys are plain field names; check the indentation of this line",
                    frame.path,
                )
            return frame.path
        return (*frame.path, frame.pending_key)

    def _attach(self, frame: _Frame, value: Any, path: Path, mark: Mark) -> None:
        container = frame.container
        if isinstance(container, list):
            container.append(value)
            self.positions[path] = mark
            return
        if frame.pending_key is None:
            self._take_key(frame, value, mark)
            return
        key = frame.pending_key
        frame.pending_key = None
        self.positions[path] = mark
        container[key] = value

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
            self.refusals.append(
                load_issue(
                    self.file,
                    "duplicate-key",
                    mark,
                    f"`{key}` appears twice in this mapping (first on line {first[0]}); "
                    "YAML would silently keep only the last one",
                    f"remove one of the two `{key}` entries, or merge their content",
                    format_path(path),
                )
            )
        else:
            frame.seen[key] = mark
        frame.pending_key = key
        frame.pending_key_mark = mark
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
        if not plain and tag in (None, "!", f"{_SAFE_TAG_PREFIX}str"):
            return text
        value: JSONValue
        if self.json_scalars:
            if text in ("true", "false", "null"):
                return {"true": True, "false": False, "null": None}[text]
            value = float(text) if any(c in text for c in ".eE") else int(text)
        else:
            resolved = tag if tag not in (None, "!") else _resolve(text)
            value = _construct(resolved, text)
        if isinstance(value, float) and not math.isfinite(value):
            raise self.refuse(
                "non-finite-number",
                mark,
                f"`{text}` is not a finite number",
                "write a real number, or put the text in quotes",
                path,
            )
        if not isinstance(value, str):
            self.plain_non_text[path] = text
            if AMBIGUOUS_NUMBER.match(text):
                self.notes.append(
                    load_issue(
                        self.file,
                        "ambiguous-number",
                        mark,
                        f"`{text}` is read by YAML as the number {value!r}, not as written",
                        f'write "{text}" in quotes if it is text, or write the number without '
                        "a leading zero or colon",
                        format_path(path),
                    )
                )
        return value


_RESOLVER = yaml.resolver.Resolver()
# Leading-zero octals (054) and base-60 numbers (12:30) are YAML 1.1 features nobody means.
AMBIGUOUS_NUMBER = re.compile(r"^[-+]?(0[0-7_]+|[0-9][0-9_]*(:[0-5]?[0-9])+(\.[0-9_]*)?)$")


def _resolve(text: str) -> str:
    tag: str = _RESOLVER.resolve(yaml.ScalarNode, text, (True, False))  # type: ignore[no-untyped-call]
    return tag


def _construct(tag: str, text: str) -> JSONValue:
    kind = tag.removeprefix(_SAFE_TAG_PREFIX)
    if kind == "null":
        return None
    if kind == "bool":
        return text.lower() in ("yes", "true", "on")
    if kind == "int":
        return _yaml11_int(text)
    if kind == "float":
        return _yaml11_float(text)
    return text  # str, timestamp (kept as text), merge key '<<' and anything else


def _yaml11_int(text: str) -> int:
    digits = text.replace("_", "")
    sign = -1 if digits.startswith("-") else 1
    digits = digits.lstrip("+-")
    if digits == "0":
        return 0
    if digits.startswith("0b"):
        return sign * int(digits[2:], 2)
    if digits.startswith("0x"):
        return sign * int(digits[2:], 16)
    if digits.startswith("0o"):
        return sign * int(digits[2:], 8)
    if digits.startswith("0"):
        return sign * int(digits, 8)
    if ":" in digits:
        value = 0
        for part in digits.split(":"):
            value = value * 60 + int(part)
        return sign * value
    return sign * int(digits)


def _yaml11_float(text: str) -> float:
    digits = text.replace("_", "").lower()
    sign = -1.0 if digits.startswith("-") else 1.0
    digits = digits.lstrip("+-")
    if digits == ".inf":
        return sign * math.inf
    if digits == ".nan":
        return math.nan
    if ":" in digits:
        value = 0.0
        for part in digits.split(":"):
            value = value * 60 + float(part)
        return sign * value
    return sign * float(digits)


def _syntax_hint(what: str) -> str:
    if "tab" in what:
        return "indent with spaces, not tabs"
    if "mapping values are not allowed" in what:
        return "text containing ': ' must be quoted, e.g. title: \"Pain: acute\""
    if "could not find expected ':'" in what or "expected <block end>" in what:
        return "check the indentation of this line against the lines above it"
    if "found character" in what or "found undefined" in what:
        return "put the value in double quotes"
    return "check indentation and quoting on this line and the one before it"
