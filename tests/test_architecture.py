"""The layout is the design. The folder contracts (which side may import which, no cycles, the
two layers of serve/) are import-linter contracts in pyproject.toml, run here and by
`nox -s lint`. One rule import-linter cannot state stays an AST check: only release/git.py
starts git (GitPython or a subprocess)."""

from __future__ import annotations

import ast
import os
from pathlib import Path

import pytest

PACKAGE = Path(__file__).resolve().parent.parent / "tools" / "casebank"
ROOT = PACKAGE.parent.parent


def imports_of(path: Path) -> set[str]:
    """Every module an import statement in ``path`` names, function-level ones included."""
    tree = ast.parse(path.read_text(encoding="utf-8"))
    found: set[str] = set()
    for node in ast.walk(tree):
        if isinstance(node, ast.Import):
            found.update(alias.name for alias in node.names)
        elif isinstance(node, ast.ImportFrom) and node.module:
            found.add(node.module)
    return found


def test_only_the_git_layer_starts_git() -> None:
    for path in PACKAGE.rglob("*.py"):
        if path == PACKAGE / "release" / "git.py":
            continue
        used = sorted(m for m in imports_of(path) if m.split(".")[0] in {"git", "subprocess"})
        assert not used, f"{path.relative_to(PACKAGE)} imports {used}"


def test_the_folder_contracts_hold(monkeypatch: pytest.MonkeyPatch) -> None:
    from importlinter.cli import lint_imports

    monkeypatch.chdir(ROOT)
    monkeypatch.setenv(
        "PYTHONPATH", f"{PACKAGE.parent}{os.pathsep}{os.environ.get('PYTHONPATH', '')}"
    )
    assert lint_imports(config_filename=str(ROOT / "pyproject.toml"), no_cache=True) == 0
