"""What people do in Telegram clients: write, start the bot, press buttons, block, delete."""

from __future__ import annotations

import copy
import re
from urllib.parse import parse_qs, urlsplit

from sandbox.emulator.ephemeral import EPHEMERAL_REPLY_WINDOW, Ephemerals
from sandbox.emulator.errors import EmulatorError
from sandbox.emulator.forum import Forum
from sandbox.emulator.models import (
    GENERAL_TOPIC_ID,
    CallbackHandle,
    EmuBot,
    EmuChat,
    EmuMessage,
    EmuUser,
    member_api,
)
from sandbox.emulator.telegram_html import utf16_len
from sandbox.emulator.types import BotRef, JsonDict
from sandbox.emulator.world import World

_START_PAYLOAD_RE = re.compile(r"[A-Za-z0-9_-]{1,64}")
_COMMAND_RE = re.compile(r"(?<!\S)/[A-Za-z0-9_]{1,64}(?:@[A-Za-z0-9_]{3,32})?(?![A-Za-z0-9_@])")


def command_entities(text: str) -> list[JsonDict]:
    """bot_command entities the Telegram client attaches to a user's text."""
    entities: list[JsonDict] = []
    for match in _COMMAND_RE.finditer(text):
        offset = utf16_len(text[: match.start()])
        entities.append(
            {"type": "bot_command", "offset": offset, "length": utf16_len(match.group())}
        )
    return entities


class UserActions:
    """Each action changes the emulator as the Telegram app would and queues the updates
    the bots would receive."""

    def __init__(self, world: World) -> None:
        self.w = world

    def _open_group(self, chat_id: int, user_id: int) -> EmuChat | None:
        """The group ``chat_id`` if it is one the user can act in; None if not a group."""
        group = self.w.registry.groups.get(chat_id)
        if group is None:
            return None
        if group.migrated_to is not None:
            raise EmulatorError(
                f"group {chat_id} was upgraded to supergroup {group.migrated_to}; use that id"
            )
        if user_id not in group.members:
            raise EmulatorError(f"user {user_id} is not a member of chat {chat_id}")
        return group

    async def user_sends(
        self,
        user_id: int,
        chat_id: int,
        text: str,
        *,
        bot: BotRef = None,
        reply_to: int | None = None,
        message_thread_id: int | None = None,
        ephemeral: bool = False,
    ) -> EmuMessage:
        """A user writes ``text`` in a group, or in their private chat (chat_id == user_id).

        In a forum, ``message_thread_id`` picks the topic (None or 1: General; a reply goes
        to the replied message's topic). ``ephemeral``: send a command the bot declared
        ``is_ephemeral`` as an ephemeral command, which only that bot receives.
        """
        registry = self.w.registry
        user = registry.user(user_id)
        if not text.strip():
            raise EmulatorError("Telegram clients do not send empty messages")
        group = self._open_group(chat_id, user_id)
        if group is not None:
            chat = group
            targets = [b for b in registry.bots if b.id in group.bots]
            if user_id in group.muted:
                raise EmulatorError(f"user {user_id} may not send messages in {chat_id}")
        else:
            if chat_id != user_id:
                raise EmulatorError(
                    f"unknown group {chat_id}; a private chat's id is the user's id ({user_id})"
                )
            if message_thread_id is not None or ephemeral:
                raise EmulatorError("topics and ephemeral commands exist only in groups")
            b = registry.bot(bot)
            if user_id in b.blocked:
                # Writing to a blocked bot in the app unblocks it first ("Restart").
                b.blocked.discard(user_id)
                self._private_status_changed(b, user, "kicked", "member")
            b.started.add(user_id)
            chat = registry.private_chat(user, b)
            targets = [b]
        if reply_to is not None and reply_to not in chat.messages:
            raise EmulatorError(f"no message {reply_to} in chat {chat_id} to reply to")
        thread_id = self._user_thread(chat, user_id, message_thread_id, reply_to)
        if ephemeral:
            return self._ephemeral_command(chat, user, text, bot, thread_id)
        message = self.w.messages.store(
            chat,
            user,
            text=text,
            entities=command_entities(text),
            reply_to=reply_to,
            thread_id=thread_id,
        )
        payload = self.w.messages.to_api(message)
        for target in targets:
            self.w.updates.deliver(target, "message", payload)
        return copy.deepcopy(message)

    def _user_thread(
        self, chat: EmuChat, user_id: int, thread_id: int | None, reply_to: int | None
    ) -> int | None:
        """The topic a person's message goes to, as the app allows it."""
        if not chat.is_forum:
            if thread_id is not None:
                raise EmulatorError(f"chat {chat.id} has no topics (it is not a forum)")
            return None
        if thread_id is None and reply_to is not None:
            thread_id = chat.messages[reply_to].thread_id
        topic = chat.topics.get(thread_id if thread_id is not None else GENERAL_TOPIC_ID)
        if topic is None:
            raise EmulatorError(f"no topic {thread_id} in chat {chat.id}")
        if topic.closed and not Forum(self.w).may_post_in_closed(chat, topic, user_id):
            raise EmulatorError(f"topic {topic.id} ({topic.name!r}) is closed")
        return None if topic.is_general else topic.id

    def _ephemeral_command(
        self, chat: EmuChat, user: EmuUser, text: str, bot: BotRef, thread_id: int | None
    ) -> EmuMessage:
        entities = command_entities(text)
        if not entities or entities[0]["offset"] != 0:
            raise EmulatorError("only a bot command can be sent as an ephemeral message")
        if not user.online:
            raise EmulatorError(f"user {user.id} is offline")
        command = text.split()[0][1:]
        name, _, mention = command.partition("@")
        if mention:
            b = self.w.registry.bot(mention)
        elif bot is not None:
            b = self.w.registry.bot(bot)
        else:
            members = [b for b in self.w.registry.bots if b.id in chat.bots]
            if len(members) != 1:
                raise EmulatorError("several bots in the chat: name one (bot= or /cmd@bot)")
            b = members[0]
        if b.id not in chat.bots:
            raise EmulatorError(f"bot {b.user.username} is not in chat {chat.id}")
        declared = any(
            c.get("command") == name and c.get("is_ephemeral")
            for commands in b.commands.values()
            for c in commands
        )
        if not declared:
            raise EmulatorError(
                f"/{name} is not an ephemeral command of {b.user.username} (setMyCommands "
                "with is_ephemeral); the app would send it as an ordinary message"
            )
        record = Ephemerals(self.w).add(
            chat, user, b.user, text=text, entities=entities, thread_id=thread_id
        )
        self.w.updates.deliver(b, "message", self.w.messages.to_api(record.message))
        return copy.deepcopy(record.message)

    async def user_starts_bot(
        self, user_id: int, payload: str | None = None, *, bot: BotRef = None
    ) -> EmuMessage:
        """What pressing Start, or opening ``t.me/<bot>?start=<payload>``, does."""
        if payload is not None and not _START_PAYLOAD_RE.fullmatch(payload):
            raise EmulatorError(
                f"invalid start payload {payload!r}: Telegram allows 1-64 of A-Z a-z 0-9 _ -"
            )
        text = "/start" if payload is None else f"/start {payload}"
        return await self.user_sends(user_id, user_id, text, bot=bot)

    async def user_opens_link(self, user_id: int, url: str) -> EmuMessage:
        """Follow a ``https://t.me/<bot>?start=...`` or ``tg://resolve?domain=...`` link."""
        parts = urlsplit(url)
        query = parse_qs(parts.query)
        if parts.scheme == "tg":
            username = (query.get("domain") or [""])[0]
        elif parts.netloc.lower() in ("t.me", "telegram.me", "www.t.me"):
            username = parts.path.strip("/")
        else:
            raise EmulatorError(f"not a Telegram link: {url}")
        if "startgroup" in query:
            raise EmulatorError("startgroup links are not emulated; use add_bot_to_group()")
        starts = query.get("start")
        payload = starts[0] if starts else None
        return await self.user_starts_bot(user_id, payload, bot=username)

    def user_blocks_bot(self, user_id: int, *, bot: BotRef = None) -> None:
        """The user blocks the bot; sends fail with 403 until the user writes again."""
        user = self.w.registry.user(user_id)
        b = self.w.registry.bot(bot)
        if user_id in b.blocked:
            return
        b.blocked.add(user_id)
        self._private_status_changed(b, user, "member", "kicked")

    def _private_status_changed(self, b: EmuBot, user: EmuUser, old: str, new: str) -> None:
        chat = self.w.registry.private_chat(user, b)
        self.w.updates.deliver(
            b,
            "my_chat_member",
            {
                "chat": chat.to_api(),
                "from": user.to_api(),
                "date": self.w.events.now(),
                "old_chat_member": member_api(b.user, old),
                "new_chat_member": member_api(b.user, new),
            },
        )
        self.w.events.emit(chat, "member", user_id=b.id, status=new, old_status=old)

    def user_deletes_message(
        self, user_id: int, chat_id: int, message_id: int, *, bot: BotRef = None
    ) -> None:
        """The user deletes a message for everyone, as the app allows: any message in their
        private chat with ``bot``; in a group their own, or any if they are an admin.

        Telegram does not tell bots; later edits of it fail "message to edit not found".
        """
        registry = self.w.registry
        registry.user(user_id)
        group = self._open_group(chat_id, user_id)
        if group is None and chat_id != user_id:
            raise EmulatorError(f"user {user_id} cannot see chat {chat_id}")
        chat = group or registry.privates.get((user_id, registry.bot(bot).id))
        message = chat.messages.get(message_id) if chat is not None else None
        if message is None or message.deleted:
            raise EmulatorError(f"no message {message_id} in chat {chat_id}")
        if group is not None and message.sender.id != user_id and user_id not in group.admins:
            raise EmulatorError(
                f"user {user_id} may delete only their own messages in {chat_id} (not an admin)"
            )
        self.w.messages.delete(message, by=user_id)

    # ----------------------------------------------------------------- buttons

    def _message_for_press(
        self, user_id: int, chat_id: int, message_id: int, bot: BotRef
    ) -> tuple[EmuUser, EmuChat, EmuMessage]:
        registry = self.w.registry
        user = registry.user(user_id)
        chat = self._open_group(chat_id, user_id)
        if chat is None:
            if chat_id != user_id:
                raise EmulatorError(f"user {user_id} cannot see chat {chat_id}")
            chat = registry.privates.get((user_id, registry.bot(bot).id))
        message = chat.messages.get(message_id) if chat is not None else None
        if chat is None or message is None or message.deleted:
            raise EmulatorError(f"no message {message_id} in chat {chat_id}")
        if message.history:
            raise EmulatorError(
                f"message {message_id} is from before chat {chat_id} was upgraded; "
                "its buttons are not emulated"
            )
        if not message.from_bot:
            raise EmulatorError(f"message {message_id} in chat {chat_id} is not from a bot")
        return user, chat, message

    async def user_presses(
        self,
        user_id: int,
        chat_id: int,
        message_id: int,
        *,
        data: str | None = None,
        text: str | None = None,
        bot: BotRef = None,
    ) -> CallbackHandle:
        """Press an inline button found by ``data`` (callback_data) or ``text``."""
        if (data is None) == (text is None):
            raise EmulatorError("pass exactly one of data= or text=")
        user, chat, message = self._message_for_press(user_id, chat_id, message_id, bot)
        for row in message.inline_keyboard:
            for button in row:
                if (data is not None and button.get("callback_data") == data) or (
                    text is not None and button.get("text") == text
                ):
                    if "callback_data" not in button:
                        raise EmulatorError(f"button {button} is not a callback button")
                    return self._press(user, chat, message, str(button["callback_data"]))
        wanted = f"data={data!r}" if data is not None else f"text={text!r}"
        raise EmulatorError(
            f"no button with {wanted} on message {message_id} in chat {chat_id}; "
            f"buttons: {message.buttons}"
        )

    async def user_sends_callback(
        self, user_id: int, chat_id: int, message_id: int, data: str, *, bot: BotRef = None
    ) -> CallbackHandle:
        """A callback query with arbitrary (possibly forged) data on an existing message."""
        user, chat, message = self._message_for_press(user_id, chat_id, message_id, bot)
        return self._press(user, chat, message, data)

    async def user_presses_ephemeral(
        self,
        user_id: int,
        chat_id: int,
        ephemeral_message_id: int,
        *,
        data: str | None = None,
        text: str | None = None,
    ) -> CallbackHandle:
        """Press an inline button of an ephemeral message, as the receiver's app shows it.

        The bot's callback_query carries the message with ``message_id`` 0 and its
        ``ephemeral_message_id`` and ``receiver_user``.
        """
        if (data is None) == (text is None):
            raise EmulatorError("pass exactly one of data= or text=")
        user = self.w.registry.user(user_id)
        chat = self._open_group(chat_id, user_id)
        if chat is None:
            raise EmulatorError(f"ephemeral messages exist only in groups, not in {chat_id}")
        record = chat.ephemerals.get(ephemeral_message_id)
        if record is None or record.viewer_id != user_id or record.shown is None:
            raise EmulatorError(
                f"user {user_id}'s app shows no ephemeral message {ephemeral_message_id}"
            )
        if record.message.deleted or not record.message.from_bot:
            raise EmulatorError(
                f"ephemeral message {ephemeral_message_id} was deleted or is not from a bot; "
                "Telegram would not deliver the press"
            )
        for row in record.shown.inline_keyboard:
            for button in row:
                if (data is not None and button.get("callback_data") == data) or (
                    text is not None and button.get("text") == text
                ):
                    if "callback_data" not in button:
                        raise EmulatorError(f"button {button} is not a callback button")
                    return self._press(user, chat, record.message, str(button["callback_data"]))
        wanted = f"data={data!r}" if data is not None else f"text={text!r}"
        raise EmulatorError(
            f"no button with {wanted} on ephemeral message {ephemeral_message_id}; "
            f"buttons: {record.shown.buttons}"
        )

    def _press(
        self, user: EmuUser, chat: EmuChat, message: EmuMessage, data: str
    ) -> CallbackHandle:
        b = self.w.registry.bot(message.sender.id)
        query_id = str(next(self.w.query_ids))
        now = self.w.clock()
        handle = CallbackHandle(
            query_id,
            bot_id=b.id,
            user_id=user.id,
            chat_id=chat.id,
            message_id=0 if message.is_ephemeral else message.message_id,
            data=data,
            created_at=now,
            ephemeral_message_id=message.ephemeral_message_id,
        )
        b.callbacks[query_id] = handle
        for old_id, old in list(b.queries.items()):
            if now - old.created_at > 4 * EPHEMERAL_REPLY_WINDOW:
                del b.queries[old_id]
        b.queries[query_id] = handle
        instance = (abs(chat.id) * 1_000_003 + b.id) % 10**18
        self.w.updates.deliver(
            b,
            "callback_query",
            {
                "id": query_id,
                "from": user.to_api(),
                "message": self.w.messages.to_api(message),
                "chat_instance": str(instance if chat.id > 0 else -instance),
                "data": data,
            },
        )
        extra: JsonDict = {}
        if message.is_ephemeral:
            extra["ephemeral_message_id"] = message.ephemeral_message_id
        self.w.events.emit(
            chat,
            "callback_query",
            message_id=handle.message_id,
            callback_query_id=query_id,
            user_id=user.id,
            data=data,
            **extra,
        )
        return handle
