"""The layout is the design: the sides of the flow never import each other, only the git layer
starts git, and the format side stands on its own. Read from the source (every import
statement, function-level ones included), so a shortcut anywhere fails here."""

from __future__ import annotations

import ast
from pathlib import Path

PACKAGE = Path(__file__).resolve().parent.parent / "tools" / "casebank"


def module_name(path: Path) -> str:
    parts = path.relative_to(PACKAGE.parent).with_suffix("").parts
    return ".".join(parts[:-1] if parts[-1] == "__init__" else parts)


def imports_of(path: Path) -> set[str]:
    """Every module an import statement in ``path`` names (absolute names)."""
    tree = ast.parse(path.read_text(encoding="utf-8"))
    found: set[str] = set()
    for node in ast.walk(tree):
        if isinstance(node, ast.Import):
            found.update(alias.name for alias in node.names)
        elif isinstance(node, ast.ImportFrom) and node.module:
            found.add(node.module)
            found.update(f"{node.module}.{alias.name}" for alias in node.names)
    return found


MODULES = {module_name(p): p for p in PACKAGE.rglob("*.py")}
GRAPH = {
    name: {m for m in imports_of(path) if m in MODULES and m != name}
    for name, path in MODULES.items()
}


def reachable(start: str) -> set[str]:
    seen: set[str] = set()
    stack = [start]
    while stack:
        for nxt in GRAPH[stack.pop()]:
            if nxt not in seen:
                seen.add(nxt)
                stack.append(nxt)
    return seen


def side(prefix: str) -> list[str]:
    return sorted(m for m in MODULES if m == prefix or m.startswith(prefix + "."))


def test_check_never_imports_release() -> None:
    for module in side("casebank.check"):
        leaks = sorted(m for m in reachable(module) if m.startswith("casebank.release"))
        assert not leaks, f"{module} reaches the release side: {leaks}"


def test_release_never_imports_check() -> None:
    for module in side("casebank.release"):
        leaks = sorted(m for m in reachable(module) if m.startswith("casebank.check"))
        assert not leaks, f"{module} reaches the check side: {leaks}"


def test_format_stands_on_its_own() -> None:
    allowed = ("casebank.format", "casebank.errors")
    for module in side("casebank.format"):
        leaks = sorted(
            m for m in reachable(module) if m != "casebank" and not m.startswith(allowed)
        )
        assert not leaks, f"{module} reaches beyond the format side: {leaks}"


def test_only_the_git_layer_starts_git() -> None:
    starters = {"git", "git.cmd", "subprocess", "git.exc"}
    for name, path in MODULES.items():
        if name == "casebank.release.git":
            continue
        used = sorted(m for m in imports_of(path) if m.split(".")[0] in {"git", "subprocess"})
        assert not (set(used) & starters or used), f"{name} imports {used}"


def test_commands_are_the_only_meeting_place() -> None:
    """Outside commands/ (and the entry point), nothing imports both sides."""
    for module in MODULES:
        if module.startswith(("casebank.commands", "casebank.cli", "casebank.__main__")):
            continue
        direct = GRAPH[module]
        both = any(m.startswith("casebank.check") for m in direct) and any(
            m.startswith("casebank.release") for m in direct
        )
        assert not both, f"{module} imports both the check and the release side"


def test_importers_stand_on_the_format_side_alone() -> None:
    """An importer turns records into case data; it reads and writes nothing, checks nothing
    and releases nothing, so it needs only what a case is."""
    allowed = ("casebank.importers", "casebank.format", "casebank.errors")
    assert side("casebank.importers"), "the importers side exists"
    for module in side("casebank.importers"):
        leaks = sorted(
            m for m in reachable(module) if m != "casebank" and not m.startswith(allowed)
        )
        assert not leaks, f"{module} reaches beyond the format side: {leaks}"


def test_the_site_only_renders() -> None:
    """The site side reads no git, no release and no working tree: commands/site_input.py
    gathers what it shows and hands it over as plain data. Only commands build a site."""
    gatherers = ("casebank.release", "casebank.check", "casebank.commands", "casebank.workspace")
    for module in side("casebank.site"):
        leaks = sorted(m for m in reachable(module) if m.startswith(gatherers))
        assert not leaks, f"{module} reaches beyond rendering: {leaks}"
    for module in MODULES:
        if not module.startswith(("casebank.site", "casebank.commands")):
            users = sorted(m for m in GRAPH[module] if m.startswith("casebank.site"))
            assert not users, f"{module} imports the site side: {users}"


def test_inspect_ai_stays_inside_the_harness() -> None:
    """inspect_ai is an optional extra: only casebank.harness imports it, nothing but the
    harness imports the harness (inspect_ai finds it through the entry point), and checking
    never reaches it."""
    for name, path in MODULES.items():
        if name.startswith("casebank.harness"):
            continue
        used = sorted(m for m in imports_of(path) if m.split(".")[0] == "inspect_ai")
        assert not used, f"{name} imports {used}"
        users = sorted(m for m in GRAPH[name] if m.startswith("casebank.harness"))
        assert not users, f"{name} imports the harness: {users}"
    for module in side("casebank.check"):
        leaks = sorted(m for m in reachable(module) if m.startswith("casebank.harness"))
        assert not leaks, f"{module} reaches the harness: {leaks}"
    pure = MODULES["casebank.harness.grounding"]
    assert not [m for m in imports_of(pure) if m.startswith("inspect_ai")]
