"""Forum topic methods: createForumTopic, editForumTopic, closeForumTopic,
reopenForumTopic, deleteForumTopic, getForumTopicIconStickers.

Rights as TDLib checks them (ForumTopicManager.cpp): creating needs an administrator
with can_manage_topics; editing, closing and reopening need it too unless the bot
created the topic; deleting needs can_delete_messages unless the bot created it.
"""

from __future__ import annotations

from typing import Any

from sandbox.emulator.errors import (
    ERR_NOT_FORUM,
    ERR_TOPIC_CLOSE_RIGHTS,
    ERR_TOPIC_CREATE_RIGHTS,
    ERR_TOPIC_DELETE_RIGHTS,
    ERR_TOPIC_EDIT_RIGHTS,
    ERR_TOPIC_NAME_EMPTY,
    ERR_TOPIC_NOT_MODIFIED,
    ApiError,
)
from sandbox.emulator.forum import Forum, clean_topic_name
from sandbox.emulator.models import EmuBot, EmuChat, EmuTopic
from sandbox.emulator.params import Params
from sandbox.emulator.world import World

_INVALID_TOPIC = "Bad Request: invalid forum topic identifier specified"


def _forum_chat(w: World, b: EmuBot, p: Params) -> EmuChat:
    chat = w.registry.chat_for_bot(b, p.chat_id(), write=True)
    if not chat.is_forum:
        raise ApiError(400, ERR_NOT_FORUM)
    return chat


def _topic(w: World, chat: EmuChat, p: Params, b: EmuBot, right: str, error: str) -> EmuTopic:
    thread_id = p.get_int("message_thread_id")
    if thread_id is None or thread_id <= 0:
        raise ApiError(400, _INVALID_TOPIC)
    topic = Forum(w).topic_for_change(chat, thread_id)
    if topic.creator != b.id and not w.registry.right(chat, b.id, right):
        raise ApiError(400, error)
    return topic


async def create_forum_topic(w: World, b: EmuBot, p: Params) -> Any:
    chat = _forum_chat(w, b, p)
    if not w.registry.right(chat, b.id, "can_manage_topics"):
        raise ApiError(400, ERR_TOPIC_CREATE_RIGHTS)
    name = clean_topic_name(p.get_str("name") or "")
    if not name:
        raise ApiError(400, ERR_TOPIC_NAME_EMPTY)
    color = p.get_int("icon_color") or 0
    if not 0 <= color <= 0xFFFFFF:
        raise ApiError(400, "Bad Request: invalid icon color specified")
    topic = Forum(w).create(
        chat,
        b.user,
        name,
        icon_color=color or None,
        icon_custom_emoji_id=p.get_str("icon_custom_emoji_id") or None,
    )
    return topic.to_api()


async def edit_forum_topic(w: World, b: EmuBot, p: Params) -> Any:
    chat = _forum_chat(w, b, p)
    topic = _topic(w, chat, p, b, "can_manage_topics", ERR_TOPIC_EDIT_RIGHTS)
    raw_name = p.get_str("name")
    name = clean_topic_name(raw_name) if raw_name else None
    if raw_name and not name:
        raise ApiError(400, ERR_TOPIC_NAME_EMPTY)
    emoji = p.get_str("icon_custom_emoji_id") if "icon_custom_emoji_id" in p.values else None
    if name is None and emoji is None:
        return True  # TDLib answers at once when nothing is to change
    if not Forum(w).edit(chat, b.user, topic, name=name, icon_custom_emoji_id=emoji):
        raise ApiError(400, ERR_TOPIC_NOT_MODIFIED)
    return True


async def _set_closed(w: World, b: EmuBot, p: Params, closed: bool) -> Any:
    chat = _forum_chat(w, b, p)
    topic = _topic(w, chat, p, b, "can_manage_topics", ERR_TOPIC_CLOSE_RIGHTS)
    if not Forum(w).set_closed(chat, b.user, topic, closed):
        raise ApiError(400, ERR_TOPIC_NOT_MODIFIED)
    return True


async def close_forum_topic(w: World, b: EmuBot, p: Params) -> Any:
    return await _set_closed(w, b, p, True)


async def reopen_forum_topic(w: World, b: EmuBot, p: Params) -> Any:
    return await _set_closed(w, b, p, False)


async def delete_forum_topic(w: World, b: EmuBot, p: Params) -> Any:
    chat = _forum_chat(w, b, p)
    topic = _topic(w, chat, p, b, "can_delete_messages", ERR_TOPIC_DELETE_RIGHTS)
    Forum(w).delete(chat, topic, by=None)
    return True


async def get_forum_topic_icon_stickers(w: World, b: EmuBot, p: Params) -> Any:
    return []  # the emulator has no stickers
