"""Tidy-up end to end (the real PTB application, the emulator, Redis): when a game ends,
what it leaves in the group is its result and its table (and the deal's code it is checked
against); the bot's announcements go, and the /newgame command too when the bot may
delete messages; replies to commands go after ten minutes of the fake clock. With tidy-up
off nothing is deleted."""

from __future__ import annotations

from typing import Any

import pytest
from support.harness import TOKEN, Harness, open_lobby, press

from bot.app.tidy import REPLY_LIFETIME
from bot.domain.callbacks import encode_hand_op
from bot.domain.place import Place
from bot.domain.records import ChatSettings
from bot.store.keys import TIDY_KEY
from sandbox.emulator import EmuMessage

pytestmark = pytest.mark.filterwarnings("ignore:Deprecated since version v22.2")

GROUP = -100810
ANN, BOB = 51, 52
BOT_ID = int(TOKEN.split(":")[0])


def alive(h: Harness, message_id: int) -> bool:
    return h.emu.message(GROUP, message_id) is not None


def people_said(h: Harness, text: str) -> EmuMessage:
    return next(m for m in h.emu.messages(GROUP) if not m.from_bot and m.text == text)


async def short_game(h: Harness, *, bot_admin: bool, tidy: bool) -> dict[str, int]:
    """Ann opens a game with /newgame, asks /stats, Bob joins, it starts, and Ann leaves
    it (an announcement, then the result). The ids of what the group got."""
    h.emu.add_user(ANN, "Ann")
    h.emu.add_user(BOB, "Bob")
    admins = [BOT_ID] if bot_admin else []
    h.emu.add_group(GROUP, "Tidy Club", members=[ANN, BOB], admins=admins, creator=ANN)
    await h.start_bot()
    if not tidy:
        await h.games.storage.save_chat_settings(GROUP, ChatSettings(lang="en", tidy=False))
    for uid in (ANN, BOB):
        await h.emu.user_starts_bot(uid)
        await h.wait_text(uid, "Hi!")
    lobby = await open_lobby(h, GROUP, ANN)
    await h.emu.user_sends(ANN, GROUP, "/stats")
    stats = await h.wait_text(GROUP, "No games played here yet")
    await press(h, BOB, GROUP, lobby.message_id, text="Join")
    await h.wait_text(GROUP, "2. Bob")
    await press(h, ANN, GROUP, lobby.message_id, text="Start")
    await h.wait_text(GROUP, "Trump:")
    await h.settle()
    table = await h.table(GROUP)
    step = table.engine_state().step
    leave = encode_hand_op(Place(GROUP), table.game_id, step, "leave_yes")
    hand = h.emu.last_message(ANN)
    assert hand is not None
    handle = await h.emu.user_sends_callback(ANN, ANN, hand.message_id, leave)
    await handle.answer()
    left = await h.wait_text(GROUP, "Ann left the game")
    result = await h.wait_text(GROUP, "Game over")
    code = next(m for m in h.emu.messages(GROUP) if m.from_bot and "Deal code" in m.text)
    return {
        "command": people_said(h, "/newgame").message_id,
        "stats_command": people_said(h, "/stats").message_id,
        "stats": stats.message_id,
        "table": lobby.message_id,
        "left": left.message_id,
        "result": result.message_id,
        "code": code.message_id,
    }


async def test_a_game_leaves_its_result_and_table_and_replies_go_later(
    make_harness: Any,
) -> None:
    async with make_harness() as h:
        ids = await short_game(h, bot_admin=True, tidy=True)
        # The announcement and the command that opened the game go once it ends.
        await h.emu.wait_for(
            lambda: not alive(h, ids["left"]) and not alive(h, ids["command"]), 10, what="tidy"
        )
        for kept in ("table", "result", "code", "stats", "stats_command"):
            assert alive(h, ids[kept]), kept  # a person's /stats is not the game's
        assert "final table" in h.emu.message(GROUP, ids["table"]).text  # type: ignore[union-attr]
        # The reply to /stats stays ten minutes, then goes (a Redis-stored delete).
        assert await h.redis.zscore(TIDY_KEY, f"{GROUP}:{ids['stats']}") is not None
        h.clock.advance(REPLY_LIFETIME + 1)
        h.games.scheduler.wake()
        await h.emu.wait_for(lambda: not alive(h, ids["stats"]), 10, what="the reply deleted")
        await h.settle()
        assert await h.redis.zcard(TIDY_KEY) == 0
        assert alive(h, ids["result"]) and alive(h, ids["table"])


async def test_without_the_right_to_delete_the_command_stays(make_harness: Any) -> None:
    async with make_harness() as h:
        ids = await short_game(h, bot_admin=False, tidy=True)
        await h.emu.wait_for(lambda: not alive(h, ids["left"]), 10, what="the announcement")
        await h.settle()
        assert alive(h, ids["command"]) and alive(h, ids["result"])
        assert await h.redis.zscore(TIDY_KEY, f"{GROUP}:{ids['command']}") is None


async def test_with_tidy_up_off_nothing_is_deleted(make_harness: Any) -> None:
    async with make_harness() as h:
        ids = await short_game(h, bot_admin=True, tidy=False)
        await h.settle()
        h.clock.advance(REPLY_LIFETIME + 1)
        await h.games.tidy.sweep()  # what the scheduler's next read would do
        await h.settle()
        assert await h.redis.zcard(TIDY_KEY) == 0
        for name, message_id in ids.items():
            assert alive(h, message_id), name
        deletes = [e for e in h.emu.chat_events(GROUP) if e["type"] == "delete"]
        assert deletes == []
