"""/settings end to end (the real PTB application, the emulator, Redis): a group's admin
turns its rating off from the menu and the next game is not rated; a member's tap
changes nothing; a private chat is told settings belong to a group; the menu speaks the
group's language."""

from __future__ import annotations

from typing import Any

import pytest
from support.harness import Harness, press
from test_bot_ratings_e2e import GROUP, labels_of, last_id, new_message, quick_game, result_of

from bot.domain import callbacks
from bot.domain.callbacks import CallbackError, SettingsButton
from bot.domain.place import Place
from bot.domain.records import ChatSettings
from bot.render.labels import too_wide
from bot.render.settings import settings_menu
from locales import SUPPORTED, translator

pytestmark = pytest.mark.filterwarnings("ignore:Deprecated since version v22.2")

ANN, BOB, CAT = 41, 42, 43
"""The group's creator, a member, and an admin."""
MENU = "Settings of this group"


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


async def test_an_admin_turns_rating_off_and_the_next_game_is_not_rated(
    make_harness: Any,
) -> None:
    async with make_harness() as h:
        scene(h)
        await h.start_bot()
        await h.emu.user_starts_bot(ANN)
        menu = await open_menu(h, BOB)  # anyone may look
        assert labels_of(h, GROUP, menu) == ["Rating", "✓ on", "off"]
        assert "Rating: on" in h.emu.message(GROUP, menu).text  # type: ignore[union-attr]
        answer = await press(h, CAT, GROUP, menu, text="off")
        assert answer.text == "✓ Rating: off"
        assert (await h.games.storage.chat_settings(GROUP)).rating is False
        await h.emu.wait_for(lambda: labels_of(h, GROUP, menu) == ["Rating", "on", "✓ off"])
        assert "Rating: off" in h.emu.message(GROUP, menu).text  # type: ignore[union-attr]

        game_id = await quick_game(h, [ANN])
        assert "📈" not in result_of(h, ANN).text
        assert await h.games.storage.rating_lines(Place(GROUP), game_id) == {}

        # The creator may too; the marked value again changes nothing and edits nothing.
        answer = await press(h, ANN, GROUP, menu, text="on")
        assert answer.text == "✓ Rating: on"
        await h.emu.wait_for(lambda: labels_of(h, GROUP, menu) == ["Rating", "✓ on", "off"])
        await h.settle()
        edits = menu_edits(h, menu)
        assert (await press(h, ANN, GROUP, menu, text="✓ on")).text == "✓ Rating: on"
        await h.settle()
        assert menu_edits(h, menu) == edits == 2
        assert (await h.games.storage.chat_settings(GROUP)).rating is True


async def test_a_members_tap_is_refused_and_changes_nothing(make_harness: Any) -> None:
    async with make_harness() as h:
        scene(h)
        await h.start_bot()
        menu = await open_menu(h, BOB)
        await h.settle()
        before = h.emu.message(GROUP, menu)
        answer = await press(h, BOB, GROUP, menu, text="off")
        assert answer.text == "Only a group admin can change the settings"
        name = await press(h, BOB, GROUP, menu, text="Rating")
        assert name.text == "Tap a value beside it to choose"
        await h.settle()
        assert (await h.games.storage.chat_settings(GROUP)).rating is True
        assert h.emu.message(GROUP, menu) == before and menu_edits(h, menu) == 0


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
        assert labels_of(h, GROUP, menu) == ["Wertung", "✓ an", "aus"]
        answer = await press(h, CAT, GROUP, menu, text="aus")
        assert answer.text == "✓ Rating: off"  # the toast: the tapper's own language
        await h.emu.wait_for(lambda: labels_of(h, GROUP, menu) == ["Wertung", "an", "✓ aus"])
        assert "Wertung: aus" in h.emu.message(GROUP, menu).text  # type: ignore[union-attr]
        assert (await h.games.storage.chat_settings(GROUP)).lang == "de"  # kept


def test_settings_buttons_code_and_fit() -> None:
    for value in (None, True, False):
        data = callbacks.encode_settings("rating", value)
        assert callbacks.decode(data) == SettingsButton("rating", value)
    for forged in ("S:", "S:x1", "S:r2", "S:r10", "S:R1"):
        with pytest.raises(CallbackError):
            callbacks.decode(forged)
    for lang in SUPPORTED:
        for rating in (True, False):
            rendered = settings_menu(ChatSettings(rating=rating), translator(lang))
            assert rendered.markup is not None
            rows = rendered.markup.inline_keyboard
            assert too_wide(rows) == [] and len(rows) == 1, (lang, rows)
