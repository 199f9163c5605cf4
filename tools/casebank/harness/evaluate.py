"""``python -m casebank.harness.evaluate demo|check``: the two halves of ``nox -s eval``.

``inspect eval`` exits 0 even when a task fails to load or a sample errors, so a run cannot be
trusted by its exit code. The nox session runs ``inspect eval casebank/osce ARGS...`` and then
``check`` on every log the run wrote: a log whose status is not ``success``, or a sample with an
error, is named and the exit code is 1 (the session fails too when inspect wrote no log: the
task refused to start, for the reason inspect printed).

With no arguments the session runs the offline demo, and ``demo SCRATCH`` prepares it: the
newest release of the repository in the current folder (one is cut, as 1.0.0, in a throw-away
clone under SCRATCH when the repository has none; the repository is left as it is), exported
as a bundle to ``SCRATCH/bundle``, which ``casebank/smoke`` then plays as doctor, patient and
judge (``DEMO_ARGS``). Neither needs a network or an API key.
"""

from __future__ import annotations

import contextlib
import io
import os
import sys
from collections.abc import Sequence
from pathlib import Path

from casebank.errors import CasebankError

DEMO_VERSION = "1.0.0"
DEMO_ARGS = ("--model", "casebank/smoke", "--model-role", "judge=casebank/smoke")
_IDENTITY = {  # the throw-away clone's release commit, on a machine with no git identity
    "GIT_AUTHOR_NAME": "casebank demo",
    "GIT_AUTHOR_EMAIL": "demo@casebank.invalid",
    "GIT_COMMITTER_NAME": "casebank demo",
    "GIT_COMMITTER_EMAIL": "demo@casebank.invalid",
}
_USAGE = "usage: python -m casebank.harness.evaluate demo SCRATCH | check LOG [LOG ...]"


def main(argv: Sequence[str] | None = None) -> int:
    args = list(sys.argv[1:] if argv is None else argv)
    if len(args) < 2 or args[0] not in ("demo", "check") or (args[0] == "demo" and len(args) != 2):
        print(_USAGE, file=sys.stderr)
        return 2
    try:
        if args[0] == "demo":
            bundle, version = demo_bundle(Path.cwd(), Path(args[1]))
            print(
                f"casebank: the offline demo: casebank/smoke plays every part, over release "
                f"{version}, exported to {bundle}"
            )
            return 0
        return check([Path(a) for a in args[1:]])
    except CasebankError as exc:
        print(f"casebank: {exc}", file=sys.stderr)
        if exc.hint:
            print(f"  hint: {exc.hint}", file=sys.stderr)
        return 1


def check(paths: Sequence[Path]) -> int:
    """0 when every log in ``paths`` succeeded with no sample error; else 1, each named."""
    failures = [problem for path in paths for problem in check_log(path)]
    if failures:
        print(file=sys.stderr)
        for problem in failures:
            print(f"casebank: {problem}", file=sys.stderr)
        print(
            f"casebank: the eval failed: {len(failures)} problem(s) in {len(paths)} log(s)",
            file=sys.stderr,
        )
        return 1
    print(f"\ncasebank: the eval succeeded: {', '.join(str(p) for p in paths)}")
    return 0


def check_log(path: Path) -> list[str]:
    """Why the run logged in ``path`` failed: its status, each sample's error (none: [])."""
    from inspect_ai.log import read_eval_log

    try:
        log = read_eval_log(str(path))
    except Exception as exc:  # inspect raises its own errors for a log it cannot read
        return [f"{path}: not an inspect log that reads ({exc})"]
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


def demo_bundle(start: Path, scratch: Path) -> tuple[Path, str]:
    """An export bundle of the newest release of the repository holding ``start``, at
    ``scratch/bundle``, and that release's version: from the repository itself when it has a
    release, else from a clone in ``scratch`` where one is cut."""
    from casebank.release import git
    from casebank.release.manifest import RELEASES_DIR, parse_version
    from casebank.workspace import find_root

    root = find_root(start=start)
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
        git.clone(root, source)
        saved = {name: os.environ.get(name) for name in _IDENTITY}
        os.environ.update(_IDENTITY)
        try:
            _casebank(["release", version, "--root", str(source)])
        finally:
            for name, value in saved.items():
                if value is None:
                    os.environ.pop(name, None)
                else:
                    os.environ[name] = value
    bundle = scratch / "bundle"
    _casebank(["export", "--release", version, "--out", str(bundle), "--root", str(source)])
    return bundle, version


def _casebank(argv: list[str]) -> None:
    """``casebank ARGV`` in this process, quietly; what it printed is shown if it fails."""
    from casebank.cli import main as casebank

    said = io.StringIO()
    with contextlib.redirect_stdout(said), contextlib.redirect_stderr(said):
        code = casebank(argv)
    if code != 0:
        sys.stderr.write(said.getvalue())
        raise CasebankError(
            f"`casebank {' '.join(argv[:2])}` failed for the demo (its message is above)"
        )


if __name__ == "__main__":
    sys.exit(main())
