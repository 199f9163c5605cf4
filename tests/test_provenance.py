"""Provenance on real temporary repositories: reviewers from trailers, the review policy,
per-case provenance and licences, withdrawals, and releases written before all of these."""

from __future__ import annotations

import json
import re
from pathlib import Path
from typing import Any

import pytest

from casebank.errors import CasebankError
from casebank.format.policy import Policy, load_policy
from casebank.release import withdrawals
from casebank.release.plan import plan_release
from conftest import check_text, edit, found, line_of
from conftest import run_cli as cli
from gitrepo import ANN, BOB, GitRepo, case_text

CARA = ("Cara Clinician", "cara@example.org")
REVIEWED_BY_CARA = f"\n\nReviewed-by: {CARA[0]} <{CARA[1]}>"


def manifest(repo: GitRepo, version: str) -> dict[str, Any]:
    data: dict[str, Any] = json.loads((repo.root / f"releases/{version}.json").read_text("utf-8"))
    return data


def entry(repo: GitRepo, version: str, case_id: str) -> dict[str, Any]:
    return next(c for c in manifest(repo, version)["cases"] if c["case_id"] == case_id)


def release(capsys: pytest.CaptureFixture[str], repo: GitRepo, *argv: str) -> tuple[int, str]:
    code, out, err = cli(capsys, "release", "--root", str(repo.root), *argv)
    return code, out + err


def revise(repo: GitRepo, case_id: str, age: int) -> None:
    repo.write(f"cases/{case_id}.yaml", case_text(case_id).replace("age: 54", f"age: {age}"))


# --- rules ----------------------------------------------------------------------------------


def test_an_adapted_case_must_cite_its_source() -> None:
    text = edit(
        "case_id: valid_case\n",
        "case_id: valid_case\nprovenance: {source: adapted, licence: MIT}\n",
    )
    assert [(rule, path) for rule, path, _ in found(text)] == [("CB426", "provenance.source")]
    cited = text.replace(
        "licence: MIT}", 'licence: MIT, derived_from: "AgentClinic-MedQA, case 3"}'
    )
    assert check_text(cited) == []


def test_an_original_case_needs_no_citation() -> None:
    text = edit("case_id: valid_case\n", "case_id: valid_case\nprovenance: {source: original}\n")
    assert check_text(text) == []


@pytest.mark.parametrize(
    "licence,hint",
    [
        ("CC BY 4.0", "write `CC-BY-4.0`"),
        ("cc-by-sa-4", "write `CC-BY-SA-4.0`"),
        ("GPL-2.0", "write `GPL-2.0-only` or `GPL-2.0-or-later`"),
        ("Creative Commons", "use an identifier from https://spdx.org/licenses/"),
    ],
)
def test_a_licence_must_be_an_spdx_identifier(licence: str, hint: str) -> None:
    text = edit(
        "case_id: valid_case\n",
        f'case_id: valid_case\nprovenance: {{source: original, licence: "{licence}"}}\n',
    )
    [problem] = check_text(text)
    assert (problem.rule, problem.path) == ("CB427", "provenance.licence")
    assert problem.line == line_of(text, "provenance:")
    assert problem.hint.startswith(hint)


# --- the policy file ------------------------------------------------------------------------


def test_the_policy_file_defaults_and_settings() -> None:
    assert load_policy(None) == Policy("casebank", "CC-BY-4.0", False)
    raw = b'[dataset]\nlicence = "CC0-1.0"\n[release]\nrequire_review = true\n'
    assert load_policy(raw) == Policy("casebank", "CC0-1.0", True)


@pytest.mark.parametrize(
    "raw,message",
    [
        (b"[release\n", "casebank.toml: not valid TOML"),
        (b"[release]\nrequire_reviews = 1\n", "casebank.toml: `release.require_reviews` is not"),
        (b'[release]\nrequire_review = "yes"\n', "casebank.toml: `release.require_review` must"),
        (b"[deploy]\nx = 1\n", "casebank.toml: `deploy` is not a table of the policy file"),
    ],
)
def test_a_bad_policy_file_is_named(raw: bytes, message: str) -> None:
    with pytest.raises(CasebankError, match="^" + message.replace("[", r"\[")):
        load_policy(raw)


# --- reviewers ------------------------------------------------------------------------------


@pytest.mark.usefixtures("isolated_git")
def test_trailers_reach_the_manifest_reviewers(
    repo: GitRepo, capsys: pytest.CaptureFixture[str]
) -> None:
    revise(repo, "alpha", 60)
    repo.commit("Revise alpha" + REVIEWED_BY_CARA + f"\nReviewed-by: {BOB[0]} <{BOB[1]}>")
    assert release(capsys, repo, "1.0.0")[0] == 0
    alpha = entry(repo, "1.0.0", "alpha")
    assert alpha["reviewers"] == [
        {"name": BOB[0], "email": BOB[1]},
        {"name": CARA[0], "email": CARA[1]},
    ]
    assert entry(repo, "1.0.0", "beta")["reviewers"] == []
    # An unchanged case keeps its version's reviewers; a new version starts afresh.
    revise(repo, "beta", 61)
    repo.commit("Revise beta")
    assert release(capsys, repo, "1.0.1")[0] == 0
    assert entry(repo, "1.0.1", "alpha")["reviewers"] == alpha["reviewers"]
    revise(repo, "alpha", 62)
    repo.commit("Revise alpha again")
    assert release(capsys, repo, "1.0.2")[0] == 0
    assert entry(repo, "1.0.2", "alpha")["reviewers"] == []
    assert cli(capsys, "verify", "--root", str(repo.root))[0] == 0


@pytest.mark.usefixtures("isolated_git")
def test_the_policy_refuses_an_unreviewed_change_and_names_it(
    repo: GitRepo, capsys: pytest.CaptureFixture[str]
) -> None:
    repo.write("casebank.toml", "[release]\nrequire_review = true\n")
    repo.commit("Require review" + REVIEWED_BY_CARA)
    code, out = release(capsys, repo, "1.0.0")
    assert code == 1
    assert "3 added or changed case version(s) have no reviewer" in out
    assert "alpha, beta, gamma" in out
    assert repo.tags() == []
    code, out, _ = cli(capsys, "review-status", "--root", str(repo.root))
    assert code == 1
    assert re.search(r"^alpha  1        [0-9a-f]{12}  UNREVIEWED  Ann Author  -$", out, re.M)
    # Reviewing oneself does not count; a reviewer who is not the author does.
    for case_id, age in (("alpha", 60), ("beta", 61), ("gamma", 62)):
        revise(repo, case_id, age)
    repo.commit("Revise all three\n\nReviewed-by: Ann Author <ANN@example.org>", author=ANN)
    assert "alpha, beta, gamma" in release(capsys, repo, "1.0.0")[1]
    repo.git("reset", "-q", "--hard", "HEAD~1")
    for case_id, age in (("alpha", 60), ("beta", 61), ("gamma", 62)):
        revise(repo, case_id, age)
    repo.commit("Revise all three" + REVIEWED_BY_CARA)
    # Cara signed off the exact content each version has: that is a review, even though the
    # first commit of these versions (no trailer) came before it.
    code, out = release(capsys, repo, "1.0.0")
    assert code == 0, out
    assert entry(repo, "1.0.0", "alpha")["reviewers"] == [{"name": CARA[0], "email": CARA[1]}]


@pytest.mark.usefixtures("isolated_git")
def test_reviewed_versions_release_under_the_policy(
    tmp_path: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    repo = GitRepo.create(tmp_path / "r")
    from gitrepo import CATALOG

    repo.write("catalog.yaml", CATALOG)
    repo.write(".gitignore", ".casebank-cache/\n")
    repo.write("casebank.toml", "[release]\nrequire_review = true\n")
    repo.commit("Policy")
    repo.write("cases/alpha.yaml", case_text("alpha"))
    repo.commit("Add alpha" + REVIEWED_BY_CARA)
    code, out, _ = cli(capsys, "review-status", "--root", str(repo.root), "--format", "json")
    assert code == 0
    sha256 = json.loads(out)["cases"][0]["sha256"]
    assert re.fullmatch("[0-9a-f]{64}", sha256)
    assert json.loads(out)["cases"] == [
        {
            "case_id": "alpha",
            "version": 1,
            "sha256": sha256,
            "authors": [f"{ANN[0]} <{ANN[1]}>"],
            "reviewers": [f"{CARA[0]} <{CARA[1]}>"],
            "reviewed": True,
            "not_counted": [],
        }
    ]
    assert release(capsys, repo, "1.0.0")[0] == 0
    assert entry(repo, "1.0.0", "alpha")["sha256"] == sha256
    revise(repo, "alpha", 70)
    repo.commit("Change after the review")
    assert "alpha" in release(capsys, repo, "1.0.1")[1]


# --- provenance in the manifest -------------------------------------------------------------


@pytest.mark.usefixtures("isolated_git")
def test_provenance_and_the_dataset_licence_reach_the_manifest(
    repo: GitRepo, capsys: pytest.CaptureFixture[str]
) -> None:
    repo.write("casebank.toml", '[dataset]\nlicence = "CC0-1.0"\n')
    adapted = case_text("beta").replace(
        "case_id: beta\n",
        "case_id: beta\nprovenance:\n  source: adapted\n  licence: MIT\n"
        '  derived_from: "AgentClinic-MedQA, record 7"\n',
    )
    repo.write("cases/beta.yaml", adapted)
    repo.commit("Licence and an adapted case")
    assert release(capsys, repo, "1.0.0")[0] == 0
    data = manifest(repo, "1.0.0")
    assert data["licence"] == "CC0-1.0"
    assert entry(repo, "1.0.0", "alpha")["provenance"] == {
        "source": "original",
        "licence": "CC0-1.0",
    }
    assert entry(repo, "1.0.0", "beta")["provenance"] == {
        "source": "adapted",
        "licence": "MIT",
        "derived_from": "AgentClinic-MedQA, record 7",
    }


# --- withdrawals ----------------------------------------------------------------------------


@pytest.mark.usefixtures("isolated_git")
def test_a_withdrawal_round_trip(repo: GitRepo, capsys: pytest.CaptureFixture[str]) -> None:
    root = str(repo.root)
    assert release(capsys, repo, "1.0.0")[0] == 0
    code, _, err = cli(
        capsys, "withdraw", "alpha@2", "--reason", "The dose was wrong.", "--root", root
    )
    assert (code, "alpha@2 was never released (released versions: 1)") == (
        1,
        err.split("\n")[0][10:],
    )
    code, out, _ = cli(
        capsys, "withdraw", "alpha@1", "--reason", "Troponin in ng/mL, not ng/L.", "--root", root
    )
    assert code == 0 and "recorded alpha@1 in withdrawals.yaml" in out
    assert withdrawals.parse((repo.root / "withdrawals.yaml").read_bytes()) == [
        withdrawals.Request("alpha", 1, "Troponin in ng/mL, not ng/L.", 4)
    ]
    assert (
        cli(capsys, "withdraw", "alpha@1", "--reason", "Again, the same one.", "--root", root)[0]
        == 1
    )
    repo.commit("Withdraw alpha@1")
    before = (repo.root / "releases/1.0.0.json").read_bytes()
    assert release(capsys, repo, "1.0.1")[0] == 0
    assert (repo.root / "releases/1.0.0.json").read_bytes() == before  # released stays untouched
    carried = {"case_id": "alpha", "version": 1, "reason": "Troponin in ng/mL, not ng/L.",
               "release": "1.0.1"}  # fmt: skip
    assert manifest(repo, "1.0.1")["withdrawn"] == [carried]
    assert manifest(repo, "1.0.1")["counts"]["withdrawn"] == 1
    changelog = (repo.root / "CHANGELOG.md").read_text("utf-8")
    assert "### Withdrawn\n\nReleased versions found wrong" in changelog
    assert "- `alpha` v1: Troponin in ng/mL, not ng/L." in changelog
    # Later releases carry it unchanged, even once the file no longer lists it.
    repo.delete("withdrawals.yaml")
    revise(repo, "beta", 66)
    repo.commit("Revise beta, tidy withdrawals")
    assert release(capsys, repo, "1.0.2")[0] == 0
    assert manifest(repo, "1.0.2")["withdrawn"] == [carried]
    assert cli(capsys, "verify", "--root", root)[0] == 0
    code, out, err = cli(capsys, "show", "alpha@1", "--root", root)
    assert code == 0 and "case_id: alpha" in out
    assert "alpha@1 was withdrawn in release 1.0.1: Troponin in ng/mL, not ng/L." in err


@pytest.mark.usefixtures("isolated_git")
def test_verify_finds_a_tampered_withdrawal(
    repo: GitRepo, capsys: pytest.CaptureFixture[str]
) -> None:
    root = str(repo.root)
    assert release(capsys, repo, "1.0.0")[0] == 0
    cli(capsys, "withdraw", "beta@1", "--reason", "A wrong antibiotic dose.", "--root", root)
    repo.commit("Withdraw beta@1")
    assert release(capsys, repo, "1.0.1")[0] == 0
    path = repo.root / "releases/1.0.1.json"
    path.write_text(path.read_text("utf-8").replace("A wrong antibiotic", "A minor"), "utf-8")
    repo.commit("Soften the reason")
    code, out, _ = cli(capsys, "verify", "--root", root)
    assert code == 1
    assert "1.0.1: `withdrawn` is" in out


def test_withdrawals_file_errors_name_the_line() -> None:
    raw = b"withdrawals:\n  - case_id: a\n    version: 1\n    reason: short\n"
    with pytest.raises(CasebankError, match=r"^withdrawals.yaml:2: the reason for withdrawing a@1"):
        withdrawals.parse(raw)
    raw = b"withdrawals:\n  - {case_id: a, version: 0, reason: long enough reason}\n"
    with pytest.raises(CasebankError, match=r"^withdrawals.yaml:2: `version` of withdrawal 1"):
        withdrawals.parse(raw)
    twice = b"withdrawals:\n" + b"  - {case_id: a, version: 1, reason: long enough reason}\n" * 2
    with pytest.raises(CasebankError, match=r"withdrawn twice \(first on line 2\)"):
        withdrawals.parse(twice)


# --- releases written before format 2 -------------------------------------------------------


@pytest.mark.usefixtures("isolated_git")
def test_a_format_1_release_still_verifies_after_the_upgrade(
    repo: GitRepo, capsys: pytest.CaptureFixture[str], monkeypatch: pytest.MonkeyPatch
) -> None:
    assert plan_release.__kwdefaults__ is not None
    monkeypatch.setitem(plan_release.__kwdefaults__, "manifest_format", 1)
    assert release(capsys, repo, "1.0.0")[0] == 0
    monkeypatch.undo()
    old = manifest(repo, "1.0.0")
    assert old["manifest_format"] == 1
    assert "withdrawn" not in old and "reviewers" not in old["cases"][0]
    revise(repo, "alpha", 60)
    repo.commit("Revise alpha" + REVIEWED_BY_CARA)
    assert release(capsys, repo, "1.1.0")[0] == 0
    assert manifest(repo, "1.1.0")["manifest_format"] == 3
    assert cli(capsys, "verify", "--root", str(repo.root))[0] == 0


# --- the cache is never committed -----------------------------------------------------------


@pytest.mark.usefixtures("isolated_git")
def test_validation_leaves_a_repository_without_gitignore_clean(
    tmp_path: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    repo = GitRepo.create(tmp_path / "r")
    from gitrepo import CATALOG

    repo.write("catalog.yaml", CATALOG)
    repo.write("cases/alpha.yaml", case_text("alpha"))
    repo.commit("Add alpha")
    assert cli(capsys, "validate", "--root", str(repo.root))[0] == 0
    assert repo.git("status", "--porcelain", "--untracked-files=all") == ""
