"""Side doors and abandoned lobbies, end to end (issue 15, items 9 and 12): the real
application against the emulator and a real redis-server."""

from __future__ import annotations

from typing import Any

import pytest
from support.harness import Harness, open_lobby, press

from bot.domain import flow
from locales import translator

pytestmark = pytest.mark.filterwarnings("ignore:Deprecated since version v22.2")

GROUP = -100600
ANN, BOB, CAROL, STRANGER = 21, 22, 23, 29
EN = translator("en")


def scene(h: Harness) -> None:
    for uid, name in ((ANN, "Ann"), (BOB, "Bob"), (CAROL, "Carol"), (STRANGER, "Eve")):
        h.emu.add_user(uid, name)
    # Nobody is an admin but the group's creator (Carol).
    h.emu.add_group(GROUP, "Secret Club", members=[ANN, BOB, CAROL], admins=[], creator=CAROL)


async def open_dms(h: Harness, *users: int) -> None:
    for uid in users:
        await h.emu.user_starts_bot(uid)
        await h.wait_text(uid, "Hi!")


def replies(h: Harness, chat: int) -> list[str]:
    return [m.text for m in h.emu.messages(chat) if m.from_bot]


async def test_only_the_creator_or_an_admin_adds_or_removes_computer_seats(
    make_harness: Any,
) -> None:
    async with make_harness() as h:
        scene(h)
        await h.start_bot()
        await open_dms(h, ANN, BOB)
        lobby = await open_lobby(h, GROUP, ANN)
        await press(h, BOB, GROUP, lobby.message_id, text="Join")
        answer = await press(h, BOB, GROUP, lobby.message_id, text="+ AI Easy")
        assert answer.text == EN.t("toast.only_creator_manage")
        assert len((await h.table(GROUP)).seats) == 2
        assert (await press(h, ANN, GROUP, lobby.message_id, text="+ AI Hard")).text is None
        await h.wait_text(GROUP, "3. 🤖 Vera · Hard")
        answer = await press(h, BOB, GROUP, lobby.message_id, text="− 🤖 Vera · Hard")
        assert answer.text == EN.t("toast.only_creator_manage")
        # The group's creator is an admin: she may.
        assert (
            await press(h, CAROL, GROUP, lobby.message_id, text="− 🤖 Vera · Hard")
        ).text is None
        await h.emu.wait_for(
            lambda: "Vera · Hard" not in h.emu.message(GROUP, lobby.message_id).text
        )
        assert [s.name for s in (await h.table(GROUP)).seats] == ["Ann", "Bob"]


async def test_deep_links_name_the_group_only_to_its_members(make_harness: Any) -> None:
    async with make_harness() as h:
        scene(h)
        await h.start_bot()
        await open_lobby(h, GROUP, ANN)
        await h.emu.user_starts_bot(STRANGER, f"g{GROUP}")
        greeting = await h.wait_text(STRANGER, "Hi!")
        assert "Secret Club" not in greeting.text
        await h.emu.user_starts_bot(BOB, f"g{GROUP}")
        linked = await h.wait_text(BOB, "All set")
        assert "Secret Club" in linked.text
        # A payload no button of ours makes: the greeting, not an error.
        await h.emu.user_sends(BOB, BOB, "/start g²")
        await h.emu.wait_for(lambda: len(replies(h, BOB)) == 2)
        assert replies(h, BOB)[-1] == EN.t("start.private")
        assert all("Secret Club" not in text for text in replies(h, STRANGER))


async def test_a_lobby_whose_creator_is_gone_can_be_closed_by_any_member(
    make_harness: Any,
) -> None:
    async with make_harness() as h:
        scene(h)
        await h.start_bot()
        await open_dms(h, ANN, BOB)
        lobby = await open_lobby(h, GROUP, ANN)
        await press(h, BOB, GROUP, lobby.message_id, text="Join")
        answer = await press(h, BOB, GROUP, lobby.message_id, text="Cancel")
        assert answer.text == EN.t("toast.only_creator_manage")
        h.clock.advance(flow.CREATOR_AWAY + 1)
        assert (await press(h, BOB, GROUP, lobby.message_id, text="Cancel")).text is None
        # Cancel asks first; the lobby closes only on "Yes, cancel".
        await h.wait_text(GROUP, "Cancel this game?")
        assert (await h.table(GROUP)).phase == "lobby"
        assert (await press(h, BOB, GROUP, lobby.message_id, text="Yes, cancel")).text is None
        await h.wait_text(GROUP, EN.t("lobby.cancelled"))
        assert (await h.table(GROUP)).phase == "cancelled"


async def test_a_joiner_who_cannot_be_reached_is_removed(make_harness: Any) -> None:
    async with make_harness() as h:
        scene(h)
        await h.start_bot()
        await open_dms(h, ANN, BOB)
        lobby = await open_lobby(h, GROUP, ANN)
        await press(h, BOB, GROUP, lobby.message_id, text="Join")
        await press(h, CAROL, GROUP, lobby.message_id, text="Join")  # no private chat
        await h.wait_text(GROUP, "Waiting for Carol")
        answer = await press(h, ANN, GROUP, lobby.message_id, text="Start")
        assert answer.text == EN.t("toast.waiting_dm")
        label = EN.t("lobby.drop_unreachable")
        assert (await press(h, BOB, GROUP, lobby.message_id, text=label)).text == EN.t(
            "toast.only_creator_manage"
        )
        assert (await press(h, ANN, GROUP, lobby.message_id, text=label)).text is None
        await h.wait_text(GROUP, EN.t("group.player_dropped", name="Carol"))
        assert [s.name for s in (await h.table(GROUP)).seats] == ["Ann", "Bob"]
        assert (await press(h, ANN, GROUP, lobby.message_id, text="Start")).text is None
        await h.wait_text(GROUP, "Trump:")
