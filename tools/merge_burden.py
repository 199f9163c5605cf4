"""Write each catalog test's `cost` and `burden` into catalog.yaml from a researched table.

    python tools/merge_burden.py BURDEN.yaml [catalog.yaml]

BURDEN.yaml maps each test's catalog name to `{cost: {...}, burden: {...}}`. Every entry of the
catalog gets exactly two lines, `cost: {...}` and `burden: {...}` in flow style, right after
its `kind:` line (away from the names and default results others edit, so that merges meet no
neighbouring change); every other line stays byte for byte as it was (a second run replaces
the two lines it wrote). A dose the table leaves empty (null) is written `unknown`. A name the
table lacks, or a table name the catalog lacks, is an error and nothing is written.
"""

from __future__ import annotations

import json
import re
import sys
from pathlib import Path
from typing import Any

import yaml

ENTRY = re.compile(r"^  - name: (.*)$")
OURS = re.compile(r"^    (cost|burden): \{")
PLAIN = re.compile(r"^[A-Za-z][A-Za-z0-9_-]*$")
YAML_WORDS = {"true", "false", "yes", "no", "on", "off", "null", "y", "n", "~"}
ORDER = {
    "cost": ("amount", "currency", "year", "source", "code", "tier"),
    "burden": ("invasive", "radiation_msv", "contrast", "sedation"),
}


def scalar(value: Any) -> str:
    if value is None:
        return "unknown"
    if isinstance(value, bool):
        return "true" if value else "false"
    if isinstance(value, (int, float)):
        return repr(value)
    text = str(value)
    if PLAIN.match(text) and text.casefold() not in YAML_WORDS:
        return text
    return json.dumps(text, ensure_ascii=False)


def flow(key: str, mapping: dict[str, Any]) -> str:
    unknown = set(mapping) - set(ORDER[key])
    if unknown:
        raise ValueError(f"{key}: unexpected keys {sorted(unknown)}")
    parts = [f"{k}: {scalar(mapping[k])}" for k in ORDER[key] if k in mapping]
    return f"    {key}: {{{', '.join(parts)}}}\n"


KIND = re.compile(r"^    kind: ")


def entries(lines: list[str]) -> list[tuple[str, int, int]]:
    """(name, first line, where the two lines go) of each entry: after its `kind:` line, or
    after its last line."""
    starts = [(i, m.group(1)) for i, line in enumerate(lines) if (m := ENTRY.match(line))]
    found = []
    for number, (start, raw) in enumerate(starts):
        stop = starts[number + 1][0] if number + 1 < len(starts) else len(lines)
        end = start + 1
        for i in range(start + 1, stop):
            if lines[i].startswith("    ") and not lines[i].lstrip().startswith("#"):
                end = i + 1
            elif lines[i].strip() and not lines[i].startswith("    "):
                break
        kind = next((i for i in range(start + 1, end) if KIND.match(lines[i])), None)
        found.append((str(yaml.safe_load(raw)), start, end if kind is None else kind + 1))
    return found


def merge(catalog: str, table: dict[str, Any]) -> str:
    lines = [line for line in catalog.splitlines(keepends=True) if not OURS.match(line)]
    spans = entries(lines)
    names = [name for name, _, _ in spans]
    missing = [n for n in names if n not in table]
    extra = [n for n in table if n not in set(names)]
    if missing or extra:
        raise ValueError(f"not in the table: {missing[:10]}; not in the catalog: {extra[:10]}")
    for name, _, end in reversed(spans):
        data = table[name]
        lines[end:end] = [flow("cost", data["cost"]), flow("burden", data["burden"])]
    return "".join(lines)


def main(argv: list[str]) -> int:
    if not 1 <= len(argv) <= 2:
        print(__doc__, file=sys.stderr)
        return 2
    table = yaml.safe_load(Path(argv[0]).read_text(encoding="utf-8"))
    target = Path(argv[1] if len(argv) > 1 else "catalog.yaml")
    try:
        merged = merge(target.read_text(encoding="utf-8"), table)
    except ValueError as exc:
        print(f"merge_burden: {exc}", file=sys.stderr)
        return 1
    target.write_text(merged, encoding="utf-8")
    return 0


if __name__ == "__main__":
    raise SystemExit(main(sys.argv[1:]))
