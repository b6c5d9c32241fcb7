"""The emulator's control API: bots, users and groups, and what users do in chats."""

from __future__ import annotations

import copy
import re
from collections.abc import Iterable
from urllib.parse import parse_qs, urlsplit

from sandbox.emulator_events import command_entities, member_api
from sandbox.emulator_models import (
    CallbackHandle,
    EmuBot,
    EmuChat,
    EmulatorError,
    EmuMessage,
    EmuUser,
)
from sandbox.emulator_state import BotRef, EmulatorState

_START_PAYLOAD_RE = re.compile(r"[A-Za-z0-9_-]{1,64}")


class EmulatorCore(EmulatorState):
    """Python control API: set the scene, act as users, inspect chats, await changes."""

    # ----------------------------------------------------------------- registry

    def add_bot(
        self, token: str, username: str = "durak_test_bot", first_name: str = "Durak"
    ) -> EmuUser:
        """Register a bot; its user id is the number before ':' in the token, as in Telegram."""
        head, sep, secret = token.partition(":")
        if not sep or not head.isdigit() or not secret:
            raise EmulatorError("token must look like '<bot id>:<secret>'")
        if token in self._bots:
            raise EmulatorError(f"bot with token {token!r} already exists")
        user = EmuUser(int(head), first_name, is_bot=True, username=username, language_code=None)
        self._bots[token] = EmuBot(token, user)
        self.users[user.id] = user
        self._emit(None, "state", what="bot", user=user.to_api())
        return user

    def add_user(
        self,
        user_id: int,
        first_name: str,
        *,
        username: str | None = None,
        language_code: str | None = "en",
        last_name: str | None = None,
    ) -> EmuUser:
        """Register (or update in place) a human user."""
        if user_id <= 0:
            raise EmulatorError("user ids are positive")
        user = self.users.get(user_id)
        if user is not None and user.is_bot:
            raise EmulatorError(f"{user_id} is a bot")
        if user is None:
            user = EmuUser(user_id, first_name)
            self.users[user_id] = user
        user.first_name = first_name
        user.username = username
        user.language_code = language_code
        user.last_name = last_name
        self._emit(None, "state", what="user", user=user.to_api())
        return user

    def add_group(
        self,
        chat_id: int,
        title: str,
        *,
        members: Iterable[int] = (),
        admins: Iterable[int] = (),
        creator: int | None = None,
        bots: Iterable[BotRef] | None = None,
        chat_type: str = "supergroup",
    ) -> EmuChat:
        """Create a group with its members; each bot joins with a my_chat_member update.

        ``bots`` defaults to every registered bot; bots listed in ``admins`` join as admins.
        """
        if chat_id >= 0:
            raise EmulatorError("group chat ids are negative")
        if chat_type not in ("group", "supergroup"):
            raise EmulatorError("chat_type must be 'group' or 'supergroup'")
        if chat_id in self._groups:
            raise EmulatorError(f"group {chat_id} already exists")
        admin_ids = set(admins)
        people = set(members) | admin_ids | ({creator} if creator is not None else set())
        bot_ids = {uid for uid in people if uid in self.users and self.users[uid].is_bot}
        for uid in people - bot_ids:
            self._user(uid)
        chat = EmuChat(
            chat_id,
            chat_type,
            title=title,
            members=people - bot_ids,
            admins=admin_ids,
            creator=creator,
        )
        self._groups[chat_id] = chat
        self._emit(chat, "state", what="group", chat=chat.to_dict())
        joining = [self.bot(b) for b in bots] if bots is not None else list(self._bots.values())
        for uid in bot_ids:
            if all(b.id != uid for b in joining):
                joining.append(self.bot(uid))
        for b in joining:
            self.add_bot_to_group(chat_id, b.id, admin=b.id in admin_ids)
        return chat

    def add_member(self, chat_id: int, user_id: int, *, admin: bool = False) -> None:
        """Silently make a user a member (no service message)."""
        chat = self._group(chat_id)
        self._user(user_id)
        chat.members.add(user_id)
        if admin:
            chat.admins.add(user_id)
        self._emit(chat, "member", user_id=user_id, status=self._status(chat, user_id))

    def add_bot_to_group(
        self, chat_id: int, bot: BotRef = None, *, admin: bool = False, by: int | None = None
    ) -> None:
        """Add a bot to a group; the bot gets a my_chat_member update."""
        chat = self._group(chat_id)
        b = self.bot(bot)
        old = self._status(chat, b.id)
        chat.bots.add(b.id)
        chat.kicked_bots.discard(b.id)
        if admin:
            chat.admins.add(b.id)
        self._member_changed(chat, b, old, by)

    def remove_bot_from_group(
        self, chat_id: int, bot: BotRef = None, *, kicked: bool = False, by: int | None = None
    ) -> None:
        chat = self._group(chat_id)
        b = self.bot(bot)
        old = self._status(chat, b.id)
        chat.bots.discard(b.id)
        chat.admins.discard(b.id)
        if kicked:
            chat.kicked_bots.add(b.id)
        self._member_changed(chat, b, old, by)

    def _member_changed(self, chat: EmuChat, b: EmuBot, old: str, by: int | None) -> None:
        actor_id = by if by is not None else chat.creator
        if actor_id is None:
            actor_id = min(chat.members & chat.admins, default=min(chat.members, default=b.id))
        actor = self.users.get(actor_id, b.user)
        new = self._status(chat, b.id)
        self.deliver(
            b,
            "my_chat_member",
            {
                "chat": chat.to_api(),
                "from": actor.to_api(),
                "date": self.now(),
                "old_chat_member": member_api(b.user, old),
                "new_chat_member": member_api(b.user, new),
            },
        )
        self._emit(chat, "member", user_id=b.id, status=new, old_status=old)

    # ----------------------------------------------------------------- user actions

    async def user_sends(
        self,
        user_id: int,
        chat_id: int,
        text: str,
        *,
        bot: BotRef = None,
        reply_to: int | None = None,
    ) -> EmuMessage:
        """A user writes ``text`` in a group, or in their private chat (chat_id == user_id)."""
        user = self._user(user_id)
        if not text.strip():
            raise EmulatorError("Telegram clients do not send empty messages")
        group = self._groups.get(chat_id)
        if group is not None:
            if user_id not in group.members:
                raise EmulatorError(f"user {user_id} is not a member of chat {chat_id}")
            chat = group
            targets = [b for b in self._bots.values() if b.id in group.bots]
        else:
            if chat_id != user_id:
                raise EmulatorError(
                    f"unknown group {chat_id}; a private chat's id is the user's id ({user_id})"
                )
            b = self.bot(bot)
            if user_id in b.blocked:
                # Writing to a blocked bot in the app unblocks it first ("Restart").
                b.blocked.discard(user_id)
                self._member_status_update(b, user, "kicked", "member")
            b.started.add(user_id)
            chat = self.private_chat(user, b)
            targets = [b]
        if reply_to is not None and reply_to not in chat.messages:
            raise EmulatorError(f"no message {reply_to} in chat {chat_id} to reply to")
        message = self.store_message(
            chat, user, text=text, entities=command_entities(text), reply_to=reply_to
        )
        payload = self.message_api(message)
        for target in targets:
            self.deliver(target, "message", payload)
        return copy.deepcopy(message)

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
        user = self._user(user_id)
        b = self.bot(bot)
        if user_id in b.blocked:
            return
        b.blocked.add(user_id)
        self._member_status_update(b, user, "member", "kicked")

    def _member_status_update(self, b: EmuBot, user: EmuUser, old: str, new: str) -> None:
        chat = self.private_chat(user, b)
        self.deliver(
            b,
            "my_chat_member",
            {
                "chat": chat.to_api(),
                "from": user.to_api(),
                "date": self.now(),
                "old_chat_member": member_api(b.user, old),
                "new_chat_member": member_api(b.user, new),
            },
        )
        self._emit(chat, "member", user_id=b.id, status=new, old_status=old)

    def _message_for_press(
        self, user_id: int, chat_id: int, message_id: int, bot: BotRef
    ) -> tuple[EmuUser, EmuChat, EmuMessage]:
        user = self._user(user_id)
        group = self._groups.get(chat_id)
        if group is not None:
            if user_id not in group.members:
                raise EmulatorError(f"user {user_id} is not a member of chat {chat_id}")
            chat: EmuChat | None = group
        elif chat_id != user_id:
            raise EmulatorError(f"user {user_id} cannot see chat {chat_id}")
        else:
            chat = self._privates.get((user_id, self.bot(bot).id))
        message = chat.messages.get(message_id) if chat is not None else None
        if chat is None or message is None or message.deleted:
            raise EmulatorError(f"no message {message_id} in chat {chat_id}")
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

    def _press(
        self, user: EmuUser, chat: EmuChat, message: EmuMessage, data: str
    ) -> CallbackHandle:
        b = self.bot(message.sender.id)
        query_id = str(next(self._query_ids))
        handle = CallbackHandle(
            query_id,
            bot_id=b.id,
            user_id=user.id,
            chat_id=chat.id,
            message_id=message.message_id,
            data=data,
            created_at=self.clock(),
        )
        b.callbacks[query_id] = handle
        instance = (abs(chat.id) * 1_000_003 + b.id) % 10**18
        self.deliver(
            b,
            "callback_query",
            {
                "id": query_id,
                "from": user.to_api(),
                "message": self.message_api(message),
                "chat_instance": str(instance if chat.id > 0 else -instance),
                "data": data,
            },
        )
        self._emit(
            chat,
            "callback_query",
            message_id=message.message_id,
            callback_query_id=query_id,
            user_id=user.id,
            data=data,
        )
        return handle
