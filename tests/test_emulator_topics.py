"""Forum topics in the Bot API emulator, driven over HTTP as a bot would drive Telegram.

What Telegram does here is in sandbox/README.md ("Forum topics and ephemeral messages").
"""

from __future__ import annotations

from collections.abc import AsyncIterator
from typing import Any

import aiohttp
import pytest
from support.emulator import ANN, BOB, CAROL, GROUP, TOKEN, populate, raw, send_in_topic

from sandbox.emulator import BotApiEmulator, EmulatorError

BOT_ID = int(TOKEN.split(":")[0])


@pytest.fixture
async def emu() -> AsyncIterator[BotApiEmulator]:
    async with BotApiEmulator() as emulator:
        populate(emulator)
        emulator.add_group(
            GROUP,
            "Forum",
            members=[ANN, BOB, CAROL],
            admins=[ANN, BOT_ID],
            creator=ANN,
            forum=True,
        )
        yield emulator


@pytest.fixture
async def http() -> AsyncIterator[aiohttp.ClientSession]:
    async with aiohttp.ClientSession() as session:
        yield session


async def updates(http: aiohttp.ClientSession, emu: BotApiEmulator) -> list[dict[str, Any]]:
    """Every pending update, confirmed."""
    status, body = await raw(http, emu, "getUpdates", timeout=0)
    assert status == 200
    result: list[dict[str, Any]] = body["result"]
    if result:
        await raw(http, emu, "getUpdates", offset=result[-1]["update_id"] + 1, timeout=0)
    return result


def messages(batch: list[dict[str, Any]]) -> list[dict[str, Any]]:
    return [u["message"] for u in batch if "message" in u]


async def control(
    http: aiohttp.ClientSession, emu: BotApiEmulator, path: str, **body: Any
) -> tuple[int, Any]:
    async with http.post(f"{emu.url}/_emu/{path}", json=body) as resp:
        data = await resp.json()
        return resp.status, data.get("result", data.get("error"))


async def test_topics_route_messages_both_ways(
    emu: BotApiEmulator, http: aiohttp.ClientSession
) -> None:
    status, chat = await raw(http, emu, "getChat", chat_id=GROUP)
    assert status == 200 and chat["result"]["is_forum"] is True
    await updates(http, emu)

    # An admin creates a topic in the app: bots get the service message, in the topic.
    status, topic = await control(http, emu, "topics", user_id=ANN, chat_id=GROUP, name="Game")
    assert status == 200
    thread = topic["message_thread_id"]
    [created] = messages(await updates(http, emu))
    assert created["message_id"] == thread
    assert created["message_thread_id"] == thread and created["is_topic_message"] is True
    assert created["forum_topic_created"] == {"name": "Game", "icon_color": 7322096}
    assert created["from"]["id"] == ANN

    # A person writes a command in the topic.
    await send_in_topic(http, emu, BOB, GROUP, thread, "/newgame")
    [incoming] = messages(await updates(http, emu))
    assert incoming["message_thread_id"] == thread and incoming["is_topic_message"] is True
    assert incoming["text"] == "/newgame"
    # Not an explicit reply: Telegram names the topic's first message as the replied one.
    assert incoming["reply_to_message"]["message_id"] == thread

    # ... and in General: neither field.
    await send_in_topic(http, emu, BOB, GROUP, None, "hello")
    [general] = messages(await updates(http, emu))
    assert "message_thread_id" not in general and "is_topic_message" not in general

    # The bot answers in the topic; a reply without message_thread_id lands there too.
    keyboard = {"inline_keyboard": [[{"text": "Join", "callback_data": "join"}]]}
    status, sent = await raw(
        http,
        emu,
        "sendMessage",
        chat_id=GROUP,
        text="Lobby",
        message_thread_id=thread,
        reply_markup=keyboard,
    )
    assert status == 200 and sent["result"]["message_thread_id"] == thread
    status, reply = await raw(
        http,
        emu,
        "sendMessage",
        chat_id=GROUP,
        text="ok",
        reply_parameters={"message_id": incoming["message_id"]},
    )
    assert reply["result"]["message_thread_id"] == thread
    status, plain = await raw(http, emu, "sendMessage", chat_id=GROUP, text="to General")
    assert "message_thread_id" not in plain["result"]

    # A tap on the lobby's button: the callback carries the message with its thread.
    status, _pressed = await control(
        http,
        emu,
        "press",
        user_id=CAROL,
        chat_id=GROUP,
        message_id=sent["result"]["message_id"],
        data="join",
    )
    assert status == 200
    [update] = await updates(http, emu)
    assert update["callback_query"]["message"]["message_thread_id"] == thread
    assert update["callback_query"]["message"]["is_topic_message"] is True

    stored = emu.message(GROUP, sent["result"]["message_id"])
    assert stored is not None and stored.thread_id == thread


async def test_closed_deleted_and_unknown_topics(
    emu: BotApiEmulator, http: aiohttp.ClientSession
) -> None:
    topic = emu.admin_creates_topic(ANN, GROUP, "Game")
    await updates(http, emu)
    emu.admin_closes_topic(ANN, GROUP, topic.id)
    [closed] = messages(await updates(http, emu))
    assert closed["forum_topic_closed"] == {} and closed["message_thread_id"] == topic.id

    # The bot is an admin without can_manage_topics: a closed topic refuses it.
    status, body = await raw(
        http, emu, "sendMessage", chat_id=GROUP, text="x", message_thread_id=topic.id
    )
    assert (status, body["description"]) == (400, "Bad Request: TOPIC_CLOSED")
    # People who are not admins cannot post there either (the app does not let them).
    with pytest.raises(EmulatorError, match="closed"):
        await emu.user_sends(BOB, GROUP, "hi", message_thread_id=topic.id)
    # An admin who manages topics may.
    emu.set_admin_rights(GROUP, BOT_ID, can_manage_topics=True)
    status, body = await raw(
        http, emu, "sendMessage", chat_id=GROUP, text="x", message_thread_id=topic.id
    )
    assert status == 200
    emu.set_admin_rights(GROUP, BOT_ID, can_manage_topics=False)

    emu.admin_reopens_topic(ANN, GROUP, topic.id)
    status, _ = await raw(
        http, emu, "sendMessage", chat_id=GROUP, text="y", message_thread_id=topic.id
    )
    assert status == 200
    kinds = [
        sorted(k for k in m if k.startswith("forum_")) for m in messages(await updates(http, emu))
    ]
    assert ["forum_topic_reopened"] in kinds

    # Deleted: its messages go, and the thread is unknown from now on.
    emu.admin_deletes_topic(ANN, GROUP, topic.id)
    assert all(m.thread_id != topic.id for m in emu.messages(GROUP))
    for thread in (topic.id, 999, 1):  # deleted, never existed, General named explicitly
        status, body = await raw(
            http, emu, "sendMessage", chat_id=GROUP, text="z", message_thread_id=thread
        )
        assert (status, body["description"]) == (400, "Bad Request: message thread not found")

    # A closed General closes the chat's default destination.
    emu.admin_closes_topic(ANN, GROUP, 1)
    status, body = await raw(http, emu, "sendMessage", chat_id=GROUP, text="g")
    assert body["description"] == "Bad Request: TOPIC_CLOSED"


async def test_turning_topics_off_and_on(emu: BotApiEmulator, http: aiohttp.ClientSession) -> None:
    topic = emu.admin_creates_topic(ANN, GROUP, "Game")
    await emu.user_sends(BOB, GROUP, "in the topic", message_thread_id=topic.id)
    status, _ = await control(http, emu, "forum", user_id=ANN, chat_id=GROUP, enabled=False)
    assert status == 200
    await updates(http, emu)

    status, chat = await raw(http, emu, "getChat", chat_id=GROUP)
    assert "is_forum" not in chat["result"]
    # As the Bot API server: message_thread_id is ignored outside forums.
    status, body = await raw(
        http, emu, "sendMessage", chat_id=GROUP, text="x", message_thread_id=topic.id
    )
    assert status == 200
    assert "message_thread_id" not in body["result"] and "is_forum" not in body["result"]["chat"]
    with pytest.raises(EmulatorError, match="not a forum"):
        await emu.user_sends(BOB, GROUP, "x", message_thread_id=topic.id)
    await emu.user_sends(BOB, GROUP, "plain")
    [plain] = messages(await updates(http, emu))
    assert "message_thread_id" not in plain
    status, body = await raw(http, emu, "createForumTopic", chat_id=GROUP, name="New")
    assert body["description"] == "Bad Request: the chat is not a forum"

    # Back on: the topics are still there.
    emu.admin_sets_topics(ANN, GROUP, True)
    assert [t.name for t in emu.topics(GROUP)] == ["General", "Game"]
    status, body = await raw(
        http, emu, "sendMessage", chat_id=GROUP, text="back", message_thread_id=topic.id
    )
    assert body["result"]["message_thread_id"] == topic.id


async def test_topic_methods_need_rights(emu: BotApiEmulator, http: aiohttp.ClientSession) -> None:
    status, body = await raw(http, emu, "createForumTopic", chat_id=GROUP, name="Bot's")
    assert body["description"] == "Bad Request: not enough rights to create a topic"
    emu.set_admin_rights(GROUP, BOT_ID, can_manage_topics=True)
    member = (await raw(http, emu, "getChatMember", chat_id=GROUP, user_id=BOT_ID))[1]
    assert member["result"]["can_manage_topics"] is True

    status, body = await raw(
        http, emu, "createForumTopic", chat_id=GROUP, name="  Bot's  ", icon_color=16766590
    )
    assert status == 200
    mine = body["result"]
    assert mine == {
        "message_thread_id": mine["message_thread_id"],
        "name": "Bot's",
        "icon_color": 16766590,
    }
    thread = mine["message_thread_id"]
    status, body = await raw(http, emu, "createForumTopic", chat_id=GROUP, name=" ")
    assert body["description"] == "Bad Request: name must be non-empty"

    assert (
        await raw(
            http, emu, "editForumTopic", chat_id=GROUP, message_thread_id=thread, name="Renamed"
        )
    )[0] == 200
    status, body = await raw(
        http, emu, "editForumTopic", chat_id=GROUP, message_thread_id=thread, name="Renamed"
    )
    assert body["description"] == "Bad Request: TOPIC_NOT_MODIFIED"
    assert (await raw(http, emu, "closeForumTopic", chat_id=GROUP, message_thread_id=thread))[
        0
    ] == 200
    status, body = await raw(http, emu, "closeForumTopic", chat_id=GROUP, message_thread_id=thread)
    assert body["description"] == "Bad Request: TOPIC_NOT_MODIFIED"
    assert (await raw(http, emu, "reopenForumTopic", chat_id=GROUP, message_thread_id=thread))[
        0
    ] == 200
    status, body = await raw(http, emu, "closeForumTopic", chat_id=GROUP)
    assert body["description"] == "Bad Request: invalid forum topic identifier specified"
    status, body = await raw(http, emu, "closeForumTopic", chat_id=GROUP, message_thread_id=1)
    assert body["description"] == "Bad Request: TOPIC_ID_INVALID"

    # Without the right, the bot still manages the topics it created, not others'.
    emu.set_admin_rights(GROUP, BOT_ID, can_manage_topics=False, can_delete_messages=False)
    theirs = emu.admin_creates_topic(ANN, GROUP, "Ann's")
    for method, error in (
        ("editForumTopic", "Bad Request: not enough rights to edit the topic"),
        ("closeForumTopic", "Bad Request: not enough rights to close or open the topic"),
        ("deleteForumTopic", "Bad Request: not enough rights to delete the topic"),
    ):
        status, body = await raw(
            http, emu, method, chat_id=GROUP, message_thread_id=theirs.id, name="x"
        )
        assert (status, body["description"]) == (400, error)
    assert (await raw(http, emu, "closeForumTopic", chat_id=GROUP, message_thread_id=thread))[
        0
    ] == 200
    # The creator of a topic may still post in it once closed (TDLib: is_outgoing).
    assert (
        await raw(http, emu, "sendMessage", chat_id=GROUP, text="mine", message_thread_id=thread)
    )[0] == 200
    assert (await raw(http, emu, "deleteForumTopic", chat_id=GROUP, message_thread_id=thread))[
        0
    ] == 200
    assert [t.name for t in emu.topics(GROUP)] == ["General", "Ann's"]
    status, body = await raw(http, emu, "deleteForumTopic", chat_id=GROUP, message_thread_id=thread)
    assert body["description"] == "Bad Request: TOPIC_ID_INVALID"


async def test_bot_that_may_not_post(emu: BotApiEmulator, http: aiohttp.ClientSession) -> None:
    emu.remove_bot_from_group(GROUP)
    emu.add_bot_to_group(GROUP)  # back as an ordinary member
    await updates(http, emu)
    emu.set_muted(GROUP, BOT_ID)
    [update] = await updates(http, emu)
    assert update["my_chat_member"]["new_chat_member"]["status"] == "restricted"
    assert update["my_chat_member"]["new_chat_member"]["can_send_messages"] is False
    status, body = await raw(http, emu, "sendMessage", chat_id=GROUP, text="x")
    assert (status, body["description"]) == (
        400,
        "Bad Request: not enough rights to send text messages to the chat",
    )
    emu.set_muted(GROUP, BOT_ID, False)
    assert (await raw(http, emu, "sendMessage", chat_id=GROUP, text="x"))[0] == 200


async def test_admin_actions_are_checked(emu: BotApiEmulator) -> None:
    with pytest.raises(EmulatorError, match="not an admin"):
        emu.admin_creates_topic(BOB, GROUP, "Bob's")
    with pytest.raises(EmulatorError, match="needs a name"):
        emu.admin_creates_topic(ANN, GROUP, "   ")
    with pytest.raises(EmulatorError, match="General"):
        emu.admin_deletes_topic(ANN, GROUP, 1)
    with pytest.raises(EmulatorError, match="no topic"):
        emu.admin_closes_topic(ANN, GROUP, 42)
    emu.add_group(-1005, "Basic", members=[ANN], admins=[ANN], creator=ANN, chat_type="group")
    with pytest.raises(EmulatorError, match="basic group"):
        emu.admin_sets_topics(ANN, -1005, True)
