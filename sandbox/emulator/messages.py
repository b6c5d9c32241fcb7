"""Messages: storing, editing and deleting them, their Bot API form, and reading chats."""

from __future__ import annotations

import copy
from collections.abc import Callable

from sandbox.emulator.events import EventLog
from sandbox.emulator.models import EmuChat, EmuEphemeral, EmuMessage, EmuUser
from sandbox.emulator.registry import Registry
from sandbox.emulator.types import BotRef, JsonDict


def _sees(ephemeral: EmuEphemeral, user_id: int) -> bool:
    return ephemeral.viewer_id == user_id


def _shown(ephemeral: EmuEphemeral) -> EmuMessage:
    assert ephemeral.shown is not None
    return ephemeral.shown


class MessageStore:
    """Every chat's messages; each change is an event. Readers get copies."""

    def __init__(self, registry: Registry, events: EventLog) -> None:
        self.registry = registry
        self.events = events

    # ----------------------------------------------------------------- changes

    def store(
        self,
        chat: EmuChat,
        sender: EmuUser,
        *,
        text: str,
        html: str | None = None,
        parse_mode: str | None = None,
        entities: list[JsonDict] | None = None,
        reply_markup: JsonDict | None = None,
        reply_to: int | None = None,
        extra: JsonDict | None = None,
        thread_id: int | None = None,
    ) -> EmuMessage:
        message = EmuMessage(
            message_id=chat.next_message_id,
            chat_id=chat.id,
            chat_type=chat.type,
            date=self.events.now(),
            sender=sender,
            text=text,
            html=text if html is None else html,
            parse_mode=parse_mode,
            entities=entities or [],
            reply_markup=reply_markup,
            bot_id=chat.bot_id,
            reply_to_message_id=reply_to,
            extra=extra or {},
            thread_id=thread_id,
        )
        chat.next_message_id += 1
        chat.messages[message.message_id] = message
        self.events.emit(chat, "message", message=message.to_dict())
        return message

    def edit(
        self,
        message: EmuMessage,
        *,
        text: str | None = None,
        html: str | None = None,
        parse_mode: str | None = None,
        entities: list[JsonDict] | None = None,
        reply_markup: JsonDict | None,
    ) -> None:
        if text is not None:
            message.text = text
            message.html = text if html is None else html
            message.parse_mode = parse_mode
            message.entities = entities or []
        message.reply_markup = reply_markup
        message.edit_count += 1
        message.edit_date = self.events.now()
        self.events.emit(self.registry.chat_of(message), "edit", message=message.to_dict())

    def delete(self, message: EmuMessage, *, by: int | None = None) -> None:
        """Delete for everyone; ``by`` is the user who did it (None: a bot call)."""
        message.deleted = True
        chat = self.registry.chat_of(message)
        if message.message_id in chat.pinned:
            chat.pinned.remove(message.message_id)
        self.events.emit(
            chat, "delete", message_id=message.message_id, message=message.to_dict(), by=by
        )

    def to_api(self, message: EmuMessage, *, with_reply: bool = True) -> JsonDict:
        """The Bot API Message object for the message's current state."""
        chat = self.registry.chat_of(message)
        data: JsonDict = {
            # Telegram: "0 for ephemeral messages".
            "message_id": 0 if message.is_ephemeral else message.message_id,
            "date": message.date,
            "chat": chat.to_api(),
            "from": message.sender.to_api(),
        }
        # As the Bot API server: a topic's messages carry its id and is_topic_message;
        # General's carry neither; and only while the group is a forum.
        topic = message.thread_id if chat.is_forum else None
        if topic is not None:
            data["message_thread_id"] = topic
            data["is_topic_message"] = True
        if message.text:
            data["text"] = message.text
        if message.entities:
            data["entities"] = copy.deepcopy(message.entities)
        if message.inline_keyboard:
            # Telegram echoes only inline keyboards back in Message.reply_markup.
            data["reply_markup"] = {"inline_keyboard": copy.deepcopy(message.inline_keyboard)}
        if message.edit_date is not None:
            data["edit_date"] = message.edit_date
        reply_id = message.reply_to_message_id
        if reply_id is None and topic is not None and topic < message.message_id:
            # Not an explicit reply: Telegram reports the topic's first message (the
            # forum_topic_created service message) as the replied one.
            reply_id = topic
        if with_reply and reply_id is not None and not message.is_ephemeral:
            replied = chat.messages.get(reply_id)
            if replied is not None and not replied.deleted:
                data["reply_to_message"] = self.to_api(replied, with_reply=False)
        if message.is_ephemeral:
            data["ephemeral_message_id"] = message.ephemeral_message_id
            if message.receiver is not None:
                data["receiver_user"] = message.receiver.to_api()
        data.update(copy.deepcopy(message.extra))
        return data

    # ----------------------------------------------------------------- reading

    def messages(
        self, chat_id: int, *, bot: BotRef = None, include_deleted: bool = False
    ) -> list[EmuMessage]:
        """Snapshots of the chat's messages in order (current state after edits)."""
        chat = self.registry.chat(chat_id, bot=bot)
        if chat is None:
            return []
        return [
            copy.deepcopy(m) for m in chat.messages.values() if include_deleted or not m.deleted
        ]

    def seen_by(self, user_id: int, chat_id: int, *, bot: BotRef = None) -> list[EmuMessage]:
        """What one person's app shows in a chat: its history (as ``messages``) with that
        person's own ephemeral messages in place, as their app currently has them.

        Nobody else's view, and no chat history, ever contains them.
        """
        chat = self.registry.chat(chat_id, bot=bot)
        if chat is None:
            return []
        mine = sorted(
            (e for e in chat.ephemerals.values() if e.shown is not None and _sees(e, user_id)),
            key=lambda e: (e.after_message_id, e.message.ephemeral_message_id or 0),
        )
        hidden = {e.replaces_message_id for e in mine if e.replaces_message_id is not None}
        view: list[EmuMessage] = []
        pending = list(mine)
        for message in chat.messages.values():
            while pending and pending[0].after_message_id < message.message_id:
                view.append(copy.deepcopy(_shown(pending.pop(0))))
            if not message.deleted and message.message_id not in hidden:
                view.append(copy.deepcopy(message))
        view.extend(copy.deepcopy(_shown(e)) for e in pending)
        return view

    def last_message(self, chat_id: int, *, bot: BotRef = None) -> EmuMessage | None:
        chat = self.registry.chat(chat_id, bot=bot)
        if chat is None:
            return None
        for message in reversed(chat.messages.values()):
            if not message.deleted:
                return copy.deepcopy(message)
        return None

    def message(self, chat_id: int, message_id: int, *, bot: BotRef = None) -> EmuMessage | None:
        chat = self.registry.chat(chat_id, bot=bot)
        found = chat.messages.get(message_id) if chat is not None else None
        return copy.deepcopy(found) if found is not None and not found.deleted else None

    def chat_events(self, chat_id: int, *, bot: BotRef = None) -> list[JsonDict]:
        """Everything that happened in a chat, oldest first."""
        chat = self.registry.chat(chat_id, bot=bot)
        return copy.deepcopy(chat.events) if chat is not None else []

    async def wait_for_message(
        self,
        chat_id: int,
        match: str | Callable[[EmuMessage], bool] | None = None,
        *,
        bot: BotRef = None,
        from_bot: bool = True,
        timeout: float = 5.0,
    ) -> EmuMessage:
        """Wait for a message newer than the call (by default from a bot) matching ``match``.

        ``match`` is a substring of the text or a predicate on the message.
        """
        chat = self.registry.chat(chat_id, bot=bot)
        baseline = max(chat.messages, default=0) if chat is not None else 0

        def matches(message: EmuMessage) -> bool:
            if match is None:
                return True
            if isinstance(match, str):
                return match in message.text
            return match(message)

        def find() -> EmuMessage | None:
            current = self.registry.chat(chat_id, bot=bot)
            if current is None:
                return None
            for message in current.messages.values():
                if (
                    message.message_id > baseline
                    and not message.deleted
                    and (message.from_bot or not from_bot)
                    and matches(message)
                ):
                    return copy.deepcopy(message)
            return None

        return await self.events.wait_for(find, timeout, what=f"new message in chat {chat_id}")
