"""Issue 11 end to end (the real PTB application, the emulator, redis-server): a player
who never taps during throw-in windows does not stall the table; the reminder; the end."""

from __future__ import annotations

from typing import Any

import pytest
from conftest import BOT_USERNAME, Harness, hand_buttons, open_lobby, press
from support.harness import pressable, set_options

from bot.domain.flow.turns import ACTIVE_THROW_IN_FACTOR
from bot.domain.place import Place
from engine import Rules, must_act, waiting_for
from locales import how_to_play, rules_short, rules_text, visible_text
from locales.rules_text import SHORT_LIMIT

pytestmark = pytest.mark.filterwarnings("ignore:Deprecated since version v22.2")

GROUP = -100600
ANN = 21
WINDOW = 7.0


async def solo_game(h: Harness) -> None:
    """Ann against an Easy computer player, started."""
    h.emu.add_user(ANN, "Ann")
    h.emu.add_group(GROUP, "Pace Club", members=[ANN], admins=[], creator=ANN)
    await h.start_bot()
    await h.emu.user_starts_bot(ANN)
    await h.wait_text(ANN, "Hi!")
    lobby = await open_lobby(h, GROUP, ANN)
    await press(h, ANN, GROUP, lobby.message_id, text="+ AI Easy")
    await h.wait_text(GROUP, "2. ")
    await press(h, ANN, GROUP, lobby.message_id, text="Start")
    await h.wait_text(GROUP, "Trump:")


def own_move(h: Harness, step: int) -> tuple[int, str] | None:
    """A button for Ann's own move at ``step``: beat, else lead one card, else take."""
    found = [(mid, data) for _, mid, data in pressable(h, ANN, step)]
    for op in ("B", "a", "t"):
        for mid, data in found:
            body = data.split(":")[4]
            if body[0] == op and (op != "a" or len(body) == 2):
                return mid, data
    return None


def own_move_or_later(h: Harness, step: int) -> tuple[int, str] | str | None:
    """``own_move`` at ``step``, or "later" once Ann's buttons are for a later step (a
    computer threw in meanwhile: the caller looks at the game again)."""
    found = own_move(h, step)
    if found is not None:
        return found
    return "later" if any(s > step for s, _, _ in hand_buttons(h.emu, ANN)) else None


async def next_change(h: Harness) -> None:
    """Wait for the emulator to see anything new (a send, an edit, a delete)."""
    last = h.emu.recent_events(1)
    await h.emu.wait_for(lambda: h.emu.recent_events(1) != last, 10, what="any change")


async def test_an_idle_attacker_never_stalls_a_throw_in_window(make_harness: Any) -> None:
    async with make_harness(throw_in_window=WINDOW) as h:
        await solo_game(h)
        stalls: list[float] = []
        handled = -1
        for _ in range(2000):
            table = await h.table(GROUP)
            if table.phase == "finished":
                break
            state = table.engine_state()
            if state.step == handled:
                await next_change(h)
                continue
            ann = table.seat_of(ANN)
            turn = must_act(state)
            if turn.player == ann:
                button = await h.emu.wait_for(lambda s=state.step: own_move_or_later(h, s), 10)
                if isinstance(button, str):
                    continue
                handled = state.step
                await press(h, ANN, ANN, button[0], data=button[1])
            elif waiting_for(state) == (ann,):
                # Only Ann could still add a card, and she never taps: the window runs out.
                assert turn.kind == "throw_in" and table.turn_deadline is not None
                await h.settle()  # her buttons are sent: the window counts from then
                table = await h.table(GROUP)
                assert table.turn_deadline is not None
                stall = table.turn_deadline - h.clock()
                stalls.append(stall)
                handled = state.step
                h.clock.advance(stall + 0.01)
                h.games.scheduler.wake()
            else:
                await next_change(h)
        table = await h.table(GROUP)
        assert table.phase == "finished", "the game did not end"
        assert stalls, "no throw-in window in this game"
        # Each idle window cost the window, not the 60-second turn timeout. Ann moves on
        # her own turns, so she counts as active: the long throw-in window (the policy in
        # ``flow.turns.wait_window``).
        assert max(stalls) <= ACTIVE_THROW_IN_FACTOR * WINDOW
        print(f"idle throw-in windows: {len(stalls)}, longest stall {max(stalls):.1f} s")
        log = "\n".join(m.text for m in h.emu.messages(GROUP) if m.from_bot)
        result = await h.wait_text(GROUP, "Game over")
        labels = [b["text"] for row in result.buttons for b in row]
        assert labels == ["Rematch", "New lobby"]
        assert "bouts ·" in result.text
        assert table.auto_steps, "the automatic passes are remembered for the log"
        assert log  # the group saw the game
        # Each private hand ends as the player's own one-line result, then (the game was
        # rated) the one line of their rating change.
        await h.settle()
        last_hand = [m for m in h.emu.messages(ANN) if m.from_bot][-1]
        result, rating = last_hand.text.split("\n")
        assert result.startswith("🏁 Pace Club:") and rating.startswith("📈 Rating ")


async def test_one_notifying_reminder_before_the_bot_moves_for_a_player(make_harness: Any) -> None:
    async with make_harness(throw_in_window=WINDOW) as h:
        await solo_game(h)

        async def anns_turn() -> Any:
            for _ in range(200):
                table = await h.table(GROUP)
                if must_act(table.engine_state()).player == table.seat_of(ANN):
                    return table
                await next_change(h)
            raise AssertionError("Ann never had a move")

        async def anns_button() -> tuple[Any, tuple[int, str]]:
            """Her turn and its button (a computer's throw-in meanwhile: look again)."""
            for _ in range(20):
                table = await anns_turn()
                step = table.engine_state().step
                found = await h.emu.wait_for(lambda s=step: own_move_or_later(h, s), 10)
                if not isinstance(found, str):
                    return table, found
            raise AssertionError("Ann's buttons never settled")

        table, _ = await anns_button()
        before = {m.message_id for m in h.emu.messages(ANN) if m.from_bot}
        assert table.reminder_due is not None and table.turn_deadline is not None
        assert table.turn_deadline - table.reminder_due == 15.0
        # The computer may still add a card after Ann's turn began, which moves her deadline
        # (and reminder) on: advance to the reminder the stored game holds now, until it comes.
        for attempt in range(5):
            table = await h.table(GROUP)
            assert table.reminder_due is not None
            h.clock.advance(max(0.0, table.reminder_due - h.clock()) + 0.01)
            h.games.scheduler.wake()
            try:
                reminder = await h.wait_text(ANN, "Hurry", timeout=3.0)
                break
            except TimeoutError:
                if attempt == 4:
                    raise
        assert reminder.message_id not in before  # a new message: it notifies
        assert "⏱ 15 s" in reminder.text
        # She moves: the reminder line goes with the next edit.
        table, button = await anns_button()
        await press(h, ANN, ANN, button[0], data=button[1])
        await h.settle()
        hands = [m for m in h.emu.messages(ANN) if m.from_bot]
        assert all("Hurry" not in m.text for m in hands)


async def test_rules_short_then_full_and_private_rules_follow_the_current_game(
    make_harness: Any,
) -> None:
    async with make_harness() as h:
        h.emu.add_user(ANN, "Ann")
        h.emu.add_group(GROUP, "Pace Club", members=[ANN], admins=[], creator=ANN)
        await h.start_bot()
        await h.emu.user_starts_bot(ANN)
        await h.wait_text(ANN, "Hi!")
        # No game yet: the default rules, in brief.
        await h.emu.user_sends(ANN, ANN, "/rules")
        brief = await h.wait_text(ANN, "Durak in brief")
        assert visible_text(rules_short(Rules(), "en")) == brief.text
        assert len(brief.text) <= SHORT_LIMIT
        # A transfer game runs: private /rules describes it, not the default.
        lobby = await open_lobby(h, GROUP, ANN)
        await set_options(h, ANN, GROUP, lobby.message_id, transfer="perevodnoy")
        await press(h, ANN, GROUP, lobby.message_id, text="+ AI Easy")
        await h.wait_text(GROUP, "2. ")
        await press(h, ANN, GROUP, lobby.message_id, text="Start")
        await h.wait_text(GROUP, "Trump:")
        rules = (await h.table(GROUP)).rules
        assert rules.transfer
        assert Place(GROUP) in await h.games.storage.running_places()
        mark = max(m.message_id for m in h.emu.messages(ANN))
        await h.emu.user_sends(ANN, ANN, "/rules")
        brief = await h.emu.wait_for(
            lambda: next(
                (m for m in h.emu.messages(ANN) if m.message_id > mark and "brief" in m.text),
                None,
            )
        )
        assert brief.text == visible_text(rules_short(rules, "en"))
        assert "perevodnoy" in brief.text
        # The button sends the full rules of that game.
        mark = max(m.message_id for m in h.emu.messages(ANN))
        await press(h, ANN, ANN, brief.message_id, text="📖 Full rules")
        full = [visible_text(t) for t in rules_text(rules, "en", turn_timeout=60)]
        # Her hand may get a new message in between (the game goes on): rules only.
        await h.emu.wait_for(
            lambda: (
                [
                    m.text
                    for m in h.emu.messages(ANN)
                    if m.message_id > mark and not m.text.startswith("🃏 Durak in Pace Club")
                ][: len(full)]
                == full
            )
        )


async def test_join_with_a_closed_private_chat_answers_with_the_deep_link(
    make_harness: Any,
) -> None:
    async with make_harness() as h:
        h.emu.add_user(ANN, "Ann")
        h.emu.add_user(ANN + 1, "Bob")
        h.emu.add_group(GROUP, "Link Club", members=[ANN, ANN + 1], admins=[], creator=ANN)
        await h.start_bot()
        await h.emu.user_starts_bot(ANN)
        await h.wait_text(ANN, "Hi!")
        lobby = await open_lobby(h, GROUP, ANN)
        # Bob never started the bot: the answer opens the same link as the lobby's button.
        answer = await press(h, ANN + 1, GROUP, lobby.message_id, text="Join")
        link = f"https://t.me/{BOT_USERNAME}?start=g{GROUP}"
        assert answer.url == link and answer.text
        await h.wait_text(GROUP, "2. ")
        shown = h.emu.message(GROUP, lobby.message_id)
        assert shown is not None and shown.buttons[0] == [
            {"text": shown.buttons[0][0]["text"], "url": link}
        ]
        # Ann's chat is open: a plain toast.
        answer = await press(h, ANN, GROUP, lobby.message_id, text="Join")
        assert answer.url is None


async def test_how_to_play_is_shown_once_per_group_then_a_button(make_harness: Any) -> None:
    how_to = visible_text(how_to_play("en"))
    async with make_harness() as h:
        h.emu.add_user(ANN, "Ann")
        h.emu.add_group(GROUP, "Howto Club", members=[ANN], admins=[], creator=ANN)
        await h.start_bot()
        await h.emu.user_starts_bot(ANN)
        await h.wait_text(ANN, "Hi!")
        first = await open_lobby(h, GROUP, ANN)
        assert how_to.splitlines()[0] in visible_text(first.text or "")
        assert "📖 How to play" not in first.button_texts
        await press(h, ANN, GROUP, first.message_id, text="Cancel")
        await h.wait_text(GROUP, "Cancel this game?")
        await press(h, ANN, GROUP, first.message_id, text="Yes, cancel")
        await h.wait_text(GROUP, "cancelled")
        second = await open_lobby(h, GROUP, ANN)
        assert how_to.splitlines()[0] not in visible_text(second.text or "")
        answer = await press(h, ANN, GROUP, second.message_id, text="📖 How to play")
        assert answer.text == "Sent to our private chat."
        sent = await h.wait_text(ANN, how_to.splitlines()[0])
        assert visible_text(sent.text or "") == how_to
