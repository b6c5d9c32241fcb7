"""End to end: the real PTB Application, the Bot API emulator, a real redis-server."""

from __future__ import annotations

import asyncio
from collections.abc import Callable
from typing import Any

import pytest
from support.deals import fix_deals
from support.harness import Harness, hand_buttons, open_lobby, play_out, press, pressable

from bot.app import ids as game_ids
from bot.domain import callbacks, flow
from bot.domain.flow import FlowError
from bot.domain.place import Place
from bot.render.common import seat_names
from engine import legal_actions
from locales import translator, visible_text
from sandbox.emulator import RateLimits

pytestmark = pytest.mark.filterwarnings("ignore:Deprecated since version v22.2")

GROUP = -100500
ANN, BOB, CAROL, DAN = 11, 12, 13, 14


def scene(h: Harness, *users: int, dm_open: bool = True) -> None:
    names = {ANN: "Ann", BOB: "Bob", CAROL: "Carol", DAN: "Dan"}
    for uid in users:
        h.emu.add_user(uid, names.get(uid, f"U{uid}"))
    h.emu.add_group(GROUP, "Card Club", members=list(users), admins=[], creator=users[0])


async def open_dms(h: Harness, *users: int) -> None:
    for uid in users:
        await h.emu.user_starts_bot(uid)
        await h.wait_text(uid, "Hi!")


async def test_two_humans_play_a_full_game(make_harness: Any) -> None:
    async with make_harness() as h:
        scene(h, ANN, BOB)
        await h.start_bot()
        await open_dms(h, ANN, BOB)
        lobby = await open_lobby(h, GROUP, ANN)
        await press(h, BOB, GROUP, lobby.message_id, text="Join")
        await h.wait_text(GROUP, "2. Bob")
        await press(h, ANN, GROUP, lobby.message_id, text="Start")
        table = await h.wait_text(GROUP, "Trump:")
        assert table.message_id == lobby.message_id  # the lobby became the table
        result = await play_out(h, GROUP, [ANN, BOB])
        assert "Durak" in result.text or "draw" in result.text
        assert any(b["text"] == "Rematch" for row in result.buttons for b in row)


def buttons_of(message: Any) -> list[str]:
    return [b["text"] for row in message.buttons for b in row]


async def lobby_with(h: Harness, humans: list[int], ais: list[str] = ()) -> Any:  # type: ignore[assignment]
    lobby = await open_lobby(h, GROUP, humans[0])
    for uid in humans[1:]:
        await press(h, uid, GROUP, lobby.message_id, text="Join")
    for level in ais:
        await press(h, humans[0], GROUP, lobby.message_id, text=f"+ AI {level}")
    return lobby


async def test_one_human_against_computers(make_harness: Any) -> None:
    async with make_harness() as h:
        scene(h, ANN)
        await h.start_bot()
        await open_dms(h, ANN)
        lobby = await lobby_with(h, [ANN], ["Easy", "Normal"])
        await h.wait_text(GROUP, "3. 🤖 Boris · Normal")
        await press(h, ANN, GROUP, lobby.message_id, text="Start")
        result = await play_out(h, GROUP, [ANN])
        assert "Game over" in result.text


async def test_six_seats_three_humans_three_computers(
    make_harness: Any, monkeypatch: pytest.MonkeyPatch
) -> None:
    # A fixed deal: a random one once ran 3,000 presses without an end (the test's humans
    # always pass and never throw in, so some deals can go round for a long time).
    monkeypatch.setattr(game_ids, "new_game_id", lambda: "six001")
    fix_deals(monkeypatch)
    async with make_harness() as h:
        scene(h, ANN, BOB, CAROL)
        await h.start_bot()
        await open_dms(h, ANN, BOB, CAROL)
        lobby = await lobby_with(h, [ANN, BOB, CAROL], ["Easy", "Easy", "Normal"])
        await h.wait_text(GROUP, "6. 🤖 Nina · Normal")
        # A full table offers neither Join nor "+ AI" (the flow refuses a 7th seat too).
        await h.emu.wait_for(
            lambda: "Join" not in buttons_of(h.emu.message(GROUP, lobby.message_id))
        )
        assert not any("+ AI" in b for b in buttons_of(h.emu.message(GROUP, lobby.message_id)))
        answer = await press(h, ANN, GROUP, lobby.message_id, text="Start")
        assert answer.text is None
        # The two Easy computers are told apart by name (the lobby and the table, its log and
        # the result use the same names: test_render_table_compact).
        seats = h.emu.message(GROUP, lobby.message_id).text
        assert "🤖 Vera · Easy" in seats and "🤖 Boris · Easy" in seats, seats
        result = await play_out(h, GROUP, [ANN, BOB, CAROL])
        assert "Durak" in result.text or "draw" in result.text
        # No hand is ever shown in the group: only counts and table cards.
        table = await h.table(GROUP)
        assert table.phase == "finished"
        for uid in (ANN, BOB, CAROL):
            assert all("Your cards" not in m.text for m in h.emu.messages(GROUP))
            assert any("Durak in" in m.text for m in h.emu.messages(uid, include_deleted=True))


async def test_lobby_permissions_and_second_newgame(make_harness: Any) -> None:
    async with make_harness() as h:
        scene(h, ANN, BOB, CAROL)
        h.emu.add_member(GROUP, CAROL, admin=True)
        await h.start_bot()
        await open_dms(h, ANN, BOB, CAROL)
        await h.emu.user_sends(ANN, ANN, "/newgame")
        await h.wait_text(ANN, "works in groups")
        lobby = await lobby_with(h, [ANN, BOB])
        answer = await press(h, BOB, GROUP, lobby.message_id, text="Start")
        assert "Only the lobby creator or a group admin" in answer.text
        answer = await press(h, BOB, GROUP, lobby.message_id, text="Cancel")
        assert "Only the lobby creator or a group admin" in answer.text
        answer = await press(h, BOB, GROUP, lobby.message_id, text="⚙️ Options")
        assert "Only" in answer.text
        await press(h, ANN, GROUP, lobby.message_id, text="⚙️ Options")
        await h.emu.wait_for(lambda: "✓ 36" in h.emu.message(GROUP, lobby.message_id).button_texts)
        answer = await press(h, BOB, GROUP, lobby.message_id, text="52")
        assert "Only" in answer.text
        answer = await press(h, ANN, GROUP, lobby.message_id, text="52")
        assert answer.text == "✓ Deck: 52"  # the tapper sees the change at once
        await h.wait_text(GROUP, "Deck: 52")
        await press(h, ANN, GROUP, lobby.message_id, text="‹ Back")
        await h.emu.wait_for(lambda: "Start" in h.emu.message(GROUP, lobby.message_id).button_texts)
        await h.emu.user_sends(BOB, GROUP, "/newgame")
        note = await h.wait_text(GROUP, "lobby is already open")
        assert note.reply_to_message_id == lobby.message_id
        answer = await press(h, CAROL, GROUP, lobby.message_id, text="Start")  # an admin
        assert answer.text is None
        await h.wait_text(GROUP, "Trump:")
        await h.emu.user_sends(BOB, GROUP, "/newgame")
        note = await h.wait_text(GROUP, "already running")
        assert note.reply_to_message_id == lobby.message_id


async def test_closed_private_chat_gets_a_deep_link(make_harness: Any) -> None:
    async with make_harness() as h:
        scene(h, ANN, BOB)
        await h.start_bot()
        await open_dms(h, ANN)
        lobby = await open_lobby(h, GROUP, ANN)
        answer = await press(h, BOB, GROUP, lobby.message_id, text="Join")
        assert "open a private chat" in answer.text.lower()
        message = await h.wait_text(GROUP, "Waiting for Bob")
        urls = [b.get("url") for row in message.buttons for b in row if b.get("url")]
        assert urls == [f"https://t.me/durak_test_bot?start=g{GROUP}"]
        answer = await press(h, ANN, GROUP, lobby.message_id, text="Start")
        assert "Waiting" in answer.text
        assert (await h.table(GROUP)).phase == "lobby"
        await h.emu.user_opens_link(BOB, urls[0])
        await h.wait_text(BOB, "All set")

        def warning_gone() -> bool:
            current = h.emu.message(GROUP, lobby.message_id)
            return current is not None and "Waiting for" not in current.text

        await h.emu.wait_for(warning_gone)
        answer = await press(h, ANN, GROUP, lobby.message_id, text="Start")
        assert answer.text is None
        await h.wait_text(BOB, "Durak in Card Club")


async def started_game(h: Harness, humans: list[int], ais: list[str] = ()) -> Any:  # type: ignore[assignment]
    await open_dms(h, *humans)
    lobby = await lobby_with(h, humans, ais)
    await press(h, humans[0], GROUP, lobby.message_id, text="Start")
    await h.settle()
    return lobby


def move_button(h: Harness, user: int, step: int) -> tuple[int, str] | None:
    for _, mid, data in pressable(h, user, step):
        if data.split(":")[4][0] in "apBbt":
            return mid, data
    return None


async def test_stale_double_foreign_and_forged_taps(make_harness: Any) -> None:
    async with make_harness() as h:
        scene(h, ANN, BOB, CAROL)
        await h.start_bot()
        await open_dms(h, CAROL)
        await started_game(h, [ANN, BOB])
        table = await h.table(GROUP)
        step = table.state["step"]  # type: ignore[index]
        mover = next(u for u in (ANN, BOB) if move_button(h, u, step))
        mid, data = move_button(h, mover, step)  # type: ignore[misc]
        first = await h.emu.user_presses(mover, mover, mid, data=data)
        second = await h.emu.user_presses(mover, mover, mid, data=data)  # double tap
        # Updates run concurrently: either tap may be the one applied.
        # The applied one names the tapper's move; the other says it was done already.
        answers = sorted([str((await p.answer()).text) for p in (first, second)])
        assert answers[0].startswith("Too late: already done — you ")
        assert answers[1].startswith("✓ You ")
        assert (await h.table(GROUP)).state["step"] == step + 1  # type: ignore[index]
        # The same old button again, later: that card is on the table now; the toast
        # says what changed and the hand shows the current buttons.
        await h.settle()
        stale = await h.emu.user_sends_callback(mover, mover, mid, data)
        text = (await stale.answer()).text
        assert text is not None and text.startswith("Too late: ")
        assert text.endswith("Your buttons are up to date now.")
        # Someone not in the game replays a real button's data from their own chat.
        carol_msg = h.emu.last_message(CAROL)
        assert carol_msg is not None
        current = (await h.table(GROUP)).state["step"]  # type: ignore[index]
        other = next(u for u in (ANN, BOB) if move_button(h, u, current))
        _, real = move_button(h, other, current)  # type: ignore[misc]
        foreign = await h.emu.user_sends_callback(CAROL, CAROL, carol_msg.message_id, real)
        assert (await foreign.answer()).text == "You are not playing in this game."
        for forged in ("h:1:zzzzzz:1:aa", "garbage", "h:-100500:abcdef:1:a" + "a" * 70, "g:x:j"):
            handle = await h.emu.user_sends_callback(CAROL, CAROL, carol_msg.message_id, forged)
            assert (await handle.answer()).text in (
                "Unknown button.",
                "This button is out of date.",
            )
        assert (await h.table(GROUP)).state["step"] == current  # type: ignore[index]


async def test_simultaneous_taps_and_two_processes_apply_one_move(make_harness: Any) -> None:
    async with make_harness() as h:
        scene(h, ANN, BOB)
        await h.start_bot()
        await started_game(h, [ANN, BOB])
        table = await h.table(GROUP)
        step = table.state["step"]  # type: ignore[index]
        leader = next(u for u in (ANN, BOB) if move_button(h, u, step))
        defender = BOB if leader == ANN else ANN
        mid, data = move_button(h, leader, step)  # type: ignore[misc]
        await press(h, leader, leader, mid, data=data)
        step += 1

        def two_buttons() -> list[tuple[int, int, str]] | None:
            found = pressable(h, defender, step)
            moves = [b for b in found if b[2].split(":")[4][0] in "Bt"]
            return (moves * 2)[:2] if moves else None  # two different moves, or a double tap

        buttons = await h.emu.wait_for(two_buttons)
        pressed = await asyncio.gather(
            *(h.emu.user_presses(defender, defender, mid, data=d) for _, mid, d in buttons)
        )
        texts = sorted([str((await p.answer()).text) for p in pressed])
        assert texts[0].startswith("Too late: already done — you ")
        assert texts[1].startswith("✓ You ")
        assert (await h.table(GROUP)).state["step"] == step + 1  # type: ignore[index]

        # Two processes on one Redis, each applying a different move at the same moment.
        table = await h.table(GROUP)
        step = table.state["step"]  # type: ignore[index]
        other = await h.start_bot_offline()
        state = table.engine_state()
        movers = [p for p in range(2) if legal_actions(state, p)]
        seat = movers[0]
        uid = table.seats[seat].user_id
        assert uid is not None
        actions = legal_actions(state, seat)[:2]
        results = await asyncio.gather(
            *(
                games.run(Place(GROUP), flow.play, table.game_id, uid, step, action)
                for games, action in zip((h.games, other), actions * 2, strict=False)
            ),
            return_exceptions=True,
        )
        unexpected = [
            r for r in results if isinstance(r, BaseException) and not isinstance(r, FlowError)
        ]
        assert not unexpected
        errors = [r for r in results if isinstance(r, FlowError)]
        # Each move is applied once or refused: a second one still legal after the first
        # (another throw-in) is applied too, a double of the same move never.
        applied = len(results) - len(errors)
        assert applied >= 1 and (applied == 1 or actions[0] != actions[1])
        assert (await h.table(GROUP)).state["step"] == step + applied  # type: ignore[index]


async def test_restart_mid_game_keeps_the_game_and_its_buttons(make_harness: Any) -> None:
    async with make_harness() as h:
        scene(h, ANN, BOB)
        await h.start_bot()
        await started_game(h, [ANN, BOB])
        for _ in range(3):
            table = await h.table(GROUP)
            step = table.state["step"]  # type: ignore[index]
            user = next(u for u in (ANN, BOB) if move_button(h, u, step))
            mid, data = move_button(h, user, step)  # type: ignore[misc]
            await press(h, user, user, mid, data=data)
            await h.settle()
        await h.kill_bot()
        await h.start_bot()  # a new Application on the same Redis
        result = await play_out(h, GROUP, [ANN, BOB])
        assert "Game over" in result.text


async def test_timers_fire_after_restart_and_hand_the_seat_to_ai(make_harness: Any) -> None:
    async with make_harness() as h:
        scene(h, ANN, BOB)
        await h.start_bot()
        await started_game(h, [ANN, BOB])
        step = (await h.table(GROUP)).state["step"]  # type: ignore[index]
        await h.kill_bot()
        h.clock.advance(61)
        await h.start_bot()

        async def moved() -> None:
            await h.emu.wait_for(lambda: any(move_button(h, u, step + 1) for u in (ANN, BOB)))

        await moved()

        # Nobody plays: after three missed moves each seat goes to the computer.
        def game_over() -> bool:
            return any("Game over" in m.text for m in h.emu.messages(GROUP))

        await let_turns_time_out(h, until=game_over)
        assert any("Ann missed three moves" in m.text for m in h.emu.messages(GROUP))
        assert any("Bob missed three moves" in m.text for m in h.emu.messages(GROUP))
        assert game_over()


async def test_a_player_takes_their_seat_back_from_the_computer(make_harness: Any) -> None:
    async with make_harness() as h:
        scene(h, ANN, BOB)
        await h.start_bot()
        await started_game(h, [ANN, BOB])

        def handed_over() -> bool:
            return any("Ann missed three moves" in m.text for m in h.emu.messages(GROUP))

        await let_turns_time_out(h, until=handed_over)
        assert handed_over()
        seat = next(s for s in (await h.table(GROUP)).seats if s.user_id == ANN)
        assert seat.ai == "normal" and not seat.left

        label = "I'm back: play my seat myself"
        hand = await h.emu.wait_for(
            lambda: next((m for m in h.emu.messages(ANN) if label in m.button_texts), None),
            what="the take-back button",
        )
        data = next(b["callback_data"] for row in hand.buttons for b in row if b["text"] == label)
        answer = await press(h, ANN, ANN, hand.message_id, text=label)
        assert answer.text == "Your seat is yours again."
        seat = next(s for s in (await h.table(GROUP)).seats if s.user_id == ANN)
        assert seat.ai is None and seat.timeouts == 0
        await h.wait_text(GROUP, "Ann is back")
        # A double tap of the old button changes nothing: the seat is hers already.
        handle = await h.emu.user_sends_callback(ANN, ANN, hand.message_id, data)
        again = await handle.answer()
        assert again.text == "This button is out of date."


async def let_turns_time_out(h: Harness, *, until: Callable[[], bool]) -> None:
    """Nobody plays: advance the clock past each turn deadline until ``until()`` holds."""
    for _ in range(40):
        if until():
            return
        before = (await h.table(GROUP)).state["step"]  # type: ignore[index]
        # The hands land first: a turn counts from when its buttons were sent.
        await h.settle()
        h.clock.advance(61)
        h.games.scheduler.wake()
        # Once both seats are the computer's, the rest of the game is one long wait.
        await h.emu.wait_for(
            lambda before=before: until() or visible_step(h, (ANN, BOB)) > before, 30
        )


def visible_step(h: Harness, users: tuple[int, ...]) -> int:
    return max((s for u in users for s, _, _ in hand_buttons(h.emu, u)), default=-1)


async def test_429_storm_loses_no_move(make_harness: Any) -> None:
    async with make_harness() as h:
        scene(h, ANN, BOB)
        await h.start_bot()
        await started_game(h, [ANN, BOB])
        h.emu.inject_error("*", 429, "Too Many Requests: retry after 1", retry_after=1, times=6)
        result = await play_out(h, GROUP, [ANN, BOB], timeout=15)
        assert "Game over" in result.text
        assert h.emu.stats.too_many_requests == 6
        assert h.games.box.stats.retry_after >= 1
        table = await h.table(GROUP)
        assert table.phase == "finished"


async def test_stats_help_rules_language_after_a_game(make_harness: Any) -> None:
    async with make_harness() as h:
        scene(h, ANN, BOB)
        h.emu.add_member(GROUP, ANN, admin=True)
        await h.start_bot()
        await started_game(h, [ANN, BOB])
        await play_out(h, GROUP, [ANN, BOB])
        await h.emu.user_sends(BOB, GROUP, "/stats")
        stats = await h.wait_text(GROUP, "Statistics")
        assert "Ann — 1 game ·" in stats.text and "Bob — 1 game ·" in stats.text
        await h.emu.user_sends(ANN, ANN, "/stats")
        mine = await h.wait_text(ANN, "Your games: 1")
        assert "Times durak" in mine.text
        await h.emu.user_sends(BOB, GROUP, "/help")
        await h.wait_text(GROUP, "/newgame")
        await h.emu.user_sends(BOB, GROUP, "/rules")
        await h.wait_text(GROUP, "I sent you the rules")
        await h.wait_text(BOB, "Durak in brief")  # the short rules, with a Full rules button
        await h.emu.user_sends(BOB, GROUP, "/language")
        picker = await h.wait_text(GROUP, "Choose the language")
        answer = await press(h, BOB, GROUP, picker.message_id, text="Deutsch")
        assert "Only a group admin" in answer.text
        answer = await press(h, ANN, GROUP, picker.message_id, text="Deutsch")
        assert answer.text is None
        settings = await h.games.storage.chat_settings(GROUP)
        assert settings.lang == "de"


async def test_leaving_mid_game_makes_the_leaver_durak(make_harness: Any) -> None:
    async with make_harness() as h:
        scene(h, ANN, BOB, CAROL)
        await h.start_bot()
        await started_game(h, [ANN, BOB, CAROL])
        hand = next(
            m
            for m in h.emu.messages(BOB)
            if any(b["text"] == "Leave game" for row in m.buttons for b in row)
        )
        await press(h, BOB, BOB, hand.message_id, text="Leave game")
        confirm = await h.emu.wait_for(
            lambda: next(
                (
                    m
                    for m in h.emu.messages(BOB)
                    if any(b["text"] == "Yes, leave" for row in m.buttons for b in row)
                ),
                None,
            )
        )
        answer = await press(h, BOB, BOB, confirm.message_id, text="Yes, leave")
        assert answer.text == "You left the game."
        await h.wait_text(GROUP, "Bob left the game")
        result = await play_out(h, GROUP, [ANN, CAROL])
        assert "Durak: Bob" in result.text


async def test_last_human_leaving_ends_the_game(make_harness: Any) -> None:
    async with make_harness() as h:
        scene(h, ANN, BOB)
        await h.start_bot()
        await started_game(h, [ANN, BOB])
        table = await h.table(GROUP)
        from bot.domain.callbacks import encode_hand_op

        data = encode_hand_op(Place(GROUP), table.game_id, table.state["step"], "leave_yes")  # type: ignore[index]
        hand = h.emu.last_message(ANN)
        assert hand is not None
        handle = await h.emu.user_sends_callback(ANN, ANN, hand.message_id, data)
        await handle.answer()
        result = await h.wait_text(GROUP, "Game over")
        assert "Durak: Ann" in result.text


async def test_command_menus_are_published(make_harness: Any) -> None:
    async with make_harness() as h:
        bot = await h.start_bot()
        from bot.wiring.application import publish_commands

        await publish_commands(bot.app)
        group = h.emu.commands(scope_type="all_group_chats")
        assert [c["command"] for c in group][:1] == ["newgame"]
        for lang in ("en", "es", "de", "pt"):
            assert h.emu.commands(scope_type="all_private_chats", language_code=lang)


async def test_one_user_in_two_groups_gets_a_labelled_hand_per_game(make_harness: Any) -> None:
    async with make_harness() as h:
        scene(h, ANN, BOB)
        other = GROUP - 1
        h.emu.add_group(other, "Night Owls", members=[ANN, BOB], creator=ANN)
        await h.start_bot()
        await open_dms(h, ANN, BOB)
        for chat in (GROUP, other):
            lobby = await open_lobby(h, chat, ANN)
            await press(h, BOB, chat, lobby.message_id, text="Join")
            await press(h, ANN, chat, lobby.message_id, text="Start")
        await h.settle()
        hands = [m.text for m in h.emu.messages(ANN) if m.text.startswith("🃏 Durak in")]
        assert sorted(t.splitlines()[0] for t in hands) == [
            "🃏 Durak in Card Club",
            "🃏 Durak in Night Owls",
        ]


async def test_series_continues_with_next_game(make_harness: Any) -> None:
    async with make_harness() as h:
        scene(h, ANN)
        await h.start_bot()
        await open_dms(h, ANN)
        lobby = await lobby_with(h, [ANN], ["Easy"])
        await press(h, ANN, GROUP, lobby.message_id, text="⚙️ Options")
        await h.emu.wait_for(lambda: "✓ 1" in buttons_of(h.emu.message(GROUP, lobby.message_id)))
        await press(h, ANN, GROUP, lobby.message_id, text="3")
        await h.wait_text(GROUP, "Series: 3")
        await press(h, ANN, GROUP, lobby.message_id, text="‹ Back")
        await h.emu.wait_for(lambda: "Start" in buttons_of(h.emu.message(GROUP, lobby.message_id)))
        await press(h, ANN, GROUP, lobby.message_id, text="Start")
        result = await play_out(h, GROUP, [ANN])
        assert "Series after game 1 of 3" in result.text
        await press(h, ANN, GROUP, result.message_id, text="Next game")
        second = await h.wait_text(GROUP, "Series: game 2 of 3")
        assert second.message_id != lobby.message_id
        await press(h, ANN, GROUP, second.message_id, text="Start")
        await h.wait_text(GROUP, "game 2 of 3")
        table = await h.table(GROUP)
        assert table.phase == "playing" and table.games_played == 1


async def test_real_flood_limits_are_never_hit(make_harness: Any) -> None:
    """Telegram's limits on (20/min per group, ~1/s per private chat, 30/s): the bot's
    pacing and coalescing keep every call within them while moves keep coming."""
    production_pacing = {
        "group_edit_interval": 3.0,
        "group_max_per_minute": 19,
        "private_interval": 1.0,
        "global_rate": 25.0,
        "calm_delay": 3.0,
        "notify_quiet": 20.0,
    }
    async with make_harness(rate_limits=RateLimits(), **production_pacing) as h:
        scene(h, ANN, BOB)
        await h.start_bot()
        await started_game(h, [ANN, BOB])
        pressed = 0
        while pressed < 12:
            step = (await h.table(GROUP)).state["step"]  # type: ignore[index]
            found = await h.emu.wait_for(
                lambda step=step: next(
                    ((u, *b) for u in (ANN, BOB) if (b := move_button(h, u, step))), None
                ),
                timeout=10,
            )
            user, mid, data = found
            answer = await press(h, user, user, mid, data=data)
            pressed += answer.text is not None and answer.text.startswith("✓ ")  # applied
        await h.settle()
        assert h.emu.stats.too_many_requests == 0
        final = await h.table(GROUP)
        table_text = h.emu.message(GROUP, final.table_message_id or 0)
        assert table_text is not None and "Trump:" in table_text.text
        assert h.emu.stats.chat_calls[GROUP] < pressed  # coalesced table edits


async def test_partners_two_against_two_to_the_end(make_harness: Any) -> None:
    async with make_harness() as h:
        scene(h, ANN, BOB)
        await h.start_bot()
        await open_dms(h, ANN, BOB)
        lobby = await lobby_with(h, [ANN, BOB], ["Easy"])
        assert not any(
            t.startswith("Partners") for t in buttons_of(h.group_message(GROUP, "Players"))
        )
        answer = await press(h, ANN, GROUP, lobby.message_id, text="+ AI Normal")
        assert answer.text is None
        await h.wait_text(GROUP, "4. 🤖 Boris · Normal")
        await press(h, ANN, GROUP, lobby.message_id, text="⚙️ Options")
        await h.emu.wait_for(
            lambda: "Partners" in buttons_of(h.emu.message(GROUP, lobby.message_id))
        )
        answer = await press(
            h,
            ANN,
            GROUP,
            lobby.message_id,
            data=callbacks.encode_group((await h.table(GROUP)).game_id, "partners", 1),
        )
        assert answer.text == "✓ Partners: on"
        await h.wait_text(GROUP, "Partners: on")
        await press(h, ANN, GROUP, lobby.message_id, text="‹ Back")
        await h.emu.wait_for(lambda: "Start" in buttons_of(h.emu.message(GROUP, lobby.message_id)))
        await press(h, ANN, GROUP, lobby.message_id, text="Start")
        table = await h.wait_text(GROUP, "team A")
        assert "team B" in table.text
        result = await play_out(h, GROUP, [ANN, BOB])
        assert "Team" in result.text or "draw" in result.text
        game = await h.table(GROUP)
        assert game.series is not None and game.series.games_played == 1
        if game.final_losing_team is not None:
            names = [visible_text(n) for n in seat_names(game.seats, translator("en"))]
            losers = [name for i, name in enumerate(names) if i % 2 == game.final_losing_team]
            assert all(name in result.text for name in losers)
