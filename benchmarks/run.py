"""casebank at dataset scale: time and peak memory of each operation, and the target ratios.

    nox -s bench                       # full-size cases, 1,000 and 2,000 (fullsize.py)
    nox -s bench -- --large            # and 10,000
    nox -s bench -- --synthetic        # the small synthetic cases: 1,000 and 10,000, 2,000 commits
    nox -s bench -- --synthetic --cases 2000 --commits 400 --small 500    # a quicker look

Every figure is a whole process, as a user runs it: wall time (median of --repeat runs), time
per case, and the process's own peak resident memory (from wait4). Ratios are of medians
measured in the same run, so the machine's speed cancels out.
"""

from __future__ import annotations

import argparse
import os
import shutil
import statistics
import subprocess
import sys
import tempfile
import time
from dataclasses import dataclass
from pathlib import Path

sys.path.insert(0, str(Path(__file__).resolve().parent))
from generate import write_cases, write_history

ROOT = Path(__file__).resolve().parent.parent
PARSE_ONLY = """
import sys, pathlib, yaml
for path in sorted(pathlib.Path(sys.argv[1]).glob("*.yaml")):
    yaml.load(path.read_bytes(), Loader=yaml.CSafeLoader)
"""


@dataclass
class Figure:
    name: str
    cases: int
    wall: float
    peak_mb: float

    def row(self) -> str:
        per_case = self.wall / self.cases * 1000 if self.cases else 0.0
        return (
            f"| {self.name} | {self.cases:,} | {self.wall:.2f} | {per_case:.3f} | "
            f"{self.peak_mb:.0f} |"
        )


def measure(command: list[str], cwd: Path, repeat: int) -> tuple[float, float]:
    """Median wall seconds and largest peak RSS (MB) of ``repeat`` runs of one process."""
    walls, peaks = [], []
    for _ in range(repeat):
        start = time.perf_counter()
        process = subprocess.Popen(
            command, cwd=cwd, stdout=subprocess.DEVNULL, stderr=subprocess.PIPE
        )
        _, status, usage = os.wait4(process.pid, 0)
        walls.append(time.perf_counter() - start)
        peaks.append(usage.ru_maxrss / 1024)
        code = os.waitstatus_to_exitcode(status)
        if code not in (0, 1):
            stderr = process.stderr.read().decode() if process.stderr else ""
            raise SystemExit(f"{' '.join(command)} failed ({code}): {stderr}")
        if process.stderr:
            process.stderr.close()
    return statistics.median(walls), max(peaks)


def casebank(*args: str) -> list[str]:
    return [sys.executable, "-m", "casebank", *args]


def run(args: argparse.Namespace) -> list[str]:
    work = Path(tempfile.mkdtemp(prefix="casebank-bench-"))
    figures: dict[str, Figure] = {}
    try:
        small, large = work / "small", work / "large"
        write_cases(small, args.small)
        write_cases(large, args.cases)

        def fig(
            key: str,
            name: str,
            command: list[str],
            cwd: Path,
            cases: int,
            repeat: int | None = None,
        ) -> Figure:
            wall, peak = measure(command, cwd, repeat or args.repeat)
            figures[key] = Figure(name, cases, wall, peak)
            print(figures[key].row(), flush=True)
            return figures[key]

        print("| operation | cases | wall s | ms per case | peak MB |\n|---|---:|---:|---:|---:|")
        fig(
            "small",
            "casebank validate --no-cache",
            casebank("validate", "--no-cache"),
            small,
            args.small,
        )
        measure(casebank("validate"), small, 1)  # fill the cache
        fig(
            "small_warm",
            "casebank validate (warm cache, nothing changed)",
            casebank("validate"),
            small,
            args.small,
        )
        schema = str(ROOT / "schema" / "case.schema.json")
        files = sorted(str(p) for p in (small / "cases").glob("*.yaml"))
        fig(
            "jsonschema",
            "check-jsonschema (same files, equivalent schema)",
            ["check-jsonschema", "--schemafile", schema, *files],
            small,
            args.small,
            repeat=1,
        )
        fig(
            "parse",
            "parse only (PyYAML C loader, one process)",
            [sys.executable, "-c", PARSE_ONLY, str(large / "cases")],
            large,
            args.cases,
        )
        fig(
            "cold",
            "casebank validate --no-cache",
            casebank("validate", "--no-cache"),
            large,
            args.cases,
        )
        fig(
            "cold1",
            "casebank validate --no-cache --jobs 1",
            casebank("validate", "--no-cache", "--jobs", "1"),
            large,
            args.cases,
            repeat=1,
        )
        measure(casebank("validate"), large, 1)  # fill the cache
        fig(
            "warm",
            "casebank validate (warm cache, nothing changed)",
            casebank("validate"),
            large,
            args.cases,
        )

        half = args.commits // 2
        write_history(large, half)
        subprocess.run(
            casebank("release", "1.0.0"), cwd=large, check=True, stdout=subprocess.DEVNULL
        )
        write_history(large, args.commits - half - 1)
        changed = _touch(large, 10)
        fig(
            "changed10",
            "casebank validate --changed-since HEAD (10 changed)",
            casebank("validate", "--no-cache", "--changed-since", "HEAD"),
            large,
            10,
        )
        _restore(large, changed)
        changed = _touch(large, 100)
        fig(
            "changed100",
            "casebank validate --changed-since HEAD (100 changed)",
            casebank("validate", "--no-cache", "--changed-since", "HEAD"),
            large,
            100,
        )
        _restore(large, changed)
        # Cold: the validation cache removed before each run, as on a fresh CI machine.
        no_cache = f"rm -rf .casebank-cache && exec {sys.executable} -m casebank release 1.1.0"
        fig(
            "dryrun",
            f"casebank release --dry-run ({args.commits:,} commits, no cache)",
            ["sh", "-c", f"{no_cache} --dry-run"],
            large,
            args.cases,
        )
        measure(casebank("validate"), large, 1)  # a dry run never writes the cache: fill it
        fig(
            "dryrun_warm",
            "casebank release --dry-run (validation cache warm)",
            casebank("release", "1.1.0", "--dry-run"),
            large,
            args.cases,
        )
        fig(
            "verify",
            f"casebank verify ({args.commits:,} commits, 1 release)",
            casebank("verify"),
            large,
            args.cases,
        )
        bundle = work / "bundle"
        fig(
            "export",
            "casebank export --release 1.0.0 (jsonl)",
            casebank("export", "--release", "1.0.0", "--out", str(bundle), "--force"),
            large,
            args.cases,
        )
        submissions, one = _submissions(bundle, work)
        fig(
            "score1",
            "casebank score (1 submission: loading and verifying the release)",
            casebank("score", "--release", "1.0.0", str(one), "--format", "json"),
            large,
            1,
        )
        fig(
            "score",
            f"casebank score ({args.cases:,} submissions)",
            casebank("score", "--release", "1.0.0", str(submissions), "--format", "json"),
            large,
            args.cases,
        )
        lines = _inline_lines(
            SCORE_LOOP, bundle / "cases.jsonl", submissions, large / "catalog.yaml"
        )
        figures["score_lib"] = Figure(
            f"scoring {args.cases:,} submissions (library, in-process)", args.cases, lines[-1], 0
        )
        print(figures["score_lib"].row(), flush=True)
        figures["summary_lib"] = Figure(
            "the summary of those scores, with its bootstrap interval", args.cases, lines[-2], 0
        )
        print(figures["summary_lib"].row(), flush=True)
        case_id = sorted((small / "cases").glob("*.yaml"))[0].stem
        fig(
            "results",
            "casebank results (one case, 5 tests, start-up included)",
            casebank("results", case_id, "ECG", "CBC", "Troponin", "Chest X-ray", "Lipase"),
            small,
            1,
        )
        seconds = _inline(ORACLE_LOOP, small / "cases" / f"{case_id}.yaml", small / "catalog.yaml")
        figures["oracle"] = Figure(
            "results oracle, 10,000 requests (library, in-process)", 10_000, seconds, 0
        )
        print(figures["oracle"].row(), flush=True)
    finally:
        shutil.rmtree(work, ignore_errors=True)
    return ratios(figures, args)


ORACLE_LOOP = """
import sys, time
from casebank.format.catalog import build_catalog
from casebank.format.loader import load_document
from casebank.serve.oracle import Oracle
case = load_document("case.yaml", open(sys.argv[1], "rb").read()).document.data
catalog = build_catalog(load_document("catalog.yaml", open(sys.argv[2], "rb").read()).document.data)
names = [t.name for t in catalog.tests[:200]] + ["ECG", "hs-troponin", "Urine dipstick", "Tarot"]
oracle = Oracle(case, catalog)
start = time.perf_counter()
for i in range(10_000):
    oracle.answer(names[i % len(names)])
print(time.perf_counter() - start)
"""


SCORE_LOOP = """
import json, sys, time
from casebank.format.catalog import build_catalog
from casebank.format.loader import load_document
from casebank.serve import score
catalog = build_catalog(load_document("catalog.yaml", open(sys.argv[3], "rb").read()).document.data)
keys = {}
for line in open(sys.argv[1], encoding="utf-8"):
    r = json.loads(line)
    keys[(r["case_id"], r["version"])] = score.prepare(
        r["case_id"], r["version"], r["content_hash"], json.loads(r["case"]), catalog
    )
raw = open(sys.argv[2], "rb").read()
start = time.perf_counter()
submissions = score.parse_submissions(raw, "submissions.jsonl")
scored = score.score_all(submissions, [], keys, catalog)
middle = time.perf_counter()
for case in scored:  # no verdicts here: time the summary as if every case were complete
    case.score = case.components["diagnosis"]
score.summary(scored, len(keys))
print(time.perf_counter() - middle)
print(middle - start)
"""


def _inline(script: str, *argv: Path) -> float:
    """Seconds a script measures itself (library figures, without start-up)."""
    return _inline_lines(script, *argv)[-1]


def _inline_lines(script: str, *argv: Path) -> list[float]:
    done = subprocess.run(
        [sys.executable, "-c", script, *map(str, argv)], check=True, capture_output=True, text=True
    )
    return [float(line) for line in done.stdout.strip().splitlines()]


def _submissions(bundle: Path, work: Path) -> tuple[Path, Path]:
    """One gold-standard submission per exported case, and a file with only the first."""
    from fullsize import gold_submissions

    lines = gold_submissions(bundle)
    every, one = work / "submissions.jsonl", work / "one.jsonl"
    every.write_text("\n".join(lines) + "\n", encoding="utf-8")
    one.write_text(lines[0] + "\n", encoding="utf-8")
    return every, one


def _touch(repo: Path, count: int) -> list[Path]:
    paths = sorted((repo / "cases").glob("*.yaml"))[:count]
    for path in paths:
        path.write_text(
            path.read_text(encoding="utf-8").replace(
                "language: en", "language: en\n  # touched", 1
            ),
            encoding="utf-8",
        )
    return paths


def _restore(repo: Path, paths: list[Path]) -> None:
    subprocess.run(["git", "checkout", "-q", "--", *map(str, paths)], cwd=repo, check=True)


def ratios(f: dict[str, Figure], args: argparse.Namespace) -> list[str]:
    def ratio(a: str, b: str) -> float:
        return f[a].wall / f[b].wall

    return [
        "",
        "| target | measured | goal |",
        "|---|---:|---|",
        f"| check-jsonschema ÷ casebank, {args.small:,} cases | "
        f"{ratio('jsonschema', 'small'):.1f}× | ≥ 10× |",
        f"| cold validation ÷ parse only, {args.cases:,} cases | "
        f"{ratio('cold', 'parse'):.2f}× | ≤ 3× |",
        f"| warm ÷ cold validation, {args.cases:,} cases | {ratio('warm', 'cold'):.3f} | ≤ 0.1 |",
        f"| warm ÷ cold validation, {args.small:,} cases (start-up dominates) | "
        f"{ratio('small_warm', 'small'):.3f} | ≤ 0.1 |",
        f"| --changed-since, 100 ÷ 10 changed cases | "
        f"{ratio('changed100', 'changed10'):.1f}× | grows with the change, not the repository |",
        f"| --changed-since (10 changed) ÷ cold validation | "
        f"{ratio('changed10', 'cold'):.3f} | ≪ 1 |",
        f"| peak memory, cold validation of {args.cases:,} cases | {f['cold'].peak_mb:.0f} MB | "
        "< 300 MB |",
        f"| release --dry-run (no cache) ÷ cold validation | {ratio('dryrun', 'cold'):.2f}× "
        "| ≤ 2× |",
        f"| verify ÷ cold validation | {ratio('verify', 'cold'):.2f}× | ≤ 2× |",
        f"| export ÷ cold validation, {args.cases:,} cases | {ratio('export', 'cold'):.2f}× "
        "| ≤ 1.5× |",
        f"| scoring {args.cases:,} submissions, beyond loading the release | "
        f"{f['score_lib'].wall:.2f} s in-process (the summary's bootstrap: "
        f"{f['summary_lib'].wall:.1f} s more) | < 1 s |",
        f"| casebank results, one case, start-up included | {f['results'].wall:.2f} s | < 1 s |",
        f"| results oracle, 10,000 requests in-process | {f['oracle'].wall:.3f} s | < 1 s |",
    ]


def main() -> None:
    argv = sys.argv[1:]
    if "--synthetic" not in argv:
        import fullsize

        fullsize.main(argv)
        return
    argv.remove("--synthetic")
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--cases", type=int, default=10_000)
    parser.add_argument("--small", type=int, default=1_000)
    parser.add_argument("--commits", type=int, default=2_000)
    parser.add_argument("--repeat", type=int, default=3)
    args = parser.parse_args(argv)
    print(f"machine: {os.cpu_count()} cores, Python {sys.version.split()[0]}, {sys.platform}")
    for line in run(args):
        print(line)


if __name__ == "__main__":
    main()
