"""The targets of issue 26, on full-size cases: varied copies of the shipped cases.

    python benchmarks/run.py                      # 1,000 and 2,000 full-size cases
    python benchmarks/run.py --large              # and 10,000 (several minutes more)
    python benchmarks/run.py --tools DIR          # the casebank code under DIR (a before/after)

Each size gets its own repository (generate.py's ``write_fullsize``), one commit and release
1.0.0; every figure is a whole process, and every ratio is of two figures taken in this run,
so the machine's speed (shared, noisy) cancels out as far as it can.
"""

from __future__ import annotations

import argparse
import json
import os
import shlex
import shutil
import subprocess
import sys
import tempfile
import time
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

from generate import write_fullsize

ROOT = Path(__file__).resolve().parent.parent
PARSE_ONLY = """
import sys, pathlib, yaml
for path in sorted(pathlib.Path(sys.argv[1]).glob("*.yaml")):
    yaml.load(path.read_bytes(), Loader=yaml.CSafeLoader)
"""
RESULT_TESTS = ("ECG", "Full blood count", "Troponin", "Chest X-ray", "Lipase")
# The same tests as a doctor may write them: no catalog name or alias, found by the name index.
LOOSE_TESTS = (
    "ecg 12 lead", "blood count full", "troponin levels", "x-ray of chest", "serum lipase level",
)  # fmt: skip


@dataclass
class Timing:
    command: str
    wall: float
    peak_mb: float


@dataclass
class Size:
    cases: int
    trees: list[str]
    figures: dict[str, dict[str, Timing]] = field(default_factory=dict)  # tree -> key -> timing


def _environment(tools: Path) -> dict[str, str]:
    env = dict(os.environ)
    env.pop("PYTHONDONTWRITEBYTECODE", None)  # as installed: compiled once, not every run
    env["PYTHONPATH"] = str(tools) + (os.pathsep + env["PYTHONPATH"] if "PYTHONPATH" in env else "")
    return env


def measure(command: list[str], cwd: Path, env: dict[str, str], repeat: int) -> tuple[float, float]:
    """Best wall seconds of ``repeat`` runs of one process, and its largest peak RSS (MB, from
    wait4: the process and the children it waited for)."""
    walls, peaks = [], []
    for _ in range(repeat):
        start = time.perf_counter()
        process = subprocess.Popen(
            command, cwd=cwd, env=env, stdout=subprocess.DEVNULL, stderr=subprocess.PIPE
        )
        _, status, usage = os.wait4(process.pid, 0)
        walls.append(time.perf_counter() - start)
        peaks.append(usage.ru_maxrss / 1024)
        code = os.waitstatus_to_exitcode(status)
        stderr = process.stderr.read().decode() if process.stderr else ""
        if process.stderr:
            process.stderr.close()
        if code not in (0, 1):
            raise SystemExit(f"{' '.join(command)} failed ({code}): {stderr}")
    return min(walls), max(peaks)


def _shown(command: list[str], work: Path) -> str:
    """The command as a user types it, in the repository, with the work folder as `..`."""
    if command[:3] == [sys.executable, "-m", "casebank"]:
        command = ["casebank", *command[3:]]
    elif command[:2] == [sys.executable, "-c"]:
        command = ["python", "-c", "PARSE_ONLY", *command[3:]]  # PARSE_ONLY: fullsize.py
    elif "--schemafile" in command:
        command = ["check-jsonschema", "--schemafile", "schema/case.schema.json", "cases/*.yaml"]
    return shlex.join(command).replace(str(work), "..").replace("'cases/*.yaml'", "cases/*.yaml")


def _setup(repo: Path, count: int, env: dict[str, str]) -> None:
    write_fullsize(repo, count)
    git = ["git", "-c", "user.name=Bench", "-c", "user.email=bench@example.org"]
    subprocess.run(["git", "init", "-q", "-b", "main", str(repo)], check=True)
    subprocess.run([*git, "add", "-A"], cwd=repo, check=True)
    subprocess.run([*git, "commit", "-q", "-m", "Full-size cases"], cwd=repo, check=True)
    released = subprocess.run(
        [sys.executable, "-m", "casebank", "release", "1.0.0"],
        cwd=repo,
        env={**env, "GIT_AUTHOR_NAME": "Bench", "GIT_AUTHOR_EMAIL": "bench@example.org",
             "GIT_COMMITTER_NAME": "Bench", "GIT_COMMITTER_EMAIL": "bench@example.org"},
        capture_output=True,
        text=True,
    )  # fmt: skip
    if released.returncode != 0:
        raise SystemExit(f"release 1.0.0 failed: {released.stderr}")


def gold_submissions(bundle: Path) -> list[str]:
    """One gold-standard submission per exported case, as JSON lines (run.py's too)."""
    lines = []
    with (bundle / "cases.jsonl").open(encoding="utf-8") as rows:
        for line in rows:
            record = json.loads(line)
            case = json.loads(record["case"])
            must = case.get("investigations", {}).get("expected", {}).get("must_order", [])
            tests = [m if isinstance(m, str) else m.get("test", "") for m in must]
            plan = case.get("management_gold", {}).get("treatment_plan", [])
            diagnosis = case["ground_truth"]["final_diagnosis"]
            row = {"case_id": record["case_id"], "version": record["version"],
                   "diagnosis": diagnosis, "tests": tests, "plan": plan}  # fmt: skip
            lines.append(json.dumps(row))
    return lines


def _submissions(bundle: Path, out: Path) -> None:
    out.write_text("\n".join(gold_submissions(bundle)) + "\n", encoding="utf-8")


FIGURES = (
    "parse", "cold", "cold1", "warm", "jsonschema", "export", "score", "site", "results_first",
    "results_validated", "results", "results_loose",
)  # fmt: skip


def measure_size(
    count: int,
    work: Path,
    trees: dict[str, Path],
    repeat: int,
    jsonschema: str | None,
    only: tuple[str, ...] = FIGURES,
) -> Size:
    """Every figure at ``count`` cases, for each code tree in turn (an A/B run alternates the
    trees figure by figure, so a change in the machine's load hits both alike)."""
    envs = {label: _environment(tools) for label, tools in trees.items()}
    repo = work / f"fullsize-{count}"
    _setup(repo, count, next(iter(envs.values())))
    size = Size(count, list(trees))
    cache = repo / ".casebank-cache"

    def cb(*args: str) -> list[str]:
        return [sys.executable, "-m", "casebank", *args]

    def fig(key: str, command: list[str], times: int | None = None, before: Any = None) -> None:
        if key not in only:
            return
        for label, env in envs.items():
            if before is not None:
                before(env)
            wall, peak = measure(command, repo, env, times or repeat)
            size.figures.setdefault(label, {})[key] = Timing(_shown(command, work), wall, peak)
            print(f"  {count:>6,}  {label:<8} {key:<14} {wall:8.2f} s {peak:7.0f} MB", flush=True)

    def fill_cache(env: dict[str, str]) -> None:  # the cache is keyed by the code: per tree
        measure(cb("validate"), repo, env, 1)

    files = sorted(str(p) for p in (repo / "cases").glob("*.yaml"))
    fig("parse", [sys.executable, "-c", PARSE_ONLY, "cases"])
    fig("cold", cb("validate", "--no-cache"))
    fig("cold1", cb("validate", "--no-cache", "--jobs", "1"))
    fig("warm", cb("validate"), before=fill_cache)
    if jsonschema and "jsonschema" in only:
        schema = str(ROOT / "schema" / "case.schema.json")
        command = [jsonschema, "--schemafile", schema, *files]
        wall, peak = measure(command, repo, os.environ.copy(), 1)  # one run: it is slow
        for label in trees:
            timing = Timing(_shown(command, work), wall, peak)
            size.figures.setdefault(label, {})["jsonschema"] = timing
        print(f"  {count:>6,}  {'':<8} {'jsonschema':<14} {wall:8.2f} s {peak:7.0f} MB", flush=True)
    bundle = work / f"bundle-{count}"
    fig("export", cb("export", "--release", "1.0.0", "--out", str(bundle), "--force"))
    if {"score", "results"} & set(only) and not bundle.exists():
        subprocess.run(
            cb("export", "--release", "1.0.0", "--out", str(bundle), "--force"),
            cwd=repo, env=next(iter(envs.values())), check=True, capture_output=True,
        )  # fmt: skip
    submissions = work / f"submissions-{count}.jsonl"
    if "score" in only:
        _submissions(bundle, submissions)
    fig("score", cb("score", "--release", "1.0.0", str(submissions), "--format", "json"))
    fig("site", cb("site", "--out", str(work / f"site-{count}")))
    case_id = Path(files[0]).stem
    results = cb("results", case_id, *RESULT_TESTS)

    def forget(env: dict[str, str]) -> None:  # the catalog not yet remembered (a first run)
        shutil.rmtree(cache, ignore_errors=True)

    def validated(env: dict[str, str]) -> None:  # a first run after `validate`: the catalog
        forget(env)  # remembered by validation, the case not yet served
        fill_cache(env)

    fig("results_first", results, times=1, before=forget)
    fig("results_validated", results, times=1, before=validated)
    fig("results", results, times=max(repeat, 5))
    fig("results_loose", cb("results", case_id, *LOOSE_TESTS), times=max(repeat, 5))
    return size


_TARGETS = (  # name, numerator, denominator (None: the figure itself), goal
    ("validate --jobs 1 ÷ C parse, per core", "cold1", "parse", "≤ 1.5"),
    ("check-jsonschema ÷ validate --no-cache", "jsonschema", "cold", "≥ 15"),
    ("warm ÷ cold", "warm", "cold", "≤ 0.1"),
    ("export ÷ validate --no-cache", "export", "cold", "≤ 1.0"),
    ("export peak memory, MB", "export", None, "≤ 150, flat"),
    ("score of N ÷ validate --no-cache", "score", "cold", "≤ 0.3"),
    ("site ÷ validate --no-cache", "site", "cold", "≤ 1.5"),
    ("results, one case, s (catalog and case remembered)", "results", None, "≤ 0.2"),
    ("results, loose names, s (remembered)", "results_loose", None, "≤ 0.2"),
    ("results, one case, s (first run after validate)", "results_validated", None, "≤ 0.2"),
    ("results, one case, s (first run, nothing remembered)", "results_first", None, "≤ 0.2"),
)


def _denominator(size: Size, tree: str, key: str) -> float:
    """A ratio's denominator: the tree's own figure; for the C parse, which runs no casebank
    code, the best of every tree's runs (its spread is the machine's, not the code's)."""
    if key == "parse":
        return min(f["parse"].wall for f in size.figures.values() if "parse" in f)
    return size.figures[tree][key].wall


def table(sizes: list[Size]) -> list[str]:
    """The targets (one column per code tree), then every figure with its command."""
    trees = sizes[0].trees
    lines = [
        "| target | cases | " + " | ".join(trees) + " | goal |",
        "|---|---:|" + "---:|" * len(trees) + "---|",
    ]
    for size in sizes:
        for name, numerator, denominator, goal in _TARGETS:
            cells = []
            for tree in trees:
                f = size.figures.get(tree, {})
                if numerator not in f or (denominator is not None and denominator not in f):
                    cells.append("")
                elif denominator is not None:
                    ratio = f[numerator].wall / _denominator(size, tree, denominator)
                    cells.append(f"{ratio:.3f}" if ratio < 0.1 else f"{ratio:.2f}")
                elif "MB" in name:
                    cells.append(f"{f[numerator].peak_mb:.0f}")
                else:
                    cells.append(f"{f[numerator].wall:.2f}")
            if any(cells):
                lines.append(f"| {name} | {size.cases:,} | " + " | ".join(cells) + f" | {goal} |")
    lines += [
        "",
        "| figure | command | cases | " + " | ".join(f"{t} s, MB" for t in trees) + " |",
        "|---|---|---:|" + "---:|" * len(trees),
    ]
    for size in sizes:
        keys = dict.fromkeys(k for t in trees for k in size.figures.get(t, {}))
        for key in keys:
            command = next(size.figures[t][key].command for t in trees if key in size.figures[t])
            cells = [
                f"{size.figures[t][key].wall:.2f}, {size.figures[t][key].peak_mb:.0f}"
                if key in size.figures.get(t, {})
                else ""
                for t in trees
            ]
            lines.append(f"| {key} | `{command}` | {size.cases:,} | " + " | ".join(cells) + " |")
    return lines


def main(argv: list[str] | None = None) -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--sizes", type=int, nargs="+", default=[1_000, 2_000])
    parser.add_argument("--large", action="store_true", help="also 10,000 cases")
    parser.add_argument("--repeat", type=int, default=1, help="runs per figure (the best counts)")
    parser.add_argument("--tools", type=Path, default=ROOT / "tools", help="casebank code to time")
    parser.add_argument(
        "--compare",
        type=Path,
        metavar="TOOLS",
        help="also time the casebank code under TOOLS (before), alternating figure by figure",
    )
    parser.add_argument(
        "--only", nargs="+", choices=FIGURES, default=list(FIGURES), help="the figures to take"
    )
    parser.add_argument("--json", type=Path, help="also write the figures here")
    parser.add_argument("--tables", type=Path, metavar="JSON", help="print a --json run's tables")
    parser.add_argument("--check-jsonschema", metavar="PATH", help="the checker to compare with")
    args = parser.parse_args(argv)
    if args.tables:
        write_tables(from_json(args.tables), None)
        return
    checker = args.check_jsonschema or shutil.which("check-jsonschema")
    if not checker:
        sibling = Path(sys.executable).with_name("check-jsonschema")
        checker = str(sibling) if sibling.exists() else None
    if not checker:
        print("check-jsonschema not found: its ratio is left out (pip install check-jsonschema)")
    sizes = [*args.sizes, *([10_000] if args.large else [])]
    before = f", before: {args.compare}" if args.compare else ""
    print(f"machine: {os.cpu_count()} cores, Python {sys.version.split()[0]}, {sys.platform}; "
          f"code: {args.tools}{before}")  # fmt: skip
    trees = {"before": args.compare.resolve()} if args.compare else {}
    trees["after" if args.compare else "casebank"] = args.tools.resolve()
    work = Path(tempfile.mkdtemp(prefix="casebank-fullsize-"))
    try:
        measured = [
            measure_size(
                n,
                work,
                trees,
                args.repeat,
                jsonschema=checker if n == sizes[0] else None,
                only=tuple(args.only),
            )
            for n in sizes
        ]
    finally:
        shutil.rmtree(work, ignore_errors=True)
    write_tables(measured, args.json)


def write_tables(measured: list[Size], json_out: Path | None) -> None:
    for line in table(measured):
        print(line)
    if json_out:
        payload = {
            str(size.cases): {
                tree: {key: vars(timing) for key, timing in figures.items()}
                for tree, figures in size.figures.items()
            }
            for size in measured
        }
        json_out.write_text(json.dumps(payload, indent=1) + "\n", encoding="utf-8")


def from_json(path: Path) -> list[Size]:
    """The figures a run wrote with --json, to print its tables again."""
    stored = json.loads(path.read_text(encoding="utf-8"))
    sizes = []
    for cases, trees in stored.items():
        size = Size(int(cases), list(trees))
        size.figures = {t: {k: Timing(**v) for k, v in f.items()} for t, f in trees.items()}
        sizes.append(size)
    return sizes


if __name__ == "__main__":
    main()
