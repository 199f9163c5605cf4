"""``python -m casebank.harness.evaluate [ARGS...]``: what ``nox -s eval`` runs.

``inspect eval`` exits 0 even when a task fails to load or a sample errors, so a run cannot be
trusted by its exit code. This runs ``inspect eval casebank/osce ARGS...`` and then reads every
log the run wrote: a log whose status is not ``success``, a sample with an error, or no log at
all (the task refused to start; its message is above) makes the exit code 1, each named.

With no arguments it runs the offline demo: the newest release of the repository in the
current folder (one is cut, as 1.0.0, in a throw-away clone when the repository has none),
exported as a bundle in a temporary folder, played by the scripted model ``casebank/smoke`` as
doctor, patient and judge (``-T bundle=DIR --model casebank/smoke --model-role
judge=casebank/smoke``). It needs no network and no API key.
"""

from __future__ import annotations

import contextlib
import io
import os
import subprocess
import sys
import tempfile
from collections.abc import Sequence
from pathlib import Path

from casebank.errors import CasebankError

DEMO_VERSION = "1.0.0"
SMOKE = ("--model", "casebank/smoke", "--model-role", "judge=casebank/smoke")
_IDENTITY = {  # the throw-away clone's release commit, on a machine with no git identity
    "GIT_AUTHOR_NAME": "casebank demo",
    "GIT_AUTHOR_EMAIL": "demo@casebank.invalid",
    "GIT_COMMITTER_NAME": "casebank demo",
    "GIT_COMMITTER_EMAIL": "demo@casebank.invalid",
}


def main(argv: Sequence[str] | None = None) -> int:
    args = list(sys.argv[1:] if argv is None else argv)
    with tempfile.TemporaryDirectory(prefix="casebank-eval-") as scratch:
        try:
            if not args:
                bundle = demo_bundle(Path.cwd(), Path(scratch))
                args = [*SMOKE, "-T", f"bundle={bundle}"]
                print(
                    f"casebank: the offline demo: casebank/smoke plays every part, over the "
                    f"bundle {bundle}"
                )
        except CasebankError as exc:
            print(f"casebank: {exc}", file=sys.stderr)
            if exc.hint:
                print(f"  hint: {exc.hint}", file=sys.stderr)
            return 1
        log_dir = Path(_option(args, "--log-dir") or os.environ.get("INSPECT_LOG_DIR") or "logs")
        before = set(_logs(log_dir))
        command = [sys.executable, "-m", "inspect_ai", "eval", "casebank/osce", *args]
        ran = subprocess.run(command, check=False)
        written = sorted(set(_logs(log_dir)) - before)
    if not written:
        print(
            f"casebank: the eval failed: inspect wrote no log in {log_dir} "
            f"(exit {ran.returncode}); the task did not start, for the reason printed above",
            file=sys.stderr,
        )
        return 1
    failures = [problem for path in written for problem in check_log(path)]
    for problem in ["", *failures] if failures else []:
        print(f"casebank: {problem}" if problem else "", file=sys.stderr)
    if failures or ran.returncode != 0:
        print(
            f"casebank: the eval failed: {len(failures)} problem(s) in {len(written)} log(s)"
            + (f", inspect exited {ran.returncode}" if ran.returncode else ""),
            file=sys.stderr,
        )
        return 1
    print(f"\ncasebank: the eval succeeded: {', '.join(str(p) for p in written)}")
    return 0


def check_log(path: Path) -> list[str]:
    """Why the run logged in ``path`` failed: its status, each sample's error (none: [])."""
    from inspect_ai.log import read_eval_log

    log = read_eval_log(str(path))
    problems = []
    if log.status != "success":
        reason = f": {log.error.message}" if log.error else ""
        problems.append(f"{path}: the eval ended `{log.status}`{reason}")
    for sample in log.samples or []:
        if sample.error is not None:
            first = sample.error.message.strip().splitlines()[0] if sample.error.message else ""
            problems.append(f"{path}: sample {sample.id} failed: {first}")
    if log.status == "success" and not log.samples:
        problems.append(f"{path}: no sample ran")
    return problems


def demo_bundle(root: Path, scratch: Path) -> Path:
    """An export bundle of the newest release of ``root``: from ``root`` itself when it has a
    release, else from a clone in ``scratch`` where one is cut."""
    from casebank.cli import main as casebank
    from casebank.release.manifest import RELEASES_DIR, parse_version
    from casebank.workspace import find_root

    root = find_root(start=root)
    versions = sorted(
        (v, p.stem)
        for p in (root / RELEASES_DIR).glob("*.json")
        if (v := parse_version(p.stem)) is not None
    )
    source = root
    if versions:
        version = versions[-1][1]
    else:
        source, version = scratch / "repository", DEMO_VERSION
        cloned = subprocess.run(
            ["git", "clone", "-q", "--no-hardlinks", str(root), str(source)],
            check=False,
            capture_output=True,
            text=True,
        )
        if cloned.returncode != 0:
            raise CasebankError(
                f"cannot clone {root} for the demo release: {cloned.stderr.strip()}",
                "run it in a clone of casebank with at least one commit",
            )
        saved = {name: os.environ.get(name) for name in _IDENTITY}
        os.environ.update(_IDENTITY)
        try:
            _run(casebank, ["release", version, "--root", str(source)])
        finally:
            for name, value in saved.items():
                if value is None:
                    os.environ.pop(name, None)
                else:
                    os.environ[name] = value
    bundle = scratch / f"casebank-{version}"
    _run(casebank, ["export", "--release", version, "--out", str(bundle), "--root", str(source)])
    return bundle


def _run(casebank: object, argv: list[str]) -> None:
    """``casebank ARGV`` in this process, quietly; what it printed is shown if it fails."""
    assert callable(casebank)
    said = io.StringIO()
    with contextlib.redirect_stdout(said), contextlib.redirect_stderr(said):
        code = casebank(argv)
    if code != 0:
        sys.stderr.write(said.getvalue())
        raise CasebankError(
            f"`casebank {' '.join(argv[:2])}` failed for the demo (its message is above)"
        )


def _option(args: Sequence[str], name: str) -> str | None:
    for index, arg in enumerate(args):
        if arg == name and index + 1 < len(args):
            return args[index + 1]
        if arg.startswith(f"{name}="):
            return arg.split("=", 1)[1]
    return None


def _logs(folder: Path) -> list[Path]:
    if not folder.is_dir():
        return []
    # inspect names a log TIMESTAMP_TASK_ID.eval (or .json with --log-format json)
    return [
        p
        for p in folder.iterdir()
        if p.suffix in (".eval", ".json") and "_osce_" in p.name and p.is_file()
    ]


if __name__ == "__main__":
    sys.exit(main())
