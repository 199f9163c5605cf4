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

from generate import write_fullsize

ROOT = Path(__file__).resolve().parent.parent
PARSE_ONLY = """
import sys, pathlib, yaml
for path in sorted(pathlib.Path(sys.argv[1]).glob("*.yaml")):
    yaml.load(path.read_bytes(), Loader=yaml.CSafeLoader)
"""
RESULT_TESTS = ("ECG", "Full blood count", "Troponin", "Chest X-ray", "Lipase")


@dataclass
class Timing:
    command: str
    wall: float
    peak_mb: float


@dataclass
class Size:
    cases: int
    figures: dict[str, Timing] = field(default_factory=dict)


def _environment(tools: Path) -> dict[str, str]:
    env = dict(os.environ)
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


def _submissions(bundle: Path, out: Path) -> None:
    """One gold-standard submission per exported case."""
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
    out.write_text("\n".join(lines) + "\n", encoding="utf-8")


def measure_size(
    count: int, work: Path, tools: Path, repeat: int, jsonschema: str | None, quick: bool = False
) -> Size:
    env = _environment(tools)
    repo = work / f"fullsize-{count}"
    _setup(repo, count, env)
    size = Size(count)

    def cb(*args: str) -> list[str]:
        return [sys.executable, "-m", "casebank", *args]

    def fig(key: str, command: list[str], times: int | None = None) -> None:
        wall, peak = measure(command, repo, env, times or repeat)
        size.figures[key] = Timing(_shown(command, work), wall, peak)
        print(f"  {count:>6,}  {key:<14} {wall:8.2f} s {peak:7.0f} MB", flush=True)

    files = sorted(str(p) for p in (repo / "cases").glob("*.yaml"))
    fig("parse", [sys.executable, "-c", PARSE_ONLY, "cases"])
    fig("cold", cb("validate", "--no-cache"))
    fig("cold1", cb("validate", "--no-cache", "--jobs", "1"))
    measure(cb("validate"), repo, env, 1)  # fill the cache
    fig("warm", cb("validate"))
    if quick:
        return size
    if jsonschema:
        schema = str(ROOT / "schema" / "case.schema.json")
        fig("jsonschema", [jsonschema, "--schemafile", schema, *files], times=1)
    bundle = work / f"bundle-{count}"
    fig("export", cb("export", "--release", "1.0.0", "--out", str(bundle), "--force"))
    submissions = work / f"submissions-{count}.jsonl"
    _submissions(bundle, submissions)
    fig("score", cb("score", "--release", "1.0.0", str(submissions), "--format", "json"))
    fig("site", cb("site", "--out", str(work / f"site-{count}")))
    case_id = Path(files[0]).stem
    fig("results", cb("results", case_id, *RESULT_TESTS), times=max(repeat, 5))
    return size


def table(sizes: list[Size]) -> list[str]:
    def at(size: Size, a: str, b: str) -> float | None:
        f = size.figures
        return f[a].wall / f[b].wall if a in f and b in f else None

    lines = ["| target | cases | measured | goal | command (numerator; denominator) |",
             "|---|---:|---:|---|---|"]  # fmt: skip

    def row(name: str, size: Size, value: str, goal: str, *keys: str) -> None:
        commands = "; ".join(f"`{size.figures[k].command}`" for k in keys if k in size.figures)
        lines.append(f"| {name} | {size.cases:,} | {value} | {goal} | {commands} |")

    for size in sizes:
        f = size.figures
        if (r := at(size, "cold1", "parse")) is not None:
            row("validate --jobs 1 ÷ C parse, per core", size, f"{r:.2f}", "≤ 1.5", "cold1", "parse")
        if (r := at(size, "jsonschema", "cold")) is not None:
            row("check-jsonschema ÷ validate --no-cache", size, f"{r:.1f}", "≥ 15", "jsonschema",
                "cold")  # fmt: skip
        if (r := at(size, "warm", "cold")) is not None:
            row("warm ÷ cold", size, f"{r:.3f}", "≤ 0.1", "warm", "cold")
        if (r := at(size, "export", "cold")) is not None:
            row("export ÷ validate --no-cache", size, f"{r:.2f}", "≤ 1.0", "export", "cold")
        if "export" in f:
            row("export peak memory", size, f"{f['export'].peak_mb:.0f} MB", "≤ 150 MB, flat",
                "export")  # fmt: skip
        if (r := at(size, "score", "cold")) is not None:
            row("score of N ÷ validate --no-cache", size, f"{r:.2f}", "≤ 0.3", "score", "cold")
        if (r := at(size, "site", "cold")) is not None:
            row("site ÷ validate --no-cache", size, f"{r:.2f}", "≤ 1.5", "site", "cold")
        if "results" in f:
            row("results, one case, start-up included", size, f"{f['results'].wall:.2f} s",
                "≤ 0.2 s", "results")  # fmt: skip
    lines += ["", "| figure | cases | wall s | peak MB |", "|---|---:|---:|---:|"]
    for size in sizes:
        for key, t in size.figures.items():
            lines.append(f"| {key}: `{t.command}` | {size.cases:,} | {t.wall:.2f} | "
                         f"{t.peak_mb:.0f} |")  # fmt: skip
    return lines


def main(argv: list[str] | None = None) -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--sizes", type=int, nargs="+", default=[1_000, 2_000])
    parser.add_argument("--large", action="store_true", help="also 10,000 cases")
    parser.add_argument("--repeat", type=int, default=1, help="runs per figure (the best counts)")
    parser.add_argument("--tools", type=Path, default=ROOT / "tools", help="casebank code to time")
    parser.add_argument("--json", type=Path, help="also write the figures here")
    parser.add_argument("--check-jsonschema", metavar="PATH", help="the checker to compare with")
    parser.add_argument("--quick", action="store_true", help="only parse and validate")
    args = parser.parse_args(argv)
    checker = args.check_jsonschema or shutil.which("check-jsonschema")
    if not checker:
        sibling = Path(sys.executable).with_name("check-jsonschema")
        checker = str(sibling) if sibling.exists() else None
    if not checker:
        print("check-jsonschema not found: its ratio is left out (pip install check-jsonschema)")
    sizes = [*args.sizes, *([10_000] if args.large else [])]
    print(f"machine: {os.cpu_count()} cores, Python {sys.version.split()[0]}, {sys.platform}; "
          f"code: {args.tools}")  # fmt: skip
    work = Path(tempfile.mkdtemp(prefix="casebank-fullsize-"))
    try:
        measured = [
            measure_size(
                n, work, args.tools.resolve(), args.repeat,
                jsonschema=checker if n == sizes[0] else None, quick=args.quick,
            )  # fmt: skip
            for n in sizes
        ]
    finally:
        shutil.rmtree(work, ignore_errors=True)
    for line in table(measured):
        print(line)
    if args.json:
        payload = {str(s.cases): {k: vars(t) for k, t in s.figures.items()} for s in measured}
        args.json.write_text(json.dumps(payload, indent=1) + "\n", encoding="utf-8")


if __name__ == "__main__":
    main()
