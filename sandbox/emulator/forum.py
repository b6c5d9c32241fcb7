"""Forum topics: a supergroup with topics enabled, its General topic and the others.

``Forum`` holds the rules both sides share (service messages, who may do what, which
topic a message lands in); ``ForumActions`` is what people do in the app (an admin
creates, edits, closes, reopens or deletes a topic, or turns topics on or off). The Bot
API methods are in ``bot_api/forum.py``.

As Telegram: a topic's id (``message_thread_id``) is the id of its ``forum_topic_created``
service message; messages in a topic carry ``message_thread_id`` and ``is_topic_message``,
messages in General carry neither; turning topics off keeps the topics (turning them back
on restores them) and makes ``message_thread_id`` ignored when sending.
"""

from __future__ import annotations

import copy

from sandbox.emulator.ephemeral import Ephemerals
from sandbox.emulator.errors import (
    ERR_THREAD_NOT_FOUND,
    ERR_TOPIC_CLOSED,
    ERR_TOPIC_ID_INVALID,
    ApiError,
    EmulatorError,
)
from sandbox.emulator.models import (
    DEFAULT_TOPIC_COLOR,
    GENERAL_TOPIC_ID,
    EmuChat,
    EmuTopic,
    EmuUser,
)
from sandbox.emulator.types import JsonDict
from sandbox.emulator.world import World

MAX_TOPIC_NAME = 128  # TDLib cuts longer names to 128 characters
# The six colours Telegram apps offer for a topic icon (createForumTopic's icon_color).
TOPIC_COLORS = (7322096, 16766590, 13338331, 9367192, 16749490, 16478047)


def clean_topic_name(name: str) -> str:
    return " ".join(name.split())[:MAX_TOPIC_NAME]


class Forum:
    """Topic state changes (each one a service message the bots receive) and lookups."""

    def __init__(self, world: World) -> None:
        self.w = world

    # ----------------------------------------------------------------- lookups

    def live_topic(self, chat: EmuChat, thread_id: int) -> EmuTopic | None:
        return chat.topics.get(thread_id) if chat.is_forum else None

    def thread_for_bot(
        self, chat: EmuChat, thread_id: int | None, sender_id: int, *, check_closed: bool = True
    ) -> int | None:
        """The topic a bot's message lands in, or the Bot API server's error.

        ``message_thread_id`` is ignored unless the chat is a forum; in a forum, 1 (General)
        or an unknown id is "message thread not found"; a closed topic refuses senders
        who may not manage topics (and did not create it) with TOPIC_CLOSED.
        """
        if not chat.is_forum:
            return None
        if thread_id is not None and thread_id <= 0:
            thread_id = None
        if thread_id == GENERAL_TOPIC_ID:
            raise ApiError(400, ERR_THREAD_NOT_FOUND)
        topic = chat.topics.get(thread_id if thread_id is not None else GENERAL_TOPIC_ID)
        if topic is None:
            raise ApiError(400, ERR_THREAD_NOT_FOUND)
        if check_closed and topic.closed and not self.may_post_in_closed(chat, topic, sender_id):
            raise ApiError(400, ERR_TOPIC_CLOSED)
        return None if topic.is_general else topic.id

    def may_post_in_closed(self, chat: EmuChat, topic: EmuTopic, user_id: int) -> bool:
        return topic.creator == user_id or self.w.registry.right(chat, user_id, "can_manage_topics")

    def topic_for_change(self, chat: EmuChat, thread_id: int) -> EmuTopic:
        """The topic editForumTopic & co. name (General is not theirs to change)."""
        topic = chat.topics.get(thread_id)
        if topic is None or topic.is_general:
            raise ApiError(400, ERR_TOPIC_ID_INVALID)
        return topic

    # ----------------------------------------------------------------- changes

    def set_forum(self, chat: EmuChat, enabled: bool) -> None:
        if chat.type != "supergroup":
            raise EmulatorError(
                f"chat {chat.id} is a basic group; only supergroups have topics "
                "(upgrade it with migrate_group first)"
            )
        if chat.is_forum == enabled:
            return
        chat.is_forum = enabled
        if enabled and GENERAL_TOPIC_ID not in chat.topics:
            chat.topics[GENERAL_TOPIC_ID] = EmuTopic(GENERAL_TOPIC_ID, "General")
            # Message 1 of a supergroup is its creation, so no topic can get General's id.
            chat.next_message_id = max(chat.next_message_id, GENERAL_TOPIC_ID + 1)
        self._changed(chat, "forum_on" if enabled else "forum_off", None)

    def create(
        self,
        chat: EmuChat,
        actor: EmuUser,
        name: str,
        *,
        icon_color: int | None = None,
        icon_custom_emoji_id: str | None = None,
    ) -> EmuTopic:
        topic_id = chat.next_message_id  # the service message about to be stored
        topic = EmuTopic(
            topic_id,
            name,
            icon_color=icon_color if icon_color else DEFAULT_TOPIC_COLOR,
            icon_custom_emoji_id=icon_custom_emoji_id or None,
            creator=actor.id,
        )
        created: JsonDict = {"name": topic.name, "icon_color": topic.icon_color}
        if topic.icon_custom_emoji_id:
            created["icon_custom_emoji_id"] = topic.icon_custom_emoji_id
        chat.topics[topic_id] = topic
        self._service(chat, actor, {"forum_topic_created": created}, topic_id)
        self._changed(chat, "created", topic)
        return topic

    def edit(
        self,
        chat: EmuChat,
        actor: EmuUser,
        topic: EmuTopic,
        *,
        name: str | None,
        icon_custom_emoji_id: str | None,
    ) -> bool:
        """Change a topic; False if nothing changes."""
        edited: JsonDict = {}
        if name and name != topic.name:
            topic.name = name
            edited["name"] = name
        if icon_custom_emoji_id is not None and (icon_custom_emoji_id or None) != (
            topic.icon_custom_emoji_id
        ):
            topic.icon_custom_emoji_id = icon_custom_emoji_id or None
            edited["icon_custom_emoji_id"] = icon_custom_emoji_id
        if not edited:
            return False
        self._service(chat, actor, {"forum_topic_edited": edited}, self._thread_of(topic))
        self._changed(chat, "edited", topic)
        return True

    def set_closed(self, chat: EmuChat, actor: EmuUser, topic: EmuTopic, closed: bool) -> bool:
        """Close or reopen a topic; False if it already is."""
        if topic.closed == closed:
            return False
        topic.closed = closed
        kind = "forum_topic_closed" if closed else "forum_topic_reopened"
        self._service(chat, actor, {kind: {}}, self._thread_of(topic))
        self._changed(chat, "closed" if closed else "reopened", topic)
        return True

    def delete(self, chat: EmuChat, topic: EmuTopic, *, by: int | None) -> None:
        """Delete a topic with all its messages (bots are not told, as in Telegram)."""
        del chat.topics[topic.id]
        for message in list(chat.messages.values()):
            if message.thread_id == topic.id and not message.deleted:
                self.w.messages.delete(message, by=by)
        ephemerals = Ephemerals(self.w)
        for record in list(chat.ephemerals.values()):
            if record.message.thread_id == topic.id:
                record.message.deleted = True
                ephemerals.forget(chat, record)
        self._changed(chat, "deleted", topic)

    # ----------------------------------------------------------------- helpers

    @staticmethod
    def _thread_of(topic: EmuTopic) -> int | None:
        return None if topic.is_general else topic.id

    def _service(
        self, chat: EmuChat, actor: EmuUser, fields: JsonDict, thread_id: int | None
    ) -> None:
        message = self.w.messages.store(
            chat, actor, text="", extra=copy.deepcopy(fields), thread_id=thread_id
        )
        payload = self.w.messages.to_api(message)
        for b in self.w.registry.bots:
            if b.id in chat.bots:
                self.w.updates.deliver(b, "message", payload)

    def _changed(self, chat: EmuChat, action: str, topic: EmuTopic | None) -> None:
        self.w.events.emit(
            chat,
            "topic",
            action=action,
            is_forum=chat.is_forum,
            topic=topic.to_dict() if topic is not None else None,
        )


class ForumActions:
    """What group admins do with topics in the app; misuse is an ``EmulatorError``."""

    def __init__(self, world: World, forum: Forum) -> None:
        self.w = world
        self.forum = forum

    def _admin(self, user_id: int, chat_id: int) -> tuple[EmuUser, EmuChat]:
        registry = self.w.registry
        user = registry.user(user_id)
        chat = registry.group(chat_id)
        if chat.migrated_to is not None:
            raise EmulatorError(f"group {chat_id} was upgraded to {chat.migrated_to}; use that id")
        status = registry.member_status(chat, user_id)
        if status not in ("creator", "administrator"):
            raise EmulatorError(f"user {user_id} is not an admin of chat {chat_id} ({status})")
        return user, chat

    def _topic(self, chat: EmuChat, thread_id: int) -> EmuTopic:
        if not chat.is_forum:
            raise EmulatorError(f"chat {chat.id} has no topics (it is not a forum)")
        topic = chat.topics.get(thread_id)
        if topic is None:
            raise EmulatorError(f"no topic {thread_id} in chat {chat.id}")
        return topic

    def admin_sets_topics(self, user_id: int, chat_id: int, enabled: bool) -> None:
        """Turn topics on (the group becomes a forum) or off; the topics are kept."""
        _user, chat = self._admin(user_id, chat_id)
        self.forum.set_forum(chat, enabled)

    def admin_creates_topic(
        self,
        user_id: int,
        chat_id: int,
        name: str,
        *,
        icon_color: int | None = None,
        icon_custom_emoji_id: str | None = None,
    ) -> EmuTopic:
        """Create a topic; bots get the ``forum_topic_created`` service message."""
        user, chat = self._admin(user_id, chat_id)
        if not chat.is_forum:
            raise EmulatorError(f"chat {chat_id} has no topics (it is not a forum)")
        clean = clean_topic_name(name)
        if not clean:
            raise EmulatorError("a topic needs a name")
        if icon_color is not None and icon_color not in TOPIC_COLORS:
            raise EmulatorError(f"icon_color must be one of {TOPIC_COLORS}")
        topic = self.forum.create(
            chat, user, clean, icon_color=icon_color, icon_custom_emoji_id=icon_custom_emoji_id
        )
        return copy.deepcopy(topic)

    def admin_edits_topic(
        self,
        user_id: int,
        chat_id: int,
        thread_id: int,
        *,
        name: str | None = None,
        icon_custom_emoji_id: str | None = None,
    ) -> EmuTopic:
        user, chat = self._admin(user_id, chat_id)
        topic = self._topic(chat, thread_id)
        self.forum.edit(
            chat,
            user,
            topic,
            name=clean_topic_name(name) if name is not None else None,
            icon_custom_emoji_id=icon_custom_emoji_id,
        )
        return copy.deepcopy(topic)

    def admin_closes_topic(self, user_id: int, chat_id: int, thread_id: int) -> None:
        """Close a topic (General too): only admins who manage topics may post there."""
        user, chat = self._admin(user_id, chat_id)
        self.forum.set_closed(chat, user, self._topic(chat, thread_id), True)

    def admin_reopens_topic(self, user_id: int, chat_id: int, thread_id: int) -> None:
        user, chat = self._admin(user_id, chat_id)
        self.forum.set_closed(chat, user, self._topic(chat, thread_id), False)

    def admin_deletes_topic(self, user_id: int, chat_id: int, thread_id: int) -> None:
        """Delete a topic and every message in it (General cannot be deleted)."""
        _user, chat = self._admin(user_id, chat_id)
        topic = self._topic(chat, thread_id)
        if topic.is_general:
            raise EmulatorError("the General topic cannot be deleted")
        self.forum.delete(chat, topic, by=user_id)

    def topics(self, chat_id: int) -> list[EmuTopic]:
        """The group's topics (General first) while it is a forum; [] otherwise."""
        chat = self.w.registry.group(chat_id)
        return [copy.deepcopy(t) for t in chat.topics.values()] if chat.is_forum else []
