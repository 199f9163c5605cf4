"""The system's Chromium under Playwright, and a local web server for a built site.

Shared by the browser tests and the screenshot script. Playwright never downloads a browser
here: it is always launched with ``executable_path`` (CASEBANK_CHROMIUM, or `chromium` on PATH).
"""

from __future__ import annotations

import os
import shutil
import threading
from collections.abc import Iterator
from contextlib import contextmanager
from functools import partial
from http.server import SimpleHTTPRequestHandler, ThreadingHTTPServer
from pathlib import Path
from typing import TYPE_CHECKING, Any

if TYPE_CHECKING:
    from playwright.sync_api import Browser, Playwright

CHROMIUM_VARIABLE = "CASEBANK_CHROMIUM"
AXE_VARIABLE = "CASEBANK_AXE"
NO_CHROMIUM = (
    f"no Chromium found: install the system package (`apt-get install chromium`) or set "
    f"{CHROMIUM_VARIABLE} to its path; Playwright is never allowed to download one"
)
NO_PLAYWRIGHT = "Playwright is not installed: `pip install playwright` (nox -s browser does)"
NO_AXE = (
    f"axe-core not found: set {AXE_VARIABLE} to axe.min.js from the npm package axe-core "
    "(nox -s browser installs it)"
)


def chromium_path() -> str | None:
    """The Chromium to drive: CASEBANK_CHROMIUM if set, else `chromium` on PATH."""
    explicit = os.environ.get(CHROMIUM_VARIABLE)
    if explicit:
        return explicit if Path(explicit).is_file() else None
    return shutil.which("chromium") or shutil.which("chromium-browser")


def axe_path() -> Path | None:
    explicit = os.environ.get(AXE_VARIABLE)
    return Path(explicit) if explicit and Path(explicit).is_file() else None


def launch(playwright: Playwright, executable: str) -> Browser:
    # Chromium refuses to start its sandbox as root (CI containers run as root).
    root = hasattr(os, "geteuid") and os.geteuid() == 0
    return playwright.chromium.launch(
        executable_path=executable, args=["--no-sandbox"] if root else []
    )


class _Quiet(SimpleHTTPRequestHandler):
    def log_message(self, format: str, *args: Any) -> None:
        pass


@contextmanager
def serve(folder: Path) -> Iterator[str]:
    """Serve ``folder`` on 127.0.0.1 (a free port) for the duration; yields the base URL."""
    server = ThreadingHTTPServer(("127.0.0.1", 0), partial(_Quiet, directory=str(folder)))
    thread = threading.Thread(target=server.serve_forever, daemon=True)
    thread.start()
    try:
        yield f"http://127.0.0.1:{server.server_port}/"
    finally:
        server.shutdown()
        server.server_close()
        thread.join()
