"""Fault injection in the Bot API emulator, seen through python-telegram-bot: slow answers,
failures, a group upgraded to a supergroup, messages deleted by users."""

from __future__ import annotations

from collections.abc import AsyncIterator

import pytest
from support.emulator import ANN, BOB, TOKEN, ManualClock, populate
from telegram import Bot, Update
from telegram.error import BadRequest, ChatMigrated, NetworkError, TimedOut

from sandbox.emulator import BotApiEmulator, EmulatorError

BASIC_GROUP = -4001
# The calls expected to time out get a short client timeout, so a "slow" answer needs only
# a short delay; the others keep PTB's default (5 s), so a busy machine cannot fail them.
SHORT = 0.5
SLOW = 2.0


@pytest.fixture
def clock() -> ManualClock:
    return ManualClock()


@pytest.fixture
async def emu(clock: ManualClock) -> AsyncIterator[BotApiEmulator]:
    async with BotApiEmulator(clock=clock) as emulator:
        populate(emulator)
        await emulator.user_starts_bot(ANN)
        await emulator.user_starts_bot(BOB)
        yield emulator


@pytest.fixture
async def bot(emu: BotApiEmulator) -> AsyncIterator[Bot]:
    async with Bot(TOKEN, base_url=emu.base_url()) as b:
        yield b


async def test_slow_answer_lands_but_the_client_times_out(emu: BotApiEmulator, bot: Bot) -> None:
    slow = emu.delay_answers("sendMessage", SLOW, chat_id=ANN, times=1)
    with pytest.raises(TimedOut):
        await bot.send_message(ANN, "table", read_timeout=SHORT)
    # The message was sent although the client saw a timeout.
    [sent] = [m for m in emu.messages(ANN) if m.from_bot]
    assert sent.text == "table"
    assert (slow.hits, slow.active, emu.stats.delayed_answers) == (1, False, 1)
    # Other chats, and the next call to this chat, answer at once.
    assert (await bot.send_message(BOB, "hi")).text == "hi"
    assert (await bot.send_message(ANN, "again")).text == "again"


async def test_slow_answers_for_a_while_on_an_edit(
    emu: BotApiEmulator, bot: Bot, clock: ManualClock
) -> None:
    sent = await bot.send_message(ANN, "v1")
    emu.delay_answers("editMessageText", SLOW, for_seconds=10)
    with pytest.raises(TimedOut):
        await bot.edit_message_text("v2", ANN, sent.message_id, read_timeout=SHORT)
    message = emu.message(ANN, sent.message_id)
    assert message is not None and message.text == "v2"
    clock.advance(10)  # the window is over
    await bot.edit_message_text("v3", ANN, sent.message_id)
    message = emu.message(ANN, sent.message_id)
    assert message is not None and message.text == "v3"
    assert emu.stats.delayed_answers == 1


async def test_failures_for_some_seconds_have_no_effect(
    emu: BotApiEmulator, bot: Bot, clock: ManualClock
) -> None:
    outage = emu.fail_calls("sendMessage", chat_id=ANN, for_seconds=8)
    for _ in range(3):
        with pytest.raises(NetworkError, match="Bad Gateway"):
            await bot.send_message(ANN, "lost")
    assert await bot.send_message(BOB, "other chat works")
    assert [m.text for m in emu.messages(ANN) if m.from_bot] == []
    clock.advance(7.9)
    with pytest.raises(NetworkError):
        await bot.send_message(ANN, "still down")
    clock.advance(0.1)
    assert (await bot.send_message(ANN, "back")).text == "back"
    assert [m.text for m in emu.messages(ANN) if m.from_bot] == ["back"]
    assert outage.hits == 4 and emu.stats.errors[502] == 4


async def test_failures_for_some_calls_then_cancelled(emu: BotApiEmulator, bot: Bot) -> None:
    sent = await bot.send_message(ANN, "v1")
    failing = emu.fail_calls(
        "editMessageText", times=2, error_code=500, description="Internal Server Error"
    )
    for _ in range(2):
        with pytest.raises(NetworkError, match="Internal Server Error"):
            await bot.edit_message_text("v2", ANN, sent.message_id)
    message = emu.message(ANN, sent.message_id)
    assert message is not None and message.text == "v1"
    await bot.edit_message_text("v2", ANN, sent.message_id)
    assert failing.hits == 2 and not failing.active
    endless = emu.fail_calls("*")  # every method, until cancelled
    with pytest.raises(NetworkError):
        await bot.get_me()
    endless.cancel()
    assert (await bot.get_me()).username == "durak_test_bot"
    emu.fail_calls("getMe")
    emu.clear_faults()
    assert await bot.get_me()
    with pytest.raises(EmulatorError):
        emu.fail_calls("getMe", times=0)


def _updates(emu: BotApiEmulator, bot: Bot) -> list[Update]:
    return [u for u in (Update.de_json(d, bot) for d in emu.pending_updates()) if u is not None]


async def test_group_upgraded_to_supergroup(emu: BotApiEmulator, bot: Bot) -> None:
    emu.add_group(BASIC_GROUP, "Club", members=[ANN, BOB], creator=ANN, chat_type="group")
    table = await bot.send_message(BASIC_GROUP, "the table")
    before = len(emu.pending_updates())

    new_id = emu.migrate_group(BASIC_GROUP)

    assert new_id < -1_000_000_000_000 and new_id != BASIC_GROUP
    service = [u.effective_message for u in _updates(emu, bot)[before:]]
    assert [(m.chat.id, m.migrate_to_chat_id, m.migrate_from_chat_id) for m in service if m] == [
        (BASIC_GROUP, new_id, None),
        (new_id, None, BASIC_GROUP),
    ]
    # Every call naming the old id: 400 with migrate_to_chat_id, which PTB raises as such.
    with pytest.raises(ChatMigrated) as err:
        await bot.send_message(BASIC_GROUP, "x")
    assert err.value.new_chat_id == new_id
    with pytest.raises(ChatMigrated):
        await bot.edit_message_text("x", BASIC_GROUP, table.message_id)
    with pytest.raises(ChatMigrated):
        await bot.get_chat(BASIC_GROUP)
    # The supergroup: same people, the old messages shown as history, not editable there.
    chat = await bot.get_chat(new_id)
    assert (chat.type, chat.title) == ("supergroup", "Club")
    assert (await bot.get_chat_member(new_id, ANN)).status == "creator"
    assert "the table" in [m.text for m in emu.messages(new_id)]
    with pytest.raises(BadRequest, match="Message to edit not found"):
        await bot.edit_message_text("x", new_id, table.message_id)
    fresh = await bot.send_message(new_id, "the table, moved")
    assert fresh.chat.id == new_id and fresh.message_id > table.message_id
    await emu.user_sends(BOB, new_id, "/stats")
    with pytest.raises(EmulatorError, match="upgraded"):
        await emu.user_sends(BOB, BASIC_GROUP, "/stats")
    with pytest.raises(EmulatorError, match="only basic groups"):
        emu.migrate_group(new_id)


async def test_user_deletes_a_message(emu: BotApiEmulator, bot: Bot) -> None:
    group = -4002
    emu.add_group(group, "G", members=[ANN, BOB], admins=[ANN], creator=ANN)
    table = await bot.send_message(group, "table")
    with pytest.raises(EmulatorError, match="only their own"):
        emu.user_deletes_message(BOB, group, table.message_id)
    emu.user_deletes_message(ANN, group, table.message_id)  # an admin may
    with pytest.raises(BadRequest, match="Message to edit not found"):
        await bot.edit_message_text("next", group, table.message_id)
    assert emu.message(group, table.message_id) is None
    [event] = [e for e in emu.chat_events(group) if e["type"] == "delete"]
    assert event["by"] == ANN
    hand = await bot.send_message(BOB, "your cards")
    emu.user_deletes_message(BOB, BOB, hand.message_id)  # anything in a private chat
    with pytest.raises(BadRequest, match="Message to edit not found"):
        await bot.edit_message_reply_markup(BOB, hand.message_id)
    with pytest.raises(EmulatorError, match="no message"):
        emu.user_deletes_message(BOB, BOB, hand.message_id)
