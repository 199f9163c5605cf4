"""`casebank show` and `casebank history`: released content and versions, from git alone."""

from __future__ import annotations

from pathlib import Path

import pytest

from casebank.cli import main
from gitrepo import ANN, BOB, GitRepo, case_text, dataset

pytestmark = pytest.mark.usefixtures("isolated_git")


def cli(capsys: pytest.CaptureFixture[bytes], *argv: str) -> tuple[int, bytes, bytes]:
    code = main(list(argv))
    out, err = capsys.readouterr()
    return code, out, err


@pytest.fixture
def released(tmp_path: Path) -> tuple[GitRepo, dict[str, bytes]]:
    """alpha v1 in 1.0.0, v2 in 1.1.0 (retitled); gamma removed in 2.0.0; then a draft edit."""
    repo = dataset(tmp_path / "repo")
    texts = {"v1": (repo.root / "cases/alpha.yaml").read_bytes()}
    assert main(["release", "--root", str(repo.root), "1.0.0"]) == 0
    repo.write(
        "cases/alpha.yaml", case_text("alpha", "Alpha, second edition", comment="edited by Bob")
    )
    repo.commit("Retitle alpha\n\nCo-authored-by: Carol <carol@example.org>", author=BOB)
    texts["v2"] = (repo.root / "cases/alpha.yaml").read_bytes()
    assert main(["release", "--root", str(repo.root), "1.1.0"]) == 0
    repo.delete("cases/gamma.yaml")
    repo.commit("Retire gamma")
    assert main(["release", "--root", str(repo.root), "2.0.0"]) == 0
    repo.write("cases/alpha.yaml", case_text("alpha", "Alpha, working draft"))
    repo.commit("Unreleased edit")
    return repo, texts


def test_show_prints_an_old_version_exactly_as_released(
    released: tuple[GitRepo, dict[str, bytes]], capsysbinary: pytest.CaptureFixture[bytes]
) -> None:
    repo, texts = released
    root = str(repo.root)
    assert cli(capsysbinary, "show", "--root", root, "alpha@1") == (0, texts["v1"], b"")
    assert cli(capsysbinary, "show", "--root", root, "alpha@2")[1] == texts["v2"]
    assert cli(capsysbinary, "show", "--root", root, "alpha")[1] == texts["v2"]  # latest released
    assert (
        cli(capsysbinary, "show", "--root", root, "alpha", "--release", "1.0.0")[1] == (texts["v1"])
    )
    assert cli(capsysbinary, "show", "--root", root, "gamma")[1] == (
        repo.git("show", "v1.0.0:cases/gamma.yaml").encode()
    )


@pytest.mark.parametrize(
    "argv,message",
    [
        (["alpha@3"], b"case alpha has no released version 3"),
        (["nobody"], b"case nobody is not in any release"),
        (["gamma", "--release", "2.0.0"], b"case gamma is not in release 2.0.0"),
        (["alpha@1", "--release", "1.1.0"], b"has no released version 1 in release 1.1.0"),
        (["alpha", "--release", "9.9.9"], b"there is no release 9.9.9"),
    ],
)
def test_show_refuses_what_was_never_released(
    released: tuple[GitRepo, dict[str, bytes]],
    capsysbinary: pytest.CaptureFixture[bytes],
    argv: list[str],
    message: bytes,
) -> None:
    code, out, err = cli(capsysbinary, "show", "--root", str(released[0].root), *argv)
    assert (code, out) == (1, b"")
    assert message in err


@pytest.mark.parametrize(
    "argv", [["alpha@x"], ["alpha@0"], ["a@1@2"], [], ["alpha", "--release", "v1"]]
)
def test_show_usage_errors_exit_2(
    released: tuple[GitRepo, dict[str, bytes]],
    capsysbinary: pytest.CaptureFixture[bytes],
    argv: list[str],
) -> None:
    assert cli(capsysbinary, "show", "--root", str(released[0].root), *argv)[0] == 2


def test_show_before_any_release_exits_1(
    tmp_path: Path, capsysbinary: pytest.CaptureFixture[bytes]
) -> None:
    repo = dataset(tmp_path / "fresh")
    code, _, err = cli(capsysbinary, "show", "--root", str(repo.root), "alpha")
    assert (code, b"no releases yet" in err) == (1, True)


def test_history_lists_versions_releases_authors_and_sections(
    released: tuple[GitRepo, dict[str, bytes]], capsys: pytest.CaptureFixture[str]
) -> None:
    repo, _ = released
    code = main(["history", "--root", str(repo.root), "alpha"])
    out = capsys.readouterr().out
    assert code == 0
    first = repo.git("rev-list", "--max-parents=0", "HEAD").strip()
    retitle = repo.git("rev-parse", "v1.1.0^{commit}^").strip()
    lines = out.splitlines()
    assert lines[0] == "alpha"
    assert lines[2].split() == [
        "VERSION",
        "RELEASE",
        "EVENT",
        "CHANGED",
        "ON",
        "COMMIT",
        "AUTHORS",
        "SECTIONS",
    ]
    assert lines[3].split() == [
        "1",
        "1.0.0",
        "added",
        "2023-11-14T23:13:20Z",
        first[:12],
        *ANN[0].split(),
        f"<{ANN[1]}>",
    ]
    assert lines[4].split()[:5] == ["2", "1.1.0", "changed", "2023-11-15T00:13:20Z", retitle[:12]]
    assert lines[4].endswith(f"{BOB[0]} <{BOB[1]}>, Carol <carol@example.org>  metadata")
    assert len(lines) == 5  # the unreleased edit is in no release


def test_history_of_a_removed_case_shows_its_removal(
    released: tuple[GitRepo, dict[str, bytes]], capsys: pytest.CaptureFixture[str]
) -> None:
    assert main(["history", "--root", str(released[0].root), "gamma"]) == 0
    lines = capsys.readouterr().out.splitlines()
    assert lines[3].split()[:3] == ["1", "1.0.0", "added"]
    assert lines[4].split() == ["(1)", "2.0.0", "removed"]


def test_history_exit_codes(
    released: tuple[GitRepo, dict[str, bytes]], capsys: pytest.CaptureFixture[str]
) -> None:
    root = str(released[0].root)
    assert main(["history", "--root", root, "nobody"]) == 1
    assert "case nobody is not in any release" in capsys.readouterr().err
    assert main(["history", "--root", root]) == 2
    assert main(["history", "--root", root, "alpha", "extra"]) == 2
