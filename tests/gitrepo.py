"""Real, throw-away git repositories for tests, with pinned identities and dates.

No test touches the user's git configuration or home: ``isolate_git`` points HOME and
GIT_CONFIG_GLOBAL at a temporary folder and turns the system configuration off, and pins the
identity and clock that any commit made during the test (by a helper or by casebank) records.
"""

from __future__ import annotations

import os
import subprocess
from dataclasses import dataclass
from pathlib import Path

import pytest

FIXTURES = Path(__file__).parent / "fixtures"
VALID_CASE = (FIXTURES / "valid_case.yaml").read_text(encoding="utf-8")
CATALOG = (FIXTURES / "catalog.yaml").read_text(encoding="utf-8")

ANN = ("Ann Author", "ann@example.org")
BOB = ("Bob Builder", "bob@example.org")
START = 1_700_000_000  # 2023-11-14T22:13:20Z
RELEASE_CLOCK = "2030-01-01T00:00:00Z"  # the clock casebank's own commits and tags see


def isolate_git(monkeypatch: pytest.MonkeyPatch, home: Path) -> None:
    home.mkdir(parents=True, exist_ok=True)
    config = home / "gitconfig"
    config.write_text(
        '[init]\n\tdefaultBranch = main\n[protocol "file"]\n\tallow = always\n', encoding="utf-8"
    )
    monkeypatch.setenv("HOME", str(home))
    monkeypatch.setenv("GIT_CONFIG_GLOBAL", str(config))
    monkeypatch.setenv("GIT_CONFIG_SYSTEM", os.devnull)
    monkeypatch.setenv("GIT_CONFIG_NOSYSTEM", "1")
    for variable in ("GIT_DIR", "GIT_WORK_TREE", "GIT_INDEX_FILE", "GIT_OBJECT_DIRECTORY"):
        monkeypatch.delenv(variable, raising=False)
    for role in ("AUTHOR", "COMMITTER"):
        monkeypatch.setenv(f"GIT_{role}_NAME", "Release Manager")
        monkeypatch.setenv(f"GIT_{role}_EMAIL", "release@example.org")
        monkeypatch.setenv(f"GIT_{role}_DATE", RELEASE_CLOCK)


def case_text(case_id: str, title: str | None = None, *, comment: str = "") -> str:
    """The valid fixture case renamed to ``case_id`` (and retitled), with an optional comment."""
    text = VALID_CASE.replace("case_id: valid_case", f"case_id: {case_id}", 1)
    if title is not None:
        text = text.replace('title: "Acute chest pain in a smoker"', f'title: "{title}"', 1)
    return (f"# {comment}\n" if comment else "") + text


@dataclass
class GitRepo:
    root: Path
    clock: int = START

    @classmethod
    def create(cls, root: Path) -> GitRepo:
        root.mkdir(parents=True)
        repo = cls(root)
        repo.git("init", "-q", "-b", "main")
        repo.git("config", "user.name", "Release Manager")
        repo.git("config", "user.email", "release@example.org")
        return repo

    def git(self, *args: str, env: dict[str, str] | None = None, check: bool = True) -> str:
        done = subprocess.run(
            ["git", *args],
            cwd=self.root,
            capture_output=True,
            text=True,
            env={**os.environ, **(env or {})},
            check=False,
        )
        if check and done.returncode != 0:
            raise AssertionError(f"git {' '.join(args)} failed: {done.stderr}")
        return done.stdout

    def write(self, relative: str, content: str | bytes) -> None:
        target = self.root / relative
        target.parent.mkdir(parents=True, exist_ok=True)
        if isinstance(content, bytes):
            target.write_bytes(content)
        else:
            target.write_text(content, encoding="utf-8")

    def delete(self, relative: str) -> None:
        (self.root / relative).unlink()

    def commit(self, message: str, author: tuple[str, str] = ANN) -> str:
        """Commit every change, as ``author``, one pinned hour after the previous commit."""
        self.clock += 3600
        date = f"@{self.clock} +0000"
        self.git("add", "-A")
        self.git(
            "commit",
            "-q",
            "--allow-empty",
            "-m",
            message,
            env={
                "GIT_AUTHOR_NAME": author[0],
                "GIT_AUTHOR_EMAIL": author[1],
                "GIT_COMMITTER_NAME": author[0],
                "GIT_COMMITTER_EMAIL": author[1],
                "GIT_AUTHOR_DATE": date,
                "GIT_COMMITTER_DATE": date,
            },
        )
        return self.head()

    def head(self) -> str:
        return self.git("rev-parse", "HEAD").strip()

    def tags(self) -> list[str]:
        return self.git("tag", "--list").split()

    def state(self) -> tuple[str, str, list[str], list[str], str]:
        """HEAD, status, tags, every file and the index: compare before/after.

        Files are listed outside .git and validation's (git-ignored) cache.
        """
        files = sorted(
            str(p.relative_to(self.root))
            for p in self.root.rglob("*")
            if not {".git", ".casebank-cache"} & set(p.relative_to(self.root).parts)
        )
        return (
            self.head(),
            self.git("status", "--porcelain", "--untracked-files=all"),
            self.tags(),
            files,
            self.git("ls-files", "-s"),
        )


def dataset(root: Path, cases: dict[str, str] | None = None) -> GitRepo:
    """A repository with the catalog and the given cases (default: alpha, beta, gamma)."""
    repo = GitRepo.create(root)
    repo.write("catalog.yaml", CATALOG)
    repo.write(".gitignore", "__pycache__/\n.casebank-cache/\n")
    for case_id, text in (
        cases or {c: case_text(c, f"Case {c}") for c in ("alpha", "beta", "gamma")}
    ).items():
        repo.write(f"cases/{case_id}.yaml", text)
    repo.commit("Add the first cases")
    return repo
