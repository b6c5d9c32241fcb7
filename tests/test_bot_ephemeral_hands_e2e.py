"""End to end: a player who never opened a private chat plays from the group, their hand an
ephemeral message only they see (Bot API 10.2), through the real PTB Application, the Bot
API emulator and a real redis-server."""

from __future__ import annotations

import json
from typing import Any

import aiohttp
import pytest
from support.deals import fix_deals
from support.harness import (
    TOKEN,
    Harness,
    ephemeral_hand_buttons,
    open_lobby,
    play_out,
    press,
)
from support.webapp import init_data, webapp_settings

from bot import render
from bot.app import ids as game_ids
from bot.domain import callbacks, flow
from bot.domain.flow import Moment, Person, Timing
from bot.domain.place import Place
from bot.domain.records import ChatGame
from bot.render.labels import too_wide
from locales import SUPPORTED, translator
from sandbox.emulator import EmuMessage

pytestmark = pytest.mark.filterwarnings("ignore:Deprecated since version v22.2")

GROUP = -100700
ANN, BOB, CAROL = 21, 22, 23
"""Ann has a private chat with the bot, Bob never opened one, Carol only watches."""
BOT_ID = int(TOKEN.split(":")[0])


def scene(h: Harness, *, bot_admin: bool) -> None:
    for uid, name in ((ANN, "Ann"), (BOB, "Bob"), (CAROL, "Carol")):
        h.emu.add_user(uid, name)
    admins = [BOT_ID] if bot_admin else []
    h.emu.add_group(GROUP, "Card Club", members=[ANN, BOB, CAROL], admins=admins, creator=ANN)


async def ann_opens_dm(h: Harness) -> None:
    await h.emu.user_starts_bot(ANN)
    await h.wait_text(ANN, "Hi!")


def my_hand_data(game_id: str) -> str:
    return callbacks.encode_group(game_id, "my_hand")


def has_hand_buttons(message: EmuMessage) -> bool:
    return any(
        str(b.get("callback_data", "")).startswith("h:")
        for row in message.inline_keyboard
        for b in row
    )


async def lobby_with_bob(h: Harness, *, in_group: bool = True) -> EmuMessage:
    """Bob joins; the answer offers the private chat first, and the group where the bot
    may show his hand there (``in_group``)."""
    lobby = await open_lobby(h, GROUP, ANN)
    answer = await press(h, BOB, GROUP, lobby.message_id, text="Join")
    assert answer.text is not None and "private chat" in answer.text
    assert ("My hand" in answer.text) == in_group, answer.text
    await h.wait_text(GROUP, "2. Bob")
    return lobby


async def started(h: Harness, lobby: EmuMessage) -> str:
    """Start, and Bob's first ephemeral hand shown by "🃏 My hand"; the game's id."""
    await h.wait_text(GROUP, "play from the group")
    await press(h, ANN, GROUP, lobby.message_id, text="Start")
    table = await h.wait_text(GROUP, "Trump:")
    assert "🃏 My hand" in [b["text"] for row in table.buttons for b in row]
    return (await h.table(GROUP)).game_id


async def bob_in_group_game(h: Harness) -> tuple[EmuMessage, str]:
    """The bot an admin, Ann with a private chat, Bob without one: a started game (its
    table message and game id)."""
    scene(h, bot_admin=True)
    await h.start_bot()
    await ann_opens_dm(h)
    lobby = await lobby_with_bob(h)
    return lobby, await started(h, lobby)


async def bob_taps_my_hand(h: Harness, table_id: int, game_id: str) -> EmuMessage:
    handle = await h.emu.user_presses(BOB, GROUP, table_id, data=my_hand_data(game_id))
    waiting = h.emu.wait_for_ephemeral(BOB, GROUP, has_hand_buttons)
    await handle.answer()
    shown = await waiting
    await h.settle()  # its id stored
    return shown


def assert_only_bob_saw_hands(h: Harness) -> None:
    """No hand ever reached anyone but its player: every ephemeral change in the group
    was for Bob alone, the group's history holds no hand, Ann and Carol see none."""
    ephemeral = [e for e in h.emu.chat_events(GROUP) if e["type"] == "ephemeral"]
    assert ephemeral, "no ephemeral message was ever shown"
    assert {e["viewer_id"] for e in ephemeral} == {BOB}
    assert not any(has_hand_buttons(m) for m in h.emu.messages(GROUP, include_deleted=True))
    for other in (ANN, CAROL):
        assert not h.emu.ephemerals_of(other, GROUP)
        assert not any(has_hand_buttons(m) for m in h.emu.messages_seen_by(other, GROUP))


async def test_a_player_without_private_chat_plays_a_whole_game_from_the_group(
    make_harness: Any,
) -> None:
    async with make_harness() as h:
        scene(h, bot_admin=True)
        await h.start_bot()
        await ann_opens_dm(h)
        lobby = await lobby_with_bob(h)
        assert "make me an admin" not in h.emu.message(GROUP, lobby.message_id).text
        game_id = await started(h, lobby)
        # Ann has a private chat: "My hand" points her there, nothing ephemeral for her.
        answer = await press(h, ANN, GROUP, lobby.message_id, data=my_hand_data(game_id))
        assert answer.text == "Your cards are in your private chat with me."
        # Carol is not playing.
        answer = await press(h, CAROL, GROUP, lobby.message_id, data=my_hand_data(game_id))
        assert answer.text is not None and not h.emu.ephemerals_of(CAROL, GROUP)
        await h.settle()
        group_calls = len(h.games.box.lanes[GROUP].pacer.sent)
        hand = await bob_taps_my_hand(h, lobby.message_id, game_id)
        # Sent through the group's lane: it counts against the group's budget.
        assert len(h.games.box.lanes[GROUP].pacer.sent) == group_calls + 1
        assert "Your cards:" in hand.text
        assert hand.receiver is not None and hand.receiver.id == BOB
        table = await h.table(GROUP)
        bob = table.seats[table.seat_of(BOB) or 0]
        assert bob.in_group and bob.group_hand_id == hand.ephemeral_message_id
        assert not table.seats[table.seat_of(ANN) or 0].in_group
        # What the hand shows is recorded like any other screen (another worker edits on).
        screen = await h.games.storage.screen(Place(GROUP), f"ghand:{BOB}")
        assert screen is not None and screen.message_id == hand.ephemeral_message_id

        result = await play_out(h, GROUP, [ANN, BOB], in_group=[BOB])
        assert "Durak" in result.text or "draw" in result.text
        await h.settle()
        # Bob's hand, edited in place all game, ends as his own result with no moves.
        shown = h.emu.ephemeral(GROUP, hand.ephemeral_message_id)
        assert shown is not None and shown.edit_count > 0
        assert not ephemeral_hand_buttons(h.emu, BOB, GROUP)
        assert_only_bob_saw_hands(h)
        # Every tap came from an ephemeral message (message_id 0): the guard never took
        # one for a private hand message to adopt.
        after = await h.table(GROUP)
        assert after.seats[after.seat_of(BOB) or 0].hand_message_id is None
        assert after.seats[after.seat_of(BOB) or 0].group_hand_id == hand.ephemeral_message_id
        # Ann played from her private chat as always.
        assert any(has_hand_buttons(m) for m in h.emu.messages(ANN, include_deleted=True))


async def test_my_hand_again_brings_back_a_dropped_hand(make_harness: Any) -> None:
    async with make_harness() as h:
        lobby, game_id = await bob_in_group_game(h)
        first = await bob_taps_my_hand(h, lobby.message_id, game_id)
        # Bob's app drops it (it expired, or the app restarted); the bot is not told.
        assert h.emu.user_drops_ephemeral(BOB, GROUP) == 1
        assert not h.emu.ephemerals_of(BOB, GROUP)
        again = await bob_taps_my_hand(h, lobby.message_id, game_id)
        assert again.ephemeral_message_id != first.ephemeral_message_id
        await h.settle()
        assert first.ephemeral_message_id is not None
        assert h.emu.ephemeral(GROUP, first.ephemeral_message_id) is None  # deleted
        table = await h.table(GROUP)
        assert table.seats[table.seat_of(BOB) or 0].group_hand_id == again.ephemeral_message_id
        # The game goes on in the new one.
        result = await play_out(h, GROUP, [ANN, BOB], in_group=[BOB])
        assert "Durak" in result.text or "draw" in result.text
        shown = h.emu.ephemeral(GROUP, again.ephemeral_message_id or 0)
        assert shown is not None and shown.edit_count > 0
        assert_only_bob_saw_hands(h)


async def test_without_admin_rights_the_lobby_says_so_and_start_waits(make_harness: Any) -> None:
    async with make_harness() as h:
        scene(h, bot_admin=False)
        await h.start_bot()
        await ann_opens_dm(h)
        lobby = await lobby_with_bob(h, in_group=False)
        shown = await h.wait_text(GROUP, "make me an admin")
        assert "Waiting for Bob" in shown.text and "play from the group" not in shown.text
        answer = await press(h, ANN, GROUP, lobby.message_id, text="Start")
        assert answer.text is not None and "private chat" in answer.text
        assert (await h.table(GROUP)).phase == "lobby"  # as before: Start waits
        assert not h.emu.ephemerals_of(BOB, GROUP)
        # Made an admin, the bot lets Bob play from the group at the next Start.
        h.emu.add_bot_to_group(GROUP, admin=True)
        await press(h, ANN, GROUP, lobby.message_id, text="Start")
        await h.wait_text(GROUP, "Trump:")
        table = await h.table(GROUP)
        assert table.phase == "playing" and table.seats[table.seat_of(BOB) or 0].in_group


async def test_a_refused_edit_is_given_up_and_the_next_change_edits_again(
    make_harness: Any, monkeypatch: pytest.MonkeyPatch
) -> None:
    # A fixed deal in which Bob leads: his own attack changes his hand, and the game then
    # waits on Ann, whose answer changes it again.
    monkeypatch.setattr(game_ids, "new_game_id", lambda: "ephb00")
    fix_deals(monkeypatch)
    async with make_harness() as h:
        lobby, game_id = await bob_in_group_game(h)
        table = await h.table(GROUP)
        assert table.seats[table.engine_state().attacker].user_id == BOB
        hand = await bob_taps_my_hand(h, lobby.message_id, game_id)
        eid = hand.ephemeral_message_id or 0
        # A 5xx would otherwise be retried until it lands: h.settle() returning shows the
        # edit was given up, not queued again.
        failing = h.emu.fail_calls(
            "editEphemeralMessageText", chat_id=GROUP, error_code=500, description="Oops"
        )
        _, mid, data = next(
            b for b in ephemeral_hand_buttons(h.emu, BOB, GROUP) if b[2].split(":")[4][0] == "a"
        )
        handle = await h.emu.user_presses_ephemeral(BOB, GROUP, mid, data=data)
        await handle.answer()
        await h.settle()
        server = h.emu.ephemeral(GROUP, eid)
        assert failing.hits >= 1 and server is not None and server.edit_count == 0
        failing.cancel()
        # The next change edits it (what it showed was never recorded as changed).
        result = await play_out(h, GROUP, [ANN, BOB], in_group=[BOB])
        assert "Durak" in result.text or "draw" in result.text
        server = h.emu.ephemeral(GROUP, eid)
        assert server is not None and server.edit_count > 0
        assert [m.ephemeral_message_id for m in h.emu.ephemerals_of(BOB, GROUP)] == [eid]


async def test_a_tap_on_an_old_hand_brings_the_current_one(make_harness: Any) -> None:
    async with make_harness() as h:
        lobby, game_id = await bob_in_group_game(h)
        old = await bob_taps_my_hand(h, lobby.message_id, game_id)
        # The old one's delete is refused once: it stays on Bob's screen.
        h.emu.fail_calls(
            "deleteEphemeralMessage", chat_id=GROUP, times=1, error_code=400,
            description="Bad Request: message to delete not found",
        )  # fmt: skip
        current = await bob_taps_my_hand(h, lobby.message_id, game_id)
        shown = {m.ephemeral_message_id for m in h.emu.ephemerals_of(BOB, GROUP)}
        assert shown == {old.ephemeral_message_id, current.ephemeral_message_id}
        # Bob taps a button of the old one: the guard knows it is not the hand it keeps,
        # retires it and answers with the hand anew (the current one goes too).
        data = next(
            str(b["callback_data"])
            for row in old.inline_keyboard
            for b in row
            if str(b.get("callback_data", "")).startswith("h:")
        )
        handle = await h.emu.user_presses_ephemeral(
            BOB, GROUP, old.ephemeral_message_id or 0, data=data
        )
        fresh = h.emu.wait_for_ephemeral(BOB, GROUP, has_hand_buttons)
        await handle.answer()
        newest = await fresh
        await h.settle()
        assert newest.ephemeral_message_id not in shown
        assert [m.ephemeral_message_id for m in h.emu.ephemerals_of(BOB, GROUP)] == [
            newest.ephemeral_message_id
        ]
        table = await h.table(GROUP)
        seat = table.seats[table.seat_of(BOB) or 0]
        assert seat.group_hand_id == newest.ephemeral_message_id and seat.hand_message_id is None
        assert_only_bob_saw_hands(h)


async def test_a_tap_on_a_lost_games_ephemeral_hand_takes_it_away(make_harness: Any) -> None:
    async with make_harness() as h:
        lobby, game_id = await bob_in_group_game(h)
        hand = await bob_taps_my_hand(h, lobby.message_id, game_id)
        await h.redis.flushdb()  # Redis restarted empty
        data = next(
            str(b["callback_data"])
            for row in hand.inline_keyboard
            for b in row
            if str(b.get("callback_data", "")).startswith("h:")
        )
        handle = await h.emu.user_presses_ephemeral(
            BOB, GROUP, hand.ephemeral_message_id or 0, data=data
        )
        assert (await handle.answer()).text == "This game was lost."
        await h.wait_text(GROUP, "This game was lost")
        await h.settle()
        # Its buttons would mislead: the hand is deleted (an edit cannot reach it).
        assert h.emu.ephemeral(GROUP, hand.ephemeral_message_id or 0) is None
        assert not h.emu.ephemerals_of(BOB, GROUP)


async def test_after_a_restart_the_next_worker_edits_the_same_hand(make_harness: Any) -> None:
    async with make_harness() as h:
        lobby, game_id = await bob_in_group_game(h)
        hand = await bob_taps_my_hand(h, lobby.message_id, game_id)
        await h.kill_bot()
        await h.start_bot()  # knows the hand only from Redis (the seat and its screen)
        result = await play_out(h, GROUP, [ANN, BOB], in_group=[BOB])
        assert "Durak" in result.text or "draw" in result.text
        await h.settle()
        assert [m.ephemeral_message_id for m in h.emu.ephemerals_of(BOB, GROUP)] == [
            hand.ephemeral_message_id
        ]
        server = h.emu.ephemeral(GROUP, hand.ephemeral_message_id or 0)
        assert server is not None and server.edit_count > 0


async def test_with_the_mini_app_the_group_hand_has_no_app_buttons(make_harness: Any) -> None:
    """Started from the Mini App, as from the group's Start; the hand in the group has
    only hand buttons (Telegram refuses web_app buttons in groups)."""
    async with make_harness(**webapp_settings()) as h, aiohttp.ClientSession() as http:
        scene(h, bot_admin=True)
        await h.start_bot()
        await ann_opens_dm(h)
        lobby = await lobby_with_bob(h)
        await h.wait_text(GROUP, "play from the group")
        game_id = (await h.table(GROUP)).game_id
        url = f"http://127.0.0.1:{h.settings.webapp_port}/api/start"
        headers = {"X-Telegram-Init-Data": init_data(ANN, game=game_id)}
        async with http.post(url, json={"game": game_id}, headers=headers) as r:
            assert r.status == 200, await r.text()
        await h.wait_text(GROUP, "Trump:")
        table = await h.table(GROUP)
        assert table.seats[table.seat_of(BOB) or 0].in_group
        hand = await bob_taps_my_hand(h, lobby.message_id, game_id)
        buttons = [b for row in hand.inline_keyboard for b in row]
        assert buttons and all(str(b.get("callback_data", "")).startswith("h:") for b in buttons)
        assert_only_bob_saw_hands(h)


# --- what the group is shown (pure) ------------------------------------------------------

TIMING = Timing(60.0, 0.0, 0.0, 7.0)


def lobby_of_two(group_hands: bool | None) -> ChatGame:
    moment = Moment(1000.0, TIMING)
    game, _ = flow.new_lobby(None, moment, Place(GROUP), "Club", Person(ANN, "Ann"), "eph001")
    game, _ = flow.join(game, moment, "eph001", Person(BOB, "Bob"), group_hands)
    return game


@pytest.mark.parametrize("lang", SUPPORTED)
def test_the_table_offers_my_hand_only_when_someone_plays_from_the_group(lang: str) -> None:
    tr = translator(lang)
    game = lobby_of_two(True)
    game, _ = flow.start(game, Moment(1000.0, TIMING), "eph001", ANN, {BOB}, group_hands=True)
    assert [s.in_group for s in game.seats] == [False, True]
    table = render.table_message(game, tr, "bot", now=1000.5)
    assert table.markup is not None and not too_wide(table.markup.inline_keyboard)
    data = [b.callback_data for row in table.markup.inline_keyboard for b in row]
    assert callbacks.encode_group("eph001", "my_hand") in data
    assert callbacks.decode(str(data[-1])) == callbacks.GroupButton("eph001", "my_hand")
    # Everyone in private: the table is as before, a link to the private chat only.
    game.seats[1].in_group = False
    plain = render.table_message(game, tr, "bot", now=1000.5)
    assert plain.markup is not None
    assert [b.callback_data for row in plain.markup.inline_keyboard for b in row] == [None]


def test_the_lobby_says_where_a_player_without_private_chat_plays() -> None:
    tr = translator("en")
    admin = render.lobby_message(lobby_of_two(True), tr, "bot", {BOB})
    assert "play from the group" in admin.text and "make me an admin" not in admin.text
    assert "Remove players" not in str(admin.markup)
    refused = render.lobby_message(lobby_of_two(False), tr, "bot", {BOB})
    assert "Waiting for Bob" in refused.text and "make me an admin" in refused.text
    # Start without admin rights waits, as before.
    with pytest.raises(flow.FlowError):
        flow.start(lobby_of_two(False), Moment(1001.0, TIMING), "eph001", ANN, {BOB})


def test_records_leave_the_new_fields_out_at_their_defaults() -> None:
    """Code from before hands in the group (extra fields refused) still reads every game
    that does not use them."""
    plain = lobby_of_two(None)
    data = json.loads(plain.to_json())  # as stored
    assert "group_hands" not in data
    assert all("in_group" not in s and "group_hand_id" not in s for s in data["seats"])
    game = lobby_of_two(True)
    game.seats[1].in_group, game.seats[1].group_hand_id = True, 3
    again = ChatGame.model_validate_json(game.to_json())
    assert again.group_hands is True and again.seats[1].group_hand_id == 3
    assert again.seats[1].in_group and not again.seats[0].in_group
