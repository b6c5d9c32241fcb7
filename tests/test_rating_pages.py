"""Ratings in the browser at phone width (Debian's headless Chromium via Playwright): /top
as the sandbox page shows the real bot's reply, and the Mini App's rating chart.

Screenshots go to test-artifacts/ (``phone-390-top.png``, ``webapp-rating-chart-390.png``).
Both read ratings the store made from finished games (``test_store_ratings.game_end``:
games ended the way the bot ends them), not numbers written by hand."""

from __future__ import annotations

import json
import time
from collections.abc import AsyncIterator
from datetime import UTC, datetime
from pathlib import Path
from typing import Any
from urllib.parse import quote

import pytest
from playwright.async_api import BrowserContext, Page, Route
from pydantic import SecretStr
from redis.asyncio import Redis
from support.browser import ARTIFACTS, browser, join
from support.harness import Bot, FakeClock, bot_settings
from support.webapp import ANN, GROUP, init_data, seat_people, webapp_settings
from test_store_ratings import BOB, CY, DI, NAMES, game_end

from bot.domain.place import Place
from bot.store.storage import Storage
from bot.webapp.server import TELEGRAM_JS
from bot.wiring.application import build_application, games_of, start_services
from sandbox.main import build
from sandbox.web import FIRST_USER_ID, GROUP_ID

pytestmark = pytest.mark.filterwarnings("ignore:Deprecated since version v22.2")

OVERFLOWING_BUTTONS = """
() => [...document.querySelectorAll('button')]
  .filter(b => b.offsetParent !== null && b.scrollWidth > b.clientWidth)
  .map(b => b.innerText)
"""
LIGHT_THEME = {
    "bg_color": "#ffffff",
    "text_color": "#000000",
    "hint_color": "#999999",
    "button_color": "#3390ec",
    "button_text_color": "#ffffff",
    "secondary_bg_color": "#f4f4f5",
}


async def seed_games(
    storage: Storage, chat_id: int, players: list[int], games: int, at: float, prefix: str = "s"
) -> None:
    """``games`` finished games of ``players`` in the group, each with another finishing
    order (the first seat goes out first, the last is the durak), rated by the store."""
    for n in range(games):
        turn = n % len(players)
        seats = players[turn:] + players[:turn] if n % 3 else players[::-1]
        finished = tuple((s,) for s in range(len(seats) - 1))
        change = game_end(
            seats, finished, len(seats) - 1, chat_id=chat_id, game_id=f"{prefix}{n:05d}", at=at + n
        )
        await storage.update_table(Place(chat_id), change)


# ---------------------------------------------------------------------- /top in the sandbox


@pytest.fixture
async def sandbox_bot(real_redis: Redis) -> AsyncIterator[tuple[str, Storage]]:
    """The sandbox page and the real bot polling its emulator (one process, no network)."""
    emu, web, token = build(rate_limits=False)
    await emu.start()
    web.set_bot_status("running")
    settings = bot_settings(emu.url, telegram_bot_token=SecretStr(token))
    app = build_application(settings, real_redis, clock=FakeClock(), ai_processes=0)
    await app.initialize()
    await start_services(app, set_commands=False)
    await app.start()
    assert app.updater is not None
    await app.updater.start_polling(poll_interval=0.0, timeout=1)
    bot = Bot(app, games_of(app))
    try:
        yield f"{emu.url}/", bot.games.storage
    finally:
        await bot.stop()
        await emu.stop()


async def test_top_at_phone_width(
    sandbox_bot: tuple[str, Storage], tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    url, storage = sandbox_bot
    monkeypatch.setitem(NAMES, FIRST_USER_ID, "Ann")
    async with browser(tmp_path / "profile") as context:
        page = context.pages[0] if context.pages else await context.new_page()
        await page.set_viewport_size({"width": 390, "height": 844})
        await join(page, url, "Ann")
        # Four players of the group, eight games each this month: all listed (5 needed).
        players = [FIRST_USER_ID, BOB, CY, DI]
        await seed_games(storage, GROUP_ID, players, 8, time.time() - 600)
        await page.fill("#pane-group input[name=text]", "/top")
        await page.press("#pane-group input[name=text]", "Enter")
        top = page.locator("#messages-group .msg[data-from=bot]", has_text="Best players")
        await top.wait_for()
        text = await top.inner_text()
        rows = [line for line in text.splitlines() if line[:1].isdigit() and ". " in line]
        assert len(rows) == 4, text
        assert all("8 games" in row for row in rows)
        month = datetime.now(UTC).strftime("%B %Y")
        assert month in text
        assert "to be listed" in text  # fewer than ten: how to get on the list
        assert await top.locator("button", has_text="All groups").count() == 1
        assert await page.evaluate(OVERFLOWING_BUTTONS) == []
        box = await top.bounding_box()
        assert box is not None and box["x"] + box["width"] <= 390
        await top.scroll_into_view_if_needed()
        ARTIFACTS.mkdir(exist_ok=True)
        await page.screenshot(path=ARTIFACTS / "phone-390-top.png")


# ---------------------------------------------------------------------- the Mini App's chart


@pytest.fixture
async def context(tmp_path: Path) -> AsyncIterator[BrowserContext]:
    async with browser(tmp_path / "profile") as ctx:
        # No network: telegram-web-app.js fails to load, the page's local stand-in takes over.
        async def offline(route: Route) -> None:
            await route.abort("internetdisconnected")

        await ctx.route(TELEGRAM_JS, offline)
        yield ctx


def chart_url(base: str, user: int) -> str:
    fragment = "&".join(
        (
            f"tgWebAppData={quote(init_data(user))}",
            f"tgWebAppThemeParams={quote(json.dumps(LIGHT_THEME))}",
            "tgWebAppColorScheme=light",
        )
    )
    return f"{base}/rating#{fragment}"


async def open_chart(context: BrowserContext, url: str) -> tuple[Page, list[str]]:
    page = await context.new_page()
    errors: list[str] = []
    page.on("pageerror", lambda err: errors.append(str(err)))
    # Every console error but the deliberately unreachable telegram-web-app.js.
    page.on(
        "console",
        lambda msg: (
            errors.append(msg.text)
            if msg.type == "error" and "INTERNET_DISCONNECTED" not in msg.text
            else None
        ),
    )
    await page.set_viewport_size({"width": 390, "height": 844})
    await page.goto(url)
    await page.wait_for_selector("body[data-ready='1']")
    return page, errors


async def test_rating_chart_at_phone_width(make_harness: Any, context: BrowserContext) -> None:
    async with make_harness(**webapp_settings()) as h:
        await h.start_bot()
        await seat_people(h, ANN)
        storage = h.games.storage
        # Last month, then this month: two seasons, each starting afresh.
        now = time.time()
        this_month = datetime.now(UTC).replace(day=1, hour=0, minute=0, second=0)
        last_month = this_month.timestamp() - 5 * 24 * 3600
        await seed_games(storage, GROUP, [ANN, BOB, CY], 7, last_month, prefix="p")
        await seed_games(
            storage, GROUP, [ANN, BOB, CY], 12, min(now - 60, this_month.timestamp() + 3600)
        )
        history = await storage.rating_history(ANN, 100)
        assert len(history) == 19 and len({e.season for e in history}) == 2

        page, errors = await open_chart(context, chart_url(h.settings.webapp_url or "", ANN))
        assert await page.get_attribute("body", "data-points") == "19"
        assert await page.locator("#rating-chart svg path.line").count() == 2  # one per season
        assert await page.locator("#rating-chart svg .season").count() == 1
        assert await page.locator("#rating-chart svg circle.dot").count() == 19
        shown = await page.locator("#rating-value").inner_text()
        assert shown == f"{history[0].overall_after:,}"
        assert "12 games" in await page.locator("#rating-games").inner_text()
        width = await page.evaluate("document.documentElement.scrollWidth")
        assert width <= 390, width  # nothing wider than the phone
        chart = await page.locator("#rating-chart svg").bounding_box()
        assert chart is not None and chart["x"] >= 0 and chart["x"] + chart["width"] <= 390
        assert errors == [], errors
        ARTIFACTS.mkdir(exist_ok=True)
        await page.screenshot(path=ARTIFACTS / "webapp-rating-chart-390.png", full_page=True)

        # Someone without a rated game: the page says how to get one, no chart.
        page, errors = await open_chart(context, chart_url(h.settings.webapp_url or "", DI))
        assert await page.locator("#rating-empty").is_visible()
        assert await page.locator("#rating-chart svg").count() == 0 and errors == []
