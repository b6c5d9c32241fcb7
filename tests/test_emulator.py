"""End-to-end tests of the Bot API emulator with the real python-telegram-bot."""

from __future__ import annotations

import asyncio
import json
from collections.abc import AsyncIterator
from typing import Any

import aiohttp
import pytest
from support.emulator import ANN, BOB, CAROL, GROUP, OTHER_TOKEN, TOKEN, ManualClock, populate, raw
from telegram import (
    Bot,
    BotCommand,
    BotCommandScopeChat,
    InlineKeyboardButton,
    InlineKeyboardMarkup,
    Update,
)
from telegram.error import BadRequest, Forbidden, InvalidToken, RetryAfter
from telegram.ext import (
    Application,
    ApplicationBuilder,
    CallbackQueryHandler,
    CommandHandler,
    ContextTypes,
)

from sandbox.emulator import BotApiEmulator, EmulatorError, EmuMessage, RateLimits
from sandbox.emulator.telegram_html import HtmlParseError, entities_to_html, parse_html

# PTB itself warns when it builds RetryAfter; nothing for this module to act on.
pytestmark = pytest.mark.filterwarnings("ignore:Deprecated since version v22.2:DeprecationWarning")


@pytest.fixture
async def emu() -> AsyncIterator[BotApiEmulator]:
    async with BotApiEmulator() as emulator:
        populate(emulator)
        yield emulator


@pytest.fixture
def clock() -> ManualClock:
    return ManualClock()


@pytest.fixture
async def limited(clock: ManualClock) -> AsyncIterator[BotApiEmulator]:
    async with BotApiEmulator(rate_limits=True, clock=clock) as emulator:
        populate(emulator)
        yield emulator


@pytest.fixture
async def bot(emu: BotApiEmulator) -> AsyncIterator[Bot]:
    async with Bot(TOKEN, base_url=emu.base_url(), base_file_url=emu.base_file_url()) as b:
        yield b


@pytest.fixture
async def http() -> AsyncIterator[aiohttp.ClientSession]:
    async with aiohttp.ClientSession() as session:
        yield session


async def start_handler(update: Update, context: ContextTypes.DEFAULT_TYPE) -> None:
    assert update.effective_message is not None
    payload = " ".join(context.args or []) or "none"
    keyboard = InlineKeyboardMarkup(
        [
            [InlineKeyboardButton("Play", callback_data="play")],
            [InlineKeyboardButton("Rules", url="https://example.org/rules")],
        ]
    )
    await update.effective_message.reply_html(
        f"<b>Hi</b> {update.effective_user.first_name if update.effective_user else '?'}, "
        f"payload=<code>{payload}</code>",
        reply_markup=keyboard,
        do_quote=True,
    )


async def button_handler(update: Update, context: ContextTypes.DEFAULT_TYPE) -> None:
    query = update.callback_query
    assert query is not None
    await query.answer("Let's go", show_alert=True)
    await query.edit_message_text("Game started")


@pytest.fixture
async def app(emu: BotApiEmulator) -> AsyncIterator[Application[Any, Any, Any, Any, Any, Any]]:
    application = (
        ApplicationBuilder()
        .token(TOKEN)
        .base_url(emu.base_url())
        .base_file_url(emu.base_file_url())
        .build()
    )
    application.add_handler(CommandHandler("start", start_handler))
    application.add_handler(CallbackQueryHandler(button_handler))
    async with application:
        assert application.updater is not None
        await application.updater.start_polling(timeout=5, allowed_updates=Update.ALL_TYPES)
        await application.start()
        yield application
        await application.updater.stop()
        await application.stop()


# ---------------------------------------------------------------------- PTB end to end


async def test_get_me(bot: Bot) -> None:
    me = await bot.get_me()
    assert me.id == 123456
    assert me.username == "durak_test_bot"
    assert me.is_bot


async def test_start_command_reaches_handler_and_reply_appears(
    emu: BotApiEmulator, app: Application[Any, Any, Any, Any, Any, Any]
) -> None:
    sent = await emu.user_starts_bot(ANN, "room42")
    assert sent.text == "/start room42"
    assert sent.entities == [{"type": "bot_command", "offset": 0, "length": 6}]
    reply = await emu.wait_for_message(ANN, "payload=room42")
    assert reply.text == "Hi Ann, payload=room42"
    assert reply.html == "<b>Hi</b> Ann, payload=<code>room42</code>"
    assert reply.parse_mode == "HTML"
    assert reply.reply_to_message_id == sent.message_id
    assert {"type": "bold", "offset": 0, "length": 2} in reply.entities
    assert reply.buttons == [
        [{"text": "Play", "callback_data": "play"}],
        [{"text": "Rules", "url": "https://example.org/rules"}],
    ]
    assert [m.message_id for m in emu.messages(ANN)] == [sent.message_id, reply.message_id]
    assert emu.stats.calls["sendMessage"] == 1
    assert emu.stats.chat_calls[ANN] == 1


async def test_button_press_is_answered_and_message_edited(
    emu: BotApiEmulator, app: Application[Any, Any, Any, Any, Any, Any]
) -> None:
    await emu.user_starts_bot(ANN)
    menu = await emu.wait_for_message(ANN, "Hi Ann")
    handle = await emu.user_presses(ANN, ANN, menu.message_id, text="Play")
    answer = await handle.answer(timeout=5)
    assert (answer.text, answer.show_alert) == ("Let's go", True)

    def edited_once() -> EmuMessage | None:
        message = emu.message(ANN, menu.message_id)
        return message if message is not None and message.edit_count == 1 else None

    edited = await emu.wait_for(edited_once)
    assert edited.text == "Game started"
    assert edited.buttons == []  # editMessageText without reply_markup drops the keyboard
    kinds = [e["type"] for e in emu.chat_events(ANN) if e["type"] != "state"]
    assert kinds == ["message", "message", "callback_query", "callback_answer", "edit"]
    with pytest.raises(EmulatorError, match="no button"):
        await emu.user_presses(ANN, ANN, menu.message_id, data="play")


async def test_group_command_and_my_chat_member(
    emu: BotApiEmulator, app: Application[Any, Any, Any, Any, Any, Any]
) -> None:
    emu.add_group(GROUP, "Durak night", members=[ANN, BOB], admins=[ANN], creator=ANN)
    await emu.user_sends(BOB, GROUP, "/start@durak_test_bot")
    reply = await emu.wait_for_message(GROUP, "Hi Bob")
    assert reply.chat_id == GROUP
    assert emu.chat(GROUP) is not None
    with pytest.raises(EmulatorError, match="not a member"):
        await emu.user_sends(CAROL, GROUP, "hello")


async def test_updates_deserialize_in_ptb(emu: BotApiEmulator, bot: Bot) -> None:
    emu.add_group(GROUP, "G", members=[ANN], admins=[ANN, 123456], creator=ANN)
    await emu.user_starts_bot(ANN)
    sent = await bot.send_message(
        ANN,
        "pick",
        reply_markup=InlineKeyboardMarkup([[InlineKeyboardButton("x", callback_data="x")]]),
    )
    await emu.user_presses(ANN, ANN, sent.message_id, data="x")
    emu.user_blocks_bot(ANN)
    updates = await bot.get_updates(timeout=0)
    kinds = [
        ("my_chat_member" if u.my_chat_member else "message" if u.message else "callback_query")
        for u in updates
    ]
    assert kinds == ["my_chat_member", "message", "callback_query", "my_chat_member"]
    first = updates[0].my_chat_member
    assert first is not None and first.new_chat_member.status == "administrator"
    assert first.from_user.id == ANN
    query = updates[2].callback_query
    assert query is not None and query.data == "x" and query.message is not None
    last = updates[3].my_chat_member
    assert last is not None and last.new_chat_member.status == "kicked"
    # The offset confirms: the next call returns nothing.
    assert await bot.get_updates(offset=updates[-1].update_id + 1, timeout=0) == ()


async def test_chat_queries_and_commands(emu: BotApiEmulator, bot: Bot) -> None:
    emu.add_group(GROUP, "G", members=[ANN, BOB], admins=[ANN], creator=ANN)
    chat = await bot.get_chat(GROUP)
    assert (chat.type, chat.title) == ("supergroup", "G")
    assert (await bot.get_chat_member(GROUP, ANN)).status == "creator"
    assert (await bot.get_chat_member(GROUP, BOB)).status == "member"
    assert (await bot.get_chat_member(GROUP, CAROL)).status == "left"
    assert [m.user.id for m in await bot.get_chat_administrators(GROUP)] == [ANN]
    assert await bot.get_chat_member_count(GROUP) == 3
    assert await bot.send_chat_action(GROUP, "typing")
    assert emu.chat_events(GROUP)[-1]["action"] == "typing"

    await bot.set_my_commands([BotCommand("play", "Start a game")])
    await bot.set_my_commands(
        [BotCommand("play", "Начать игру")], scope=BotCommandScopeChat(GROUP), language_code="ru"
    )
    assert [c.command for c in await bot.get_my_commands()] == ["play"]
    scoped = await bot.get_my_commands(scope=BotCommandScopeChat(GROUP), language_code="ru")
    assert scoped[0].description == "Начать игру"
    assert (
        emu.commands(scope_type="chat", chat_id=GROUP, language_code="ru")[0]["command"] == "play"
    )
    await bot.delete_my_commands()
    assert await bot.get_my_commands() == ()
    with pytest.raises(BadRequest):
        await bot.set_my_commands([BotCommand("Bad Name", "x")])
    assert await bot.set_chat_menu_button()


async def test_pin_and_delete_rights(emu: BotApiEmulator, bot: Bot) -> None:
    emu.add_group(GROUP, "G", members=[ANN, BOB], creator=ANN)
    user_msg = await emu.user_sends(ANN, GROUP, "hello")
    own = await bot.send_message(GROUP, "table")
    with pytest.raises(BadRequest, match="Not enough rights"):
        await bot.pin_chat_message(GROUP, own.message_id)
    with pytest.raises(BadRequest, match="can't be deleted"):
        await bot.delete_message(GROUP, user_msg.message_id)
    assert await bot.delete_message(GROUP, own.message_id)
    assert emu.message(GROUP, own.message_id) is None
    assert [m.text for m in emu.messages(GROUP)] == ["hello"]


# ---------------------------------------------------------------------- Telegram error texts


async def test_private_chat_errors(
    emu: BotApiEmulator, bot: Bot, http: aiohttp.ClientSession
) -> None:
    status, body = await raw(http, emu, "sendMessage", chat_id=CAROL, text="hi")
    assert (status, body) == (
        403,
        {
            "ok": False,
            "error_code": 403,
            "description": "Forbidden: bot can't initiate conversation with a user",
        },
    )
    with pytest.raises(Forbidden, match="can't initiate conversation"):
        await bot.send_message(CAROL, "hi")

    await emu.user_starts_bot(CAROL)
    assert (await bot.send_message(CAROL, "welcome")).text == "welcome"
    emu.user_blocks_bot(CAROL)
    status, body = await raw(http, emu, "sendMessage", chat_id=CAROL, text="hi")
    assert (status, body["description"]) == (403, "Forbidden: bot was blocked by the user")
    await emu.user_sends(CAROL, CAROL, "I'm back")  # writing again unblocks
    assert await bot.send_message(CAROL, "hi again")

    status, body = await raw(http, emu, "sendMessage", chat_id=424242, text="hi")
    assert (status, body["description"]) == (400, "Bad Request: chat not found")
    status, body = await raw(http, emu, "sendMessage", chat_id=-42, text="hi")
    assert (status, body["description"]) == (400, "Bad Request: chat not found")


async def test_edit_and_delete_errors(emu: BotApiEmulator, http: aiohttp.ClientSession) -> None:
    await emu.user_starts_bot(ANN)
    markup = {"inline_keyboard": [[{"text": "A", "callback_data": "a"}]]}
    _, sent = await raw(
        http,
        emu,
        "sendMessage",
        chat_id=ANN,
        text="<b>x</b>",
        parse_mode="HTML",
        reply_markup=markup,
    )
    mid = sent["result"]["message_id"]
    status, body = await raw(
        http,
        emu,
        "editMessageText",
        chat_id=ANN,
        message_id=mid,
        text="<b>x</b>",
        parse_mode="HTML",
        reply_markup=markup,
    )
    assert status == 400
    assert body["description"] == (
        "Bad Request: message is not modified: specified new message content and reply "
        "markup are exactly the same as a current content and reply markup of the message"
    )
    status, body = await raw(
        http, emu, "editMessageReplyMarkup", chat_id=ANN, message_id=mid, reply_markup=markup
    )
    assert body["description"].startswith("Bad Request: message is not modified")
    status, body = await raw(http, emu, "editMessageText", chat_id=ANN, message_id=999, text="y")
    assert (status, body["description"]) == (400, "Bad Request: message to edit not found")
    status, body = await raw(http, emu, "deleteMessage", chat_id=ANN, message_id=999)
    assert (status, body["description"]) == (400, "Bad Request: message to delete not found")
    status, body = await raw(http, emu, "editMessageText", chat_id=ANN, message_id=1, text="y")
    assert body["description"] == "Bad Request: message can't be edited"  # the user's /start

    status, body = await raw(http, emu, "editMessageReplyMarkup", chat_id=ANN, message_id=mid)
    assert status == 200 and "reply_markup" not in body["result"]
    assert emu.message(ANN, mid) is not None
    assert emu.message(ANN, mid).edit_count == 1  # type: ignore[union-attr]


@pytest.mark.parametrize(
    ("params", "description"),
    [
        ({"text": ""}, "Bad Request: message text is empty"),
        ({"text": "  \n "}, "Bad Request: message text is empty"),
        ({"text": "<b></b>", "parse_mode": "HTML"}, "Bad Request: message text is empty"),
        ({"text": "x" * 4097}, "Bad Request: message is too long"),
        ({"text": "😀" * 2049}, "Bad Request: message is too long"),  # UTF-16 units
        (
            {"text": "a < b", "parse_mode": "HTML"},
            'Bad Request: can\'t parse entities: Unsupported start tag "" at byte offset 2',
        ),
        (
            {"text": "<b>bold", "parse_mode": "HTML"},
            "Bad Request: can't parse entities: Can't find end tag corresponding to start "
            'tag "b"',
        ),
        (
            {"text": "<b>x</i>", "parse_mode": "HTML"},
            "Bad Request: can't parse entities: Unmatched end tag at byte offset 4, "
            'expected "</b>", found "</i>"',
        ),
        (
            {"text": "x<br>y", "parse_mode": "HTML"},
            'Bad Request: can\'t parse entities: Unsupported start tag "br" at byte offset 1',
        ),
        (
            {
                "text": "x",
                "reply_markup": {"inline_keyboard": [[{"text": "A", "callback_data": "é" * 33}]]},
            },
            "Bad Request: BUTTON_DATA_INVALID",
        ),
        (
            {
                "text": "x",
                "reply_markup": {"inline_keyboard": [[{"text": "A", "callback_data": ""}]]},
            },
            "Bad Request: BUTTON_DATA_INVALID",
        ),
    ],
)
async def test_send_validation_errors(
    emu: BotApiEmulator, http: aiohttp.ClientSession, params: dict[str, Any], description: str
) -> None:
    await emu.user_starts_bot(ANN)
    status, body = await raw(http, emu, "sendMessage", chat_id=ANN, **params)
    assert (status, body) == (400, {"ok": False, "error_code": 400, "description": description})


async def test_html_length_counts_visible_text(
    emu: BotApiEmulator, http: aiohttp.ClientSession
) -> None:
    await emu.user_starts_bot(ANN)
    text = "<b>" + "&lt;" * 4000 + "</b>" + "y" * 96
    status, body = await raw(http, emu, "sendMessage", chat_id=ANN, text=text, parse_mode="HTML")
    assert status == 200, body
    assert len(body["result"]["text"]) == 4096
    assert emu.last_message(ANN) is not None
    assert emu.last_message(ANN).html == text  # type: ignore[union-attr]
    callback_data = "x" * 64
    ok_markup = {"inline_keyboard": [[{"text": "A", "callback_data": callback_data}]]}
    status, _ = await raw(http, emu, "sendMessage", chat_id=ANN, text="k", reply_markup=ok_markup)
    assert status == 200


async def test_callback_answer_errors(
    emu: BotApiEmulator, bot: Bot, http: aiohttp.ClientSession, clock: ManualClock
) -> None:
    await emu.user_starts_bot(ANN)
    sent = await bot.send_message(
        ANN,
        "m",
        reply_markup=InlineKeyboardMarkup([[InlineKeyboardButton("a", callback_data="a")]]),
    )
    handle = await emu.user_sends_callback(ANN, ANN, sent.message_id, "forged:data")
    assert handle.data == "forged:data"
    assert await bot.answer_callback_query(handle.id, text="nope")
    expected = "Bad Request: query is too old and response timeout expired or query ID is invalid"
    status, body = await raw(http, emu, "answerCallbackQuery", callback_query_id=handle.id)
    assert (status, body["description"]) == (400, expected)
    status, body = await raw(http, emu, "answerCallbackQuery", callback_query_id="123")
    assert (status, body["description"]) == (400, expected)
    assert (await handle.answer(timeout=1)).text == "nope"

    # Expiry is measured on the emulator clock.
    emu.clock = clock
    late = await emu.user_presses(ANN, ANN, sent.message_id, data="a")
    clock.advance(16)
    with pytest.raises(BadRequest, match="Query is too old"):
        await bot.answer_callback_query(late.id)
    with pytest.raises(TimeoutError, match="did not answer"):
        await late.answer(timeout=0.01)


async def test_unknown_token_and_method(emu: BotApiEmulator, http: aiohttp.ClientSession) -> None:
    status, body = await raw(http, emu, "getMe", token="999:nope")
    assert (status, body) == (401, {"ok": False, "error_code": 401, "description": "Unauthorized"})
    status, body = await raw(http, emu, "sendTelepathy")
    assert (status, body) == (404, {"ok": False, "error_code": 404, "description": "Not Found"})
    with pytest.raises(InvalidToken):
        async with Bot("999:nope", base_url=emu.base_url()):
            pass


# ---------------------------------------------------------------------- request formats & polling


async def test_json_query_and_multipart_parameters(
    emu: BotApiEmulator, http: aiohttp.ClientSession
) -> None:
    await emu.user_starts_bot(ANN)
    url = f"{emu.url}/bot{TOKEN}/sendMessage"
    markup = {"inline_keyboard": [[{"text": "A", "callback_data": "a"}]]}
    async with http.post(url, json={"chat_id": ANN, "text": "123", "reply_markup": markup}) as r:
        body = await r.json()
        assert body["result"]["text"] == "123"  # numeric-looking text stays text
        assert body["result"]["reply_markup"] == markup
    async with http.get(url, params={"chat_id": str(ANN), "text": "via query"}) as r:
        assert (await r.json())["result"]["text"] == "via query"
    form = aiohttp.FormData()
    form.add_field("chat_id", str(ANN))
    form.add_field("text", "via multipart")
    form.add_field("document", b"bytes", filename="a.txt")
    async with http.post(url, data=form) as r:
        assert (await r.json())["result"]["text"] == "via multipart"
    async with http.post(f"{emu.url}/bot{TOKEN}/GETME") as r:  # case-insensitive methods
        assert (await r.json())["ok"] is True


async def test_long_polling(emu: BotApiEmulator, http: aiohttp.ClientSession) -> None:
    status, body = await raw(http, emu, "getUpdates", timeout=0)
    assert (status, body["result"]) == (200, [])
    poll = asyncio.create_task(raw(http, emu, "getUpdates", timeout=30))
    await emu.wait_for(lambda: emu.stats.calls["getUpdates"] == 2)
    await emu.user_starts_bot(ANN)
    _, body = await asyncio.wait_for(poll, 5)  # woken by the update, not by the timeout
    [update] = body["result"]
    assert update["message"]["text"] == "/start"
    # A second concurrent getUpdates terminates the first, as on Telegram.
    first = asyncio.create_task(
        raw(http, emu, "getUpdates", offset=update["update_id"] + 1, timeout=30)
    )
    await emu.wait_for(lambda: emu.stats.calls["getUpdates"] == 3)
    second = asyncio.create_task(raw(http, emu, "getUpdates", timeout=0))
    status, body = await asyncio.wait_for(first, 5)
    assert status == 409 and body["description"].startswith("Conflict: terminated by other")
    assert (await second)[1]["result"] == []

    await raw(http, emu, "setWebhook", url="https://example.org/hook")
    status, body = await raw(http, emu, "getUpdates")
    assert status == 409 and "webhook is active" in body["description"]
    _, info = await raw(http, emu, "getWebhookInfo")
    assert info["result"]["url"] == "https://example.org/hook"
    await raw(http, emu, "deleteWebhook", drop_pending_updates=True)
    assert (await raw(http, emu, "getUpdates"))[0] == 200


# ---------------------------------------------------------------------- rate limits & faults


async def test_private_chat_rate_limit(
    limited: BotApiEmulator, clock: ManualClock, http: aiohttp.ClientSession
) -> None:
    await limited.user_starts_bot(ANN)
    for _ in range(3):  # the burst
        assert (await raw(http, limited, "sendMessage", chat_id=ANN, text="x"))[0] == 200
    status, body = await raw(http, limited, "sendMessage", chat_id=ANN, text="x")
    assert status == 429
    assert body == {
        "ok": False,
        "error_code": 429,
        "description": "Too Many Requests: retry after 1",
        "parameters": {"retry_after": 1},
    }
    # Not rate limited: callback answers, polling, commands.
    assert (await raw(http, limited, "getUpdates", timeout=0))[0] == 200
    assert (await raw(http, limited, "getMyCommands"))[0] == 200
    clock.advance(1.0)
    assert (await raw(http, limited, "sendMessage", chat_id=ANN, text="x"))[0] == 200
    assert limited.stats.too_many_requests == 1


async def test_group_rate_limit_with_ptb(limited: BotApiEmulator, clock: ManualClock) -> None:
    limited.add_group(GROUP, "G", members=[ANN], creator=ANN)
    async with Bot(TOKEN, base_url=limited.base_url()) as bot:
        sent = await bot.send_message(GROUP, "0")
        for i in range(1, 19):
            clock.advance(0.5)  # stay under 30/s overall
            await bot.send_message(GROUP, str(i))
        await bot.edit_message_text("edited", GROUP, sent.message_id)  # edits count too
        with pytest.raises(RetryAfter) as err:
            await bot.send_message(GROUP, "too many")
        assert "Retry in 51 seconds" in str(err.value)  # first send + 60 s − 9 s elapsed
        clock.advance(51)
        assert await bot.send_message(GROUP, "ok again")
    assert limited.stats.too_many_requests == 1
    assert limited.stats.chat_method_calls[(GROUP, "sendMessage")] == 21


async def test_global_rate_limit(clock: ManualClock, http: aiohttp.ClientSession) -> None:
    limits = RateLimits(global_max=4, global_window=1.0)
    async with BotApiEmulator(rate_limits=limits, clock=clock) as emu:
        populate(emu)
        for user in (ANN, BOB, CAROL):
            await emu.user_starts_bot(user)
        codes = [
            (await raw(http, emu, "sendMessage", chat_id=user, text="x"))[0]
            for user in (ANN, BOB, CAROL, ANN, BOB)
        ]
        assert codes == [200, 200, 200, 200, 429]
        emu.set_rate_limits(False)
        assert (await raw(http, emu, "sendMessage", chat_id=BOB, text="x"))[0] == 200


async def test_injected_429_storm(emu: BotApiEmulator, bot: Bot) -> None:
    await emu.user_starts_bot(ANN)
    await emu.user_starts_bot(BOB)
    emu.inject_error(
        "sendMessage", 429, "Too Many Requests: retry after 2", retry_after=2, times=3, chat_id=ANN
    )
    assert await bot.send_message(BOB, "other chat is fine")
    for _ in range(3):
        with pytest.raises(RetryAfter):
            await bot.send_message(ANN, "x")
    assert await bot.send_message(ANN, "x")
    assert emu.stats.too_many_requests == 3
    assert emu.stats.errors[429] == 3
    emu.reset_stats()
    assert emu.stats.total == 0
    emu.inject_error("*", 502, "Bad Gateway")
    with pytest.raises(Exception, match="Bad Gateway"):
        await bot.get_me()


# ---------------------------------------------------------------------- control API


async def test_sse_stream_and_http_control(
    emu: BotApiEmulator, http: aiohttp.ClientSession
) -> None:
    async with http.get(f"{emu.url}/_emu/events", params={"chat_id": str(ANN)}) as stream:
        assert stream.headers["Content-Type"].startswith("text/event-stream")
        assert await stream.content.readline() == b": connected\n"
        async with http.post(f"{emu.url}/_emu/start", json={"user_id": ANN, "payload": "p1"}) as r:
            assert (await r.json())["result"]["text"] == "/start p1"
        lines: list[bytes] = []
        async with asyncio.timeout(5):
            while not (lines and lines[-1].startswith(b"data:")):
                lines.append(await stream.content.readline())
        assert lines[-2] == b"event: message\n"
        event = json.loads(lines[-1][len(b"data:") :])
        assert event["type"] == "message" and event["chat_id"] == ANN
        assert event["message"]["text"] == "/start p1"

    async with http.post(f"{emu.url}/_emu/users", json={"user_id": 77, "first_name": "Dan"}) as r:
        assert (await r.json())["result"]["first_name"] == "Dan"
    group = {"chat_id": GROUP, "title": "G", "members": [ANN, 77], "creator": ANN}
    async with http.post(f"{emu.url}/_emu/groups", json=group) as r:
        assert (await r.json())["result"]["bots"] == [123456]
    async with http.post(
        f"{emu.url}/_emu/send", json={"user_id": 77, "chat_id": GROUP, "text": "hi"}
    ) as r:
        assert (await r.json())["ok"]
    async with http.get(f"{emu.url}/_emu/chats/{GROUP}/messages") as r:
        assert [m["text"] for m in (await r.json())["result"]] == ["hi"]
    async with http.get(f"{emu.url}/_emu/state") as r:
        state = (await r.json())["result"]
        assert {u["id"] for u in state["users"]} == {ANN, BOB, CAROL, 77}
        assert "token" not in json.dumps(state)
    async with http.post(
        f"{emu.url}/_emu/send", json={"user_id": CAROL, "chat_id": GROUP, "text": "x"}
    ) as r:
        assert r.status == 400 and "not a member" in (await r.json())["error"]
    async with http.post(f"{emu.url}/_emu/send", data="{}") as r:
        assert r.status == 400  # JSON content type required
    async with http.get(f"{emu.url}/_emu/state", headers={"Host": "evil.example"}) as r:
        assert r.status == 403  # DNS-rebinding guard


async def test_http_press_waits_for_answer(
    emu: BotApiEmulator, app: Application[Any, Any, Any, Any, Any, Any], http: aiohttp.ClientSession
) -> None:
    await emu.user_starts_bot(BOB)
    menu = await emu.wait_for_message(BOB, "Hi Bob")
    press = {
        "user_id": BOB,
        "chat_id": BOB,
        "message_id": menu.message_id,
        "data": "play",
        "wait": 5,
    }
    async with http.post(f"{emu.url}/_emu/press", json=press) as r:
        result = (await r.json())["result"]
    assert result["answer"]["text"] == "Let's go"


async def test_subscribe_and_wait_for_timeout_message(emu: BotApiEmulator) -> None:
    with emu.subscribe(chat_ids=[BOB]) as events:
        await emu.user_starts_bot(ANN)
        await emu.user_starts_bot(BOB)
        event = await events.get(timeout=1)
        assert event is not None and event["chat_id"] == BOB
    with pytest.raises(TimeoutError, match=r"(?s)recent emulator events.*'/start'"):
        await emu.wait_for(lambda: emu.last_message(ANN, bot=TOKEN) is None, timeout=0.05)


async def test_multiple_bots_have_separate_private_chats(emu: BotApiEmulator, bot: Bot) -> None:
    emu.add_bot(OTHER_TOKEN, username="other_bot")
    await emu.user_opens_link(ANN, "https://t.me/other_bot?start=abc")
    assert emu.last_message(ANN, bot="other_bot") is not None
    assert emu.messages(ANN) == []  # the default bot's chat with Ann is untouched
    with pytest.raises(Forbidden):
        await bot.send_message(ANN, "x")
    with pytest.raises(EmulatorError, match="invalid start payload"):
        await emu.user_starts_bot(ANN, "has space")


def test_html_parser_entities_and_rendering() -> None:
    parsed = parse_html(
        '😀 <b>bold <i>both</i></b> &lt;&amp;&gt; AT&T <a href="https://e.org/?a=1&amp;b=2">link</a>'
        '<pre><code class="language-python">x = 1</code></pre><span class="tg-spoiler">s</span>'
    )
    assert parsed.text == "😀 bold both <&> AT&T linkx = 1s"
    assert list(parsed.entities) == [
        {"type": "bold", "offset": 3, "length": 9},
        {"type": "italic", "offset": 8, "length": 4},
        {"type": "text_link", "offset": 22, "length": 4, "url": "https://e.org/?a=1&b=2"},
        {"type": "pre", "offset": 26, "length": 5, "language": "python"},
        {"type": "spoiler", "offset": 31, "length": 1},
    ]
    with pytest.raises(HtmlParseError, match='Tag "span" must have class'):
        parse_html("<span>x</span>")
    with pytest.raises(HtmlParseError, match="Unexpected end tag at byte offset 1"):
        parse_html("x</b>")
    rendered = entities_to_html(
        "<x> link", [{"type": "text_link", "offset": 4, "length": 4, "url": "javascript:alert(1)"}]
    )
    assert rendered == '&lt;x&gt; <span class="tg-text-link">link</span>'
