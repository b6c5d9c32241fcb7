"""The Mini App's rating chart API (``GET /api/rating``) against the real bot, the emulator
and redis-server: the asker's own history only, authenticated like every other endpoint."""

from __future__ import annotations

from typing import Any

import aiohttp
import pytest
from support.harness import play_out
from support.webapp import ANN, BOB, GROUP, init_data, seat_people, start_game, webapp_settings

pytestmark = pytest.mark.filterwarnings("ignore:Deprecated since version v22.2")


async def get_rating(
    http: aiohttp.ClientSession, port: int, headers: dict[str, str]
) -> tuple[int, Any]:
    async with http.get(f"http://127.0.0.1:{port}/api/rating", headers=headers) as response:
        return response.status, await response.json()


async def test_rating_history_is_the_askers_own(make_harness: Any) -> None:
    async with make_harness(**webapp_settings()) as h, aiohttp.ClientSession() as http:
        await h.start_bot()
        await seat_people(h, ANN, BOB)
        port = h.settings.webapp_port
        await start_game(h, [ANN], ["Easy"])
        await play_out(h, GROUP, [ANN])
        await h.settle()
        [entry] = await h.games.storage.rating_history(ANN, 10)

        # The finished hand is the result: no table to open any more, only its review.
        result = [m for m in h.emu.messages(ANN) if m.from_bot and "🏁" in m.text][-1]
        ops = [b["callback_data"].rsplit(":", 1)[1] for row in result.inline_keyboard for b in row]
        assert ops == ["v"] and "📈 Rating 930 → " in result.text

        status, body = await get_rating(http, port, {"X-Telegram-Init-Data": init_data(ANN)})
        assert status == 200
        assert body["lang"] == "en" and body["texts"]["title"] == "Your rating"
        [point] = body["points"]
        assert (point["before"], point["after"]) == (entry.overall_before, entry.overall_after)
        assert point["season"] == entry.season and point["at"] == entry.finished_at
        assert set(point) == {"at", "season", "season_name", "before", "after"}  # no group ids
        current = body["current"]
        assert current["rating"] == entry.overall_after and current["games"] == "1 game"
        delta = entry.overall_after - entry.overall_before
        assert current["last"] == f"last game {'+' if delta > 0 else '−'}{abs(delta)}"

        # In the asker's language.
        german = {"X-Telegram-Init-Data": init_data(ANN, lang="de")}
        status, body = await get_rating(http, port, german)
        assert status == 200 and body["texts"]["title"] == "Deine Wertung"
        assert body["current"]["games"] == "1 Spiel"

        # Someone else sees their own (empty) history, never Ann's.
        status, body = await get_rating(http, port, {"X-Telegram-Init-Data": init_data(BOB)})
        assert status == 200 and body["points"] == [] and body["current"] is None
        assert body["texts"]["empty"].startswith("No rated games yet")

        # Like every endpoint: no valid init data, no answer.
        for headers in ({}, {"X-Telegram-Init-Data": init_data(ANN, token="1:forged")}):
            status, body = await get_rating(http, port, headers)
            assert status == 401 and "init data" in body["error"]

        # The page itself, and the way there: a button under /stats in private.
        async with http.get(f"http://127.0.0.1:{port}/rating") as response:
            assert response.status == 200
            assert "static/rating.js" in await response.text()
            assert "default-src 'none'" in response.headers["Content-Security-Policy"]
        await h.emu.user_sends(ANN, ANN, "/stats")
        stats = await h.wait_text(ANN, "Your games: 1")
        [[button]] = [row for row in stats.inline_keyboard]
        assert button["text"] == "📈 Rating chart"
        assert button["web_app"]["url"] == f"{h.settings.webapp_url}/rating"
