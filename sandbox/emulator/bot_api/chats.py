"""Reading chats and members, chat actions, and pinned messages."""

from __future__ import annotations

from typing import Any

from sandbox.emulator.bot_api.messaging import live_message, message_id_param
from sandbox.emulator.errors import ERR_PIN_RIGHTS, ApiError
from sandbox.emulator.forum import Forum
from sandbox.emulator.models import EmuBot, EmuChat
from sandbox.emulator.params import Params
from sandbox.emulator.types import JsonDict
from sandbox.emulator.world import World

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
_NO_GIFTS = {
    "unlimited_gifts": False,
    "limited_gifts": False,
    "unique_gifts": False,
    "premium_subscription": False,
    "gifts_from_channels": False,
}


def _user_id(w: World, p: Params) -> int:
    user_id = p.get_int("user_id")
    if user_id is None or user_id not in w.registry.users:
        raise ApiError(400, "Bad Request: user not found")
    return user_id


async def get_chat(w: World, b: EmuBot, p: Params) -> Any:
    chat = w.registry.chat_for_bot(b, p.chat_id(), write=False)
    info: JsonDict = {
        **chat.to_api(),
        "accent_color_id": 0,
        "max_reaction_count": 11,
        "accepted_gift_types": dict(_NO_GIFTS),
    }
    if chat.pinned:
        info["pinned_message"] = w.messages.to_api(chat.messages[chat.pinned[-1]])
    return info


async def get_chat_member(w: World, b: EmuBot, p: Params) -> Any:
    chat = w.registry.chat_for_bot(b, p.chat_id(), write=False)
    user_id = _user_id(w, p)
    return w.registry.member_api(chat, user_id)


async def get_chat_administrators(w: World, b: EmuBot, p: Params) -> Any:
    chat = w.registry.chat_for_bot(b, p.chat_id(), write=False)
    if not chat.is_group:
        raise ApiError(400, "Bad Request: there are no administrators in the private chat")
    result: list[JsonDict] = []
    ids = ([chat.creator] if chat.creator is not None else []) + sorted(chat.admins)
    for user_id in dict.fromkeys(ids):
        status = w.registry.member_status(chat, user_id)
        if status in ("creator", "administrator") and user_id in w.registry.users:
            result.append(w.registry.member_api(chat, user_id))
    return result


async def get_chat_member_count(w: World, b: EmuBot, p: Params) -> Any:
    chat = w.registry.chat_for_bot(b, p.chat_id(), write=False)
    return len(chat.members) + len(chat.bots) if chat.is_group else 2


async def send_chat_action(w: World, b: EmuBot, p: Params) -> Any:
    chat = w.registry.chat_for_bot(b, p.chat_id(), write=True)
    Forum(w).thread_for_bot(chat, p.get_int("message_thread_id"), b.id, check_closed=False)
    action = p.get_str("action") or ""
    if action not in _CHAT_ACTIONS:
        raise ApiError(400, "Bad Request: wrong parameter action in request")
    w.events.emit(chat, "chat_action", action=action, user_id=b.id)
    return True


def _pinnable_chat(w: World, b: EmuBot, p: Params) -> EmuChat:
    chat = w.registry.chat_for_bot(b, p.chat_id(), write=True)
    if chat.is_group and b.id not in chat.admins:
        raise ApiError(400, ERR_PIN_RIGHTS)
    return chat


async def pin_chat_message(w: World, b: EmuBot, p: Params) -> Any:
    chat = _pinnable_chat(w, b, p)
    message_id = message_id_param(p)
    if live_message(chat, message_id) is None:
        raise ApiError(400, "Bad Request: message to pin not found")
    if message_id in chat.pinned:
        chat.pinned.remove(message_id)
    chat.pinned.append(message_id)
    w.events.emit(chat, "pin", message_id=message_id)
    return True


async def unpin_chat_message(w: World, b: EmuBot, p: Params) -> Any:
    chat = _pinnable_chat(w, b, p)
    message_id = p.get_int("message_id")
    if message_id is None:
        if not chat.pinned:
            return True
        message_id = chat.pinned[-1]
    if message_id not in chat.pinned:
        raise ApiError(400, "Bad Request: message to unpin not found")
    chat.pinned.remove(message_id)
    w.events.emit(chat, "unpin", message_id=message_id)
    return True


async def unpin_all_chat_messages(w: World, b: EmuBot, p: Params) -> Any:
    chat = _pinnable_chat(w, b, p)
    for message_id in list(chat.pinned):
        chat.pinned.remove(message_id)
        w.events.emit(chat, "unpin", message_id=message_id)
    return True
