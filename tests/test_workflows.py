"""What the GitHub workflows promise, read from the workflow files and the nox sessions they call.

The workflows run only on GitHub, and nox sessions build virtual environments, so neither runs
in the test suite; ``nox -s lint`` checks the workflows with actionlint and zizmor. These tests
pin what each step must do, so that a step that goes missing or changes order fails here.
"""

from __future__ import annotations

import ast
from pathlib import Path
from typing import Any

import yaml

ROOT = Path(__file__).resolve().parent.parent
WORKFLOWS = ROOT / ".github" / "workflows"


def workflow(name: str) -> dict[str, Any]:
    data: dict[str, Any] = yaml.safe_load((WORKFLOWS / name).read_text(encoding="utf-8"))
    return data


def steps(name: str, job: str) -> list[dict[str, Any]]:
    found: list[dict[str, Any]] = workflow(name)["jobs"][job]["steps"]
    return found


def nox_calls(session: str) -> list[list[object]]:
    """The literal arguments of each ``session.run(...)`` in the nox session ``session``, in
    the order they appear (a name or an expression is shown as ``*``)."""
    tree = ast.parse((ROOT / "noxfile.py").read_text(encoding="utf-8"))
    [function] = [n for n in tree.body if isinstance(n, ast.FunctionDef) and n.name == session]
    calls = [
        (node.lineno, [a.value if isinstance(a, ast.Constant) else "*" for a in node.args])
        for node in ast.walk(function)
        if isinstance(node, ast.Call)
        and isinstance(node.func, ast.Attribute)
        and node.func.attr == "run"
        and isinstance(node.func.value, ast.Name)
        and node.func.value.id == "session"
    ]
    return [arguments for _, arguments in sorted(calls, key=lambda c: c[0])]


def test_the_job_summary_shows_validation_problems_above_the_diff_on_every_event() -> None:
    [summary] = [s for s in steps("ci.yml", "validate") if "nox -s summary" in s.get("run", "")]
    assert summary["if"] == "${{ !cancelled() }}"  # pull requests and pushes, failed or not
    base = summary["env"]["BASE_SHA"]
    assert "github.event.pull_request.base.sha" in base and "github.event.before" in base
    calls = nox_calls("summary")
    assert [c[:2] for c in calls] == [["casebank", "validate"], ["casebank", "diff"]]
    assert calls[0][2:] == ["--strict", "--format", "markdown"]
    assert calls[1][2:4] == ["--format", "markdown"]
    # the diff session no longer appends to the job summary itself (it did, alone)
    source = (ROOT / "noxfile.py").read_text(encoding="utf-8")
    diff = source[source.index("def diff(") : source.index("def summary(")]
    assert "GITHUB_STEP_SUMMARY" not in diff
