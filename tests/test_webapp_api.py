"""The Mini App's HTTP API against the real bot, the emulator and redis-server."""

from __future__ import annotations

import json
import time
from typing import Any
from urllib.parse import parse_qsl, urlencode

import aiohttp
import pytest
from support.harness import pressable
from support.webapp import (
    ANN,
    BOB,
    CAROL,
    GROUP,
    AppClient,
    free_port,
    hand_if,
    init_data,
    latest_hand,
    moves_through_app,
    seat_people,
    start_game,
    webapp_settings,
)

from bot.wiring import miniapp as wiring
from bot.wiring.application import games_of
from engine import view
from locales import translator

pytestmark = pytest.mark.filterwarnings("ignore:Deprecated since version v22.2")


def legal_of(table: Any, seat: int) -> list[str]:
    return [str(a) for a in view(table.engine_state(), seat).legal_actions]


async def test_state_is_the_seat_view_and_nothing_more(make_harness: Any) -> None:
    async with make_harness(**webapp_settings()) as h, aiohttp.ClientSession() as http:
        await h.start_bot()
        await seat_people(h, ANN, BOB)
        gid = await start_game(h, [ANN, BOB])
        table = await h.table(GROUP)
        ann = AppClient(http, h.settings.webapp_port, ANN)
        status, state = await ann.state(gid)
        assert status == 200
        v = view(table.engine_state(), 0)
        assert state["game"] == gid and state["seat"] == 0 and state["step"] == v.step
        assert state["hand"] == [str(c) for c in v.hand]
        assert state["legal"] == legal_of(table, 0)
        assert state["trump"] == str(v.trump_card) and state["stock"] == v.stock_count
        assert [p["cards"] for p in state["players"]] == list(v.hand_sizes)
        assert {p["role"] for p in state["players"]} == {"attacker", "defender"}
        assert state["waiting"] == [
            {"seat": s, "name": ["Ann", "Bob"][s]} for s in sorted(v.waiting_for)
        ]
        # Bob's cards appear nowhere in Ann's state.
        bob_cards = {str(c) for c in view(table.engine_state(), 1).hand}
        assert not bob_cards & set(json.dumps(state, ensure_ascii=False).split('"'))
        status, bob_state = await AppClient(http, h.settings.webapp_port, BOB).state(gid)
        assert status == 200 and set(bob_state["hand"]) == bob_cards


async def test_auth_codes(make_harness: Any) -> None:
    async with make_harness(**webapp_settings()) as h, aiohttp.ClientSession() as http:
        await h.start_bot()
        await seat_people(h, ANN, BOB)
        h.emu.add_user(CAROL, "Carol")
        gid = await start_game(h, [ANN, BOB])
        port = h.settings.webapp_port
        url = f"http://127.0.0.1:{port}/api/state"

        async def status_with(headers: dict[str, str]) -> int:
            async with http.get(url, params={"game": gid}, headers=headers) as r:
                return r.status

        good = init_data(ANN)
        fields = dict(parse_qsl(good))
        forged_hash = urlencode({**fields, "hash": "0" * 64})
        other_user = urlencode({**fields, "user": fields["user"].replace(str(ANN), str(BOB))})
        assert await status_with({"X-Telegram-Init-Data": good}) == 200
        assert await status_with({}) == 401
        assert await status_with({"X-Telegram-Init-Data": forged_hash}) == 401
        assert await status_with({"X-Telegram-Init-Data": other_user}) == 401
        wrong_token = init_data(ANN, token="5550001:another-bots-token")
        assert await status_with({"X-Telegram-Init-Data": wrong_token}) == 401
        expired = init_data(ANN, age=h.settings.webapp_auth_max_age + 5)
        assert await status_with({"X-Telegram-Init-Data": expired}) == 401
        assert await status_with({"X-Telegram-Init-Data": init_data(CAROL)}) == 403
        # Init data only in the header for state and moves; the query form is for events.
        async with http.get(url, params={"game": gid, "init_data": good}) as r:
            assert r.status == 401
        carol = AppClient(http, port, CAROL)
        assert (await carol.move(gid, "take"))[0] == 403
        assert (await carol.state("zzzzzz"))[0] == 404
        ann = AppClient(http, port, ANN)
        async with http.post(
            f"http://127.0.0.1:{port}/api/move", json={"game": gid, "action": "take"}
        ) as r:
            assert r.status == 401
        async with http.get(f"http://127.0.0.1:{port}/api/events", params={"game": gid}) as r:
            assert r.status == 401
        # No state change by GET, and a move is JSON only (no cross-site form posts).
        async with http.get(f"http://127.0.0.1:{port}/api/move", headers=ann.headers()) as r:
            assert r.status == 405
        async with http.post(
            f"http://127.0.0.1:{port}/api/move",
            data={"game": gid, "action": "take"},
            headers=ann.headers(),
        ) as r:
            assert r.status == 415
        status, _ = await ann.move(gid, "fly away")
        assert status == 400
        assert (await h.table(GROUP)).engine_state().step == 0


async def test_page_headers(make_harness: Any) -> None:
    async with make_harness(**webapp_settings()) as h, aiohttp.ClientSession() as http:
        await h.start_bot()
        base = f"http://127.0.0.1:{h.settings.webapp_port}"
        async with http.get(f"{base}/?game=abcdef") as r:
            page = await r.text()
            csp = r.headers["Content-Security-Policy"]
            assert r.status == 200 and "static/app.js" in page
        assert "default-src 'none'" in csp and "script-src 'self' https://telegram.org" in csp
        assert "'unsafe-inline'" not in csp and "frame-ancestors" in csp
        assert "https://telegram.org/js/telegram-web-app.js" in page
        async with http.get(f"{base}/static/app.js") as r:
            assert r.status == 200 and "initData" in await r.text()
        async with http.get(f"{base}/static/..%2Fserver.py") as r:
            assert r.status == 404


async def test_moves_through_the_app_and_the_keyboard_meet(make_harness: Any) -> None:
    async with make_harness(**webapp_settings()) as h, aiohttp.ClientSession() as http:
        await h.start_bot()
        await seat_people(h, ANN, BOB)
        gid = await start_game(h, [ANN, BOB])
        port = h.settings.webapp_port
        table = await h.table(GROUP)
        state = table.engine_state()
        mover = state.attacker
        user = [ANN, BOB][mover]
        other = [ANN, BOB][1 - mover]
        client = AppClient(http, port, user)
        async with client.events(gid) as stream:
            first = await stream.next()
            assert first["step"] == 0 and first["legal"] == legal_of(table, mover)
            # Not legal now: the attacker cannot take.
            status, body = await client.move(gid, "take")
            assert status == 409 and body["state"]["step"] == 0 and body["error"]
            action = legal_of(table, mover)[0]
            status, after = await client.move(gid, action)
            assert status == 200 and after["step"] == 1
            assert after["table"][0][0] == action.split()[1]
            seen = await stream.until(lambda s: s["step"] == 1)
            assert seen["table"] == after["table"]
            # The same card again, from the older state: a toast naming what changed.
            status, body = await client.move(gid, action, step=0)
            moved_on = translator("en").t("toast.moved_on", change="").split(":")[0]
            assert status == 409 and body["error"].startswith(moved_on)
            assert body["state"]["step"] == 1 and len(body["error"]) > len(moved_on) + 2
            # The defender answers from the inline keyboard; the app shows it live.
            await h.settle()
            buttons = pressable(h, other, 1)
            assert buttons, "the keyboard shows the new step"
            _step, mid, data = next(b for b in buttons if b[2].split(":")[4][0] in "tB")
            started = time.monotonic()
            handle = await h.emu.user_presses(other, other, mid, data=data)
            await handle.answer()
            seen = await stream.until(lambda s: s["step"] == 2)
            assert time.monotonic() - started < 1.0
        # The private hand carries the web_app button, the group the t.me link.
        await h.settle()
        hand = latest_hand(h, other)
        assert hand is not None, "the other player's hand was sent"
        web_apps = [
            b["web_app"]["url"] for row in hand.inline_keyboard for b in row if "web_app" in b
        ]
        assert web_apps == [f"http://127.0.0.1:{port}/?game={gid}"]
        group = h.group_message(GROUP, "Trump:")
        urls = [b.get("url") for row in group.buttons for b in row]
        assert f"https://t.me/durak_test_bot/table?startapp={gid}" in urls


async def test_two_processes_share_live_events(make_harness: Any) -> None:
    port_a, port_b = free_port(), free_port()
    async with make_harness(**webapp_settings(port_a)) as h, aiohttp.ClientSession() as http:
        await h.start_bot()
        await seat_people(h, ANN, BOB)
        gid = await start_game(h, [ANN, BOB])
        # Process B: same Redis, its own Mini App server, no polling.
        h.settings = h.settings.model_copy(update=webapp_settings(port_b))
        await h.start_bot_offline()
        await wiring.start(h.offline[-1].bot_data)
        assert games_of(h.offline[-1]) is not h.games
        table = await h.table(GROUP)
        mover = table.engine_state().attacker
        user, watcher = [ANN, BOB][mover], [ANN, BOB][1 - mover]
        latencies = []
        async with AppClient(http, port_b, watcher).events(gid) as stream:
            assert (await stream.next())["step"] == 0
            for _step in range(6):
                table = await h.table(GROUP)
                state = table.engine_state()
                seat = next(s for s in range(2) if legal_of(table, s))
                actions = legal_of(table, seat)
                action = next((a for a in actions if a != "take"), actions[0])
                started = time.monotonic()
                status, body = await AppClient(http, port_a, [ANN, BOB][seat]).move(gid, action)
                assert status == 200, body
                seen = await stream.until(lambda s, n=state.step: s["step"] > n)
                latencies.append(time.monotonic() - started)
                assert seen["step"] == body["step"]
                if body["phase"] != "playing":
                    break
        assert max(latencies) < 1.0
        assert user != watcher


async def test_hand_collapses_while_the_app_is_open(make_harness: Any) -> None:
    async with make_harness(**webapp_settings()) as h, aiohttp.ClientSession() as http:
        await h.start_bot()
        await seat_people(h, ANN)
        gid = await start_game(h, [ANN], ["Easy"])
        mini_app = h.bot.app.bot_data[wiring.WEBAPP_KEY]
        mini_app.presence.ttl = 2  # "closed for a while", shortened for the test
        ann = AppClient(http, h.settings.webapp_port, ANN)

        async with ann.events(gid) as stream:
            await stream.next()
            collapsed = await h.emu.wait_for(
                lambda: hand_if(h, ANN, collapsed=True), what="the collapsed hand"
            )
            # Only "Play here" (no step in it): no move button to keep up to date.
            assert [
                b["callback_data"].split(":")[3:]
                for row in collapsed.inline_keyboard
                for b in row
                if "callback_data" in b
            ] == [["0", "w"]]
            await h.settle()
            h.emu.reset_stats()
            moves = 0
            async for status, _ in moves_through_app(ann, gid, stream, 12):
                assert status in (200, 409)
                moves += status == 200
            await h.settle()
            assert moves > 0
            calls = h.emu.stats.chat_calls[ANN]
            assert calls == 0, h.emu.stats.chat_method_calls
        # The app closed: after a while the buttons come back.
        restored = await h.emu.wait_for(
            lambda: hand_if(h, ANN, collapsed=False),
            timeout=10,
            what="the restored hand",
        )
        assert any("callback_data" in b for row in restored.inline_keyboard for b in row) or (
            (await h.table(GROUP)).phase != "playing"
        )
