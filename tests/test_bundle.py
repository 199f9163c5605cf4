"""An export bundle served on its own: the catalog travels in it, the oracle, the scorer and the
judge items serve from it with no repository, exactly as from the git release, and a bundle
altered after the export is refused before anything is served."""

from __future__ import annotations

import hashlib
import json
import shutil
from pathlib import Path
from typing import Any

import pytest
import rfc8785
import yaml

from casebank.format.catalog import build_catalog
from casebank.serve.bundle import load_bundle
from conftest import run_cli as cli
from gitrepo import GitRepo

pytestmark = pytest.mark.usefixtures("isolated_git")

ROOT = Path(__file__).parents[1]
GOLD = "Acute inferior ST-elevation myocardial infarction"
MUST = ["ECG", "Troponin", "CBC"]
PLAN = ["Aspirin 300 mg chewed", "Primary PCI"]


def export(capsys: pytest.CaptureFixture[str], repo: GitRepo, out: Path, *extra: str) -> Path:
    code, _, err = cli(
        capsys, "export", "--release", "1.0.0", "--out", str(out), "--root", str(repo.root), *extra
    )
    assert code == 0, err
    return out


@pytest.fixture
def bundle(released: GitRepo, tmp_path: Path, capsys: pytest.CaptureFixture[str]) -> Path:
    return export(capsys, released, tmp_path / "bundle")


@pytest.fixture
def elsewhere(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> Path:
    """A working folder with no repository in it or above it: what a harness author has."""
    folder = tmp_path / "elsewhere"
    folder.mkdir()
    monkeypatch.chdir(folder)
    return folder


def sums(folder: Path) -> dict[str, str]:
    lines = (folder / "SHA256SUMS").read_text("utf-8").splitlines()
    return {name: digest for digest, name in (line.split("  ", 1) for line in lines)}


def rewrite_sums(folder: Path) -> None:
    """SHA256SUMS recomputed over the files as they now are: a tamperer covering their tracks."""
    names = sorted(sums(folder))
    (folder / "SHA256SUMS").write_text(
        "".join(f"{hashlib.sha256((folder / n).read_bytes()).hexdigest()}  {n}\n" for n in names),
        "utf-8",
    )


# --- the catalog in the bundle ---------------------------------------------------------------


def test_the_bundle_carries_the_releases_catalog_as_canonical_json(
    released: GitRepo, bundle: Path
) -> None:
    raw = (bundle / "catalog.json").read_bytes()
    catalog = yaml.safe_load(released.git("show", "v1.0.0:catalog.yaml"))
    assert raw == rfc8785.dumps(catalog)
    manifest = json.loads((bundle / "manifest.json").read_text("utf-8"))
    assert hashlib.sha256(raw).hexdigest() == manifest["catalog"]["sha256"]
    assert sums(bundle)["catalog.json"] == hashlib.sha256(raw).hexdigest()
    card = (bundle / "README.md").read_text("utf-8")
    assert "catalog.json" in card and "--bundle" in card


def test_a_bundle_loads_as_the_release_it_holds(released: GitRepo, bundle: Path) -> None:
    from casebank.release.released import load_release

    from_git = load_release(released.root, "1.0.0", canonical=True)
    from_bundle = load_bundle(bundle)
    assert from_bundle.manifest_raw == from_git.manifest_raw
    assert from_bundle.catalog_data == from_git.catalog_data
    assert [(c.entry, c.data, c.attachments) for c in from_bundle.current] == [
        (c.entry, c.data, c.attachments) for c in from_git.current
    ]
    assert len(build_catalog(from_bundle.catalog_data).tests) > 5


# --- the same answers and scores as from git --------------------------------------------------


def test_results_and_views_from_the_bundle_are_the_git_releases_byte_for_byte(
    released: GitRepo,
    bundle: Path,
    elsewhere: Path,
    capsys: pytest.CaptureFixture[str],
) -> None:
    catalog = build_catalog(yaml.safe_load((released.root / "catalog.yaml").read_text("utf-8")))
    tests = [t.name for t in catalog.tests] + ["trop", "Serum unobtainium", "Chest XR"]
    root = ("--root", str(released.root))
    for case in ("alpha", "beta", "gamma"):
        for fmt in ("json", "text"):
            argv = ("results", case, *tests, "--format", fmt)
            git = cli(capsys, *argv, "--release", "1.0.0", *root)
            served = cli(capsys, *argv, "--bundle", str(bundle))
            assert git[0] == served[0] == 0, served[2]
            assert served[1] == git[1] and len(served[1]) > 1000
        exam = ("results", case, "--exam", "vital signs", "cardiovascular", "full", "knee")
        assert cli(capsys, *exam, "--bundle", str(bundle)) == cli(
            capsys, *exam, "--release", "1.0.0", *root
        )
        for role in ("patient", "on_request", "examiner"):
            view = ("view", case, "--role", role)
            git = cli(capsys, *view, "--release", "1.0.0", *root)
            assert git[0] == 0 and cli(capsys, *view, "--bundle", str(bundle)) == git


def submission(case_id: str, **fields: Any) -> dict[str, Any]:
    row = {"case_id": case_id, "version": 1, "diagnosis": GOLD, "tests": MUST, "plan": PLAN}
    return row | fields


def write_lines(path: Path, rows: list[dict[str, Any]]) -> Path:
    path.write_text("".join(json.dumps(r) + "\n" for r in rows), "utf-8")
    return path


def test_scores_and_judge_items_from_the_bundle_are_the_git_releases(
    released: GitRepo,
    bundle: Path,
    elsewhere: Path,
    tmp_path: Path,
    capsys: pytest.CaptureFixture[str],
) -> None:
    rows = [
        submission("alpha", run="a"),
        submission("beta", run="a", diagnosis="Aortic dissection", tests=["CT angiography"]),
        submission("alpha", run="b", tests=["Troponin"], examined=["vital signs"]),
        submission("gamma", run="b", diagnosis="Inferior STEMI"),
    ]
    subs = write_lines(tmp_path / "subs.jsonl", rows)
    verdicts = [
        {"case_id": c, "version": 1, "item": item, "met": met, "judge": "panel", "run": run}
        for c, run in (("alpha", "a"), ("alpha", "b"), ("gamma", "b"))
        for item, met in (("treatment.1", True), ("treatment.2", run == "a"))
    ]
    judged = write_lines(tmp_path / "judged.jsonl", verdicts)
    root = ("--root", str(released.root))
    for fmt in ("json", "text"):
        argv = ("score", str(subs), "--judgements", str(judged), "--format", fmt)
        argv += ("--compare", "a", "b")
        git = cli(capsys, *argv, "--release", "1.0.0", *root)
        served = cli(capsys, *argv, "--bundle", str(bundle))
        assert git[0] == 0, git[2]
        assert served == git
    report = json.loads(
        cli(capsys, "score", str(subs), "--bundle", str(bundle), "--format", "json")[1]
    )
    assert report["release"] == "1.0.0" and len(report["cases"]) == 4
    items = ("judge-items", "--submissions", str(subs))
    git = cli(capsys, *items, "--release", "1.0.0", *root)
    assert git[0] == 0 and git[1].count("\n") > 4
    assert cli(capsys, *items, "--bundle", str(bundle)) == git


def test_the_projects_own_release_serves_the_same_from_its_bundle(
    tmp_path: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    """Every case of this repository, released in a copy and exported: the same case data
    and catalog, as text, from the bundle as from git, and so the same answers; served for
    every test a case lists, a fixed spread of the catalog's tests, and parts of the
    examination."""
    from casebank.release.released import load_release
    from casebank.serve.oracle import Oracle

    repo = GitRepo.create(tmp_path / "dataset")
    for name in ("catalog.yaml", "casebank.toml"):
        shutil.copy(ROOT / name, repo.root / name)
    shutil.copytree(ROOT / "cases", repo.root / "cases")
    repo.commit("The dataset")
    assert cli(capsys, "release", "1.0.0", "--root", str(repo.root))[0] == 0
    out = export(capsys, repo, tmp_path / "bundle")
    git, served = load_release(repo.root, "1.0.0", canonical=True), load_bundle(out)
    catalog_git, catalog_served = (
        build_catalog(git.catalog_data),
        build_catalog(served.catalog_data),
    )
    # as text: key order and 11.0 against 11 would show
    assert json.dumps(git.catalog_data) == json.dumps(served.catalog_data)
    spread = [t.name for t in catalog_git.tests][::25]
    assert len(git.current) == len(served.current) >= 60
    for a, b in zip(git.current, served.current, strict=True):
        assert json.dumps(a.data) == json.dumps(b.data), a.entry.case_id
        left, right = Oracle(a.data, catalog_git), Oracle(b.data, catalog_served)
        for name in [*left.results, *spread]:
            assert json.dumps([x.to_dict() for x in left.answers(name)]) == json.dumps(
                [x.to_dict() for x in right.answers(name)]
            )
        for part in ("full", "vital signs", "abdomen"):
            assert json.dumps(left.examine(part).to_dict()) == json.dumps(
                right.examine(part).to_dict()
            )


def test_a_parquet_bundle_serves_the_same(
    released: GitRepo,
    tmp_path: Path,
    elsewhere: Path,
    capsys: pytest.CaptureFixture[str],
) -> None:
    pytest.importorskip("pyarrow", reason="pyarrow is not installed (the `export` extra)")
    out = export(capsys, released, tmp_path / "parquet", "--format", "parquet")
    argv = ("results", "alpha", "ECG", "Troponin", "CBC", "--format", "json")
    assert cli(capsys, *argv, "--bundle", str(out)) == cli(
        capsys, *argv, "--release", "1.0.0", "--root", str(released.root)
    )


def test_attachments_are_checked_and_served_from_the_bundle(
    repo: GitRepo, tmp_path: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    repo.write("cases/alpha/attachments/ecg.svg", b"<svg xmlns='http://www.w3.org/2000/svg'/>")
    repo.commit("An ECG tracing for alpha")
    assert cli(capsys, "release", "1.0.0", "--root", str(repo.root))[0] == 0
    out = export(capsys, repo, tmp_path / "b")
    [alpha, *_] = load_bundle(out).current
    assert alpha.attachments == {"ecg.svg": b"<svg xmlns='http://www.w3.org/2000/svg'/>"}
    (out / "attachments/alpha/ecg.svg").write_bytes(b"<svg/>")
    rewrite_sums(out)
    code, _, err = cli(capsys, "results", "alpha", "ECG", "--bundle", str(out))
    assert code == 1
    assert "cases.jsonl:1" in err and "attachments/alpha/" in err and "not the ones" in err


# --- a bundle altered after the export is refused ---------------------------------------------


def _edit_case(folder: Path) -> None:
    path = folder / "cases.jsonl"
    path.write_text(path.read_text("utf-8").replace("Primary PCI", "Thrombolysis", 1), "utf-8")


def _edit_catalog(folder: Path) -> None:
    path = folder / "catalog.json"
    data = json.loads(path.read_bytes())
    data["tests"] = data["tests"][1:]
    path.write_bytes(rfc8785.dumps(data))


def _drop_record(folder: Path) -> None:
    path = folder / "cases.jsonl"
    path.write_text("".join(path.read_text("utf-8").splitlines(keepends=True)[:2]), "utf-8")


def _edit_patient(folder: Path) -> None:
    path = folder / "cases.jsonl"
    rows = [json.loads(line) for line in path.read_text("utf-8").splitlines()]
    rows[1]["patient"] = rows[1]["patient"].replace('"age":', '"diagnosis":"STEMI","age":')
    path.write_text("".join(json.dumps(r, ensure_ascii=False) + "\n" for r in rows), "utf-8")


@pytest.mark.parametrize(
    "tamper,expected",
    [
        pytest.param(_edit_case, ["cases.jsonl: changed since the export"], id="edited-case"),
        pytest.param(
            lambda f: (f / "catalog.json").unlink(),
            ["catalog.json: listed in SHA256SUMS but missing"],
            id="missing-catalog",
        ),
        pytest.param(
            lambda f: (f / "extra.jsonl").write_text("{}\n", "utf-8"),
            ["extra.jsonl: not listed in SHA256SUMS"],
            id="added-file",
        ),
        pytest.param(
            lambda f: (f / "SHA256SUMS").unlink(),
            ["SHA256SUMS: missing", "not an export bundle"],
            id="no-sums",
        ),
        pytest.param(
            lambda f: (f / "SHA256SUMS").write_text("not a sum line\n", "utf-8"),
            ["SHA256SUMS:1: not a `sha256sum` line"],
            id="bad-sums-line",
        ),
        pytest.param(
            lambda f: (f / "SHA256SUMS").write_text(
                (f / "SHA256SUMS").read_text("utf-8") + f"{'0' * 64}  ../outside\n", "utf-8"
            ),
            ["SHA256SUMS:5: '../outside' is not a path inside the bundle"],
            id="escaping-path",
        ),
        pytest.param(
            lambda f: (_edit_case(f), rewrite_sums(f)),
            ["cases.jsonl:1", "does not have the content hash manifest.json gives it"],
            id="edited-case-sums-rewritten",
        ),
        pytest.param(
            lambda f: (_edit_catalog(f), rewrite_sums(f)),
            ["catalog.json: not the catalog of release 1.0.0"],
            id="edited-catalog-sums-rewritten",
        ),
        pytest.param(
            lambda f: (_drop_record(f), rewrite_sums(f)),
            ["cases.jsonl: no record of gamma"],
            id="dropped-record-sums-rewritten",
        ),
        pytest.param(
            lambda f: (_edit_patient(f), rewrite_sums(f)),
            ["cases.jsonl:2", "`patient` of beta@1 is not what the release holds"],
            id="edited-patient-sums-rewritten",
        ),
        pytest.param(
            lambda f: ((f / "catalog.json").unlink(), _unlist(f, "catalog.json")),
            ["catalog.json: missing from the bundle", "export it again with this casebank"],
            id="bundle-without-a-catalog",
        ),
    ],
)
def test_a_tampered_bundle_is_refused_naming_the_file_and_the_fix(
    bundle: Path,
    elsewhere: Path,
    tmp_path: Path,
    capsys: pytest.CaptureFixture[str],
    tamper: Any,
    expected: list[str],
) -> None:
    tamper(bundle)
    subs = write_lines(tmp_path / "subs.jsonl", [submission("alpha")])
    for argv in (
        ("results", "alpha", "ECG", "--bundle", str(bundle)),
        ("view", "alpha", "--role", "patient", "--bundle", str(bundle)),
        ("score", str(subs), "--bundle", str(bundle)),
        ("judge-items", "--bundle", str(bundle)),
    ):
        code, out, err = cli(capsys, *argv)
        assert code == 1, (argv, err)
        assert out == "" and "Traceback" not in err
        for text in expected:
            assert text in err, (argv, err)
        assert "hint:" in err and "casebank export --release X.Y.Z --out DIR" in err


def _unlist(folder: Path, name: str) -> None:
    path = folder / "SHA256SUMS"
    kept = [line for line in path.read_text("utf-8").splitlines() if not line.endswith(name)]
    path.write_text("".join(f"{line}\n" for line in kept), "utf-8")


def test_a_symbolic_link_in_a_bundle_is_refused(
    bundle: Path, elsewhere: Path, tmp_path: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    outside = tmp_path / "catalog.json"
    outside.write_bytes((bundle / "catalog.json").read_bytes())
    (bundle / "catalog.json").unlink()
    (bundle / "catalog.json").symlink_to(outside)
    code, _, err = cli(capsys, "results", "alpha", "ECG", "--bundle", str(bundle))
    assert code == 1 and "catalog.json: not a regular file" in err


def test_a_folder_that_is_not_a_bundle_is_named(
    tmp_path: Path, elsewhere: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    code, _, err = cli(capsys, "results", "alpha", "ECG", "--bundle", str(tmp_path / "nowhere"))
    assert code == 1 and "--bundle" in err and "not there" in err
    code, _, err = cli(capsys, "results", "alpha", "ECG", "--bundle", str(elsewhere))
    assert code == 1 and "SHA256SUMS: missing" in err


def test_a_case_the_bundle_does_not_hold_is_named(
    bundle: Path, elsewhere: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    code, _, err = cli(capsys, "results", "alphaa", "ECG", "--bundle", str(bundle))
    assert code == 1 and "case alphaa is not in the bundle" in err and "`alpha`" in err


def test_release_and_bundle_are_one_or_the_other(
    bundle: Path, elsewhere: Path, tmp_path: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    subs = write_lines(tmp_path / "subs.jsonl", [submission("alpha")])
    code, _, err = cli(capsys, "score", str(subs), "--bundle", str(bundle), "--release", "1.0.0")
    assert code == 2 and "not allowed with" in err
    code, _, err = cli(capsys, "score", str(subs))
    assert code == 2 and "--release" in err and "--bundle" in err


def test_the_published_tarball_serves_once_unpacked(
    released: GitRepo, tmp_path: Path, elsewhere: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    """What a harness author downloads from the GitHub release (nox -s bundle's tarball),
    unpacked anywhere, serves and scores as the git release does."""
    import tarfile

    from conftest import load_noxfile

    pytest.importorskip("nox", reason="nox is not installed (the noxfile builds the tarball)")
    noxfile = load_noxfile()
    dist = tmp_path / "dist"
    export(capsys, released, dist / "casebank-1.0.0")
    noxfile._release_assets("1.0.0", str(dist / "casebank-1.0.0"))
    with tarfile.open(dist / "casebank-1.0.0.tar.gz") as tar:
        safe = {"filter": "data"} if hasattr(tarfile, "data_filter") else {}
        tar.extractall(elsewhere / "download", **safe)  # type: ignore[arg-type]
    unpacked = elsewhere / "download" / "casebank-1.0.0"
    assert "catalog.json" in sums(unpacked) and (unpacked / "catalog.json").is_file()
    subs = write_lines(tmp_path / "subs.jsonl", [submission("alpha"), submission("beta")])
    argv = ("score", str(subs), "--format", "json")
    git = cli(capsys, *argv, "--release", "1.0.0", "--root", str(released.root))
    assert git[0] == 0 and cli(capsys, *argv, "--bundle", str(unpacked)) == git
