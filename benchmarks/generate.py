"""Synthetic datasets for the benchmarks: N valid, varied cases, and a git history of M commits.

Cases draw on the real catalog (tests, units, result types, vocabularies), so they exercise
every rule the way real cases do; each passes `casebank validate --strict`. History is written
with one `git fast-import` process, each commit touching a few cases.

    python benchmarks/generate.py cases DIR N            # a repository folder with N cases
    python benchmarks/generate.py fullsize DIR N         # N varied copies of the shipped cases
    python benchmarks/generate.py history DIR COMMITS     # add COMMITS commits to DIR's main
"""

from __future__ import annotations

import random
import re
import shutil
import subprocess
import sys
from pathlib import Path
from typing import Any

import yaml

ROOT = Path(__file__).resolve().parent.parent
WORDS = [
    "acute",
    "onset",
    "pain",
    "fever",
    "cough",
    "breathless",
    "tired",
    "dizzy",
    "nausea",
    "swelling",
    "rash",
    "weakness",
    "worse",
    "better",
    "since",
    "morning",
    "night",
    "week",
    "walking",
    "resting",
    "eating",
    "after",
    "before",
    "sudden",
    "gradual",
    "constant",
    "intermittent",
    "sharp",
    "dull",
    "pressing",
    "burning",
    "left",
    "right",
    "chest",
    "abdomen",
    "back",
    "head",
    "leg",
    "arm",
]


def _sentence(rng: random.Random, words: int) -> str:
    text = " ".join(rng.choice(WORDS) for _ in range(words))
    return text[0].upper() + text[1:] + "."


def _catalog() -> dict[str, Any]:
    data: dict[str, Any] = yaml.safe_load((ROOT / "catalog.yaml").read_text(encoding="utf-8"))
    return data


def _lab(rng: random.Random, test: dict[str, Any]) -> dict[str, Any]:
    low = round(rng.uniform(1, 50), 1)
    high = round(low * rng.uniform(1.5, 3), 1)
    value = round(rng.uniform(low * 0.5, high * 1.5), 1)
    flag = "high" if value > high else "low" if value < low else "normal"
    return {
        "type": "lab_value",
        "value": value,
        "unit": test["unit"],
        "reference_range": f"{low}–{high}",
        "flag": flag,
    }


def make_case(case_id: str, rng: random.Random, catalog: dict[str, Any]) -> dict[str, Any]:
    vocab = catalog["vocabularies"]
    labs = [t for t in catalog["tests"] if t["result_types"] == ["lab_value"] and "unit" in t]
    reports = [
        t
        for t in catalog["tests"]
        if "text_report" in t["result_types"] and "panel" not in t["result_types"]
    ]
    chosen = rng.sample(labs, rng.randint(3, 7)) + rng.sample(reports, rng.randint(1, 3))
    rng.shuffle(chosen)
    cut = max(1, len(chosen) // 2)
    results = {
        t["name"]: (
            _lab(rng, t)
            if t in labs
            else {"type": "text_report", "value": _sentence(rng, rng.randint(6, 20))}
        )
        for t in chosen
    }
    diagnosis = f"Synthetic condition {case_id.replace('_', ' ')}"
    weights = rng.choice([(0.35, 0.25, 0.3, 0.1), (0.4, 0.2, 0.2, 0.2), (0.25, 0.25, 0.25, 0.25)])
    return {
        "case_id": case_id,
        "metadata": {
            "title": _sentence(rng, 5)[:-1],
            "language": "en",
            "difficulty": rng.choice(["easy", "medium", "hard"]),
            "specialty": rng.choice(sorted(vocab["specialties"])),
            "tags": rng.sample(sorted(vocab["tags"]), 3),
        },
        "patient": {
            "age": rng.randint(1, 95),
            "sex": rng.choice(["female", "male"]),
            "persona": _sentence(rng, 12),
            "tone_presets": rng.sample(sorted(vocab["tones"]), 2),
            "pmh": [{"condition": _sentence(rng, 3)[:-1]}],
            "allergies": [],
        },
        "presentation": {
            "chief_complaint": _sentence(rng, 4),
            "history_of_present_illness": " ".join(
                _sentence(rng, rng.randint(8, 16)) for _ in range(rng.randint(2, 6))
            ),
            "key_history_points": {
                "must_ask": [_sentence(rng, 6) for _ in range(3)],
                "nice_to_ask": [_sentence(rng, 6)],
                "red_flags": [_sentence(rng, 4)],
            },
        },
        "physical_exam": {"general": _sentence(rng, 8), "cardiovascular": _sentence(rng, 6)},
        "ground_truth": {
            "final_diagnosis": diagnosis,
            "differential": [diagnosis, "Another synthetic condition"],
        },
        "investigations": {
            "catalog_hints": [chosen[0]["name"]],
            "expected": {
                "must_order": [t["name"] for t in chosen[:cut]],
                "optional": [t["name"] for t in chosen[cut:]],
                "should_not_order": [],
            },
            "results": results,
            "results_generated_policy": "normal_unless_listed",
        },
        "management_gold": {
            k: [_sentence(rng, 7) for _ in range(rng.randint(1, 4))]
            for k in ("diagnostic_plan", "treatment_plan", "contraindications", "follow_up")
        },
        "scoring": {
            "weights": dict(
                zip(("diagnosis", "diagnostics", "treatment", "safety"), weights, strict=True)
            ),
            "acceptable_answers": {"final_diagnosis": [f"Synthetic {case_id}"]},
            "critical_safety_errors": [_sentence(rng, 5)],
        },
    }


def dump(case: dict[str, Any]) -> str:
    return "# yaml-language-server: $schema=../schema/case.schema.json\n" + yaml.safe_dump(
        case, sort_keys=False, allow_unicode=True, width=100
    )


def write_cases(folder: Path, count: int, seed: int = 7) -> None:
    """A repository folder: the real catalog and `count` synthetic cases."""
    rng = random.Random(seed)
    catalog = _catalog()
    (folder / "cases").mkdir(parents=True, exist_ok=True)
    shutil.copy(ROOT / "catalog.yaml", folder / "catalog.yaml")
    (folder / ".gitignore").write_text(".casebank-cache/\n", encoding="utf-8")
    for i in range(count):
        case_id = f"synthetic_{i:05d}"
        (folder / "cases" / f"{case_id}.yaml").write_text(
            dump(make_case(case_id, rng, catalog)), encoding="utf-8"
        )


_CASE_ID_LINE = re.compile(r"^case_id: *(\S+) *$", re.M)
_TITLE_LINE = re.compile(r'^(  title: *)"?([^"\n]*)"?$', re.M)
_AGE_LINE = re.compile(r"^(  age: *)(\d+)$", re.M)


def fullsize_case(text: str, case_id: str, copy: int) -> str:
    """A copy of a shipped case under a new id, with its title and the patient's age changed
    (every copy has its own bytes and content hash, so no cache or digest can share work)."""
    text, found = _CASE_ID_LINE.subn(f"case_id: {case_id}", text, count=1)
    if not found:
        raise SystemExit(f"no case_id line to rename for {case_id}")
    text = _TITLE_LINE.sub(lambda m: f'{m[1]}"{m[2]} (copy {copy})"', text, count=1)

    # Age moves by at most a year, and never across 18 or 65, so age-keyed rules still hold.
    def age(m: re.Match[str]) -> str:
        years = int(m[2])
        moved = years + (1 if copy % 2 else -1)
        same_band = (moved >= 18) == (years >= 18) and (moved >= 65) == (years >= 65)
        return f"{m[1]}{moved if same_band and moved > 0 else years}"

    return _AGE_LINE.sub(age, text, count=1)


def write_fullsize(folder: Path, count: int) -> None:
    """A repository folder: the real catalog and `count` varied copies of every shipped case,
    taken in turn (each copy full size: series, panels, a structured examination), with the
    attachments of those that have any."""
    sources = sorted((ROOT / "cases").glob("*.yaml"))
    texts = [(p.stem, p.read_text(encoding="utf-8")) for p in sources]
    (folder / "cases").mkdir(parents=True, exist_ok=True)
    shutil.copy(ROOT / "catalog.yaml", folder / "catalog.yaml")
    for extra in ("casebank.toml",):
        if (ROOT / extra).exists():
            shutil.copy(ROOT / extra, folder / extra)
    (folder / ".gitignore").write_text(".casebank-cache/\n", encoding="utf-8")
    for i in range(count):
        stem, text = texts[i % len(texts)]
        case_id = f"{stem}_c{i:05d}"
        (folder / "cases" / f"{case_id}.yaml").write_text(
            fullsize_case(text, case_id, i), encoding="utf-8"
        )
        attachments = ROOT / "cases" / stem
        if attachments.is_dir():
            shutil.copytree(attachments, folder / "cases" / case_id)


def _data(text: str) -> bytes:
    raw = text.encode("utf-8")
    return b"data %d\n%s\n" % (len(raw), raw)


def write_history(folder: Path, commits: int, seed: int = 11, touched: int = 3) -> None:
    """Append `commits` commits to `main`, each editing `touched` cases, via git fast-import.

    The first commit adds the whole tree if the repository has none yet.
    """
    rng = random.Random(seed)
    catalog = _catalog()
    cases = sorted(p.name for p in (folder / "cases").glob("*.yaml"))
    if not (folder / ".git").exists():
        subprocess.run(["git", "init", "-q", "-b", "main", str(folder)], check=True)
    has_head = (
        subprocess.run(
            ["git", "rev-parse", "-q", "--verify", "HEAD"], cwd=folder, capture_output=True
        ).returncode
        == 0
    )
    stream = bytearray()
    clock = 1_700_000_000 + (int(_head_time(folder)) if has_head else 0)
    authors = [
        ("Ann Author", "ann@example.org"),
        ("Bob Builder", "bob@example.org"),
        ("Cleo Clinician", "cleo@example.org"),
    ]
    for n in range(commits):
        clock += 3600
        name, email = authors[n % len(authors)]
        stream += b"commit refs/heads/main\n"
        stream += f"author {name} <{email}> {clock} +0000\n".encode()
        stream += f"committer {name} <{email}> {clock} +0000\n".encode()
        if n == 0 and not has_head:
            stream += _data("Add the synthetic cases")
            for rel in _untracked(folder):  # honours .gitignore: never the validation cache
                stream += f"M 100644 inline {rel}\n".encode()
                stream += _data((folder / rel).read_text(encoding="utf-8"))
            continue
        if n == 0:
            stream += _data(f"Edit cases (batch {n})")
            stream += b"from refs/heads/main^0\n"
        else:
            stream += _data(f"Edit cases (batch {n})")
        for name_ in rng.sample(cases, touched):
            case_id = name_.removesuffix(".yaml")
            text = dump(make_case(case_id, rng, catalog))
            (folder / "cases" / name_).write_text(text, encoding="utf-8")
            stream += f"M 100644 inline cases/{name_}\n".encode()
            stream += _data(text)
    subprocess.run(["git", "fast-import", "--quiet"], cwd=folder, input=bytes(stream), check=True)
    subprocess.run(["git", "reset", "-q", "--hard", "main"], cwd=folder, check=True)


def _untracked(folder: Path) -> list[str]:
    out = subprocess.run(
        ["git", "ls-files", "-z", "--others", "--exclude-standard"],
        cwd=folder,
        capture_output=True,
        check=True,
    ).stdout
    return sorted(p.decode() for p in out.split(b"\0") if p)


def _head_time(folder: Path) -> str:
    out = subprocess.run(
        ["git", "log", "-1", "--format=%ct", "main"],
        cwd=folder,
        capture_output=True,
        text=True,
        check=True,
    ).stdout.strip()
    return str(int(out) - 1_700_000_000)


if __name__ == "__main__":
    if len(sys.argv) != 4 or not sys.argv[3].isdigit():
        sys.exit("usage: generate.py cases|fullsize|history FOLDER NUMBER")
    kind, target, number = sys.argv[1], Path(sys.argv[2]), int(sys.argv[3])
    if kind == "cases":
        write_cases(target, number)
    elif kind == "fullsize":
        write_fullsize(target, number)
    elif kind == "history":
        write_history(target, number)
    else:
        sys.exit(f"unknown kind {kind!r}: use cases, fullsize or history")
