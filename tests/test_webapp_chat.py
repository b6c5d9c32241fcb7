"""Back from the Mini App to the chat: "Play here" or any private message brings the hand's
buttons back at once, and the open app stops collapsing it until it is opened again."""

from __future__ import annotations

from typing import Any

import aiohttp
import pytest
from support.webapp import (
    ANN,
    GROUP,
    AppClient,
    hand_if,
    latest_hand,
    moves_through_app,
    seat_people,
    start_game,
    webapp_settings,
)

from bot.domain.place import Place
from bot.render.labels import too_wide
from bot.store.presence import open_key
from bot.wiring import miniapp as wiring
from locales import SUPPORTED, translator, visible_text

pytestmark = pytest.mark.filterwarnings("ignore:Deprecated since version v22.2")


def labels(message: Any) -> list[list[str]]:
    return [[b["text"] for b in row] for row in message.inline_keyboard]


def move_buttons(message: Any) -> list[str]:
    """Callback data of the hand's move buttons (attack, beat, take, pass, transfer, swap)."""
    data = [b.get("callback_data", "") for row in message.inline_keyboard for b in row]
    return [d for d in data if d.startswith("h:") and d.split(":")[4][0] in "aBtprsb"]


async def test_play_here_and_a_message_bring_the_buttons_back(make_harness: Any) -> None:
    async with make_harness(**webapp_settings()) as h, aiohttp.ClientSession() as http:
        await h.start_bot()
        await seat_people(h, ANN)
        gid = await start_game(h, [ANN], ["Easy"])
        mini_app = h.bot.app.bot_data[wiring.WEBAPP_KEY]
        # The stream keeps its mark every second: a revival would show within the test.
        mini_app.presence.ttl = 3
        ann = AppClient(http, h.settings.webapp_port, ANN)

        def hand() -> Any:
            return latest_hand(h, ANN)

        def collapsed() -> Any:
            return hand_if(h, ANN, collapsed=True)

        def full() -> Any:
            return hand_if(h, ANN, collapsed=False)

        async with ann.events(gid) as stream:
            await stream.next()
            message = await h.emu.wait_for(collapsed, what="the collapsed hand")
            assert labels(message) == [["🃏 Open table", "⌨️ Play here"]]
            assert move_buttons(message) == []
            await h.emu.user_presses(ANN, ANN, message.message_id, text="⌨️ Play here")
            message = await h.emu.wait_for(full, what="the hand's buttons after Play here")
            assert await h.redis.exists(open_key(Place(GROUP), ANN)) == 0
            # The app stays open: its stream may not collapse the hand again, and moves made
            # in it now show on the hand message too.
            async for status, after in moves_through_app(ann, gid, stream, 6):
                if status == 200:
                    await stream.until(lambda s, n=after["step"]: s["step"] >= n)
                    await h.settle()
                    assert full() is not None, hand().text
            assert await h.redis.exists(open_key(Place(GROUP), ANN)) == 0
            if (await h.table(GROUP)).phase != "playing":
                return
            # Opening the app again collapses the hand again; a message in the private
            # chat (any text or command) brings the buttons back.
            async with ann.events(gid) as again:
                await again.next()
                await h.emu.wait_for(collapsed, what="collapsed again after reopening")
                await h.emu.user_sends(ANN, ANN, "hi")
                message = await h.emu.wait_for(full, what="the buttons after a message")
                # The full hand: its own buttons (at least Leave; moves when it is Ann's).
                data = [b.get("callback_data", "") for row in message.inline_keyboard for b in row]
                own = [d for d in data if d.startswith("h:") and not d.endswith(":w")]
                assert own or (await h.table(GROUP)).phase != "playing"
                assert await h.redis.exists(open_key(Place(GROUP), ANN)) == 0


async def test_a_collapsed_hand_costs_no_refresh_per_move(make_harness: Any) -> None:
    async with make_harness(**webapp_settings()) as h, aiohttp.ClientSession() as http:
        await h.start_bot()
        await seat_people(h, ANN)
        gid = await start_game(h, [ANN], ["Easy"])
        ann = AppClient(http, h.settings.webapp_port, ANN)
        box = h.games.box
        refreshed: list[int] = []
        refresh_hand = box.refresh_hand

        def counting(chat_id: int, user_id: int, *args: Any, **kwargs: Any) -> None:
            refreshed.append(user_id)
            refresh_hand(chat_id, user_id, *args, **kwargs)

        def hand() -> Any:
            return latest_hand(h, ANN)

        async with ann.events(gid) as stream:
            await stream.next()
            await h.emu.wait_for(lambda: hand_if(h, ANN, collapsed=True), what="the collapsed hand")
            await h.settle()
            shown = (hand().message_id, hand().text)
            box.refresh_hand = counting  # type: ignore[method-assign]
            moves = 0
            async for status, after in moves_through_app(ann, gid, stream, 8):
                if status == 200:
                    moves += 1
                    await stream.until(lambda s, n=after["step"]: s["step"] >= n)
            await h.settle()
            assert moves > 0
            # Neither Ann's moves nor the computer's refreshed her hand, nothing of it stays
            # owed (no other worker will redo it), and the message is as it was.
            assert ANN not in refreshed
            owed = await h.games.storage.owed_output(Place(GROUP))
            assert f"hand:{ANN}" not in owed.targets and ANN not in owed.notify
            assert (hand().message_id, hand().text) == shown


def test_collapsed_hand_labels_fit_in_every_language() -> None:
    from telegram import InlineKeyboardButton

    from bot.render.labels import pack

    for lang in SUPPORTED:
        tr = translator(lang)
        buttons = [
            InlineKeyboardButton(visible_text(str(tr.t(key))), callback_data="x")
            for key in ("app.open_table", "app.play_here")
        ]
        rows = pack(buttons, 2)
        assert len(rows) == 1, (lang, [b.text for b in buttons])
        assert too_wide(rows) == [], lang
        assert "⌨" in buttons[1].text and buttons[1].text.split()[-1] in str(
            tr.t("app.in_app", group="G")
        )
