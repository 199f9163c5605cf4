"""`casebank generate`: write (or `--check`) every generated file from its one source.

Generated files are of two kinds, and only the first can be a contributor's fault:

- **from the code**: the schema reference and the case template (from the Cerberus schema) and
  the rules reference (from the rule modules). They never drift: `--check`, run by a test and
  by `nox -s lint`, fails when a committed copy differs.
- **from the dataset**: README's coverage table (from the cases) and the JSON Schema (it offers
  the catalog's test names and vocabularies to editors, so a new catalog alias changes it). A
  clinician changing a case in the GitHub web editor cannot regenerate anything, so these are
  refreshed for them: by the release path (`nox -s release` runs `casebank generate --dataset
  --commit` first) and, after every push to main, by CI's pull request that proposes the
  refreshed files (`.github/workflows/refresh.yml`). `--check` names them when stale; it does
  not fail on them.

`--commit` commits exactly the files the run changed, in one commit of their own.
"""

from __future__ import annotations

import argparse
from pathlib import Path

from casebank.errors import CasebankError, UsageError
from casebank.workspace import find_root, stale_generated, write_atomically, write_generated

HELP = "Write every generated file (JSON Schema, docs, case template, README table); --check."

JSON_SCHEMA_FILE = "schema/case.schema.json"
TEMPLATE_FILE = "docs/case-template.yaml"
SCHEMA_DOC_FILE = "docs/schema.md"
RULES_DOC_FILE = "docs/rules.md"
COMMIT_SUBJECT = "Refresh the files generated from the dataset"


def register(parser: argparse.ArgumentParser) -> None:
    parser.add_argument(
        "--check",
        action="store_true",
        help="write nothing; exit 1 if a committed file generated from the code differs from "
        "its source (files that follow the dataset are only named)",
    )
    parser.add_argument(
        "--dataset",
        action="store_true",
        help="only the files that follow the dataset (README's coverage table, the JSON Schema)",
    )
    parser.add_argument(
        "--commit",
        action="store_true",
        help="commit the files this run changed, in one commit of their own",
    )


def code_files() -> dict[str, str]:
    """The generated files that follow the code alone, and the content each must have."""
    from casebank.check.rulesdoc import rules_markdown
    from casebank.format.reference import schema_markdown
    from casebank.format.scaffold import case_template

    return {
        SCHEMA_DOC_FILE: schema_markdown(),
        RULES_DOC_FILE: rules_markdown(),
        TEMPLATE_FILE: case_template("your_case_id_001"),
    }


def dataset_files(root: Path) -> dict[str, str]:
    """The generated files that follow the dataset (the cases, the catalog)."""
    from casebank.check.validate import check_catalog
    from casebank.commands.coverage import README, readme_with_table
    from casebank.format.jsonschema import case_json_schema, render

    catalog = check_catalog(root).catalog
    return {
        JSON_SCHEMA_FILE: render(case_json_schema(catalog)),
        **({README: readme_with_table(root)} if (root / README).is_file() else {}),
    }


def run(args: argparse.Namespace) -> int:
    if args.check and args.commit:
        raise UsageError("--check writes nothing, so it cannot --commit")
    root = find_root(args.root)
    dataset = dataset_files(root)
    files = dataset if args.dataset else {**code_files(), **dataset}
    if args.check:
        return _check(root, files, set(dataset), args.dataset)
    if args.commit:
        return commit_refreshed(root, files)
    write_generated(root, files)
    return 0


def _check(root: Path, files: dict[str, str], dataset: set[str], dataset_only: bool) -> int:
    stale = stale_generated(root, files)
    following = [p for p in stale if p in dataset]
    drifted = [p for p in stale if p not in following]
    if drifted:
        raise CasebankError(
            f"generated files are out of date: {', '.join(drifted)}",
            "run `casebank generate` (or `nox -s docs`) and commit",
        )
    print(
        "the files generated from the dataset are up to date"
        if dataset_only
        else "generated files are up to date"
        if not following
        else "the files generated from the code are up to date"
    )
    if following:
        verb, them = ("follows", "it") if len(following) == 1 else ("follow", "them")
        print(
            f"note: {' and '.join(following)} {verb} the dataset, so the next release and CI's "
            f"refresh pull request after the merge regenerate {them}; nothing to do in this "
            f"change (`casebank generate --dataset` regenerates {them} now)"
        )
    return 0


def commit_refreshed(root: Path, files: dict[str, str]) -> int:
    """Write the stale files among ``files`` and commit exactly them; on a failed commit, put
    their old contents back, so nothing is left half-done."""
    from casebank.release import git

    # Not git.check_repository: a shallow clone (CI's default checkout) can commit these.
    if git.resolve_commit(root, "HEAD") is None:
        raise CasebankError(
            f"{root} is not a git repository with a commit to build on",
            "--commit commits the refreshed files: run it in a clone of the dataset",
        )
    stale = stale_generated(root, files)
    if not stale:
        print("the generated files are up to date: nothing to commit")
        return 0
    dirty = sorted({entry[3:] for entry in git.status(root)} & set(stale))
    if dirty:
        raise CasebankError(
            f"{', '.join(dirty)} has uncommitted changes, which a refresh would commit",
            "commit or stash them first, then refresh",
        )
    before = {p: (root / p).read_bytes() if (root / p).is_file() else None for p in stale}
    made = [f for p in stale for f in (root / p).parents if f != root and not f.exists()]
    try:
        write_generated(root, {p: files[p] for p in stale})
        git.stage(root, stale)
        git.commit_paths(root, _message(stale), stale)
    except BaseException:
        _put_back(root, before, made)
        raise
    commit = git.resolve_commit(root, "HEAD") or ""
    print(f"committed {', '.join(stale)} as {commit[:12]}: {COMMIT_SUBJECT}")
    return 0


def _put_back(root: Path, before: dict[str, bytes | None], made: list[Path]) -> None:
    """The files as they were, out of the index again, and no folder the refresh created."""
    from casebank.release import git

    for relative, content in before.items():
        if content is None:
            (root / relative).unlink(missing_ok=True)
        else:
            write_atomically(root / relative, content)
    git.reset_index(root, "HEAD", list(before))
    for folder in sorted(set(made), key=lambda f: len(f.parts), reverse=True):
        if folder.is_dir() and not any(folder.iterdir()):
            folder.rmdir()


def _message(paths: list[str]) -> str:
    listed = "\n".join(f"- {p}" for p in paths)
    return (
        f"{COMMIT_SUBJECT}\n\n"
        "Regenerated by `casebank generate --commit` from the cases and the catalog of the "
        f"commit before this one:\n\n{listed}\n"
    )
