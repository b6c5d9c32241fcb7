"""Messages: storing, editing and deleting them, their Bot API form, and reading chats."""

from __future__ import annotations

import copy
from collections.abc import Callable

from sandbox.emulator.events import EventLog
from sandbox.emulator.models import EmuChat, EmuMessage, EmuUser
from sandbox.emulator.registry import Registry
from sandbox.emulator.types import BotRef, JsonDict


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
            "message_id": message.message_id,
            "date": message.date,
            "chat": chat.to_api(),
            "from": message.sender.to_api(),
        }
        if message.text:
            data["text"] = message.text
        if message.entities:
            data["entities"] = copy.deepcopy(message.entities)
        if message.inline_keyboard:
            # Telegram echoes only inline keyboards back in Message.reply_markup.
            data["reply_markup"] = {"inline_keyboard": copy.deepcopy(message.inline_keyboard)}
        if message.edit_date is not None:
            data["edit_date"] = message.edit_date
        if with_reply and message.reply_to_message_id is not None:
            replied = chat.messages.get(message.reply_to_message_id)
            if replied is not None and not replied.deleted:
                data["reply_to_message"] = self.to_api(replied, with_reply=False)
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
