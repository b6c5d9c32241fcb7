"""Issue 11 end to end (the real PTB application, the emulator, redis-server): a fast
table's throw-in window closes at half the time; /rules reaches every full section of
the game the reader is in."""

from __future__ import annotations

from typing import Any

import pytest
from conftest import Harness, open_lobby, press
from support.harness import moved_past, set_options
from test_bot_feel_e2e import next_change, own_move_or_later

from bot.domain.flow.turns import ACTIVE_THROW_IN_FACTOR
from engine import must_act, waiting_for
from locales import visible_text
from locales.rules_text import SECTIONS, TablePace, rules_short, rules_text

pytestmark = pytest.mark.filterwarnings("ignore:Deprecated since version v22.2")

GROUP = -100610
ANN, BOB = 21, 22
WINDOW = 7.0
TURN = 60.0


async def fast_game(h: Harness, **options: Any) -> None:
    """Ann against an Easy computer player at the fast pace (and ``options`` set)."""
    h.emu.add_user(ANN, "Ann")
    h.emu.add_user(BOB, "Bob")
    h.emu.add_group(GROUP, "Pace Club", members=[ANN, BOB], admins=[], creator=ANN)
    await h.start_bot()
    await h.emu.user_starts_bot(ANN)
    await h.wait_text(ANN, "Hi!")
    lobby = await open_lobby(h, GROUP, ANN)
    await set_options(h, ANN, GROUP, lobby.message_id, pace="fast", **options)
    await h.wait_text(GROUP, "Pace: fast")
    await press(h, ANN, GROUP, lobby.message_id, text="+ AI Easy")
    await h.wait_text(GROUP, "2. ")
    await press(h, ANN, GROUP, lobby.message_id, text="Start")
    await h.wait_text(GROUP, "Trump:")
    assert (await h.table(GROUP)).pace == "fast"


async def test_a_fast_tables_throw_in_window_closes_at_half_the_time(make_harness: Any) -> None:
    async with make_harness(throw_in_window=WINDOW, turn_timeout=TURN) as h:
        await fast_game(h)
        windows: list[float] = []
        turns: list[float] = []
        handled = -1
        for _ in range(2000):
            table = await h.table(GROUP)
            if table.phase == "finished" or len(windows) >= 3:
                break
            state = table.engine_state()
            if state.step == handled:
                await next_change(h)
                continue
            ann = table.seat_of(ANN)
            turn = must_act(state)
            if turn.player == ann:
                assert table.turn_deadline is not None
                if turn.kind != "throw_in":
                    turns.append(table.turn_deadline - h.clock())
                button = await h.emu.wait_for(lambda s=state.step: own_move_or_later(h, s), 10)
                if isinstance(button, str):
                    continue
                handled = state.step
                await press(h, ANN, ANN, button[0], data=button[1])
            elif waiting_for(state) == (ann,):
                # Only Ann could add a card, and she lets the window go by.
                assert turn.kind == "throw_in" and table.turn_deadline is not None
                left = table.turn_deadline - h.clock()
                windows.append(left)
                handled = state.step
                # Half the normal window later (the clock moved only as real time
                # passed since the deadline was set) the bot passes for her.
                h.clock.advance(left + 0.01)
                h.games.scheduler.wake()
                await moved_past(h, GROUP, state.step)
            else:
                await next_change(h)
        assert windows, "no throw-in window in this game"
        assert turns, "Ann never had a move"
        # Each window was half the normal one (less only the real time the test took to
        # look at it, a few seconds at most on a loaded machine), each turn half a turn.
        # Ann moves on her own turns: hers is the long window of an active player.
        long = ACTIVE_THROW_IN_FACTOR * WINDOW
        assert all(long / 2 - 3.0 < w <= long / 2 for w in windows), windows
        assert all(TURN / 2 - 3.0 < t <= TURN / 2 for t in turns), turns
        table = await h.table(GROUP)
        assert table.auto_steps, "the closed windows were automatic passes"
        print(f"fast pace: throw-in windows {[round(w, 2) for w in windows]} s")


async def test_rules_buttons_send_each_full_section_of_the_readers_game(
    make_harness: Any,
) -> None:
    async with make_harness(throw_in_window=WINDOW, turn_timeout=TURN) as h:
        await fast_game(h, transfer="perevodnoy")
        rules = (await h.table(GROUP)).rules
        assert rules.transfer
        pace = TablePace("fast", TURN / 2, WINDOW / 2)
        # In private: the brief of Ann's game, with its pace.
        mark = max(m.message_id for m in h.emu.messages(ANN))
        await h.emu.user_sends(ANN, ANN, "/rules")
        brief = await h.emu.wait_for(
            lambda: next(
                (m for m in h.emu.messages(ANN) if m.message_id > mark and "brief" in m.text),
                None,
            ),
            10,
        )
        assert brief.text == visible_text(rules_short(rules, "en", pace))
        assert "Pace: fast (30 s per move, 3.5 s to throw in)" in brief.text
        labels = [b["text"] for row in brief.buttons for b in row]
        assert labels[0] == "📖 Full rules" and len(labels) == 1 + len(SECTIONS)
        for label, section in zip(labels[1:], SECTIONS, strict=True):
            mark = max(m.message_id for m in h.emu.messages(ANN))
            await press(h, ANN, ANN, brief.message_id, text=label)
            want = [
                visible_text(t)
                for t in rules_text(rules, "en", turn_timeout=30, pace=pace, section=section)
            ]

            def arrived(mark: int = mark, want: list[str] = want) -> bool:
                # The computer plays on meanwhile: hand messages may come in between.
                got = [
                    m.text
                    for m in h.emu.messages(ANN)
                    if m.message_id > mark and not m.text.startswith("🃏 Durak in Pace Club")
                ]
                return got[: len(want)] == want

            await h.emu.wait_for(arrived, 10, what=f"the {section} section")
        # In the group, from Bob (no private chat): the group's table, in the group.
        mark = max(m.message_id for m in h.emu.messages(GROUP))
        await h.emu.user_sends(BOB, GROUP, "/rules")
        brief = await h.emu.wait_for(
            lambda: next(
                (m for m in h.emu.messages(GROUP) if m.message_id > mark and "brief" in m.text),
                None,
            ),
            10,
        )
        mark = max(m.message_id for m in h.emu.messages(GROUP))
        await press(h, BOB, GROUP, brief.message_id, text="📥 Taking")
        want = [
            visible_text(t)
            for t in rules_text(rules, "en", turn_timeout=30, pace=pace, section="taking")
        ]
        await h.emu.wait_for(
            lambda: (
                [m.text for m in h.emu.messages(GROUP) if m.message_id > mark][: len(want)] == want
            ),
            10,
            what="the taking section in the group",
        )
