"""Serving a case: the role views and the results oracle, in-process and through the CLI."""

from __future__ import annotations

import json
from pathlib import Path
from typing import Any

import pytest
import yaml

from casebank.cli import main
from casebank.format.catalog import build_catalog
from casebank.format.loader import load_document
from casebank.serve.oracle import Oracle
from casebank.serve.views import texts, view
from casebank.workspace import case_files
from conftest import TEST_CATALOG, VALID_CASE
from gitrepo import GitRepo, case_text

ROOT = Path(__file__).resolve().parent.parent
CATALOG = build_catalog(yaml.safe_load(TEST_CATALOG))
EXAMINER_ONLY = ("ground_truth", "scoring", "management_gold", "investigations", "metadata")


def oracle(text: str = VALID_CASE) -> Oracle:
    return Oracle(yaml.safe_load(text), CATALOG)


def answer(request: str, text: str = VALID_CASE) -> dict[str, Any]:
    return oracle(text).answer(request).to_dict()


# --- the sources ---------------------------------------------------------------------------


def test_a_request_by_alias_is_served_the_listed_result() -> None:
    found = answer("Troponin I")  # the case keys it `hs-troponin`; both are aliases
    assert (found["source"], found["test"], found["from"]) == ("listed", "Troponin", None)
    assert found["result"]["value"] == 2.4


def test_a_panel_member_is_derived_from_its_panel() -> None:
    found = answer("Hb")
    assert (found["source"], found["test"], found["from"]) == (
        "derived",
        "Hemoglobin",
        "Complete blood count",
    )
    assert found["result"] == {"value": 14.1, "unit": "g/dL", "reference_range": "13.0-17.0"}


def test_a_listed_result_that_answers_another_test_serves_it() -> None:
    found = answer("Telemetry")  # the ECG result declares `answers: [Cardiac monitoring]`
    assert (found["source"], found["test"], found["from"]) == (
        "derived",
        "Cardiac monitoring",
        "ECG",
    )


def test_the_catalog_can_say_one_test_answers_another() -> None:
    text = VALID_CASE.replace(
        "  results_generated_policy: normal_unless_listed\n",
        '    Urinalysis:\n      type: text_report\n      value: "Blood 2+."\n'
        "  results_generated_policy: normal_unless_listed\n",
    )
    found = answer("Urine dipstick", text)
    assert (found["source"], found["from"]) == ("derived", "Urinalysis")


def test_a_panel_is_assembled_from_listed_members() -> None:
    text = VALID_CASE.replace(
        "  results_generated_policy: normal_unless_listed\n",
        '    Urine blood: {type: qualitative, value: "3+", flag: abnormal}\n'
        "  results_generated_policy: normal_unless_listed\n",
    )
    found = answer("Urinalysis", text)
    assert (found["source"], found["from"]) == ("derived", "Urine blood")
    members = found["result"]["components"]
    assert members["Urine blood"]["source"] == "listed"
    assert members["Urine white blood cells"]["source"] == "policy"


def test_an_unlisted_test_is_served_by_the_policy() -> None:
    found = answer("Potassium")
    assert found["source"] == "policy"
    assert found["result"] == {
        "type": "qualitative",
        "value": "Within the reference range.",
        "flag": "normal",
    }


def test_a_test_with_no_normal_result_is_unavailable_not_invented() -> None:
    assert answer("Chest X-ray")["source"] == "unavailable"  # no default_result in the catalog


def test_unavailable_unless_listed_means_unavailable() -> None:
    text = VALID_CASE.replace("normal_unless_listed", "unavailable_unless_listed")
    assert (answer("Potassium", text)["source"], answer("Potassium", text)["result"]) == (
        "unavailable",
        None,
    )


def test_a_result_the_case_marks_unavailable_is_unavailable() -> None:
    text = VALID_CASE.replace(
        "  results_generated_policy: normal_unless_listed\n",
        "    Potassium:\n      type: lab_value\n      status: unavailable\n"
        "      note: Haemolysed twice; no result.\n"
        "  results_generated_policy: normal_unless_listed\n",
    )
    found = answer("K", text)
    assert found["source"] == "unavailable" and found["result"]["note"].startswith("Haemolysed")


def test_an_unknown_test_carries_only_a_safe_suggestion() -> None:
    typo = answer("Troponine")
    assert (typo["source"], typo["test"], typo["suggestion"]) == ("unknown_test", None, "Troponin")
    different = answer("CD4 count")
    assert (different["source"], different["suggestion"]) == ("unknown_test", None)


def test_a_side_that_is_not_listed_is_not_served_the_listed_side() -> None:
    text = VALID_CASE.replace(
        "  results_generated_policy: normal_unless_listed\n",
        "    Chest X-ray:\n      type: text_report\n      laterality: left\n"
        '      value: "Effusion."\n'
        "  results_generated_policy: normal_unless_listed\n",
    )
    assert answer("left Chest X-ray", text)["source"] == "listed"
    assert answer("right Chest X-ray", text)["source"] == "unavailable"


def test_a_member_of_a_series_of_panels_is_served_as_its_own_series() -> None:
    text = VALID_CASE.replace(
        "  results_generated_policy: normal_unless_listed\n",
        "    Vital signs:\n      type: panel\n      series:\n"
        "        - {at: arrival, components: {Heart rate: {value: 120, unit: /min, "
        'reference_range: "60–100"}}}\n'
        "        - {at: 1 hour, components: {Heart rate: {value: 96, unit: /min, "
        'reference_range: "60–100"}}}\n'
        "  results_generated_policy: normal_unless_listed\n",
    )
    found = answer("Pulse", text)
    assert (found["source"], found["from"]) == ("derived", "Vital signs")
    assert [p["value"] for p in found["result"]["series"]] == [120, 96]


def test_examinations_are_served_part_by_part_and_never_invented() -> None:
    served = oracle()
    heart = served.examine("cardiovascular examination").to_dict()
    assert (
        heart["source"] == "listed" and heart["result"]["findings"] == "Regular rhythm, no murmur"
    )
    assert served.examine("neurological exam").to_dict()["source"] == "unavailable"


# --- role views ----------------------------------------------------------------------------


def test_the_patient_view_holds_the_patient_and_the_story_only() -> None:
    shown = view(yaml.safe_load(VALID_CASE), "patient")
    assert set(shown) == {"patient", "presentation"}
    assert set(shown["presentation"]) == {"chief_complaint", "history_of_present_illness"}


def test_a_field_the_schema_does_not_know_is_in_no_view() -> None:
    data = yaml.safe_load(VALID_CASE)
    data["patient"]["secret_diagnosis"] = "zz-not-in-the-schema"
    for role in ("patient", "on_request", "examiner"):
        assert "zz-not-in-the-schema" not in json.dumps(view(data, role))


def test_a_leaf_is_in_a_view_only_where_its_own_field_s_audience_is_the_role() -> None:
    """Lists and mappings of chosen keys whose items hold a different audience than the
    field above them (the shipped schema has few): each leaf is kept by its own audience."""
    from casebank.format.walk import mapping
    from casebank.serve.views import _keep

    examiner = {"meta": {"audience": "examiner"}}
    said = {"said": {"type": "string"}, "kept": {"type": "string", **examiner}}
    tree = mapping(
        {
            "notes": {"type": "list", "meta": {"audience": "patient"},
                      "schema": {"type": "string", **examiner}},
            "scores": {"type": "dict", "meta": {"audience": "patient"},
                       "valuesrules": {"type": "integer", **examiner}},
            "told": {"type": "dict", "meta": {"audience": "patient"},
                     "schema": said},
        }
    )  # fmt: skip
    data = {
        "notes": ["n1", "n2"],
        "scores": {"a": 1},
        "told": {"said": "s", "kept": "k", "unknown": "u"},
    }
    patient = _keep(tree, data, "patient")
    assert patient == {"notes": [], "told": {"said": "s"}}
    assert _keep(tree, data, "examiner") == {"scores": {"a": 1}, "told": {"kept": "k"}}


@pytest.mark.parametrize("relative", case_files(ROOT))
def test_every_shipped_case_s_patient_view_is_free_of_examiner_fields(relative: str) -> None:
    loaded = load_document(relative, (ROOT / relative).read_bytes())
    assert loaded.document is not None
    data = loaded.document.data
    shown = view(data, "patient")
    assert not set(shown) & set(EXAMINER_ONLY), relative
    assert "key_history_points" not in shown.get("presentation", {})
    final = data["ground_truth"]["final_diagnosis"]
    # the exact final diagnosis never appears in what the patient may say
    acknowledged = {a.get("rule") for a in data.get("acknowledged_warnings", [])}
    if "CB408" not in acknowledged and "diagnosis-leak" not in acknowledged:
        assert all(final.casefold() not in t.casefold() for _, t in texts(data, "patient"))


# --- the commands --------------------------------------------------------------------------


def test_results_json_is_the_documented_object(
    make_repo: Any, capsys: pytest.CaptureFixture[str]
) -> None:
    root = make_repo()
    code = main(
        ["results", "valid_case", "Hb", "Troponine", "--root", str(root), "--format", "json"]
    )
    assert code == 0
    payload = json.loads(capsys.readouterr().out)
    assert set(payload) == {"case_id", "version", "policy", "answers"}
    assert (payload["case_id"], payload["version"], payload["policy"]) == (
        "valid_case",
        None,
        "normal_unless_listed",
    )
    first, second = payload["answers"]
    assert set(first) == {"request", "test", "source", "from", "result"}
    assert (second["source"], second["suggestion"]) == ("unknown_test", "Troponin")


def test_the_catalog_a_command_remembers_is_the_catalog_it_would_load(
    make_repo: Any, capsys: pytest.CaptureFixture[str]
) -> None:
    """`results` remembers the loaded catalog under the hash of its bytes and the loader's
    code: a second run reads it back and answers the same; an edited catalog, a stale or a
    corrupt cache file is loaded afresh, never trusted."""
    from casebank.commands.memory import CATALOG_CACHE
    from casebank.commands.serving import catalog_of

    root = make_repo()
    argv = ["results", "valid_case", "Hb", "Troponine", "ECG", "--root", str(root)]
    assert main([*argv, "--format", "json"]) == 0
    first = capsys.readouterr().out
    cached = root / ".casebank-cache" / CATALOG_CACHE
    assert json.loads(cached.read_text())["data"]["tests"]
    assert main([*argv, "--format", "json"]) == 0
    assert capsys.readouterr().out == first
    raw = (root / "catalog.yaml").read_bytes()
    fresh = build_catalog(load_document("catalog.yaml", raw).document.data)  # type: ignore[union-attr]
    assert catalog_of(root, raw) == fresh
    # A cache written for other bytes (or another loader) is not used, and is replaced.
    stored = json.loads(cached.read_text())
    cached.write_text(json.dumps({"key": "0" * 64, "data": {**stored["data"], "tests": []}}))
    assert catalog_of(root, raw) == fresh
    assert json.loads(cached.read_text())["key"] == stored["key"]
    edited = raw.replace(b"name: ECG", b"name: Electrocardiogram", 1)
    assert edited != raw
    assert [t.name for t in catalog_of(root, edited).tests] != [t.name for t in fresh.tests]
    cached.write_text("{not json")
    assert catalog_of(root, raw) == fresh


def test_a_mistyped_case_id_is_refused_with_the_id_it_is_close_to(
    make_repo: Any, capsys: pytest.CaptureFixture[str]
) -> None:
    root = make_repo()
    assert main(["results", "valid_cas", "ECG", "--root", str(root)]) == 1
    err = capsys.readouterr().err
    assert "there is no case `valid_cas` in cases/ (did you mean `valid_case`?)" in err


def test_view_prints_yaml_or_json(make_repo: Any, capsys: pytest.CaptureFixture[str]) -> None:
    root = make_repo()
    assert main(["view", "valid_case", "--role", "patient", "--root", str(root)]) == 0
    assert "final_diagnosis" not in capsys.readouterr().out
    assert (
        main(["view", "valid_case", "--role", "examiner", "--format", "json", "--root", str(root)])
        == 0
    )
    assert json.loads(capsys.readouterr().out)["ground_truth"]["final_diagnosis"]


@pytest.mark.usefixtures("isolated_git")
def test_a_released_version_is_served_from_git_after_the_tree_changed(
    repo: GitRepo, capsys: pytest.CaptureFixture[str]
) -> None:
    root = str(repo.root)
    assert main(["release", "--root", root, "1.0.0"]) == 0
    capsys.readouterr()
    repo.write("cases/alpha.yaml", case_text("alpha").replace("value: 2.4", "value: 9.9"))
    for release, expected, version in (("1.0.0", 2.4, 1), (None, 9.9, None)):
        argv = ["results", "alpha", "Troponin", "--root", root, "--format", "json"]
        assert main([*argv, *(["--release", release] if release else [])]) == 0
        payload = json.loads(capsys.readouterr().out)
        assert payload["version"] == version
        assert payload["answers"][0]["result"]["value"] == expected
    assert main(["view", "alpha", "--role", "patient", "--release", "9.9.9", "--root", root]) == 1
