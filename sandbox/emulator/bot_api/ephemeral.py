"""Ephemeral messages (Bot API 10.2): sending (a form of sendMessage), editing, deleting.

Rules, from core.telegram.org/bots/api#ephemeral-messages-and-commands: only in groups
and supergroups; only the receiver sees the message; any bot may send one within 15 s
of an eligible action (a ``callback_query_id`` of that user's tap, or a reply to their
incoming ephemeral message via ``reply_parameters.ephemeral_message_id``); a bot that is
a chat administrator may send one to any non-bot member at any time. Delivery is not
guaranteed (an offline receiver gets nothing). Edits and deletions answer True whether
or not the receiver's app gets them.
"""

from __future__ import annotations

from dataclasses import dataclass
from typing import Any

from sandbox.emulator.bot_api.formatting import format_text, inline_keyboard, parse_markup
from sandbox.emulator.ephemeral import EPHEMERAL_REPLY_WINDOW, Ephemerals
from sandbox.emulator.errors import (
    ERR_DELETE_NOT_FOUND,
    ERR_EDIT_NOT_FOUND,
    ERR_EPHEMERAL_NOT_ADMIN,
    ERR_EPHEMERAL_NOT_MEMBER,
    ERR_EPHEMERAL_PEER,
    ERR_EPHEMERAL_TO_BOT,
    ERR_NOT_MODIFIED,
    ERR_QUERY_INVALID,
    ERR_REPLY_NOT_FOUND,
    ERR_USER_NOT_FOUND,
    ApiError,
)
from sandbox.emulator.forum import Forum
from sandbox.emulator.models import CallbackHandle, EmuBot, EmuChat, EmuEphemeral, EmuUser
from sandbox.emulator.params import Params
from sandbox.emulator.world import World

_PARAMS_JSON_ERROR = "Bad Request: can't parse ephemeral message parameters JSON object"


@dataclass(frozen=True)
class EphemeralRequest:
    """What a send call asked for: 10.3's ephemeral_message_parameters, or 10.2's flat
    receiver_user_id / callback_query_id."""

    receiver_user_id: int | None
    callback_query_id: str | None
    replace_callback_query_message: bool = False


def ephemeral_request(p: Params) -> EphemeralRequest | None:
    """The ephemeral part of a send call; None for an ordinary message."""
    raw = p.get_json("ephemeral_message_parameters", _PARAMS_JSON_ERROR)
    if raw is not None:
        if not isinstance(raw, dict):
            raise ApiError(400, _PARAMS_JSON_ERROR)
        nested = Params(raw)
        return EphemeralRequest(
            nested.get_int("receiver_user_id"),
            nested.get_str("callback_query_id") or None,
            nested.get_bool("replace_callback_query_message"),
        )
    if "receiver_user_id" in p or "callback_query_id" in p:
        return EphemeralRequest(
            p.get_int("receiver_user_id"), p.get_str("callback_query_id") or None
        )
    return None


def _query(w: World, b: EmuBot, chat: EmuChat, query_id: str) -> CallbackHandle:
    handle = b.queries.get(query_id)
    if (
        handle is None
        or handle.chat_id != chat.id
        or w.clock() - handle.created_at > EPHEMERAL_REPLY_WINDOW
    ):
        raise ApiError(400, ERR_QUERY_INVALID)
    return handle


def _receiver(w: World, chat: EmuChat, user_id: int | None) -> EmuUser:
    user = w.registry.users.get(user_id) if user_id is not None else None
    if user is None:
        raise ApiError(400, ERR_USER_NOT_FOUND)
    if user.is_bot:
        raise ApiError(400, ERR_EPHEMERAL_TO_BOT)
    if w.registry.member_status(chat, user.id) not in (
        "creator",
        "administrator",
        "member",
        "restricted",
    ):
        raise ApiError(400, ERR_EPHEMERAL_NOT_MEMBER)
    return user


def _replied_ephemeral(w: World, b: EmuBot, chat: EmuChat, p: Params) -> EmuEphemeral | None:
    """reply_parameters.ephemeral_message_id: the person's ephemeral message to this bot,
    replied to within 15 s."""
    params = p.get_json("reply_parameters")
    if not isinstance(params, dict) or params.get("ephemeral_message_id") is None:
        return None
    ephemeral_id = Params(params).get_int("ephemeral_message_id")
    record = Ephemerals(w).find(chat, ephemeral_id)
    if (
        record is None
        or record.receiver_id != b.id
        or w.clock() - record.created_at > EPHEMERAL_REPLY_WINDOW
    ):
        raise ApiError(400, ERR_REPLY_NOT_FOUND)
    return record


def _history_reply(chat: EmuChat, p: Params) -> int | None:
    reply_id = p.get_int("reply_to_message_id")
    params = p.get_json("reply_parameters")
    if isinstance(params, dict) and params.get("message_id") is not None:
        reply_id = Params(params).get_int("message_id")
    if reply_id is None:
        return None
    message = chat.messages.get(reply_id)
    if message is None or message.deleted or message.history:
        # "Always False for ... sent ephemeral messages": no sending without the reply.
        raise ApiError(400, ERR_REPLY_NOT_FOUND)
    return reply_id


async def send_ephemeral(
    w: World, b: EmuBot, p: Params, chat: EmuChat, request: EphemeralRequest
) -> Any:
    if not chat.is_group:
        raise ApiError(400, ERR_EPHEMERAL_PEER)
    handle = _query(w, b, chat, request.callback_query_id) if request.callback_query_id else None
    receiver_id = request.receiver_user_id
    if receiver_id is None and handle is not None:
        receiver_id = handle.user_id  # the callback names its user
    receiver = _receiver(w, chat, receiver_id)
    if handle is not None and handle.user_id != receiver.id:
        raise ApiError(400, ERR_QUERY_INVALID)
    text = p.get_str("text")
    formatted, mode = format_text(text, p.get_str("parse_mode"), p.get_json("entities"))
    markup = parse_markup(p)
    replied = _replied_ephemeral(w, b, chat, p)
    if replied is not None and replied.message.sender.id != receiver.id:
        raise ApiError(400, ERR_REPLY_NOT_FOUND)
    reply_to = None if replied is not None else _history_reply(chat, p)
    is_admin = w.registry.member_status(chat, b.id) in ("creator", "administrator")
    if not is_admin and handle is None and replied is None:
        raise ApiError(400, ERR_EPHEMERAL_NOT_ADMIN)
    thread_id = p.get_int("message_thread_id")
    if thread_id is None and chat.is_forum:
        # An answer to a tap or a command appears where the tap or the command was.
        if replied is not None:
            thread_id = replied.message.thread_id
        elif handle is not None:
            thread_id = _thread_of_query(chat, handle)
        elif reply_to is not None:
            thread_id = chat.messages[reply_to].thread_id
    # Ephemeral messages skip the send-rights checks (TDLib: is_ephemeral_message ->
    # Status::OK()), so a closed topic does not refuse them; the topic must exist.
    thread_id = Forum(w).thread_for_bot(chat, thread_id, b.id, check_closed=False)
    replaces: int | None = None
    if (
        request.replace_callback_query_message
        and handle is not None
        and handle.ephemeral_message_id is None
    ):
        replaces = handle.message_id
    w.flood.check(b.id, chat.id, chat.is_group)
    record = Ephemerals(w).add(
        chat,
        b.user,
        receiver,
        text=formatted.text,
        html=text,
        parse_mode=mode,
        entities=list(formatted.entities),
        reply_markup=markup,
        reply_to=reply_to,
        thread_id=thread_id,
        replaces_message_id=replaces,
    )
    w.flood.record(b.id, chat.id, chat.is_group)
    return w.messages.to_api(record.message)


def _thread_of_query(chat: EmuChat, handle: CallbackHandle) -> int | None:
    if handle.ephemeral_message_id is not None:
        record = chat.ephemerals.get(handle.ephemeral_message_id)
        return record.message.thread_id if record is not None else None
    message = chat.messages.get(handle.message_id)
    return message.thread_id if message is not None else None


def _own_ephemeral(w: World, b: EmuBot, p: Params, not_found: str) -> tuple[EmuChat, EmuEphemeral]:
    chat = w.registry.chat_for_bot(b, p.chat_id(), write=True)
    receiver_id = p.get_int("receiver_user_id")
    if receiver_id is None or receiver_id not in w.registry.users:
        raise ApiError(400, ERR_USER_NOT_FOUND)
    ephemeral_id = p.get_int("ephemeral_message_id")
    if ephemeral_id is None:
        raise ApiError(400, "Bad Request: message identifier is not specified")
    record = Ephemerals(w).find(chat, ephemeral_id) if chat.is_group else None
    if record is None or record.message.sender.id != b.id or record.receiver_id != receiver_id:
        raise ApiError(400, not_found)
    return chat, record


async def edit_ephemeral_message_text(w: World, b: EmuBot, p: Params) -> Any:
    chat, record = _own_ephemeral(w, b, p, ERR_EDIT_NOT_FOUND)
    message = record.message
    text = p.get_str("text")
    formatted, mode = format_text(text, p.get_str("parse_mode"), p.get_json("entities"))
    markup = parse_markup(p)  # no reply_markup removes the keyboard, as in editMessageText
    if (
        formatted.text == message.text
        and list(formatted.entities) == message.entities
        and inline_keyboard(markup) == inline_keyboard(message.reply_markup)
    ):
        raise ApiError(400, ERR_NOT_MODIFIED)
    w.flood.check(b.id, chat.id, chat.is_group)
    Ephemerals(w).edit(
        chat,
        record,
        text=formatted.text,
        html=text,
        parse_mode=mode,
        entities=list(formatted.entities),
        reply_markup=markup,
    )
    w.flood.record(b.id, chat.id, chat.is_group)
    return True


async def edit_ephemeral_message_reply_markup(w: World, b: EmuBot, p: Params) -> Any:
    chat, record = _own_ephemeral(w, b, p, ERR_EDIT_NOT_FOUND)
    markup = parse_markup(p)
    if inline_keyboard(markup) == inline_keyboard(record.message.reply_markup):
        raise ApiError(400, ERR_NOT_MODIFIED)
    w.flood.check(b.id, chat.id, chat.is_group)
    Ephemerals(w).edit(chat, record, reply_markup=markup)
    w.flood.record(b.id, chat.id, chat.is_group)
    return True


async def delete_ephemeral_message(w: World, b: EmuBot, p: Params) -> Any:
    chat, record = _own_ephemeral(w, b, p, ERR_DELETE_NOT_FOUND)
    Ephemerals(w).delete(chat, record)
    return True
