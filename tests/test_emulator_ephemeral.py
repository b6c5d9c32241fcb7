"""Ephemeral messages (Bot API 10.2) in the Bot API emulator, driven over HTTP as a bot
would drive Telegram. The rules are in sandbox/README.md."""

from __future__ import annotations

from collections.abc import AsyncIterator
from typing import Any

import aiohttp
import pytest
from support.emulator import (
    ANN,
    BOB,
    CAROL,
    GROUP,
    TOKEN,
    ManualClock,
    ephemeral_of,
    populate,
    raw,
    seen_by,
)

from sandbox.emulator import BotApiEmulator, EmulatorError

BOT_ID = int(TOKEN.split(":")[0])
KEYBOARD = {"inline_keyboard": [[{"text": "Show hand", "callback_data": "hand"}]]}


@pytest.fixture
def clock() -> ManualClock:
    return ManualClock()


@pytest.fixture
async def emu(clock: ManualClock) -> AsyncIterator[BotApiEmulator]:
    async with BotApiEmulator(clock=clock) as emulator:
        populate(emulator)
        emulator.add_group(
            GROUP, "Group", members=[ANN, BOB, CAROL], admins=[ANN, BOT_ID], creator=ANN
        )
        yield emulator


@pytest.fixture
async def http() -> AsyncIterator[aiohttp.ClientSession]:
    async with aiohttp.ClientSession() as session:
        yield session


async def updates(http: aiohttp.ClientSession, emu: BotApiEmulator) -> list[dict[str, Any]]:
    _status, body = await raw(http, emu, "getUpdates", timeout=0)
    result: list[dict[str, Any]] = body["result"]
    if result:
        await raw(http, emu, "getUpdates", offset=result[-1]["update_id"] + 1, timeout=0)
    return result


async def send_ephemeral(
    http: aiohttp.ClientSession, emu: BotApiEmulator, receiver: int, text: str, **extra: Any
) -> tuple[int, dict[str, Any]]:
    parameters = {"receiver_user_id": receiver, **extra.pop("parameters", {})}
    return await raw(
        http,
        emu,
        "sendMessage",
        chat_id=GROUP,
        text=text,
        ephemeral_message_parameters=parameters,
        **extra,
    )


async def test_send_edit_delete_only_the_receiver_sees_it(
    emu: BotApiEmulator, http: aiohttp.ClientSession
) -> None:
    await raw(http, emu, "sendMessage", chat_id=GROUP, text="Lobby")
    status, body = await send_ephemeral(
        http, emu, BOB, "<b>Your</b> cards", parse_mode="HTML", reply_markup=KEYBOARD
    )
    assert status == 200
    sent = body["result"]
    assert sent["message_id"] == 0  # "0 for ephemeral messages"
    assert sent["receiver_user"]["id"] == BOB and sent["from"]["id"] == BOT_ID
    assert sent["text"] == "Your cards" and sent["reply_markup"] == KEYBOARD
    ephemeral_id = sent["ephemeral_message_id"]
    assert isinstance(ephemeral_id, int) and ephemeral_id > 0

    # Bob sees the group's history with his ephemeral message; nobody else does, and the
    # chat's history has no trace of it.
    assert seen_by(emu, BOB, GROUP) == ["Lobby", "Your cards"]
    assert seen_by(emu, ANN, GROUP) == ["Lobby"] == seen_by(emu, CAROL, GROUP)
    assert [m.text for m in emu.messages(GROUP)] == ["Lobby"]
    [shown] = ephemeral_of(emu, BOB, GROUP)
    assert shown["ephemeral_message_id"] == ephemeral_id and shown["receiver"]["id"] == BOB
    assert ephemeral_of(emu, ANN, GROUP) == []
    async with http.get(f"{emu.url}/_emu/chats/{GROUP}/seen", params={"user_id": BOB}) as r:
        assert [m["text"] for m in (await r.json())["result"]] == ["Lobby", "Your cards"]

    ids = {"chat_id": GROUP, "receiver_user_id": BOB, "ephemeral_message_id": ephemeral_id}
    status, body = await raw(
        http, emu, "editEphemeralMessageText", text="New cards", reply_markup=KEYBOARD, **ids
    )
    assert (status, body["result"]) == (200, True)
    assert ephemeral_of(emu, BOB, GROUP)[0]["text"] == "New cards"
    status, body = await raw(
        http, emu, "editEphemeralMessageText", text="New cards", reply_markup=KEYBOARD, **ids
    )
    assert body["description"].startswith("Bad Request: message is not modified")
    status, body = await raw(http, emu, "editEphemeralMessageReplyMarkup", **ids)
    assert (status, body["result"]) == (200, True)
    assert ephemeral_of(emu, BOB, GROUP)[0]["buttons"] == []
    # Addressed by chat, receiver and id: the wrong receiver finds nothing.
    status, body = await raw(
        http, emu, "editEphemeralMessageText", text="x", **{**ids, "receiver_user_id": CAROL}
    )
    assert body["description"] == "Bad Request: message to edit not found"

    status, body = await raw(http, emu, "deleteEphemeralMessage", **ids)
    assert (status, body["result"]) == (200, True)
    assert seen_by(emu, BOB, GROUP) == ["Lobby"]
    status, body = await raw(http, emu, "deleteEphemeralMessage", **ids)
    assert body["description"] == "Bad Request: message to delete not found"
    status, body = await raw(http, emu, "editEphemeralMessageText", text="x", **ids)
    assert body["description"] == "Bad Request: message to edit not found"

    # Bot API 10.2's flat parameters work too.
    status, body = await raw(
        http, emu, "sendMessage", chat_id=GROUP, text="flat", receiver_user_id=CAROL
    )
    assert status == 200 and body["result"]["receiver_user"]["id"] == CAROL
    assert seen_by(emu, CAROL, GROUP) == ["Lobby", "flat"]


async def test_where_ephemeral_messages_cannot_go(
    emu: BotApiEmulator, http: aiohttp.ClientSession
) -> None:
    await emu.user_starts_bot(ANN)
    status, body = await raw(
        http,
        emu,
        "sendMessage",
        chat_id=ANN,
        text="x",
        ephemeral_message_parameters={"receiver_user_id": ANN},
    )
    assert (status, body["description"]) == (400, "Bad Request: PEER_ID_INVALID")
    for receiver, error in (
        (BOT_ID, "Bad Request: USER_IS_BOT"),
        (4242, "Bad Request: user not found"),
    ):
        status, body = await send_ephemeral(http, emu, receiver, "x")
        assert (status, body["description"]) == (400, error)
    emu.add_user(4243, "Outsider")
    status, body = await send_ephemeral(http, emu, 4243, "x")
    assert body["description"] == "Bad Request: USER_NOT_PARTICIPANT"


async def test_not_admin_needs_a_fresh_tap(
    emu: BotApiEmulator, http: aiohttp.ClientSession, clock: ManualClock
) -> None:
    emu.remove_bot_from_group(GROUP)
    emu.add_bot_to_group(GROUP)  # an ordinary member now
    status, body = await send_ephemeral(http, emu, BOB, "x")
    assert (status, body["description"]) == (400, "Bad Request: CHAT_ADMIN_REQUIRED")

    status, sent = await raw(
        http, emu, "sendMessage", chat_id=GROUP, text="Lobby", reply_markup=KEYBOARD
    )
    handle = await emu.user_presses(BOB, GROUP, sent["result"]["message_id"], data="hand")
    # Within 15 s of Bob's tap, answering it (or not) does not matter.
    await raw(http, emu, "answerCallbackQuery", callback_query_id=handle.id)
    status, body = await send_ephemeral(
        http, emu, BOB, "Only you", parameters={"callback_query_id": handle.id}
    )
    assert status == 200 and body["result"]["receiver_user"]["id"] == BOB
    # The tap is Bob's: it does not let the bot write to Carol.
    status, body = await send_ephemeral(
        http, emu, CAROL, "x", parameters={"callback_query_id": handle.id}
    )
    assert body["description"].startswith("Bad Request: query is too old")
    # 10.2's form may leave out the receiver: the callback names it.
    status, body = await raw(
        http, emu, "sendMessage", chat_id=GROUP, text="implicit", callback_query_id=handle.id
    )
    assert body["result"]["receiver_user"]["id"] == BOB
    clock.advance(16)
    status, body = await send_ephemeral(
        http, emu, BOB, "late", parameters={"callback_query_id": handle.id}
    )
    assert body["description"].startswith("Bad Request: query is too old")
    assert seen_by(emu, BOB, GROUP) == ["Lobby", "Only you", "implicit"]


async def test_offline_receiver_and_dropped_messages(
    emu: BotApiEmulator, http: aiohttp.ClientSession
) -> None:
    async with http.post(f"{emu.url}/_emu/presence", json={"user_id": BOB, "online": False}) as r:
        assert r.status == 200
    status, body = await send_ephemeral(http, emu, BOB, "while away")
    assert status == 200  # Telegram accepts it; delivery "is not guaranteed"
    away = body["result"]["ephemeral_message_id"]
    assert ephemeral_of(emu, BOB, GROUP) == []
    emu.set_online(BOB)
    assert ephemeral_of(emu, BOB, GROUP) == []  # not delivered later either
    # The bot cannot tell: its edits of it still succeed.
    status, body = await raw(
        http,
        emu,
        "editEphemeralMessageText",
        chat_id=GROUP,
        receiver_user_id=BOB,
        ephemeral_message_id=away,
        text="edited",
    )
    assert body["result"] is True
    assert emu.ephemeral(GROUP, away) is not None

    status, body = await send_ephemeral(http, emu, BOB, "v1")
    current = body["result"]["ephemeral_message_id"]
    emu.set_online(BOB, False)
    await raw(
        http,
        emu,
        "editEphemeralMessageText",
        chat_id=GROUP,
        receiver_user_id=BOB,
        ephemeral_message_id=current,
        text="v2",
    )
    emu.set_online(BOB)
    [shown] = ephemeral_of(emu, BOB, GROUP)
    assert shown["text"] == "v1"  # the edit happened while the app was offline
    server = emu.ephemeral(GROUP, current)
    assert server is not None and server.text == "v2"

    # An app may drop ephemeral messages (after a while, on a restart).
    async with http.post(
        f"{emu.url}/_emu/ephemeral/drop", json={"user_id": BOB, "chat_id": GROUP}
    ) as r:
        assert (await r.json())["result"] == 1
    assert ephemeral_of(emu, BOB, GROUP) == []
    with pytest.raises(EmulatorError, match="shows no ephemeral"):
        emu.user_drops_ephemeral(BOB, GROUP, current)


async def test_callback_from_an_ephemeral_button(
    emu: BotApiEmulator, http: aiohttp.ClientSession
) -> None:
    _, body = await send_ephemeral(http, emu, BOB, "Your hand", reply_markup=KEYBOARD)
    ephemeral_id = body["result"]["ephemeral_message_id"]
    await updates(http, emu)
    with pytest.raises(EmulatorError, match="shows no ephemeral"):
        await emu.user_presses_ephemeral(CAROL, GROUP, ephemeral_id, data="hand")

    async with http.post(
        f"{emu.url}/_emu/press",
        json={
            "user_id": BOB,
            "chat_id": GROUP,
            "ephemeral_message_id": ephemeral_id,
            "data": "hand",
        },
    ) as r:
        pressed = (await r.json())["result"]
    [update] = await updates(http, emu)
    query = update["callback_query"]
    assert query["id"] == pressed["callback_query_id"]
    assert query["from"]["id"] == BOB and query["data"] == "hand"
    # The message is there, as an ephemeral one: id 0, its ephemeral id and receiver.
    message = query["message"]
    assert message["message_id"] == 0
    assert message["ephemeral_message_id"] == ephemeral_id
    assert message["receiver_user"]["id"] == BOB
    assert message["chat"]["id"] == GROUP and message["text"] == "Your hand"

    _, body = await raw(http, emu, "answerCallbackQuery", callback_query_id=query["id"], text="ok")
    assert body["result"] is True
    answers = [e for e in emu.chat_events(GROUP) if e["type"] == "callback_answer"]
    assert answers[-1]["ephemeral_message_id"] == ephemeral_id
    # The answer to an ephemeral tap is edited in place with the editEphemeral methods.
    _status, body = await raw(
        http,
        emu,
        "editEphemeralMessageText",
        chat_id=GROUP,
        receiver_user_id=BOB,
        ephemeral_message_id=ephemeral_id,
        text="Played",
    )
    assert body["result"] is True


async def test_ephemeral_commands_and_replies(
    emu: BotApiEmulator, http: aiohttp.ClientSession, clock: ManualClock
) -> None:
    commands = [{"command": "hand", "description": "Your hand", "is_ephemeral": True}]
    await raw(http, emu, "setMyCommands", commands=commands)
    with pytest.raises(EmulatorError, match="not an ephemeral command"):
        await emu.user_sends(BOB, GROUP, "/rules", ephemeral=True)
    emu.remove_bot_from_group(GROUP)
    emu.add_bot_to_group(GROUP)  # not an admin: only replies within 15 s may go out
    await updates(http, emu)

    command = await emu.user_sends(BOB, GROUP, "/hand", ephemeral=True)
    [update] = await updates(http, emu)
    incoming = update["message"]
    assert incoming["message_id"] == 0 and incoming["text"] == "/hand"
    assert incoming["ephemeral_message_id"] == command.ephemeral_message_id
    assert incoming["receiver_user"]["id"] == BOT_ID
    assert seen_by(emu, BOB, GROUP) == ["/hand"] and seen_by(emu, ANN, GROUP) == []

    reply = {"ephemeral_message_id": incoming["ephemeral_message_id"]}
    status, body = await send_ephemeral(http, emu, BOB, "Here", reply_parameters=reply)
    assert status == 200
    clock.advance(16)
    status, body = await send_ephemeral(http, emu, BOB, "late", reply_parameters=reply)
    assert body["description"] == "Bad Request: message to be replied not found"
    assert seen_by(emu, BOB, GROUP) == ["/hand", "Here"]


async def test_ephemeral_messages_in_topics(
    emu: BotApiEmulator, http: aiohttp.ClientSession
) -> None:
    emu.admin_sets_topics(ANN, GROUP, True)
    topic = emu.admin_creates_topic(ANN, GROUP, "Game")
    _, body = await send_ephemeral(http, emu, BOB, "in topic", message_thread_id=topic.id)
    assert body["result"]["message_thread_id"] == topic.id
    assert body["result"]["is_topic_message"] is True
    emu.admin_deletes_topic(ANN, GROUP, topic.id)
    assert ephemeral_of(emu, BOB, GROUP) == []
    _status, body = await send_ephemeral(http, emu, BOB, "x", message_thread_id=topic.id)
    assert body["description"] == "Bad Request: message thread not found"
