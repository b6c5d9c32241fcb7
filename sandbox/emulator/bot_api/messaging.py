"""Sending, editing and deleting messages, and answering button presses."""

from __future__ import annotations

import contextlib
from typing import Any

from sandbox.emulator.bot_api.ephemeral import ephemeral_request, send_ephemeral
from sandbox.emulator.bot_api.formatting import format_text, inline_keyboard, parse_markup
from sandbox.emulator.errors import (
    ERR_CANT_DELETE,
    ERR_CANT_EDIT,
    ERR_DELETE_NOT_FOUND,
    ERR_EDIT_NOT_FOUND,
    ERR_NO_SEND_RIGHTS,
    ERR_NOT_MODIFIED,
    ERR_QUERY_INVALID,
    ERR_REPLY_NOT_FOUND,
    ApiError,
)
from sandbox.emulator.forum import Forum
from sandbox.emulator.models import CallbackAnswer, EmuBot, EmuChat, EmuMessage
from sandbox.emulator.params import Params
from sandbox.emulator.types import JsonDict
from sandbox.emulator.world import World


def live_message(chat: EmuChat, message_id: int) -> EmuMessage | None:
    """A message the bot can act on under this chat id (not deleted, not old history)."""
    message = chat.messages.get(message_id)
    if message is None or message.deleted or message.history:
        return None
    return message


def message_id_param(p: Params) -> int:
    message_id = p.get_int("message_id")
    if message_id is None:
        raise ApiError(400, "Bad Request: message identifier is not specified")
    return message_id


def _reply_target(chat: EmuChat, p: Params) -> int | None:
    reply_id = p.get_int("reply_to_message_id")
    allow = p.get_bool("allow_sending_without_reply")
    params = p.get_json("reply_parameters")
    if isinstance(params, dict) and params.get("message_id") is not None:
        reply_id = int(params["message_id"])
        allow = bool(params.get("allow_sending_without_reply", allow))
    if reply_id is None:
        return None
    if live_message(chat, reply_id) is not None:
        return reply_id
    if allow:
        return None
    raise ApiError(400, ERR_REPLY_NOT_FOUND)


def _own_message(chat: EmuChat, b: EmuBot, p: Params) -> EmuMessage:
    if "inline_message_id" in p:
        raise ApiError(400, "Bad Request: MESSAGE_ID_INVALID")
    message = live_message(chat, message_id_param(p))
    if message is None:
        raise ApiError(400, ERR_EDIT_NOT_FOUND)
    if message.sender.id != b.id:
        raise ApiError(400, ERR_CANT_EDIT)
    return message


def check_send_rights(w: World, b: EmuBot, chat: EmuChat) -> None:
    """A muted bot (ChatMemberRestricted) may not post."""
    if chat.is_group and w.registry.member_status(chat, b.id) == "restricted":
        raise ApiError(400, ERR_NO_SEND_RIGHTS)


def thread_param(w: World, b: EmuBot, chat: EmuChat, p: Params, reply_to: int | None) -> int | None:
    """The forum topic a message goes to: ``message_thread_id``, else the replied
    message's topic (as Telegram does), else General."""
    thread_id = p.get_int("message_thread_id")
    if thread_id is None and reply_to is not None and chat.is_forum:
        thread_id = chat.messages[reply_to].thread_id
    return Forum(w).thread_for_bot(chat, thread_id, b.id)


async def send_message(w: World, b: EmuBot, p: Params) -> Any:
    chat = w.registry.chat_for_bot(b, p.chat_id(), write=True)
    request = ephemeral_request(p)
    if request is not None:
        return await send_ephemeral(w, b, p, chat, request)
    text = p.get_str("text")
    check_send_rights(w, b, chat)
    formatted, mode = format_text(text, p.get_str("parse_mode"), p.get_json("entities"))
    markup = parse_markup(p)
    reply_to = _reply_target(chat, p)
    thread_id = thread_param(w, b, chat, p, reply_to)
    w.flood.check(b.id, chat.id, chat.is_group)
    message = w.messages.store(
        chat,
        b.user,
        text=formatted.text,
        html=text,
        parse_mode=mode,
        entities=list(formatted.entities),
        reply_markup=markup,
        reply_to=reply_to,
        thread_id=thread_id,
    )
    w.flood.record(b.id, chat.id, chat.is_group)
    return w.messages.to_api(message)


async def edit_message_text(w: World, b: EmuBot, p: Params) -> Any:
    chat = w.registry.chat_for_bot(b, p.chat_id(), write=True)
    message = _own_message(chat, b, p)
    text = p.get_str("text")
    formatted, mode = format_text(text, p.get_str("parse_mode"), p.get_json("entities"))
    # No reply_markup in an edit removes the keyboard, exactly as in Telegram.
    markup = parse_markup(p)
    if (
        formatted.text == message.text
        and list(formatted.entities) == message.entities
        and inline_keyboard(markup) == inline_keyboard(message.reply_markup)
    ):
        raise ApiError(400, ERR_NOT_MODIFIED)
    w.flood.check(b.id, chat.id, chat.is_group)
    w.messages.edit(
        message,
        text=formatted.text,
        html=text,
        parse_mode=mode,
        entities=list(formatted.entities),
        reply_markup=markup,
    )
    w.flood.record(b.id, chat.id, chat.is_group)
    return w.messages.to_api(message)


async def edit_message_reply_markup(w: World, b: EmuBot, p: Params) -> Any:
    chat = w.registry.chat_for_bot(b, p.chat_id(), write=True)
    message = _own_message(chat, b, p)
    markup = parse_markup(p)
    if inline_keyboard(markup) == inline_keyboard(message.reply_markup):
        raise ApiError(400, ERR_NOT_MODIFIED)
    w.flood.check(b.id, chat.id, chat.is_group)
    w.messages.edit(message, reply_markup=markup)
    w.flood.record(b.id, chat.id, chat.is_group)
    return w.messages.to_api(message)


def _delete_one(w: World, b: EmuBot, chat: EmuChat, message_id: int) -> None:
    message = live_message(chat, message_id)
    if message is None:
        raise ApiError(400, ERR_DELETE_NOT_FOUND)
    if message.sender.id != b.id and chat.is_group and b.id not in chat.admins:
        raise ApiError(400, ERR_CANT_DELETE)
    w.messages.delete(message)


async def delete_message(w: World, b: EmuBot, p: Params) -> Any:
    chat = w.registry.chat_for_bot(b, p.chat_id(), write=False)
    _delete_one(w, b, chat, message_id_param(p))
    return True


async def delete_messages(w: World, b: EmuBot, p: Params) -> Any:
    chat = w.registry.chat_for_bot(b, p.chat_id(), write=False)
    ids = p.get_json("message_ids")
    if not isinstance(ids, list) or not 1 <= len(ids) <= 100:
        raise ApiError(400, "Bad Request: message identifiers are not specified")
    for message_id in ids:
        # Telegram skips messages it cannot find or delete.
        with contextlib.suppress(ApiError, TypeError, ValueError):
            _delete_one(w, b, chat, int(message_id))
    return True


async def answer_callback_query(w: World, b: EmuBot, p: Params) -> Any:
    text = p.get_str("text")
    if text is not None and len(text) > 200:
        raise ApiError(400, "Bad Request: MESSAGE_TOO_LONG")
    answer = CallbackAnswer(
        callback_query_id=p.get_str("callback_query_id") or "",
        text=text or None,
        show_alert=p.get_bool("show_alert"),
        url=p.get_str("url"),
        cache_time=p.get_int("cache_time") or 0,
    )
    handle = b.callbacks.pop(answer.callback_query_id, None)
    if handle is None:
        raise ApiError(400, ERR_QUERY_INVALID)
    if w.callback_ttl is not None and w.clock() - handle.created_at > w.callback_ttl:
        raise ApiError(400, ERR_QUERY_INVALID)
    handle._resolve(answer)
    registry = w.registry
    chat = registry.groups.get(handle.chat_id) or registry.privates[(handle.chat_id, b.id)]
    extra: JsonDict = {}
    if handle.ephemeral_message_id is not None:
        extra["ephemeral_message_id"] = handle.ephemeral_message_id
    w.events.emit(
        chat,
        "callback_answer",
        message_id=handle.message_id,
        callback_query_id=handle.id,
        user_id=handle.user_id,
        text=answer.text,
        show_alert=answer.show_alert,
        url=answer.url,
        **extra,
    )
    return True
