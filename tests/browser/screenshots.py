"""Retake the README's screenshots of the site: `nox -s screenshots` (or run this file).

Builds the site of the working tree into a temporary folder, serves it locally, and saves
docs/img/site-index.png (the index) and docs/img/site-case.png (part of one case page),
1280 pixels wide. With Pillow installed the PNGs are reduced to a 256-colour palette, which
keeps text sharp at a third of the size.
"""

from __future__ import annotations

import argparse
import io
import sys
import tempfile
from pathlib import Path

HERE = Path(__file__).resolve().parent
REPOSITORY = HERE.parents[1]
sys.path.insert(0, str(HERE.parent))  # tests/, for the shared Chromium helpers

from chromium import NO_CHROMIUM, chromium_path, launch, serve  # noqa: E402

WIDTH = 1280
SHOTS = {  # file name -> (page, the element the picture starts at, its height)
    "site-index.png": ("index.html", "body", 1400),
    # The results over time, the closed examiner view, provenance and the history.
    "site-case.png": ("cases/chest_pain_001.html", "#series-heading", 1500),
}


def optimised(png: bytes) -> bytes:
    try:
        from PIL import Image
    except ImportError:
        print("Pillow is not installed: the screenshots are saved unoptimised", file=sys.stderr)
        return png
    image = Image.open(io.BytesIO(png)).convert("RGB")
    palette = image.quantize(colors=256, method=Image.Quantize.MEDIANCUT, dither=Image.Dither.NONE)
    out = io.BytesIO()
    palette.save(out, format="PNG", optimize=True)
    return out.getvalue()


def take(site: Path, target: Path) -> None:
    from playwright.sync_api import sync_playwright

    executable = chromium_path()
    if executable is None:
        raise SystemExit(NO_CHROMIUM)
    with serve(site) as url, sync_playwright() as playwright:
        browser = launch(playwright, executable)
        page = browser.new_page(viewport={"width": WIDTH, "height": 800})
        for name, (relative, start, height) in SHOTS.items():
            page.goto(url + relative, wait_until="networkidle")
            top = max(0, page.locator(start).evaluate("e => e.getBoundingClientRect().top") - 16)
            png = page.screenshot(
                clip={"x": 0, "y": top, "width": WIDTH, "height": height}, full_page=True
            )
            data = optimised(png)
            (target / name).write_bytes(data)
            print(f"wrote {target / name} ({len(data)} bytes)")
        browser.close()


def main() -> int:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--out", type=Path, default=REPOSITORY / "docs" / "img")
    args = parser.parse_args()
    from casebank.cli import main as casebank

    args.out.mkdir(parents=True, exist_ok=True)
    with tempfile.TemporaryDirectory() as folder:
        site = Path(folder) / "site"
        code = casebank(["site", "--root", str(REPOSITORY), "--out", str(site)])
        if code:
            return code
        take(site, args.out.resolve())
    return 0


if __name__ == "__main__":
    sys.exit(main())
