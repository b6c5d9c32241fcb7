"""The Mini App page in headless Chromium (Debian's, via Playwright) against the real bot.

Telegram's telegram-web-app.js is replaced by our local stand-in (no network); it
reads the signed init data from the URL fragment, as the real one does.
"""

from __future__ import annotations

import asyncio
import itertools
import json
import time
from collections.abc import AsyncIterator
from pathlib import Path
from typing import Any
from urllib.parse import quote

import pytest
from playwright.async_api import BrowserContext, Page, Route
from playwright.async_api import TimeoutError as PlaywrightTimeoutError
from support.browser import ARTIFACTS, browser
from support.deals import fix_deals
from support.harness import Harness, play_out
from support.webapp import (
    ANN,
    BOB,
    GROUP,
    init_data,
    seat_people,
    start_game,
    webapp_settings,
)

from bot.app import ids as game_ids
from bot.domain import flow
from bot.domain.place import Place
from bot.webapp.server import TELEGRAM_JS
from engine import Attack, legal_actions

pytestmark = pytest.mark.filterwarnings("ignore:Deprecated since version v22.2")

DARK_THEME = {
    "bg_color": "#17212b",
    "text_color": "#f5f5f5",
    "hint_color": "#708499",
    "button_color": "#5288c1",
    "button_text_color": "#ffffff",
    "secondary_bg_color": "#232e3c",
}
LIGHT_THEME = {
    "bg_color": "#ffffff",
    "text_color": "#000000",
    "hint_color": "#999999",
    "button_color": "#3390ec",
    "button_text_color": "#ffffff",
    "secondary_bg_color": "#f4f4f5",
}


def app_url(h: Harness, gid: str, user: int, *, dark: bool = False) -> str:
    fragment = "&".join(
        (
            f"tgWebAppData={quote(init_data(user))}",
            f"tgWebAppThemeParams={quote(json.dumps(DARK_THEME if dark else LIGHT_THEME))}",
            f"tgWebAppColorScheme={'dark' if dark else 'light'}",
        )
    )
    return f"{h.settings.webapp_url}/?game={gid}#{fragment}"


@pytest.fixture
async def context(tmp_path: Path) -> AsyncIterator[BrowserContext]:
    async with browser(tmp_path / "profile") as ctx:
        # No network, as in the sandbox: telegram-web-app.js fails to load and the
        # page's local stand-in takes over.
        async def offline(route: Route) -> None:
            await route.abort("internetdisconnected")

        await ctx.route(TELEGRAM_JS, offline)
        yield ctx


async def open_app(context: BrowserContext, url: str, width: int = 390) -> Page:
    page = await context.new_page()
    errors: list[str] = []
    page.on("pageerror", lambda err: errors.append(str(err)))
    page.on(
        "console",
        lambda msg: errors.append(msg.text) if msg.type == "error" and "CSP" in msg.text else None,
    )
    await page.set_viewport_size({"width": width, "height": 844 if width < 600 else 860})
    await page.goto(url)
    await page.wait_for_selector("body[data-ready='1']")
    page.set_default_timeout(15_000)
    assert errors == [], errors
    return page


async def body(page: Page, key: str) -> str:
    return str(await page.evaluate(f"document.body.dataset.{key}"))


CHANGED = """([step]) => document.body.dataset.step !== step
    || document.body.dataset.phase !== 'playing'
    || document.querySelector('#hand .card.chosen') !== null
    || document.querySelector('#hand .card.selected') !== null"""
STEP_CHANGED = """([step]) => document.body.dataset.step !== step
    || document.body.dataset.phase !== 'playing'"""
MY_TURN_OR_CHANGED = """([step]) => document.body.dataset.step !== step
    || document.body.dataset.phase !== 'playing'
    || document.body.dataset.legal !== '0'"""


async def app_move(page: Page) -> bool:
    """Make one legal move by tapping like a person; False when nothing is ours to do."""
    for selector in (
        "#actions button[data-action='pass']",
        "#hand .card.playable",
        "#actions button[data-action='take']",
        "#actions button[data-action]",
    ):
        target = page.locator(selector)
        if await target.count():
            step = await body(page, "step")
            try:
                await target.first.click(timeout=2000)
            except PlaywrightTimeoutError:
                return False  # the state moved on under the finger (re-rendered)
            await page.wait_for_function(CHANGED, arg=[step])
            if await page.locator("#hand .card.chosen").count():
                # This card beats several table cards: tap the one to beat.
                await page.locator(".pair .card.target").first.click()
                await page.wait_for_function(STEP_CHANGED, arg=[step])
            elif await page.locator("#hand .card.selected").count():
                # This card may join others of its rank: play the selection as it is.
                await page.locator("#actions button.send-selection").click()
                await page.wait_for_function(STEP_CHANGED, arg=[step])
            return True
    return False


async def play_in_app(page: Page, *, max_moves: int = 400) -> int:
    """Tap through the game until the result shows; the number of moves made."""
    moves = 0
    for _ in range(max_moves * 3):
        if await body(page, "phase") != "playing":
            return moves
        if await app_move(page):
            moves += 1
            continue
        step = await body(page, "step")
        await page.wait_for_function(MY_TURN_OR_CHANGED, arg=[step])
    raise AssertionError("the game did not end")


async def test_full_game_in_the_app_against_computers(
    make_harness: Any, context: BrowserContext
) -> None:
    async with make_harness(**webapp_settings()) as h:
        await h.start_bot()
        await seat_people(h, ANN)
        gid = await start_game(h, [ANN], ["Easy", "Normal"])
        page = await open_app(context, app_url(h, gid, ANN))
        assert await page.locator("#hand .card").count() == 6
        assert await page.locator("#opponents .player").count() == 2  # the others
        assert "Ann" in await page.locator("#me").inner_text()
        trump_suit = (await h.table(GROUP)).engine_state().trump_card.suit.symbol
        hand = await page.locator("#hand .card").evaluate_all("cs => cs.map(c => c.dataset.card)")
        trumps = [c.endswith(trump_suit) for c in hand]
        assert trumps == sorted(trumps), "trumps last"
        marked = await page.locator("#hand .card.trump").count()
        assert marked == sum(trumps)
        moves = await play_in_app(page)
        assert moves > 0
        await page.wait_for_selector("#result:not([hidden])")
        result = await page.locator("#result").inner_text()
        table = await h.table(GROUP)
        assert table.phase == "finished" and "Game over" in result
        calls = await page.evaluate("window.__tgCalls")
        assert "ready" in calls and any(c.startswith("impact:") for c in calls)
        ARTIFACTS.mkdir(exist_ok=True)
        await page.screenshot(path=ARTIFACTS / "webapp-result-390.png", full_page=True)
        # Rematch: a new lobby in the group; its creator starts it from the app.
        await page.click("#rematch")
        await page.wait_for_selector("body[data-phase='lobby'] #start:not([hidden])")
        await page.click("#start")
        await page.wait_for_selector("body[data-phase='playing']")
        new = await h.table(GROUP)
        assert new.phase == "playing" and new.game_id != gid
        assert f"game={new.game_id}" in page.url


async def test_one_player_in_the_app_one_on_the_keyboard(
    make_harness: Any, context: BrowserContext
) -> None:
    async with make_harness(**webapp_settings()) as h:
        await h.start_bot()
        await seat_people(h, ANN, BOB)
        gid = await start_game(h, [ANN, BOB])
        page = await open_app(context, app_url(h, gid, ANN))
        keyboard = asyncio.create_task(play_out(h, GROUP, [BOB], timeout=30))
        app_moves = await play_in_app(page)
        result = await asyncio.wait_for(keyboard, 30)
        assert "Game over" in result.text
        assert app_moves > 0
        await page.wait_for_selector("#result:not([hidden])")
        # Bob's presses reached Ann's screen live: her log names his moves.
        table = await h.table(GROUP)
        assert table.phase == "finished"
        log = await page.locator("#log").inner_text()
        assert "Bob" in log


async def test_the_app_survives_a_bot_restart(make_harness: Any, context: BrowserContext) -> None:
    async with make_harness(**webapp_settings()) as h:
        await h.start_bot()
        await seat_people(h, ANN)
        gid = await start_game(h, [ANN], ["Easy"])
        page = await open_app(context, app_url(h, gid, ANN))
        for _ in range(2):
            while not await app_move(page):
                await page.wait_for_function(MY_TURN_OR_CHANGED, arg=[await body(page, "step")])
        before = (await h.table(GROUP)).engine_state().step
        await h.kill_bot()
        await page.wait_for_selector("#banner:not([hidden])")
        await h.start_bot()
        await page.wait_for_selector("#banner", state="hidden")
        started = time.monotonic()
        while not await app_move(page):
            await page.wait_for_function(MY_TURN_OR_CHANGED, arg=[await body(page, "step")])
        assert (await h.table(GROUP)).engine_state().step > before
        assert time.monotonic() - started < 30


async def test_screenshots_phone_and_desktop_light_and_dark(
    make_harness: Any, context: BrowserContext
) -> None:
    async with make_harness(**webapp_settings()) as h:
        await h.start_bot()
        await seat_people(h, ANN)
        gid = await start_game(h, [ANN], ["Easy", "Hard"])
        page = await open_app(context, app_url(h, gid, ANN))
        # Play until cards lie on the table, so the screenshot shows a bout.
        for _ in range(60):
            if await page.locator(".pair").count() and await body(page, "legal") != "0":
                break
            if not await app_move(page):
                await page.wait_for_function(MY_TURN_OR_CHANGED, arg=[await body(page, "step")])
        ARTIFACTS.mkdir(exist_ok=True)
        shots = []
        for dark in (False, True):
            for width in (390, 1280):
                view = await open_app(context, app_url(h, gid, ANN, dark=dark), width)
                scheme = await view.evaluate("document.documentElement.dataset.scheme")
                assert scheme == ("dark" if dark else "light")
                background = await view.evaluate("getComputedStyle(document.body).backgroundColor")
                assert background == ("rgb(23, 33, 43)" if dark else "rgb(255, 255, 255)")
                path = ARTIFACTS / f"webapp-{width}-{'dark' if dark else 'light'}.png"
                await view.screenshot(path=path, full_page=True)
                shots.append(path)
                await view.close()
        assert all(p.stat().st_size > 10_000 for p in shots)


def leading_pair_game_id(computers: int) -> tuple[str, tuple[str, ...]]:
    """A game id (found the same way every run) whose deal lets Ann, seat 0, lead with
    several cards at a table of Ann and ``computers`` computer seats; and those cards."""
    moment = flow.Moment(0.0, flow.Timing(turn_timeout=60.0, ai_delay=1.0, notify_quiet=0.0))
    for n in itertools.count():
        gid = f"mp{n:04d}"
        game, _ = flow.new_lobby(
            None, moment, Place(GROUP), "Card Club", flow.Person(ANN, "Ann"), gid
        )
        for _ in range(computers):
            game, _ = flow.add_ai(game, moment, gid, ANN, "easy", "Easy")
        game, _ = flow.start(game, moment, gid, ANN, [])
        state = game.engine_state()
        pairs = [a for a in legal_actions(state, 0) if isinstance(a, Attack) and len(a.cards) == 2]
        if state.attacker == 0 and pairs:
            return gid, tuple(str(c) for c in pairs[0].cards)
    raise AssertionError  # pragma: no cover


async def test_several_cards_are_selected_then_played_with_one_button(
    make_harness: Any, context: BrowserContext, monkeypatch: pytest.MonkeyPatch
) -> None:
    gid, pair = leading_pair_game_id(2)
    monkeypatch.setattr(game_ids, "new_game_id", lambda: gid)
    fix_deals(monkeypatch)  # the bot deals from the game id, as the search above did
    async with make_harness(**webapp_settings()) as h:
        await h.start_bot()
        await seat_people(h, ANN)
        assert await start_game(h, [ANN], ["Easy", "Easy"]) == gid
        page = await open_app(context, app_url(h, gid, ANN))
        # No button per combination: attacks are made by tapping cards.
        assert await page.locator("#actions button[data-action^='attack']").count() == 0
        assert await page.locator("#opponents .player.waiting").count() == 0  # Ann leads
        await page.click(f"#hand .card[data-card='{pair[0]}']")
        play = page.locator("#actions button.send-selection")
        await play.wait_for()
        assert await play.inner_text() == f"Attack with {pair[0]}"
        await page.click(f"#hand .card[data-card='{pair[1]}']")
        await page.locator("#actions button.send-selection", has_text=" ".join(pair)).wait_for()
        assert await page.locator("#hand .card.selected").count() == 2
        assert await page.locator("#actions button[data-action^='attack']").count() == 1
        ARTIFACTS.mkdir(exist_ok=True)
        await page.screenshot(path=ARTIFACTS / "webapp-multi-attack-390.png", full_page=True)
        step = await body(page, "step")
        await play.click()
        await page.wait_for_function(STEP_CHANGED, arg=[step])
        await page.locator(".pair").nth(1).wait_for()
        assert await page.locator("#hand .card.selected").count() == 0
        # The game waits on one seat at most (the defender, or Ann to throw in): never on
        # every opponent at once.
        assert await page.locator("#opponents .player.waiting").count() <= 1
