"""The lobby shows only buttons that can do something, options as explicit choices on a
screen of their own, and asks before it is cancelled (issue "A table you read at a glance")."""

from __future__ import annotations

import json
from typing import Any

import pytest
from support.harness import Harness, open_lobby, press
from test_bot_e2e import open_dms, scene

from bot import render
from bot.domain import callbacks, flow
from bot.domain.callbacks import CallbackError, GroupButton
from bot.domain.flow import FlowError, Moment, Person, Timing
from bot.domain.lobby_options import LOBBY_OPTIONS, OPTIONS_BY_OP
from bot.domain.place import Place
from bot.domain.records import ChatGame, LobbyScreen
from bot.render.labels import too_wide
from engine import Rules
from locales import SUPPORTED, translator

pytestmark = pytest.mark.filterwarnings("ignore:Deprecated since version v22.2")

GID = "sc0001"
T0 = Moment(0.0, Timing(turn_timeout=60.0, ai_delay=1.0, notify_quiet=0.0))
ANN, BOB = Person(1, "Ann"), Person(2, "Bob")
EN = translator("en")
GROUP = -100500
ANN_ID, BOB_ID = 11, 12


def lobby(*people: Person, computers: int = 0, rules: Rules | None = None) -> ChatGame:
    game, _ = flow.new_lobby(None, T0, Place(-100), "Club", ANN, GID, show_how_to=False)
    if rules is not None:
        game.rules = rules
    for person in people:
        game, _ = flow.join(game, T0, GID, person)
    for i in range(computers):
        level = ("easy", "normal", "hard")[i % 3]
        game, _ = flow.add_ai(game, T0, GID, 1, level, f"AI {i}")  # type: ignore[arg-type]
    return game


def rows_of(game: ChatGame, unreachable: set[int] | None = None, lang: str = "en") -> list[Any]:
    shown = render.lobby_message(game, translator(lang), "bot", unreachable or set())
    assert shown.markup is not None
    return [list(row) for row in shown.markup.inline_keyboard]


def labels(game: ChatGame, unreachable: set[int] | None = None) -> list[str]:
    return [b.text for row in rows_of(game, unreachable) for b in row]


def ops(game: ChatGame) -> list[str]:
    out = []
    for row in rows_of(game):
        for b in row:
            if b.callback_data is not None:
                decoded = callbacks.decode(b.callback_data)
                assert isinstance(decoded, GroupButton)
                out.append(decoded.op)
    return out


# --- which buttons, by seat count and state ------------------------------------------------


def test_join_and_add_ai_only_while_a_seat_is_free() -> None:
    five = lobby(BOB, computers=3)
    assert {"join", "leave", "ai_easy", "ai_normal", "ai_hard"} <= set(ops(five))
    six, _ = flow.add_ai(five, T0, GID, 1, "easy", "AI 5")
    assert "join" not in ops(six) and not any(op.startswith("ai_") for op in ops(six))
    assert "leave" in ops(six) and "start" in ops(six)
    # A 24-card deck seats four: four seated is a full table.
    small = lobby(BOB, computers=2, rules=Rules(deck_size=24))
    assert "join" not in ops(small) and "ai_easy" not in ops(small)
    assert "Players (4/4):" in render.lobby_message(small, EN, "bot", set()).text


def test_remove_ai_names_the_seat_it_removes() -> None:
    assert "remove_ai" not in ops(lobby(BOB))
    game = lobby(computers=2)  # Easy, then Normal
    assert "− 🤖 Boris · Normal" in labels(game)
    game, _ = flow.remove_ai(game, T0, GID, 1)
    assert "− 🤖 Vera · Easy" in labels(game) and "− 🤖 Boris · Normal" not in labels(game)


def test_remove_unreachable_only_when_someone_else_cannot_be_reached() -> None:
    game = lobby(BOB)
    assert "drop_unreachable" not in ops(game)
    # Only the creator has no private chat: the lobby tells her to open one, nothing to remove.
    alone = labels(game, {ANN.user_id})
    assert "Open a chat with me" in alone and "Remove players I can't reach" not in alone
    both = labels(game, {BOB.user_id})
    assert both[0] == "Open a chat with me" and both[-1] == "Remove players I can't reach"


def test_the_options_screen_marks_each_current_value_and_hides_the_rest() -> None:
    game = lobby(BOB)
    assert "⚙️ Options" in labels(game)
    assert not any(b.startswith("Deck") for b in labels(game))  # values live on the screen
    game.lobby_screen = "options"
    shown = render.lobby_message(game, EN, "bot", set())
    assert "tap a value to choose it" in shown.text
    rows = [[b.text for b in row] for row in rows_of(game)]
    assert rows[0] == ["Join", "Leave"]  # nobody waits to sit while options are chosen
    assert ["Deck", "24", "✓ 36", "52"] in rows and ["Pace", "✓ normal", "fast", "relaxed"] in rows
    assert rows[-1] == ["‹ Back"]
    assert not {"start", "cancel", "ai_easy"} & set(ops(game))
    # Each value button sets exactly that value.
    for row in rows_of(game):
        for b in row:
            decoded = callbacks.decode(str(b.callback_data))
            assert isinstance(decoded, GroupButton)
            if decoded.choice is not None:
                option = OPTIONS_BY_OP[decoded.op]
                assert b.text.removeprefix("✓ ") == render.lobby.value_text(
                    option, option.values[decoded.choice], EN
                )


def test_cancel_asks_first() -> None:
    game = lobby(BOB)
    game.lobby_screen = "cancel"
    shown = render.lobby_message(game, EN, "bot", set())
    assert "Cancel this game?" in shown.text
    assert ["Yes, cancel", "No, keep it"] in [[b.text for b in row] for row in rows_of(game)]
    assert "start" not in ops(game) and "join" in ops(game)


@pytest.mark.parametrize("lang", SUPPORTED)
def test_every_lobby_screen_fits_a_phone_in_every_language(lang: str) -> None:
    tr = translator(lang)
    screens: tuple[LobbyScreen, ...] = ("main", "options", "cancel")
    for computers in (0, 1, 2, 3, 4):
        for deck in (24, 36, 52):
            game = lobby(BOB, computers=computers, rules=Rules(deck_size=deck))
            for screen in screens:
                game.lobby_screen = screen
                for unreachable in (set(), {BOB.user_id}):
                    rows = rows_of(game, unreachable, lang)
                    assert too_wide(rows) == [], (lang, computers, deck, screen)
    # The English labels other checks rely on.
    if lang == "en":
        main = labels(lobby(BOB))
        assert {"Join", "Leave", "Start", "Cancel"} <= set(main)
        assert {"+ AI Easy", "+ AI Normal", "+ AI Hard"} <= set(main)
        assert tr.t("lobby.ai_easy") in tr.t("rules.howto")


# --- the flow and the record ------------------------------------------------------------------


def test_choosing_a_value_sets_it_and_refuses_what_the_seats_do_not_allow() -> None:
    game = lobby(BOB)
    game, _ = flow.choose_option(game, T0, GID, 1, "deck", 2)
    assert game.rules.deck_size == 52
    same, _ = flow.choose_option(game.model_copy(deep=True), T0, GID, 1, "deck", 2)
    assert same.rules == game.rules
    game, _ = flow.choose_option(game, T0, GID, 1, "pace", 2)
    assert game.pace == "relaxed"
    with pytest.raises(FlowError, match="partners_seats"):
        flow.choose_option(game, T0, GID, 1, "partners", 1)
    with pytest.raises(FlowError, match="invalid"):
        flow.choose_option(game, T0, GID, 1, "deck", 3)


def test_the_seated_are_told_kindly_that_join_does_nothing_for_them() -> None:
    with pytest.raises(FlowError, match=r"lobby\.already_joined"):
        flow.join(lobby(BOB), T0, GID, BOB)
    assert "tap Leave" in EN.t("lobby.already_joined")
    with pytest.raises(FlowError, match=r"lobby\.not_joined"):
        flow.leave_lobby(lobby(), T0, GID, BOB.user_id)


def test_the_screen_is_stored_in_the_record_and_left_out_at_its_default() -> None:
    game = lobby(BOB)
    assert "lobby_screen" not in json.loads(game.to_json())  # readable by older code
    game, _ = flow.show_screen(game, T0, GID, 1, "options")
    stored = json.loads(game.to_json())
    assert stored["lobby_screen"] == "options"
    assert ChatGame.model_validate_json(game.to_json()).lobby_screen == "options"
    started, _ = flow.start(game, T0, GID, 1, [])
    assert "lobby_screen" not in json.loads(started.to_json())


def test_option_buttons_carry_their_value_and_nothing_else_does() -> None:
    for option in LOBBY_OPTIONS:
        for i in range(len(option.values)):
            data = callbacks.encode_group(GID, option.op, i)
            assert callbacks.decode(data) == GroupButton(GID, option.op, i)
    with pytest.raises(ValueError, match="no value"):
        callbacks.encode_group(GID, "join", 0)
    for forged in (f"g:{GID}:d3", f"g:{GID}:j1", f"g:{GID}:d12"):
        with pytest.raises(CallbackError):
            callbacks.decode(forged)


# --- through the emulator ---------------------------------------------------------------------


def button_texts(h: Harness, message_id: int) -> list[str]:
    message = h.emu.message(GROUP, message_id)
    return [] if message is None else message.button_texts


async def wait_button(h: Harness, message_id: int, text: str) -> None:
    await h.emu.wait_for(lambda: text in button_texts(h, message_id), 5, what=text)


async def test_options_screen_survives_a_restart_and_a_second_worker(make_harness: Any) -> None:
    async with make_harness() as h:
        scene(h, ANN_ID, BOB_ID)
        await h.start_bot()
        await open_dms(h, ANN_ID, BOB_ID)
        lobby_message = await open_lobby(h, GROUP, ANN_ID)
        mid = lobby_message.message_id
        assert (await press(h, BOB_ID, GROUP, mid, text="Join")).text == "You joined the game."
        kind = await press(h, BOB_ID, GROUP, mid, text="Join")
        assert kind.text == EN.t("lobby.already_joined")
        refused = await press(h, BOB_ID, GROUP, mid, text="⚙️ Options")
        assert refused.text == EN.t("toast.only_creator_manage")
        assert (await press(h, ANN_ID, GROUP, mid, text="⚙️ Options")).text is None
        await wait_button(h, mid, "✓ 36")
        await h.settle()

        # The bot restarts; a second worker renders the same screen from the record.
        await h.kill_bot()
        other = await h.start_bot_offline()
        game = await other.storage.load_table(Place(GROUP))
        assert game is not None and game.lobby_screen == "options"
        assert "✓ 36" in [
            b.text for row in (await other.render_group(game)).markup.inline_keyboard for b in row
        ]  # type: ignore[union-attr]
        await h.start_bot()
        # The answer names the new value at once; the message edit follows.
        answer = await press(h, ANN_ID, GROUP, mid, text="52")
        assert answer.text == "✓ Deck: 52"
        assert (await h.table(GROUP)).rules.deck_size == 52
        await wait_button(h, mid, "✓ 52")
        assert (await press(h, ANN_ID, GROUP, mid, text="Deck")).text == EN.t("lobby.options_hint")
        assert (await press(h, ANN_ID, GROUP, mid, text="‹ Back")).text is None
        await wait_button(h, mid, "Start")
        assert (await h.table(GROUP)).lobby_screen == "main"


async def test_cancel_needs_a_second_tap(make_harness: Any) -> None:
    async with make_harness() as h:
        scene(h, ANN_ID, BOB_ID)
        await h.start_bot()
        await open_dms(h, ANN_ID, BOB_ID)
        mid = (await open_lobby(h, GROUP, ANN_ID)).message_id
        await press(h, BOB_ID, GROUP, mid, text="Join")
        assert (await press(h, ANN_ID, GROUP, mid, text="Cancel")).text is None
        await wait_button(h, mid, "No, keep it")
        answer = await press(h, BOB_ID, GROUP, mid, text="Yes, cancel")
        assert answer.text == EN.t("toast.only_creator_manage")
        await press(h, ANN_ID, GROUP, mid, text="No, keep it")
        await wait_button(h, mid, "Cancel")
        assert (await h.table(GROUP)).phase == "lobby"
        await press(h, ANN_ID, GROUP, mid, text="Cancel")
        await wait_button(h, mid, "Yes, cancel")
        await press(h, ANN_ID, GROUP, mid, text="Yes, cancel")
        await h.wait_text(GROUP, EN.t("lobby.cancelled"))
        assert (await h.table(GROUP)).phase == "cancelled"
