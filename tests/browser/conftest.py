"""Browser test fixtures: Debian's Chromium driven by Playwright (async API, since the tests
run in pytest-asyncio's loop) against the real server from tests/conftest.py's ``app``."""

from __future__ import annotations

import os
from collections.abc import AsyncIterator
from pathlib import Path

import pytest
from playwright.async_api import Browser, async_playwright

CHROMIUM = Path(os.environ.get("CHROMIUM", "/usr/bin/chromium"))
CHROMIUM_FLAGS = ["--no-sandbox", "--disable-gpu", "--disable-background-networking"]
SCREENSHOTS = Path(__file__).resolve().parents[1] / "artifacts" / "screenshots"


@pytest.fixture
async def browser() -> AsyncIterator[Browser]:
    if not CHROMIUM.exists():
        # not a skip: `make test` and .ci/run install Debian's chromium
        pytest.fail(f"Chromium not found at {CHROMIUM}: run `make test` (it installs Debian's chromium)")
    async with async_playwright() as pw:
        launched = await pw.chromium.launch(executable_path=str(CHROMIUM), headless=True, args=CHROMIUM_FLAGS)
        try:
            yield launched
        finally:
            await launched.close()


_used: list[Path] = []


@pytest.fixture(scope="session")
def screenshots() -> Path:
    SCREENSHOTS.mkdir(parents=True, exist_ok=True)
    _used.append(SCREENSHOTS)
    return SCREENSHOTS


def pytest_terminal_summary(terminalreporter: pytest.TerminalReporter) -> None:
    # said at the end, where it is seen, rather than in captured output
    if _used:
        terminalreporter.write_line(f"browser screenshots: {SCREENSHOTS}")
