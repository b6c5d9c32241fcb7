"""The review in the Mini App: asked for from the finished game's result, its moments
shown on a small table as the player saw it then, and nothing hidden in what it sends."""

from __future__ import annotations

from pathlib import Path
from typing import Any

import aiohttp
import pytest
from playwright.async_api import Route
from support.browser import ARTIFACTS, browser
from support.webapp import init_data, webapp_settings
from test_ai_review import MISTAKE
from test_bot_review_e2e import ANN, GAME_ID, GROUP, fixed_deal, play_recorded_game
from test_webapp_page import app_url, open_app

from bot.domain.review import review_subject
from bot.webapp.server import TELEGRAM_JS
from engine import Card, apply, new_game

pytestmark = pytest.mark.filterwarnings("ignore:Deprecated since version v22.2")


def cards_in(data: Any) -> set[str]:
    """Every card the JSON names (``{"card": "10♥", ...}`` objects)."""
    if isinstance(data, dict):
        found = {data["card"]} if isinstance(data.get("card"), str) else set()
        return found.union(*(cards_in(v) for v in data.values()))
    if isinstance(data, list):
        return set().union(*(cards_in(v) for v in data))
    return set()


async def review_of(http: aiohttp.ClientSession, base: str, user: int) -> dict[str, Any]:
    headers = {"X-Telegram-Init-Data": init_data(user)}
    params = {"game": GAME_ID, "chat": str(GROUP)}
    async with http.get(f"{base}/api/review", params=params, headers=headers) as r:
        assert r.status == 200, await r.text()
        data: dict[str, Any] = await r.json()
        return data


async def test_the_app_asks_for_the_review_and_shows_only_the_players_view(
    make_harness: Any, monkeypatch: pytest.MonkeyPatch
) -> None:
    fixed_deal(monkeypatch)
    async with make_harness(throw_in_window=60.0, **webapp_settings()) as h:
        await h.start_bot()
        await play_recorded_game(h)
        base = h.settings.webapp_url
        assert base is not None
        async with aiohttp.ClientSession() as http:
            assert (await review_of(http, base, ANN))["status"] == "none"
            async with http.post(
                f"{base}/api/review",
                json={"game": GAME_ID},
                headers={"X-Telegram-Init-Data": init_data(ANN)},
            ) as r:
                assert r.status == 200 and (await r.json())["queued"] is True
            await h.emu.wait_for(
                lambda: any("review of your" in m.text for m in h.emu.messages(ANN)), 60
            )
            data = await review_of(http, base, ANN)
            message = next(m for m in h.emu.messages(ANN) if "review of your" in m.text)
            urls = [b["web_app"]["url"] for row in message.inline_keyboard for b in row]
            assert urls == [f"{base}/?game={GAME_ID}&review={GROUP}"]
            # A stranger to the game gets nothing.
            headers = {"X-Telegram-Init-Data": init_data(99)}
            params = {"game": GAME_ID, "chat": str(GROUP)}
            async with http.get(f"{base}/api/review", params=params, headers=headers) as r:
                assert r.status == 403
        assert data["status"] == "done"
        worst = data["moments"][0]
        assert worst["taken"] == "take" and worst["best"] == "beat 10♥ K♠"
        assert (worst["durak_best"], worst["durak_taken"]) == (0, 100)
        # The view then: Ann's hand, the table, the trump, the counts; none of Bob's cards
        # but those the table shows (replayed here from the true game).
        table = await h.table(GROUP)
        subject = review_subject(table)
        assert subject is not None
        record = subject.record
        state = new_game(record.rules, 2, deck=record.deck, dealer=0)
        for seat, action in record.actions[:MISTAKE]:
            state = apply(state, seat, action)
        ann, bob = ({str(c) for c in state.hand(s)} for s in (0, 1))
        on_table = {str(c) for pair in state.table for c in pair if c is not None}
        view = worst["view"]
        assert {c["card"] for c in view["hand"]} == ann
        assert cards_in(view) <= ann | on_table | {str(state.trump_card)}
        assert not (cards_in(data) & (bob - on_table - {str(state.trump_card)}))
        assert [p["cards"] for p in view["players"]] == [len(ann), len(bob)]
        assert set(view) == {"hand", "table", "trump", "stock", "discard", "players"}


async def test_the_reviewed_moment_at_phone_width(
    make_harness: Any, monkeypatch: pytest.MonkeyPatch, tmp_path: Path
) -> None:
    fixed_deal(monkeypatch)
    async with make_harness(throw_in_window=60.0, **webapp_settings()) as h:
        await h.start_bot()
        await play_recorded_game(h)
        async with browser(tmp_path / "profile") as context:

            async def offline(route: Route) -> None:
                await route.abort("internetdisconnected")

            await context.route(TELEGRAM_JS, offline)
            page = await open_app(context, app_url(h, GAME_ID, ANN))
            await page.wait_for_selector("body[data-phase='finished']")
            ask = page.locator("#review-ask")
            await ask.wait_for(state="visible")
            assert await ask.text_content() == "🔍 Review"
            await ask.click()
            await page.wait_for_selector("body[data-review='ready']", timeout=60_000)
            line = await page.locator("#review-line").text_content()
            assert line is not None and "you took 10♥" in line and "K♠" in line
            assert await page.locator("#review-best").text_content() == "0%"
            assert await page.locator("#review-taken").text_content() == "100%"
            assert await page.locator("#review-hand .rv-card.best").count() == 1
            best = page.locator("#review-hand .rv-card.best")
            assert await best.get_attribute("data-card") == str(Card.parse("K♠"))
            width = await page.evaluate("document.documentElement.scrollWidth")
            assert width <= 390, width
            ARTIFACTS.mkdir(exist_ok=True)
            await page.screenshot(path=str(ARTIFACTS / "webapp-review-390.png"), full_page=True)
            # The chat's button opens the same moments directly.
            direct = await open_app(
                context,
                app_url(h, GAME_ID, ANN).replace(
                    f"?game={GAME_ID}", f"?game={GAME_ID}&review={GROUP}"
                ),
            )
            await direct.wait_for_selector("body[data-review='ready']")
            assert await direct.locator("#review-tabs button").count() >= 1
