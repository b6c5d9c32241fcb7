"""Bot API methods of the emulator: validation and effects, mirroring api.telegram.org."""

from __future__ import annotations

import asyncio
import contextlib
import copy
import re
from collections.abc import Awaitable, Callable
from typing import Any

from sandbox.emulator_events import member_api
from sandbox.emulator_html import FormattedText, HtmlParseError, parse_html, strip_formatted
from sandbox.emulator_html import utf16_len as _utf16_len
from sandbox.emulator_models import (
    ERR_BUTTON_DATA,
    ERR_CANT_DELETE,
    ERR_CANT_EDIT,
    ERR_DELETE_NOT_FOUND,
    ERR_EDIT_NOT_FOUND,
    ERR_MARKUP_JSON,
    ERR_NOT_FOUND,
    ERR_NOT_MODIFIED,
    ERR_PARSE_ENTITIES,
    ERR_PIN_RIGHTS,
    ERR_POLL_CONFLICT,
    ERR_REPLY_NOT_FOUND,
    ERR_TEXT_BUTTONS,
    ERR_TEXT_EMPTY,
    ERR_TOO_LONG,
    ERR_UNAUTHORIZED,
    ERR_WEBHOOK_ACTIVE,
    MAX_CALLBACK_DATA_BYTES,
    MAX_TEXT_LENGTH,
    ApiError,
    CallbackAnswer,
    CommandsKey,
    EmuBot,
    EmuChat,
    EmuMessage,
    JsonDict,
    Params,
)
from sandbox.emulator_state import EmulatorState

Handler = Callable[[EmulatorState, EmuBot, Params], Awaitable[Any]]

_BUTTON_ACTIONS = frozenset(
    {
        "url",
        "callback_data",
        "web_app",
        "login_url",
        "switch_inline_query",
        "switch_inline_query_current_chat",
        "switch_inline_query_chosen_chat",
        "copy_text",
        "callback_game",
        "pay",
    }
)
_CHAT_ACTIONS = frozenset(
    {
        "typing",
        "upload_photo",
        "record_video",
        "upload_video",
        "record_voice",
        "upload_voice",
        "upload_document",
        "choose_sticker",
        "find_location",
        "record_video_note",
        "upload_video_note",
    }
)
_SCOPE_TYPES = frozenset(
    {
        "default",
        "all_private_chats",
        "all_group_chats",
        "all_chat_administrators",
        "chat",
        "chat_administrators",
        "chat_member",
    }
)
_COMMAND_NAME_RE = re.compile(r"[a-z0-9_]{1,32}")
_NO_GIFTS = {
    "unlimited_gifts": False,
    "limited_gifts": False,
    "unique_gifts": False,
    "premium_subscription": False,
    "gifts_from_channels": False,
}


# ---------------------------------------------------------------------- validation helpers


def format_text(
    text: str | None, parse_mode: str | None, entities: Any
) -> tuple[FormattedText, str | None]:
    """Visible text + entities as Telegram computes them, or Telegram's error."""
    if not text:
        raise ApiError(400, ERR_TEXT_EMPTY)
    mode = (parse_mode or "").strip()
    if mode.lower() == "html":
        try:
            formatted = parse_html(text)
        except HtmlParseError as err:
            raise ApiError(400, ERR_PARSE_ENTITIES + str(err)) from None
        mode = "HTML"
    elif mode.lower() in ("markdown", "markdownv2"):
        # Markdown is stored verbatim: the Durak bot formats with HTML only.
        formatted = FormattedText(text)
    elif mode:
        raise ApiError(400, "Bad Request: unsupported parse_mode")
    else:
        given = entities if isinstance(entities, list) else []
        formatted = FormattedText(text, tuple(e for e in given if isinstance(e, dict)))
    formatted = strip_formatted(formatted)
    if not formatted.text:
        raise ApiError(400, ERR_TEXT_EMPTY)
    # Telegram counts the limit after entity parsing, in UTF-16 units like all its offsets.
    if _utf16_len(formatted.text) > MAX_TEXT_LENGTH:
        raise ApiError(400, ERR_TOO_LONG)
    return formatted, mode or None


def parse_markup(p: Params) -> JsonDict | None:
    raw = p.get_json("reply_markup", ERR_MARKUP_JSON)
    if raw is None:
        return None
    if not isinstance(raw, dict):
        raise ApiError(400, ERR_MARKUP_JSON)
    if "inline_keyboard" not in raw:
        return raw  # reply keyboards etc. are stored but never echoed back
    rows = raw["inline_keyboard"]
    if not isinstance(rows, list) or not all(isinstance(row, list) for row in rows):
        raise ApiError(
            400,
            'Bad Request: field "inline_keyboard" of the InlineKeyboardMarkup should be an '
            "Array of Arrays",
        )
    for row in rows:
        for button in row:
            if not isinstance(button, dict):
                raise ApiError(
                    400,
                    "Bad Request: can't parse inline keyboard button: InlineKeyboardButton "
                    "must be an Object",
                )
            if not isinstance(button.get("text"), str):
                raise ApiError(
                    400,
                    'Bad Request: can\'t parse inline keyboard button: Field "text" must be '
                    "of type String",
                )
            if "callback_data" in button:
                data = button["callback_data"]
                size = len(data.encode("utf-8")) if isinstance(data, str) else 0
                if not 1 <= size <= MAX_CALLBACK_DATA_BYTES:
                    raise ApiError(400, ERR_BUTTON_DATA)
            elif not _BUTTON_ACTIONS & button.keys():
                raise ApiError(400, ERR_TEXT_BUTTONS)
    return {"inline_keyboard": rows}


def _inline(markup: JsonDict | None) -> Any:
    return (markup or {}).get("inline_keyboard") or None


def _reply_target(chat: EmuChat, p: Params) -> int | None:
    reply_id = p.get_int("reply_to_message_id")
    allow = p.get_bool("allow_sending_without_reply")
    params = p.get_json("reply_parameters")
    if isinstance(params, dict) and params.get("message_id") is not None:
        reply_id = int(params["message_id"])
        allow = bool(params.get("allow_sending_without_reply", allow))
    if reply_id is None:
        return None
    target = chat.messages.get(reply_id)
    if target is not None and not target.deleted:
        return reply_id
    if allow:
        return None
    raise ApiError(400, ERR_REPLY_NOT_FOUND)


def _message_id(p: Params) -> int:
    message_id = p.get_int("message_id")
    if message_id is None:
        raise ApiError(400, "Bad Request: message identifier is not specified")
    return message_id


def _own_message(chat: EmuChat, b: EmuBot, p: Params) -> EmuMessage:
    if "inline_message_id" in p:
        raise ApiError(400, "Bad Request: MESSAGE_ID_INVALID")
    message = chat.messages.get(_message_id(p))
    if message is None or message.deleted:
        raise ApiError(400, ERR_EDIT_NOT_FOUND)
    if message.sender.id != b.id:
        raise ApiError(400, ERR_CANT_EDIT)
    return message


def _user_id(core: EmulatorState, p: Params) -> int:
    user_id = p.get_int("user_id")
    if user_id is None or user_id not in core.users:
        raise ApiError(400, "Bad Request: user not found")
    return user_id


# ---------------------------------------------------------------------- methods


async def get_me(core: EmulatorState, b: EmuBot, p: Params) -> Any:
    return {
        **b.user.to_api(),
        "can_join_groups": True,
        "can_read_all_group_messages": False,
        "supports_inline_queries": False,
        "can_connect_to_business": False,
        "has_main_web_app": False,
    }


async def get_updates(core: EmulatorState, b: EmuBot, p: Params) -> Any:
    if b.webhook is not None:
        raise ApiError(409, ERR_WEBHOOK_ACTIVE)
    offset = p.get_int("offset")
    limit = min(100, max(1, p.get_int("limit") or 100))
    timeout = max(0.0, p.get_float("timeout") or 0.0)
    allowed = p.get_json("allowed_updates")
    if isinstance(allowed, list):
        b.allowed_updates = [str(kind) for kind in allowed] or None
    # Like Telegram, a newer getUpdates terminates an older one still waiting.
    b.poll_generation += 1
    generation = b.poll_generation
    b.poke()
    core.confirm_updates(b, offset)
    loop = asyncio.get_running_loop()
    deadline = loop.time() + timeout
    while True:
        if generation != b.poll_generation:
            raise ApiError(409, ERR_POLL_CONFLICT)
        if b.updates or core.closing:
            return copy.deepcopy(b.updates[:limit])
        remaining = deadline - loop.time()
        if remaining <= 0:
            return []
        wake = b.wake
        with contextlib.suppress(TimeoutError):
            await asyncio.wait_for(wake.wait(), remaining)


async def set_webhook(core: EmulatorState, b: EmuBot, p: Params) -> Any:
    url = p.get_str("url") or ""
    if p.get_bool("drop_pending_updates"):
        b.updates.clear()
    if not url:
        b.webhook = None
        return True
    if not url.startswith("https://"):
        raise ApiError(400, "Bad Request: bad webhook: An HTTPS URL must be provided for webhook")
    b.webhook = {
        "url": url,
        "max_connections": p.get_int("max_connections") or 40,
        "allowed_updates": p.get_json("allowed_updates"),
        "secret_token": p.get_str("secret_token"),
    }
    b.poke()  # a waiting getUpdates must now fail with the webhook conflict
    return True


async def delete_webhook(core: EmulatorState, b: EmuBot, p: Params) -> Any:
    b.webhook = None
    if p.get_bool("drop_pending_updates"):
        b.updates.clear()
    return True


async def get_webhook_info(core: EmulatorState, b: EmuBot, p: Params) -> Any:
    info: JsonDict = {
        "url": "",
        "has_custom_certificate": False,
        "pending_update_count": len(b.updates),
    }
    if b.webhook is not None:
        info["url"] = b.webhook["url"]
        info["max_connections"] = b.webhook["max_connections"]
        if b.webhook["allowed_updates"]:
            info["allowed_updates"] = b.webhook["allowed_updates"]
    return info


async def ok_true(core: EmulatorState, b: EmuBot, p: Params) -> Any:
    return True


async def send_message(core: EmulatorState, b: EmuBot, p: Params) -> Any:
    chat = core.chat_for_bot(b, p.chat_id(), write=True)
    text = p.get_str("text")
    formatted, mode = format_text(text, p.get_str("parse_mode"), p.get_json("entities"))
    markup = parse_markup(p)
    reply_to = _reply_target(chat, p)
    core.check_flood(b, chat)
    message = core.store_message(
        chat,
        b.user,
        text=formatted.text,
        html=text,
        parse_mode=mode,
        entities=list(formatted.entities),
        reply_markup=markup,
        reply_to=reply_to,
    )
    core.record_flood(b, chat)
    return core.message_api(message)


async def edit_message_text(core: EmulatorState, b: EmuBot, p: Params) -> Any:
    chat = core.chat_for_bot(b, p.chat_id(), write=True)
    message = _own_message(chat, b, p)
    text = p.get_str("text")
    formatted, mode = format_text(text, p.get_str("parse_mode"), p.get_json("entities"))
    # No reply_markup in an edit removes the keyboard, exactly as in Telegram.
    markup = parse_markup(p)
    if (
        formatted.text == message.text
        and list(formatted.entities) == message.entities
        and _inline(markup) == _inline(message.reply_markup)
    ):
        raise ApiError(400, ERR_NOT_MODIFIED)
    core.check_flood(b, chat)
    core.edit_message(
        message,
        text=formatted.text,
        html=text,
        parse_mode=mode,
        entities=list(formatted.entities),
        reply_markup=markup,
    )
    core.record_flood(b, chat)
    return core.message_api(message)


async def edit_message_reply_markup(core: EmulatorState, b: EmuBot, p: Params) -> Any:
    chat = core.chat_for_bot(b, p.chat_id(), write=True)
    message = _own_message(chat, b, p)
    markup = parse_markup(p)
    if _inline(markup) == _inline(message.reply_markup):
        raise ApiError(400, ERR_NOT_MODIFIED)
    core.check_flood(b, chat)
    core.edit_message(message, reply_markup=markup)
    core.record_flood(b, chat)
    return core.message_api(message)


def _delete_one(core: EmulatorState, b: EmuBot, chat: EmuChat, message_id: int) -> None:
    message = chat.messages.get(message_id)
    if message is None or message.deleted:
        raise ApiError(400, ERR_DELETE_NOT_FOUND)
    if message.sender.id != b.id and chat.is_group and b.id not in chat.admins:
        raise ApiError(400, ERR_CANT_DELETE)
    core.delete_message(message)


async def delete_message(core: EmulatorState, b: EmuBot, p: Params) -> Any:
    chat = core.chat_for_bot(b, p.chat_id(), write=False)
    _delete_one(core, b, chat, _message_id(p))
    return True


async def delete_messages(core: EmulatorState, b: EmuBot, p: Params) -> Any:
    chat = core.chat_for_bot(b, p.chat_id(), write=False)
    ids = p.get_json("message_ids")
    if not isinstance(ids, list) or not 1 <= len(ids) <= 100:
        raise ApiError(400, "Bad Request: message identifiers are not specified")
    for message_id in ids:
        # Telegram skips messages it cannot find or delete.
        with contextlib.suppress(ApiError, TypeError, ValueError):
            _delete_one(core, b, chat, int(message_id))
    return True


async def answer_callback_query(core: EmulatorState, b: EmuBot, p: Params) -> Any:
    text = p.get_str("text")
    if text is not None and len(text) > 200:
        raise ApiError(400, "Bad Request: MESSAGE_TOO_LONG")
    core.answer_callback(
        b,
        CallbackAnswer(
            callback_query_id=p.get_str("callback_query_id") or "",
            text=text or None,
            show_alert=p.get_bool("show_alert"),
            url=p.get_str("url"),
            cache_time=p.get_int("cache_time") or 0,
        ),
    )
    return True


def _commands_key(core: EmulatorState, p: Params) -> CommandsKey:
    scope = p.get_json("scope", "Bad Request: can't parse BotCommandScope JSON object")
    if scope is None:
        scope = {"type": "default"}
    if not isinstance(scope, dict) or scope.get("type") not in _SCOPE_TYPES:
        raise ApiError(400, "Bad Request: can't parse BotCommandScope JSON object")
    kind = str(scope["type"])
    chat_id: int | None = None
    user_id: int | None = None
    if kind in ("chat", "chat_administrators", "chat_member"):
        scoped = Params(scope)
        chat_id = scoped.get_int("chat_id")
        if chat_id is None:
            raise ApiError(400, "Bad Request: chat not found")
        if kind == "chat_member":
            user_id = scoped.get_int("user_id")
            if user_id is None:
                raise ApiError(400, "Bad Request: user not found")
    return (kind, chat_id, user_id, p.get_str("language_code") or "")


async def set_my_commands(core: EmulatorState, b: EmuBot, p: Params) -> Any:
    key = _commands_key(core, p)
    commands = p.get_json("commands")
    if not isinstance(commands, list) or len(commands) > 100:
        raise ApiError(400, "Bad Request: can't parse commands JSON object")
    stored: list[JsonDict] = []
    for item in commands:
        if not isinstance(item, dict) or not _COMMAND_NAME_RE.fullmatch(
            str(item.get("command", ""))
        ):
            raise ApiError(400, "Bad Request: BOT_COMMAND_INVALID")
        description = str(item.get("description", ""))
        if not 1 <= len(description) <= 256:
            raise ApiError(400, "Bad Request: BOT_COMMAND_DESCRIPTION_INVALID")
        stored.append({"command": str(item["command"]), "description": description})
    if stored:
        b.commands[key] = stored
    else:
        b.commands.pop(key, None)
    core.touch()
    return True


async def get_my_commands(core: EmulatorState, b: EmuBot, p: Params) -> Any:
    return copy.deepcopy(b.commands.get(_commands_key(core, p), []))


async def delete_my_commands(core: EmulatorState, b: EmuBot, p: Params) -> Any:
    b.commands.pop(_commands_key(core, p), None)
    core.touch()
    return True


async def get_chat(core: EmulatorState, b: EmuBot, p: Params) -> Any:
    chat = core.chat_for_bot(b, p.chat_id(), write=False)
    info: JsonDict = {
        **chat.to_api(),
        "accent_color_id": 0,
        "max_reaction_count": 11,
        "accepted_gift_types": dict(_NO_GIFTS),
    }
    if chat.pinned:
        info["pinned_message"] = core.message_api(chat.messages[chat.pinned[-1]])
    return info


async def get_chat_member(core: EmulatorState, b: EmuBot, p: Params) -> Any:
    chat = core.chat_for_bot(b, p.chat_id(), write=False)
    user_id = _user_id(core, p)
    return member_api(core.users[user_id], core.member_status(chat, user_id))


async def get_chat_administrators(core: EmulatorState, b: EmuBot, p: Params) -> Any:
    chat = core.chat_for_bot(b, p.chat_id(), write=False)
    if not chat.is_group:
        raise ApiError(400, "Bad Request: there are no administrators in the private chat")
    result: list[JsonDict] = []
    ids = ([chat.creator] if chat.creator is not None else []) + sorted(chat.admins)
    for user_id in dict.fromkeys(ids):
        status = core.member_status(chat, user_id)
        if status in ("creator", "administrator") and user_id in core.users:
            result.append(member_api(core.users[user_id], status))
    return result


async def get_chat_member_count(core: EmulatorState, b: EmuBot, p: Params) -> Any:
    chat = core.chat_for_bot(b, p.chat_id(), write=False)
    return len(chat.members) + len(chat.bots) if chat.is_group else 2


async def send_chat_action(core: EmulatorState, b: EmuBot, p: Params) -> Any:
    chat = core.chat_for_bot(b, p.chat_id(), write=True)
    action = p.get_str("action") or ""
    if action not in _CHAT_ACTIONS:
        raise ApiError(400, "Bad Request: wrong parameter action in request")
    core.emit(chat, "chat_action", action=action, user_id=b.id)
    return True


def _require_pin_rights(b: EmuBot, chat: EmuChat) -> None:
    if chat.is_group and b.id not in chat.admins:
        raise ApiError(400, ERR_PIN_RIGHTS)


async def pin_chat_message(core: EmulatorState, b: EmuBot, p: Params) -> Any:
    chat = core.chat_for_bot(b, p.chat_id(), write=True)
    _require_pin_rights(b, chat)
    message_id = _message_id(p)
    message = chat.messages.get(message_id)
    if message is None or message.deleted:
        raise ApiError(400, "Bad Request: message to pin not found")
    if message_id in chat.pinned:
        chat.pinned.remove(message_id)
    chat.pinned.append(message_id)
    core.emit(chat, "pin", message_id=message_id)
    return True


async def unpin_chat_message(core: EmulatorState, b: EmuBot, p: Params) -> Any:
    chat = core.chat_for_bot(b, p.chat_id(), write=True)
    _require_pin_rights(b, chat)
    message_id = p.get_int("message_id")
    if message_id is None:
        if not chat.pinned:
            return True
        message_id = chat.pinned[-1]
    if message_id not in chat.pinned:
        raise ApiError(400, "Bad Request: message to unpin not found")
    chat.pinned.remove(message_id)
    core.emit(chat, "unpin", message_id=message_id)
    return True


async def unpin_all_chat_messages(core: EmulatorState, b: EmuBot, p: Params) -> Any:
    chat = core.chat_for_bot(b, p.chat_id(), write=True)
    _require_pin_rights(b, chat)
    for message_id in list(chat.pinned):
        chat.pinned.remove(message_id)
        core.emit(chat, "unpin", message_id=message_id)
    return True


def _setting_setter(field: str) -> Handler:
    async def setter(core: EmulatorState, b: EmuBot, p: Params) -> Any:
        b.settings[field] = p.get_str(field) or ""
        return True

    return setter


def _setting_getter(field: str) -> Handler:
    async def getter(core: EmulatorState, b: EmuBot, p: Params) -> Any:
        default = b.user.first_name if field == "name" else ""
        return {field: b.settings.get(field, default)}

    return getter


async def set_chat_menu_button(core: EmulatorState, b: EmuBot, p: Params) -> Any:
    button = p.get_json("menu_button")
    b.settings["menu_button"] = button if isinstance(button, dict) else {"type": "default"}
    return True


async def get_chat_menu_button(core: EmulatorState, b: EmuBot, p: Params) -> Any:
    return b.settings.get("menu_button", {"type": "default"})


METHODS: dict[str, Handler] = {
    "getMe": get_me,
    "getUpdates": get_updates,
    "setWebhook": set_webhook,
    "deleteWebhook": delete_webhook,
    "getWebhookInfo": get_webhook_info,
    "logOut": ok_true,
    "close": ok_true,
    "sendMessage": send_message,
    "editMessageText": edit_message_text,
    "editMessageReplyMarkup": edit_message_reply_markup,
    "deleteMessage": delete_message,
    "deleteMessages": delete_messages,
    "answerCallbackQuery": answer_callback_query,
    "setMyCommands": set_my_commands,
    "getMyCommands": get_my_commands,
    "deleteMyCommands": delete_my_commands,
    "getChat": get_chat,
    "getChatMember": get_chat_member,
    "getChatAdministrators": get_chat_administrators,
    "getChatMemberCount": get_chat_member_count,
    "sendChatAction": send_chat_action,
    "pinChatMessage": pin_chat_message,
    "unpinChatMessage": unpin_chat_message,
    "unpinAllChatMessages": unpin_all_chat_messages,
    "setChatMenuButton": set_chat_menu_button,
    "getChatMenuButton": get_chat_menu_button,
    "setMyName": _setting_setter("name"),
    "getMyName": _setting_getter("name"),
    "setMyDescription": _setting_setter("description"),
    "getMyDescription": _setting_getter("description"),
    "setMyShortDescription": _setting_setter("short_description"),
    "getMyShortDescription": _setting_getter("short_description"),
    "setMyDefaultAdministratorRights": ok_true,
}
# Telegram matches method names case-insensitively.
_CANONICAL = {name.lower(): name for name in METHODS}


async def call_method(
    core: EmulatorState, token: str, method: str, p: Params
) -> tuple[int, JsonDict]:
    """Run one Bot API call; returns (HTTP status, Telegram-shaped JSON body)."""
    b = core.bot_by_token(token)
    if b is None:
        return 401, ApiError(401, ERR_UNAUTHORIZED).to_json()
    name = _CANONICAL.get(method.lower())
    chat_id = p.chat_id_or_none()
    core.stats.record(name or method, chat_id)
    core.touch()  # lets tests wait_for() a call to arrive
    try:
        if name is None:
            raise ApiError(404, ERR_NOT_FOUND)
        fault = core.take_fault(name, chat_id)
        if fault is not None:
            raise fault
        result = await METHODS[name](core, b, p)
    except ApiError as err:
        core.stats.record_error(err.error_code)
        return err.error_code, err.to_json()
    return 200, {"ok": True, "result": result}
