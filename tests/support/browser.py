"""A headless system Chromium driven by Playwright, on a thread of its own so that the test's gevent hub
(consumers, the web view's server) keeps running while the browser waits.

Playwright drives Debian's ``chromium`` through its executable path: nothing is downloaded. Without it the
tests skip, unless ``ZKAFKA_REQUIRE_BROWSER=1`` (set by scripts/test.sh, which installs it) makes that a
failure.
"""

from __future__ import annotations

import os
import shutil
from collections.abc import Callable, Iterator
from typing import Any

import gevent.threadpool
import pytest

CHROMIUM = os.environ.get("ZKAFKA_CHROMIUM", "/usr/bin/chromium")
ARGS = [
    "--headless",
    "--no-sandbox",
    "--disable-gpu",
    "--disable-background-networking",
    "--disable-component-update",
    "--disable-sync",
    "--no-first-run",
]


def require_browser() -> None:
    missing = None
    if not (os.path.exists(CHROMIUM) or shutil.which(CHROMIUM)):
        missing = f"no Chromium at {CHROMIUM} (apt-get install chromium)"
    else:
        try:
            import playwright.sync_api  # noqa: F401
        except ImportError:
            missing = "the playwright package is not installed (pip install -e '.[test]')"
    if missing:
        if os.environ.get("ZKAFKA_REQUIRE_BROWSER") == "1":
            pytest.fail(missing)
        pytest.skip(missing)


class Browser:
    """One page of a headless Chromium; ``run(fn)`` calls ``fn(page)`` on the browser's thread and waits
    for it cooperatively."""

    def __init__(self) -> None:
        self._pool = gevent.threadpool.ThreadPool(1)
        self._playwright: Any = None
        self._browser: Any = None
        self.page: Any = None
        self._pool.apply(self._open)

    def _open(self) -> None:
        from playwright.sync_api import sync_playwright

        self._playwright = sync_playwright().start()
        self._browser = self._playwright.chromium.launch(executable_path=CHROMIUM, args=ARGS)
        self.page = self._browser.new_page(viewport={"width": 1400, "height": 1000})

    def run(self, fn: Callable[[Any], Any]) -> Any:
        return self._pool.apply(fn, (self.page,))

    def close(self) -> None:
        def shut() -> None:
            if self._browser is not None:
                self._browser.close()
            if self._playwright is not None:
                self._playwright.stop()

        try:
            self._pool.apply(shut)
        finally:
            self._pool.kill()


@pytest.fixture
def browser() -> Iterator[Browser]:
    require_browser()
    b = Browser()
    try:
        yield b
    finally:
        b.close()
