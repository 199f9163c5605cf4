"""The built site in a real headless Chromium (the system's, driven by Playwright).

Two sites are checked: a small released dataset built for the tests (two releases, a
withdrawal, a series, attachments, an unreleased edit) and the repository's own working tree.
Run by `nox -s browser`; where Chromium, Playwright or axe-core is missing, each test is
skipped with the reason (pytest prints it), never passed silently.
"""

from __future__ import annotations

import re
from collections.abc import Iterator
from dataclasses import dataclass
from pathlib import Path
from typing import Any
from urllib.parse import unquote, urlsplit

import pytest
import yaml

from casebank.cli import main
from chromium import NO_AXE, NO_CHROMIUM, NO_PLAYWRIGHT, axe_path, chromium_path, launch, serve
from gitrepo import isolate_git
from sitedata import DIAGNOSIS, TITLES, released_dataset

pytestmark = pytest.mark.browser

try:
    from playwright.sync_api import Browser, Page, expect, sync_playwright
except ImportError:  # pragma: no cover - depends on the environment
    pytest.skip(NO_PLAYWRIGHT, allow_module_level=True)

REPOSITORY = Path(__file__).resolve().parents[2]
SERIOUS = ("serious", "critical")


@dataclass(frozen=True)
class Site:
    name: str
    out: Path
    url: str  # the base URL it is served at, ending in /

    def pages(self) -> list[str]:
        return sorted(p.relative_to(self.out).as_posix() for p in self.out.rglob("*.html"))


@pytest.fixture(scope="session")
def browser() -> Iterator[Browser]:
    executable = chromium_path()
    if executable is None:
        pytest.skip(NO_CHROMIUM)
    with sync_playwright() as playwright:
        launched = launch(playwright, executable)
        yield launched
        launched.close()


def _built(out: Path, root: Path) -> Path:
    assert main(["site", "--root", str(root), "--out", str(out)]) == 0
    return out


@pytest.fixture(scope="session")
def sites(tmp_path_factory: pytest.TempPathFactory) -> Iterator[dict[str, Site]]:
    base = tmp_path_factory.mktemp("sites")
    with pytest.MonkeyPatch.context() as monkeypatch:
        isolate_git(monkeypatch, base / "home")
        repo = released_dataset(base / "repo")
        fixture = _built(base / "fixture-site", repo.root)
    dataset = _built(base / "dataset-site", REPOSITORY)
    with serve(fixture) as fixture_url, serve(dataset) as dataset_url:
        yield {
            "fixture": Site("fixture", fixture, fixture_url),
            "dataset": Site("dataset", dataset, dataset_url),
        }


@pytest.fixture(params=["fixture", "dataset"])
def site(request: pytest.FixtureRequest, sites: dict[str, Site]) -> Site:
    return sites[request.param]


@pytest.fixture
def page(browser: Browser) -> Iterator[Page]:
    context = browser.new_context(viewport={"width": 1280, "height": 900})
    yield context.new_page()
    context.close()


def test_every_page_loads_without_errors_or_requests_elsewhere(site: Site, page: Page) -> None:
    problems: list[str] = []
    page.on(
        "console",
        lambda m: (
            problems.append(f"console {m.type}: {m.text}")
            if m.type in ("error", "warning")
            else None
        ),
    )
    page.on("pageerror", lambda e: problems.append(f"script error: {e}"))
    page.on("requestfailed", lambda r: problems.append(f"failed: {r.url} ({r.failure})"))
    page.on(
        "request",
        lambda r: None if r.url.startswith(site.url) else problems.append(f"elsewhere: {r.url}"),
    )
    for relative in site.pages():
        response = page.goto(site.url + relative, wait_until="networkidle")
        assert response is not None and response.ok, relative
        assert page.evaluate("document.documentElement.lang") == "en", relative
        broken = page.evaluate(
            "Array.from(document.images).filter(i => !i.complete || !i.naturalWidth)"
            ".map(i => i.src)"
        )
        problems += [f"{relative}: image did not load: {src}" for src in broken]
        assert not problems, f"{relative}: {problems}"


_LINKS = """() => Array.from(
    document.querySelectorAll("a[href], link[href], script[src], img[src]"),
    e => e.href || e.src)"""


def test_every_link_resolves_to_a_file_of_the_site(site: Site, page: Page) -> None:
    checked = 0
    for relative in site.pages():
        page.goto(site.url + relative)
        for link in page.evaluate(_LINKS):
            assert link.startswith(site.url), f"{relative} links outside the site: {link}"
            parts = urlsplit(link)
            target = site.out / unquote(parts.path).removeprefix(urlsplit(site.url).path)
            assert target.is_file(), f"{relative}: {link} is not a file of the site"
            if parts.fragment:
                html = target.read_text(encoding="utf-8")
                assert f'id="{parts.fragment}"' in html, f"{relative}: no #{parts.fragment}"
            checked += 1
    assert checked > 10 * len(site.pages()) // 2  # the pages do link (the test can fail)


def _diagnosis(site: Site, case_id: str) -> str:
    if site.name == "fixture":
        return DIAGNOSIS
    data = yaml.safe_load((REPOSITORY / "cases" / f"{case_id}.yaml").read_text("utf-8"))
    return str(data["ground_truth"]["final_diagnosis"])


def test_the_examiner_view_is_closed_until_opened_by_keyboard_or_click(
    site: Site, page: Page
) -> None:
    case_id = "alpha" if site.name == "fixture" else "chest_pain_001"
    page.goto(f"{site.url}cases/{case_id}.html")
    details = page.locator("#examiner-details")
    diagnosis = details.get_by_text(_diagnosis(site, case_id), exact=True).first
    expect(details).not_to_have_attribute("open", re.compile(".*"))
    expect(diagnosis).to_be_hidden()
    summary = page.locator("#examiner-details > summary")
    for _ in range(400):  # reach it with Tab alone, as a keyboard user would
        page.keyboard.press("Tab")
        if summary.evaluate("s => s === document.activeElement"):
            break
    else:
        pytest.fail("the examiner view cannot be reached with the Tab key")
    page.keyboard.press("Enter")
    expect(diagnosis).to_be_visible()
    page.keyboard.press("Enter")
    expect(diagnosis).to_be_hidden()
    summary.click()
    expect(diagnosis).to_be_visible()


def test_every_case_page_hides_its_diagnosis_on_arrival(site: Site, page: Page) -> None:
    cases = [p for p in site.pages() if p.startswith("cases/")]
    assert cases
    for relative in cases:
        page.goto(site.url + relative)
        case_id = relative.removeprefix("cases/").removesuffix(".html")
        text = _diagnosis(site, case_id)
        assert not page.get_by_text(text, exact=True).first.is_visible(), relative
        assert text not in page.locator("#patient").inner_text(), relative


def test_search_finds_a_case_by_title_and_filters_combine(site: Site, page: Page) -> None:
    page.goto(site.url + "index.html")
    rows = page.locator("#case-table tbody tr")
    total = rows.count()
    title = TITLES["alpha"] if site.name == "fixture" else "Acute chest pain in a smoker"
    search = page.get_by_label("Search ids, titles, specialties and tags")
    expect(search).to_be_visible()  # the script shows the form
    search.fill(title.split(",")[0].upper())
    visible = page.locator("#case-table tbody tr:visible")
    expect(visible.get_by_role("link", name=title, exact=False).first).to_be_visible()
    shown = visible.count()
    assert 1 <= shown < total
    expect(page.locator("#case-count")).to_have_text(f"{shown} of {total} cases shown.")
    search.fill("zzz no such case")
    expect(page.locator("#no-match")).to_be_visible()
    page.get_by_role("button", name="Clear").click()
    expect(page.locator("#case-table tbody tr:visible")).to_have_count(total)
    page.get_by_label("Difficulty", exact=True).select_option("medium")
    for difficulty in page.locator("#case-table tbody tr:visible td:nth-child(3)").all():
        assert difficulty.inner_text() == "medium"


def test_search_finds_a_case_by_its_id(site: Site, page: Page) -> None:
    page.goto(site.url + "index.html")
    case_id = "alpha" if site.name == "fixture" else "chest_pain_001"
    page.get_by_label("Search ids, titles, specialties and tags").fill(case_id)
    visible = page.locator("#case-table tbody tr:visible")
    expect(visible).to_have_count(1)
    assert visible.first.get_attribute("data-case") == case_id


def _violations(page: Page, axe: Path) -> list[dict[str, Any]]:
    page.evaluate("document.querySelectorAll('details').forEach(d => { d.open = true; })")
    page.add_script_tag(path=str(axe))
    found: list[dict[str, Any]] = page.evaluate(
        "async () => (await axe.run(document, {resultTypes: ['violations']})).violations"
    )
    return [v for v in found if v.get("impact") in SERIOUS]


def test_axe_finds_no_serious_accessibility_violations(site: Site, browser: Browser) -> None:
    axe = axe_path()
    if axe is None:
        pytest.skip(NO_AXE)
    # The pages forbid inline scripts (Content-Security-Policy); axe is injected as one.
    context = browser.new_context(bypass_csp=True, viewport={"width": 1280, "height": 900})
    page = context.new_page()
    report = []
    for relative in site.pages():
        page.goto(site.url + relative)
        for v in _violations(page, axe):
            targets = ", ".join(str(n.get("target")) for n in v.get("nodes", [])[:3])
            report.append(f"{relative}: [{v['impact']}] {v['id']}: {v['help']} ({targets})")
    context.close()
    assert not report, "\n".join(report)
