"""/settings end to end (the real PTB application, the emulator, Redis): a group's admin
turns its rating off from the menu and the next game is not rated; a member's tap
changes nothing; a private chat is told settings belong to a group; the menu speaks the
group's language; an admin's defaults are what a new lobby starts from; only admins start
games where the group says so; the group's turn timeout is the table's clock."""

from __future__ import annotations

from typing import Any

import pytest
from support.harness import Harness, moved_past, press
from test_bot_ratings_e2e import GROUP, labels_of, last_id, new_message, quick_game, result_of

from bot.domain import callbacks
from bot.domain.callbacks import SCREEN
from bot.domain.group_settings import SCREENS, SETTINGS_BY_NAME
from bot.domain.place import Place
from bot.domain.records import ChatSettings

pytestmark = pytest.mark.filterwarnings("ignore:Deprecated since version v22.2")

ANN, BOB, CAT = 41, 42, 43
"""The group's creator, a member, and an admin."""
MENU = "Settings of this group"
SECTIONS = ["🎲 New games", "👥 Group"]
GROUP_ROWS = ["Who starts", "✓ anyone", "admins", "Time for a move"]


def scene(h: Harness) -> None:
    h.emu.add_user(ANN, "Ann")
    h.emu.add_user(BOB, "Bob")
    h.emu.add_user(CAT, "Cat")
    h.emu.add_group(GROUP, "Settings Club", members=[ANN, BOB], admins=[CAT], creator=ANN)


def menu_edits(h: Harness, menu: int) -> int:
    events = h.emu.chat_events(GROUP)
    return sum(e["type"] == "edit" and e["message"]["message_id"] == menu for e in events)


async def open_menu(h: Harness, user: int, title: str = MENU) -> int:
    mark = last_id(h, GROUP)
    await h.emu.user_sends(user, GROUP, "/settings")
    return (await new_message(h, GROUP, mark, title)).message_id


async def screen(h: Harness, user: int, menu: int, name: str) -> None:
    """Show the menu's screen ``name`` (anyone may) and wait until it is shown."""
    data = callbacks.encode_settings(SCREEN, SCREENS.index(name))  # type: ignore[arg-type]
    answer = await press(h, user, GROUP, menu, data=data)
    assert answer.text is None
    # A section has "‹ Back" (to screen 0); the first screen, the sections.
    want = callbacks.encode_settings(SCREEN, 0 if name != "home" else 1)

    def shown() -> bool:
        message = h.emu.message(GROUP, menu)
        rows = message.buttons if message is not None else []
        return want in [b.get("callback_data") for row in rows for b in row]

    await h.emu.wait_for(shown, 5, what=name)


async def choose(h: Harness, user: int, menu: int, setting: str, value: Any) -> Any:
    """Tap the button of ``setting``'s ``value``; the answer."""
    index = SETTINGS_BY_NAME[setting].values.index(value)
    return await press(h, user, GROUP, menu, data=callbacks.encode_settings(setting, index))


async def test_an_admin_turns_rating_off_and_the_next_game_is_not_rated(
    make_harness: Any,
) -> None:
    async with make_harness() as h:
        scene(h)
        await h.start_bot()
        await h.emu.user_starts_bot(ANN)
        menu = await open_menu(h, BOB)  # anyone may look, and see every setting
        assert labels_of(h, GROUP, menu) == SECTIONS
        text = h.emu.message(GROUP, menu).text  # type: ignore[union-attr]
        for line in ("Rating: on", "Who may start games: anyone", "Time for a move: 60 s"):
            assert line in text
        assert "Tidy-up: on" in text and "New games: the last game's options" in text
        await screen(h, BOB, menu, "group")  # and look at a section
        assert labels_of(h, GROUP, menu)[-4:] == ["Rating", "off", "✓ on", "‹ Back"]
        answer = await choose(h, CAT, menu, "rating", False)
        assert answer.text == "✓ Rating: off"
        assert (await h.games.storage.chat_settings(GROUP)).rating is False
        await h.emu.wait_for(lambda: labels_of(h, GROUP, menu)[-3:-1] == ["✓ off", "on"])

        game_id = await quick_game(h, [ANN])
        assert "📈" not in result_of(h, ANN).text
        assert await h.games.storage.rating_lines(Place(GROUP), game_id) == {}

        # The creator may too; the marked value again changes nothing and edits nothing.
        answer = await choose(h, ANN, menu, "rating", True)
        assert answer.text == "✓ Rating: on"
        await h.emu.wait_for(lambda: labels_of(h, GROUP, menu)[-3:-1] == ["off", "✓ on"])
        await h.settle()
        edits = menu_edits(h, menu)
        assert (await choose(h, ANN, menu, "rating", True)).text == "✓ Rating: on"  # marked
        await h.settle()
        assert menu_edits(h, menu) == edits == 3  # the section, off, on
        assert (await h.games.storage.chat_settings(GROUP)).rating is True
        await screen(h, BOB, menu, "home")
        assert "Rating: on" in h.emu.message(GROUP, menu).text  # type: ignore[union-attr]


async def test_a_members_tap_is_refused_and_changes_nothing(make_harness: Any) -> None:
    async with make_harness() as h:
        scene(h)
        await h.start_bot()
        menu = await open_menu(h, BOB)
        await screen(h, BOB, menu, "games")
        await h.settle()
        before = h.emu.message(GROUP, menu)
        answer = await choose(h, BOB, menu, "deck", 52)
        assert answer.text == "Only a group admin can change the settings"
        name = await press(h, BOB, GROUP, menu, text="Deck")
        assert name.text == "Tap a value beside it to choose"
        await h.settle()
        assert h.emu.message(GROUP, menu) == before and menu_edits(h, menu) == 1
        await screen(h, BOB, menu, "home")
        await screen(h, BOB, menu, "group")
        for setting, value in (("rating", False), ("starts", "admins"), ("tidy", False)):
            answer = await choose(h, BOB, menu, setting, value)
            assert answer.text == "Only a group admin can change the settings"
        await h.settle()
        settings = await h.games.storage.chat_settings(GROUP)
        assert settings.model_copy(update={"lang": None}) == ChatSettings()
        assert menu_edits(h, menu) == 3  # the screens shown, nothing else


async def test_settings_in_private_says_they_are_per_group(make_harness: Any) -> None:
    async with make_harness() as h:
        scene(h)
        await h.start_bot()
        await h.emu.user_starts_bot(BOB)
        await h.emu.user_sends(BOB, BOB, "/settings")
        reply = await h.wait_text(BOB, "Settings are per group")
        assert "Send /settings in a group" in reply.text and not reply.buttons


async def test_the_menu_speaks_the_groups_language(make_harness: Any) -> None:
    async with make_harness() as h:
        scene(h)
        await h.start_bot()
        await h.games.storage.save_chat_settings(GROUP, ChatSettings(lang="de"))
        menu = await open_menu(h, CAT, "Einstellungen dieser Gruppe")
        assert labels_of(h, GROUP, menu) == ["🎲 Neue Spiele", "👥 Gruppe"]
        await screen(h, CAT, menu, "group")
        answer = await choose(h, CAT, menu, "rating", False)
        assert answer.text == "✓ Rating: off"  # the toast: the tapper's own language
        await h.emu.wait_for(
            lambda: labels_of(h, GROUP, menu)[-4:] == ["Wertung", "✓ aus", "an", "‹ Zurück"]
        )
        await screen(h, CAT, menu, "home")
        assert "Wertung: aus" in h.emu.message(GROUP, menu).text  # type: ignore[union-attr]
        assert (await h.games.storage.chat_settings(GROUP)).lang == "de"  # kept


async def test_a_new_lobby_starts_from_the_defaults_an_admin_chose(make_harness: Any) -> None:
    async with make_harness() as h:
        scene(h)
        await h.start_bot()
        menu = await open_menu(h, CAT)
        await screen(h, CAT, menu, "games")
        chosen = {"deck": 52, "transfer": "perevodnoy", "series": 3, "pace": "fast", "ai": "hard"}
        for setting, value in chosen.items():
            answer = await choose(h, CAT, menu, setting, value)
            assert answer.text.startswith("✓ "), answer.text
        await h.emu.wait_for(
            lambda: "✓ 52" in labels_of(h, GROUP, menu) and "✓ fast" in labels_of(h, GROUP, menu)
        )
        defaults = (await h.games.storage.chat_settings(GROUP)).defaults
        assert defaults is not None and defaults.rules.deck_size == 52

        mark = last_id(h, GROUP)
        await h.emu.user_sends(ANN, GROUP, "/newgame")
        lobby = await new_message(h, GROUP, mark, "new game")
        table = await h.table(GROUP)
        assert (table.rules.deck_size, table.rules.variant) == (52, "perevodnoy")
        assert (table.rules.series_length, table.pace) == (3, "fast")
        assert "Deck: 52" in lobby.text and "Pace: fast" in lobby.text
        computers = [label for label in labels_of(h, GROUP, lobby.message_id) if "AI" in label]
        assert computers == ["+ AI Hard", "+ AI Easy", "+ AI Normal"]  # the chosen one first
        await screen(h, CAT, menu, "home")
        text = h.emu.message(GROUP, menu).text  # type: ignore[union-attr]
        assert "New games: Deck: 52 · " in text and "Pace: fast" in text


async def test_only_admins_start_games_where_the_group_says_so(make_harness: Any) -> None:
    async with make_harness() as h:
        scene(h)
        await h.start_bot()
        for uid in (ANN, BOB, CAT):
            await h.emu.user_starts_bot(uid)
        menu = await open_menu(h, CAT)
        await screen(h, CAT, menu, "group")
        answer = await choose(h, CAT, menu, "starts", "admins")
        assert answer.text == "✓ Who starts: admins"

        await h.emu.user_sends(BOB, GROUP, "/newgame")  # a member
        await h.wait_text(GROUP, "Only the group's admins can start games here")
        assert await h.games.storage.load_table(Place(GROUP)) is None

        # A lobby an admin opened: a member seated in it still may not start it.
        mark = last_id(h, GROUP)
        await h.emu.user_sends(CAT, GROUP, "/newgame")
        lobby = await new_message(h, GROUP, mark, "new game")
        await press(h, BOB, GROUP, lobby.message_id, text="Join")
        await h.wait_text(GROUP, "2. Bob")
        await press(h, CAT, GROUP, lobby.message_id, text="Leave")  # Bob now holds it
        await h.emu.wait_for(lambda: "1. Bob" in h.emu.message(GROUP, lobby.message_id).text)  # type: ignore[union-attr]
        await press(h, BOB, GROUP, lobby.message_id, text="+ AI Easy")
        answer = await press(h, BOB, GROUP, lobby.message_id, text="Start")
        assert answer.text == "Only group admins can start games here"
        assert (await h.table(GROUP)).phase == "lobby"
        await press(h, CAT, GROUP, lobby.message_id, text="Start")  # an admin may
        await h.emu.wait_for(
            lambda: (
                h.emu.message(GROUP, lobby.message_id) is not None
                and "Trump:" in h.emu.message(GROUP, lobby.message_id).text
            )
        )  # type: ignore[union-attr]
        assert (await h.table(GROUP)).phase == "playing"


async def test_the_groups_turn_timeout_is_the_tables_clock(make_harness: Any) -> None:
    async with make_harness(turn_timeout=60.0) as h:
        scene(h)
        await h.start_bot()
        for uid in (ANN, BOB):
            await h.emu.user_starts_bot(uid)
        menu = await open_menu(h, CAT)
        await screen(h, CAT, menu, "group")
        assert "✓ 60 s" in labels_of(h, GROUP, menu)  # the bot's own, until one is chosen
        answer = await choose(h, CAT, menu, "timeout", 30)
        assert answer.text == "✓ Time for a move: 30 s"
        await h.emu.wait_for(lambda: "✓ 30 s" in labels_of(h, GROUP, menu))

        mark = last_id(h, GROUP)
        await h.emu.user_sends(ANN, GROUP, "/newgame")
        lobby = await new_message(h, GROUP, mark, "new game")
        await press(h, BOB, GROUP, lobby.message_id, text="Join")
        await h.wait_text(GROUP, "2. Bob")
        await press(h, ANN, GROUP, lobby.message_id, text="Start")
        await h.wait_text(GROUP, "Trump:")
        await h.settle()
        table = await h.table(GROUP)
        assert table.turn_timeout == 30
        assert table.turn_deadline is not None and table.started_at is not None
        assert table.turn_deadline - table.started_at == pytest.approx(30.0)
        # Half the bot's own timeout later, the player's time is up: the bot moves.
        step = table.engine_state().step
        h.clock.advance(31.0)
        h.games.scheduler.wake()
        await moved_past(h, GROUP, step)
        assert (await h.table(GROUP)).auto_steps, "the bot moved for the player out of time"
