"""What the chaos soak found: output a 5xx must not lose, end to end through the emulator.

A 5xx (or a network error) means Telegram did nothing, so the call is safe to repeat:
a one-off group message (the result, an announcement) is sent however many such answers
come first, and a replaced hand whose delete failed is deleted later, not left in the
player's chat with a Leave button that no longer works.
"""

from __future__ import annotations

import json
from typing import Any

import pytest
from conftest import Harness, open_lobby, press
from support.harness import pressable

from bot.domain.callbacks import encode_hand_op
from bot.domain.place import Place
from bot.store import owed_fields
from bot.store.keys import output_key
from bot.transport import lanes

pytestmark = pytest.mark.filterwarnings("ignore:Deprecated since version v22.2")

GROUP = -100600
ANN, BOB = 21, 22
FAILURES = 2 * lanes.MAX_ATTEMPTS + 1
"""More 5xx answers in a row than the retries a refused call gets, for each of the two
group messages the end sends (the leave's announcement and the result)."""


@pytest.fixture(autouse=True)
def quick_backoff(monkeypatch: pytest.MonkeyPatch) -> None:
    """The retries' back-off, shortened (0.5 s doubling would make this test 30 s long)."""
    monkeypatch.setattr(lanes, "backoff_seconds", lambda attempt: 0.05)


async def two_player_game(h: Harness) -> None:
    for uid, name in ((ANN, "Ann"), (BOB, "Bob")):
        h.emu.add_user(uid, name)
    h.emu.add_group(GROUP, "Retry Club", members=[ANN, BOB], admins=[], creator=ANN)
    for uid in (ANN, BOB):
        await h.emu.user_starts_bot(uid)
        await h.wait_text(uid, "Hi!")
    lobby = await open_lobby(h, GROUP, ANN)
    await press(h, BOB, GROUP, lobby.message_id, text="Join")
    await h.wait_text(GROUP, "2. Bob")
    await press(h, ANN, GROUP, lobby.message_id, text="Start")
    await h.wait_text(GROUP, "Trump:")
    await h.settle()


def live_hands(h: Harness, user: int) -> list[Any]:
    return [m for m in h.emu.messages(user) if m.from_bot and "Durak in Retry Club" in m.text]


async def test_the_result_is_sent_after_more_5xx_answers_than_retries(make_harness: Any) -> None:
    async with make_harness() as h:
        await h.start_bot()
        await two_player_game(h)
        failing = h.emu.fail_calls(
            "sendMessage", chat_id=GROUP, times=FAILURES, error_code=503, description="Busy"
        )
        table = await h.table(GROUP)
        step = table.state["step"]  # type: ignore[index]
        data = encode_hand_op(Place(GROUP), table.game_id, step, "leave_yes")
        hand = h.emu.last_message(ANN)
        assert hand is not None
        await (await h.emu.user_sends_callback(ANN, ANN, hand.message_id, data)).answer()
        result = await h.wait_text(GROUP, "Game over", timeout=20)
        assert "Durak: <b>Ann</b>" in result.html or "Durak: Ann" in result.text
        assert failing.hits == FAILURES  # every failure hit the result, and then it went out
        await h.settle()
        assert not (await h.games.storage.owed_output(Place(GROUP))).notes


async def test_a_replaced_hand_whose_delete_failed_is_deleted_later(make_harness: Any) -> None:
    async with make_harness() as h:
        await h.start_bot(output_lease=1.0)
        await two_player_game(h)
        table = await h.table(GROUP)
        state = table.engine_state()
        attacker = table.seats[state.attacker].user_id
        defender = table.seats[state.defender].user_id
        assert attacker is not None and defender is not None
        assert len(live_hands(h, defender)) == 1
        failing = h.emu.fail_calls("deleteMessage", chat_id=defender, times=1)
        attack = next(
            (mid, data)
            for _, mid, data in pressable(h, attacker, state.step)
            if data.split(":")[4][0] == "a"
        )
        await (await h.emu.user_sends_callback(attacker, attacker, *attack)).answer()
        # The defender's hand comes anew (a notifying message) and the old one must go,
        # although its first delete answered 502.
        await h.emu.wait_for(lambda: failing.hits == 1, what="the failed delete")
        await h.emu.wait_for(
            lambda: len(live_hands(h, defender)) == 1, timeout=20, what="the old hand deleted"
        )
        await h.settle()
        assert not (await h.games.storage.owed_output(Place(GROUP))).deletes


async def test_a_note_a_dead_worker_still_owed_goes_out_before_a_later_one(
    make_harness: Any, real_redis: Any
) -> None:
    """Notes go out in the order they were owed: a deal's code left owed by a worker
    that died must not reach the group after the result that reveals the deal (the
    fleet test once saw exactly that: the result before the code)."""
    async with make_harness() as h:
        await h.start_bot()
        await two_player_game(h)
        place = Place(GROUP)
        rev = int(await real_redis.hget(output_key(place), owed_fields.REV))
        leftover = {"kind": "announce", "key": "group.player_back", "kwargs": {"name": "Zed"}}
        # As a dead worker leaves it: owed in Redis, in no live worker's queue.
        await real_redis.hset(
            output_key(place), owed_fields.note(f"{rev:010d}.900"), json.dumps(leftover)
        )
        table = await h.table(GROUP)
        data = encode_hand_op(place, table.game_id, table.state["step"], "leave_yes")  # type: ignore[index]
        hand = h.emu.last_message(ANN)
        assert hand is not None
        await (await h.emu.user_sends_callback(ANN, ANN, hand.message_id, data)).answer()
        result = await h.wait_text(GROUP, "Game over", timeout=20)
        back = [m for m in h.emu.messages(GROUP) if m.from_bot and "Zed" in m.text]
        assert len(back) == 1 and back[0].message_id < result.message_id
        await h.settle()
        assert not (await h.games.storage.owed_output(place)).notes
