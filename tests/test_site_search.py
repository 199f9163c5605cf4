"""The index page's search script, run in Node over the shipped dataset's search index.

The browser tests (``nox -s browser``) drive the same script in Chromium; this one runs wherever
Node.js is installed, with a stand-in for the few DOM calls the script makes, so that what a
query finds is tested on every machine that has Node.
"""

from __future__ import annotations

import json
import shutil
import subprocess
from pathlib import Path

import pytest

from casebank.format.loader import load_document
from casebank.site.build import search_index
from casebank.workspace import case_files

ROOT = Path(__file__).resolve().parent.parent
SCRIPT = ROOT / "tools" / "casebank" / "site" / "static" / "site.js"
NODE = shutil.which("node")

# A document with the elements site.js looks up; each query sets the search box, fires the
# form's `input` listener and prints the ids of the rows left visible.
_HARNESS = """
const fs = require("fs");
const [script, index, queries] = process.argv.slice(2).map((p) => fs.readFileSync(p, "utf8"));
const records = JSON.parse(index);
const listeners = {};
const element = (extra) => Object.assign({ hidden: false, value: "", textContent: "" }, extra);
const rows = records.map((r) => element({ getAttribute: () => r.id }));
const nodes = {
  "case-filters": element({ addEventListener: (name, f) => { listeners[name] = f; } }),
  "case-index": element({ textContent: index }),
  "case-table": element({ querySelectorAll: () => rows }),
  "case-search": element(), "case-count": element(), "no-match": element(),
  "filter-specialty": element(), "filter-difficulty": element(), "filter-tag": element(),
};
global.document = { getElementById: (id) => nodes[id] || null };
global.window = { setTimeout: (f) => f() };
eval(script);
for (const query of JSON.parse(queries)) {
  nodes["case-search"].value = query;
  listeners.input();
  console.log(JSON.stringify(rows.filter((r) => !r.hidden).map((r) => r.getAttribute())));
}
"""


def _entries() -> list[dict[str, object]]:
    entries = []
    for relative in case_files(ROOT):
        doc = load_document(relative, (ROOT / relative).read_bytes()).document
        assert doc is not None, relative
        meta = doc.data["metadata"]
        entries.append(
            {
                "id": doc.data["case_id"],
                "title": meta["title"],
                "specialty": meta["specialty"],
                "difficulty": meta["difficulty"],
                "tags": meta.get("tags", []),
            }
        )
    return entries


def _search(tmp_path: Path, queries: list[str]) -> list[list[str]]:
    assert NODE is not None
    (tmp_path / "index.json").write_text(search_index(_entries()), encoding="utf-8")
    (tmp_path / "queries.json").write_text(json.dumps(queries), encoding="utf-8")
    (tmp_path / "harness.js").write_text(_HARNESS, encoding="utf-8")
    done = subprocess.run(
        [NODE, "harness.js", str(SCRIPT), "index.json", "queries.json"],
        cwd=tmp_path,
        capture_output=True,
        text=True,
        check=True,
        timeout=60,
    )
    return [json.loads(line) for line in done.stdout.splitlines()]


@pytest.mark.skipif(NODE is None, reason="Node.js is not installed")
def test_search_finds_a_case_by_its_id_alone(tmp_path: Path) -> None:
    ids = [str(e["id"]) for e in _entries()]
    assert "chest_pain_001" in ids
    found = _search(tmp_path, ["chest_pain_001", "CHEST_PAIN_001 ", "pain_001", ""])
    assert found[0] == ["chest_pain_001"]
    assert found[1] == ["chest_pain_001"]  # any capitalisation, spaces around it
    assert "chest_pain_001" in found[2] and all("pain_001" in i for i in found[2])
    assert found[3] == ids  # an empty search shows every case


@pytest.mark.skipif(NODE is None, reason="Node.js is not installed")
def test_search_still_finds_titles_and_specialties_by_their_words(tmp_path: Path) -> None:
    entries = {str(e["id"]): e for e in _entries()}
    by_title, by_specialty, nothing = _search(
        tmp_path, ["acute CHEST pain", "emergency medicine", "zzz no such case"]
    )
    assert "chest_pain_001" in by_title
    for case_id in by_title:  # every word is somewhere in what the index shows
        shown = json.dumps(entries[case_id]).lower().replace("_", " ")
        assert all(word in shown for word in ("acute", "chest", "pain")), case_id
    specialty = [i for i, e in entries.items() if e["specialty"] == "emergency_medicine"]
    assert specialty and set(specialty) <= set(by_specialty)
    assert nothing == []
