"""Headless Chromium for the sandbox tests (Debian's binary, driven by Playwright)."""

from __future__ import annotations

import contextlib
from collections.abc import AsyncIterator
from pathlib import Path

from playwright.async_api import BrowserContext, Page, async_playwright

CHROMIUM = "/usr/bin/chromium"
CHROMIUM_ARGS = [
    "--headless",
    "--no-sandbox",
    "--disable-gpu",
    "--disable-quic",
    "--no-first-run",
    "--disable-background-networking",
    "--disable-component-update",
    "--disable-sync",
]
# Screenshots (git-ignored).
ARTIFACTS = Path(__file__).resolve().parents[2] / "test-artifacts"


@contextlib.asynccontextmanager
async def browser(user_data_dir: Path) -> AsyncIterator[BrowserContext]:
    """Debian's Chromium, headless, with a fresh profile."""
    async with async_playwright() as pw:
        context = await pw.chromium.launch_persistent_context(
            str(user_data_dir),
            executable_path=CHROMIUM,
            args=CHROMIUM_ARGS,
            headless=True,
            viewport={"width": 1280, "height": 860},
        )
        try:
            yield context
        finally:
            await context.close()


async def join(page: Page, url: str, name: str, language: str = "en") -> None:
    """Open the sandbox in a tab and join as a new person."""
    await page.goto(url)
    await page.fill("#join-name", name)
    await page.select_option("#join-language", language)
    await page.click("#join-form button[type=submit]")
    await page.wait_for_selector("body[data-ready='1']")
