"""``durak-sandbox`` opens the bot's Mini App for the tab's user, signed like Telegram."""

from __future__ import annotations

import time
from pathlib import Path

from playwright.async_api import Route
from playwright.async_api import TimeoutError as PlaywrightTimeoutError
from support.browser import ARTIFACTS, browser, join
from test_sandbox import Sandbox, callback_data, computer, en, group_button, sandbox  # noqa: F401
from test_webapp_page import MY_TURN_OR_CHANGED, app_move, body

from bot.webapp.server import TELEGRAM_JS


async def test_the_sandbox_opens_the_mini_app(sandbox: Sandbox, tmp_path: Path) -> None:  # noqa: F811
    async with browser(tmp_path / "profile") as context:

        async def offline(route: Route) -> None:
            await route.abort("internetdisconnected")

        await context.route(TELEGRAM_JS, offline)
        page = context.pages[0] if context.pages else await context.new_page()
        await join(page, sandbox.url, "Ann")
        await page.click("#start-button")
        await page.fill("#pane-group input[name=text]", "/newgame")
        await page.press("#pane-group input[name=text]", "Enter")
        lobby = page.locator("#messages-group .msg[data-from=bot] >> nth=-1")
        await lobby.locator("button[data-callback]").first.wait_for()
        lobby_id = await lobby.get_attribute("data-id")
        selector = f'#messages-group .msg[data-id="{lobby_id}"]'
        datas = await callback_data(page, selector)
        await page.locator(
            f'{selector} button[data-callback="{group_button(datas, "ai_easy")}"]'
        ).click()
        await page.locator(selector).filter(has_text=computer("easy", 0)).wait_for()
        await page.locator(
            f'{selector} button[data-callback="{group_button(datas, "start")}"]'
        ).click()

        open_table = page.locator("#messages-private button.web-app").last
        await open_table.wait_for()
        assert await open_table.inner_text() == en("app.open_table")
        # The hand message is re-rendered as the computer plays: a click that lands while
        # its button is being replaced opens nothing, and a person would tap again.
        for attempt in range(3):
            try:
                async with context.expect_page(timeout=10_000) as opened:
                    await open_table.click()
                break
            except PlaywrightTimeoutError:
                if attempt == 2:
                    raise
        app = await opened.value
        await app.wait_for_selector("body[data-ready='1']", timeout=20_000)
        assert "#tgWebAppData=" in app.url
        assert await app.locator("#hand .card").count() == 6
        assert "Ann" in await app.locator("#me").inner_text()
        # While the app is open the private hand is one "Open table" button.
        collapsed = page.locator("#messages-private .msg[data-from=bot]").filter(
            has_text="playing in the app"
        )
        await collapsed.first.wait_for(timeout=20_000)
        step = int(await body(app, "step"))
        deadline = time.monotonic() + 60
        while int(await body(app, "step")) <= step + 1 and time.monotonic() < deadline:
            if not await app_move(app):
                await app.wait_for_function(MY_TURN_OR_CHANGED, arg=[await body(app, "step")])
        assert int(await body(app, "step")) > step + 1
        ARTIFACTS.mkdir(exist_ok=True)
        await app.screenshot(path=ARTIFACTS / "webapp-sandbox.png")
