"""Emulator state: registry lookups, inspection, events, waiting, update queues, messages."""

from __future__ import annotations

import asyncio
import contextlib
import copy
import itertools
import time
from collections import deque
from collections.abc import Callable, Iterable
from typing import Any, TypeVar

from sandbox.emulator_events import Subscription, describe_event
from sandbox.emulator_limits import EmuStats, Fault, RateLimiter, RateLimits
from sandbox.emulator_models import (
    ERR_BLOCKED,
    ERR_BOT_TO_BOT,
    ERR_CANT_INITIATE,
    ERR_CHAT_NOT_FOUND,
    ERR_QUERY_INVALID,
    ApiError,
    CallbackAnswer,
    CallbackHandle,
    EmuBot,
    EmuChat,
    EmulatorError,
    EmuMessage,
    EmuUser,
    JsonDict,
    too_many_requests,
)

T = TypeVar("T")
BotRef = str | int | None  # token, username (with or without @) or bot user id; None = first bot

# What Telegram delivers when allowed_updates was never set (or set to []).
_DEFAULT_EXCLUDED_UPDATES = frozenset({"chat_member", "message_reaction", "message_reaction_count"})
_EVENT_LOG_LIMIT = 2000


class EmulatorState:
    """Everything the emulator knows; the user-facing control API builds on it."""

    def __init__(
        self,
        *,
        rate_limits: bool | RateLimits = False,
        clock: Callable[[], float] = time.monotonic,
        wall_clock: Callable[[], float] = time.time,
        callback_ttl: float | None = 15.0,
    ) -> None:
        self.users: dict[int, EmuUser] = {}
        self._bots: dict[str, EmuBot] = {}
        self._groups: dict[int, EmuChat] = {}
        self._privates: dict[tuple[int, int], EmuChat] = {}
        self.clock = clock
        self.wall_clock = wall_clock
        self.callback_ttl = callback_ttl
        self.limiter = RateLimiter(
            rate_limits if isinstance(rate_limits, RateLimits) else RateLimits(), clock
        )
        self.rate_limits_enabled = bool(rate_limits)
        self._faults: list[Fault] = []
        self._stats = EmuStats()
        self._seq = 0
        self._query_ids = itertools.count(4_000_000_000_000_000_001)
        self._recent: deque[JsonDict] = deque(maxlen=50)
        self._subscriptions: set[Subscription] = set()
        self._changed = asyncio.Event()
        self.closing = False

    # ----------------------------------------------------------------- membership

    def _status(self, chat: EmuChat, user_id: int) -> str:
        if chat.peer is not None:
            return "member"
        if chat.creator == user_id:
            return "creator"
        if user_id in chat.admins and (user_id in chat.members or user_id in chat.bots):
            return "administrator"
        if user_id in chat.members or user_id in chat.bots:
            return "member"
        if user_id in chat.kicked_bots:
            return "kicked"
        return "left"

    def member_status(self, chat: EmuChat, user_id: int) -> str:
        return self._status(chat, user_id)

    # ----------------------------------------------------------------- lookups

    @property
    def bots(self) -> list[EmuBot]:
        return list(self._bots.values())

    def bot(self, bot: BotRef = None) -> EmuBot:
        """Resolve a bot by token, username or id; None means the first registered bot."""
        if bot is None:
            if not self._bots:
                raise EmulatorError("no bot registered; call add_bot() first")
            return next(iter(self._bots.values()))
        if isinstance(bot, int):
            for b in self._bots.values():
                if b.id == bot:
                    return b
        else:
            if bot in self._bots:
                return self._bots[bot]
            name = bot.lstrip("@").lower()
            for b in self._bots.values():
                if (b.user.username or "").lower() == name:
                    return b
        raise EmulatorError(f"unknown bot {bot!r}")

    def bot_by_token(self, token: str) -> EmuBot | None:
        return self._bots.get(token)

    def _user(self, user_id: int) -> EmuUser:
        user = self.users.get(user_id)
        if user is None:
            raise EmulatorError(f"unknown user {user_id}; call add_user() first")
        return user

    def _group(self, chat_id: int) -> EmuChat:
        chat = self._groups.get(chat_id)
        if chat is None:
            raise EmulatorError(f"unknown group {chat_id}; call add_group() first")
        return chat

    def private_chat(self, user: EmuUser, b: EmuBot) -> EmuChat:
        key = (user.id, b.id)
        chat = self._privates.get(key)
        if chat is None:
            chat = EmuChat(user.id, "private", peer=user, bot_id=b.id)
            self._privates[key] = chat
        return chat

    def chat(self, chat_id: int, *, bot: BotRef = None) -> EmuChat | None:
        """The live chat object (a group, or the user's private chat with ``bot``)."""
        group = self._groups.get(chat_id)
        if group is not None:
            return group
        if not self._bots:
            return None
        return self._privates.get((chat_id, self.bot(bot).id))

    def chat_of(self, message: EmuMessage) -> EmuChat:
        if message.bot_id is not None:
            return self._privates[(message.chat_id, message.bot_id)]
        return self._groups[message.chat_id]

    # ----------------------------------------------------------------- inspection

    def messages(
        self, chat_id: int, *, bot: BotRef = None, include_deleted: bool = False
    ) -> list[EmuMessage]:
        """Snapshots of the chat's messages in order (current state after edits)."""
        chat = self.chat(chat_id, bot=bot)
        if chat is None:
            return []
        return [
            copy.deepcopy(m) for m in chat.messages.values() if include_deleted or not m.deleted
        ]

    def last_message(self, chat_id: int, *, bot: BotRef = None) -> EmuMessage | None:
        chat = self.chat(chat_id, bot=bot)
        if chat is None:
            return None
        for message in reversed(chat.messages.values()):
            if not message.deleted:
                return copy.deepcopy(message)
        return None

    def message(self, chat_id: int, message_id: int, *, bot: BotRef = None) -> EmuMessage | None:
        chat = self.chat(chat_id, bot=bot)
        found = chat.messages.get(message_id) if chat is not None else None
        return copy.deepcopy(found) if found is not None and not found.deleted else None

    def chat_events(self, chat_id: int, *, bot: BotRef = None) -> list[JsonDict]:
        """Everything that happened in a chat, oldest first."""
        chat = self.chat(chat_id, bot=bot)
        return copy.deepcopy(chat.events) if chat is not None else []

    def commands(
        self,
        *,
        scope_type: str = "default",
        chat_id: int | None = None,
        user_id: int | None = None,
        language_code: str = "",
        bot: BotRef = None,
    ) -> list[JsonDict]:
        """Commands stored by setMyCommands for exactly this scope and language."""
        key = (scope_type, chat_id, user_id, language_code)
        return copy.deepcopy(self.bot(bot).commands.get(key, []))

    def pending_updates(self, bot: BotRef = None) -> list[JsonDict]:
        return copy.deepcopy(self.bot(bot).updates)

    def state(self) -> JsonDict:
        """JSON-able overview for the sandbox page (tokens are not exposed)."""
        return {
            "bots": [
                {**b.user.to_api(), "started": sorted(b.started), "blocked": sorted(b.blocked)}
                for b in self._bots.values()
            ],
            "users": [u.to_api() for u in self.users.values() if not u.is_bot],
            "groups": [c.to_dict() for c in self._groups.values()],
            "private_chats": [c.to_dict() for c in self._privates.values()],
        }

    # ----------------------------------------------------------------- stats & faults

    @property
    def stats(self) -> EmuStats:
        return self._stats

    def reset_stats(self) -> None:
        self._stats = EmuStats()

    def inject_error(
        self,
        method: str,
        error_code: int,
        description: str,
        *,
        retry_after: int | None = None,
        times: int = 1,
        chat_id: int | None = None,
    ) -> None:
        """Make the next ``times`` calls of ``method`` ("*" = any) fail with this error."""
        if times < 1:
            raise EmulatorError("times must be >= 1")
        self._faults.append(
            Fault(method.lower(), error_code, description, retry_after, times, chat_id)
        )

    def clear_injected_errors(self) -> None:
        self._faults.clear()

    def take_fault(self, method: str, chat_id: int | None) -> ApiError | None:
        for fault in self._faults:
            if fault.matches(method, chat_id):
                fault.times -= 1
                if fault.times <= 0:
                    self._faults.remove(fault)
                return ApiError(fault.error_code, fault.description, fault.retry_after)
        return None

    def set_rate_limits(self, limits: RateLimits | bool = True) -> None:
        """Switch flood limits on (optionally with custom limits) or off; resets the windows."""
        if isinstance(limits, RateLimits):
            self.limiter = RateLimiter(limits, self.clock)
        elif limits:
            self.limiter = RateLimiter(self.limiter.limits, self.clock)
        self.rate_limits_enabled = bool(limits)

    def check_flood(self, b: EmuBot, chat: EmuChat) -> None:
        if self.rate_limits_enabled:
            wait = self.limiter.check(b.id, chat.id, chat.is_group)
            if wait is not None:
                raise too_many_requests(wait)

    def record_flood(self, b: EmuBot, chat: EmuChat) -> None:
        if self.rate_limits_enabled:
            self.limiter.record(b.id, chat.id, chat.is_group)

    # ----------------------------------------------------------------- events & waiting

    def now(self) -> int:
        return int(self.wall_clock())

    def _notify(self) -> None:
        # A fresh Event per change: waiters grab the current one before checking state,
        # so no change between check and wait is ever lost.
        event, self._changed = self._changed, asyncio.Event()
        event.set()

    def touch(self) -> None:
        """Signal a change that has no event of its own (e.g. commands stored)."""
        self._notify()

    def _emit(self, chat: EmuChat | None, kind: str, /, **fields: Any) -> JsonDict:
        self._seq += 1
        event: JsonDict = {
            "seq": self._seq,
            "type": kind,
            "chat_id": chat.id if chat is not None else None,
            "bot_id": chat.bot_id if chat is not None else None,
            "date": self.now(),
            **fields,
        }
        if chat is not None:
            chat.events.append(event)
            if len(chat.events) > _EVENT_LOG_LIMIT:
                del chat.events[: _EVENT_LOG_LIMIT // 2]
        self._recent.append(event)
        for subscription in list(self._subscriptions):
            subscription.offer(event)
        self._notify()
        return event

    def emit(self, chat: EmuChat | None, kind: str, /, **fields: Any) -> JsonDict:
        return self._emit(chat, kind, **fields)

    def recent_events(self, limit: int = 15) -> list[JsonDict]:
        return list(self._recent)[-limit:]

    async def wait_for(
        self, predicate: Callable[[], T | None], timeout: float = 5.0, *, what: str = ""
    ) -> T:
        """Re-evaluate ``predicate`` after every emulator change; return its first truthy value."""
        loop = asyncio.get_running_loop()
        deadline = loop.time() + timeout
        while True:
            changed = self._changed
            result = predicate()
            if result:
                return result
            remaining = deadline - loop.time()
            if remaining <= 0:
                recent = "\n".join(describe_event(e) for e in self.recent_events()) or "(none)"
                label = f" ({what})" if what else ""
                raise TimeoutError(
                    f"condition{label} not met within {timeout}s; recent emulator events:\n{recent}"
                )
            with contextlib.suppress(TimeoutError):
                await asyncio.wait_for(changed.wait(), remaining)

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
        chat = self.chat(chat_id, bot=bot)
        baseline = max(chat.messages, default=0) if chat is not None else 0

        def matches(message: EmuMessage) -> bool:
            if match is None:
                return True
            if isinstance(match, str):
                return match in message.text
            return match(message)

        def find() -> EmuMessage | None:
            current = self.chat(chat_id, bot=bot)
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

        return await self.wait_for(find, timeout, what=f"new message in chat {chat_id}")

    def subscribe(
        self, chat_ids: Iterable[int] | None = None, maxsize: int = 10_000
    ) -> Subscription:
        """Change events from now on, optionally only for some chats (state events always)."""
        subscription = Subscription(chat_ids, maxsize, self._subscriptions.discard)
        self._subscriptions.add(subscription)
        return subscription

    def close_subscriptions(self) -> None:
        for subscription in list(self._subscriptions):
            subscription.close()

    # ----------------------------------------------------------------- updates

    def deliver(self, b: EmuBot, kind: str, payload: JsonDict) -> None:
        """Queue an update for a bot, honouring its allowed_updates."""
        if b.allowed_updates:
            if kind not in b.allowed_updates:
                return
        elif kind in _DEFAULT_EXCLUDED_UPDATES:
            return
        b.updates.append({"update_id": b.next_update_id, kind: payload})
        b.next_update_id += 1
        b.poke()
        self._notify()

    def confirm_updates(self, b: EmuBot, offset: int | None) -> None:
        if offset is None:
            return
        if offset < 0:
            b.updates = b.updates[offset:]
        else:
            b.updates = [u for u in b.updates if u["update_id"] >= offset]

    # ----------------------------------------------------------------- messages

    def store_message(
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
            date=self.now(),
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
        self._emit(chat, "message", message=message.to_dict())
        return message

    def edit_message(
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
        message.edit_date = self.now()
        self._emit(self.chat_of(message), "edit", message=message.to_dict())

    def delete_message(self, message: EmuMessage) -> None:
        message.deleted = True
        chat = self.chat_of(message)
        if message.message_id in chat.pinned:
            chat.pinned.remove(message.message_id)
        self._emit(chat, "delete", message_id=message.message_id, message=message.to_dict())

    def message_api(self, message: EmuMessage, *, with_reply: bool = True) -> JsonDict:
        """The Bot API Message object for the message's current state."""
        chat = self.chat_of(message)
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
                data["reply_to_message"] = self.message_api(replied, with_reply=False)
        data.update(copy.deepcopy(message.extra))
        return data

    # ----------------------------------------------------------------- bot-side access

    def chat_for_bot(self, b: EmuBot, chat_ref: int | str, *, write: bool) -> EmuChat:
        """The chat a Bot API call refers to, or Telegram's error for it."""
        if isinstance(chat_ref, str):
            # Only public chats resolve by @username; the emulator has none.
            raise ApiError(400, ERR_CHAT_NOT_FOUND)
        group = self._groups.get(chat_ref)
        if group is not None:
            if b.id in group.bots:
                return group
            kind = "supergroup" if group.type == "supergroup" else "group"
            if b.id in group.kicked_bots:
                raise ApiError(403, f"Forbidden: bot was kicked from the {kind} chat")
            raise ApiError(403, f"Forbidden: bot is not a member of the {kind} chat")
        user = self.users.get(chat_ref)
        if user is None:
            raise ApiError(400, ERR_CHAT_NOT_FOUND)
        if user.is_bot:
            raise ApiError(403, ERR_BOT_TO_BOT)
        if write:
            if user.id in b.blocked:
                raise ApiError(403, ERR_BLOCKED)
            if user.id not in b.started:
                raise ApiError(403, ERR_CANT_INITIATE)
        return self.private_chat(user, b)

    def answer_callback(self, b: EmuBot, answer: CallbackAnswer) -> None:
        handle = b.callbacks.pop(answer.callback_query_id, None)
        if handle is None:
            raise ApiError(400, ERR_QUERY_INVALID)
        if self.callback_ttl is not None and self.clock() - handle.created_at > self.callback_ttl:
            raise ApiError(400, ERR_QUERY_INVALID)
        handle._resolve(answer)
        chat = self.chat_of(self._live_message(handle))
        self._emit(
            chat,
            "callback_answer",
            message_id=handle.message_id,
            callback_query_id=handle.id,
            user_id=handle.user_id,
            text=answer.text,
            show_alert=answer.show_alert,
            url=answer.url,
        )

    def _live_message(self, handle: CallbackHandle) -> EmuMessage:
        group = self._groups.get(handle.chat_id)
        chat = group or self._privates[(handle.chat_id, handle.bot_id)]
        return chat.messages[handle.message_id]
