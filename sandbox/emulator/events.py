"""Change events: the log every emulator change is written to, subscriptions, waiting."""

from __future__ import annotations

import asyncio
import contextlib
from collections import deque
from collections.abc import Callable, Iterable
from types import TracebackType
from typing import Any, TypeVar

from sandbox.emulator.models import EmuChat
from sandbox.emulator.types import JsonDict

T = TypeVar("T")
_EVENT_LOG_LIMIT = 2000  # per chat


def describe_event(event: JsonDict) -> str:
    """One line per event, for timeout messages."""
    line = f"#{event.get('seq')} {event.get('type')} chat={event.get('chat_id')}"
    message = event.get("message")
    if isinstance(message, dict):
        sender = message.get("from", {})
        who = sender.get("username") or sender.get("first_name") or "?"
        text = str(message.get("text", ""))
        line += f" msg={message.get('message_id')} {who}: {text[:100]!r}"
        buttons = [b["text"] for row in message.get("buttons", []) for b in row]
        if buttons:
            line += f" buttons={buttons}"
    for key in ("message_id", "data", "text", "action", "status", "user_id"):
        if key in event and not (key == "message_id" and isinstance(message, dict)):
            line += f" {key}={event[key]!r}"
    return line


class Subscription:
    """A stream of change events; registered on creation, so nothing is missed."""

    def __init__(
        self,
        chat_ids: Iterable[int] | None,
        maxsize: int,
        on_close: Callable[[Subscription], None],
    ) -> None:
        self._on_close = on_close
        self._chat_ids = frozenset(chat_ids) if chat_ids is not None else None
        self._maxsize = maxsize
        self._queue: asyncio.Queue[JsonDict | None] = asyncio.Queue()
        self.closed = False

    def offer(self, event: JsonDict) -> None:
        if self.closed:
            return
        chat_id = event.get("chat_id")
        if self._chat_ids is not None and chat_id is not None and chat_id not in self._chat_ids:
            return
        if self._queue.qsize() >= self._maxsize:
            # A stalled consumer (e.g. a hidden browser tab) must not grow memory forever.
            with contextlib.suppress(asyncio.QueueEmpty):
                self._queue.get_nowait()
        self._queue.put_nowait(event)

    async def get(self, timeout: float | None = None) -> JsonDict | None:
        """Next event; None once closed. Raises TimeoutError after ``timeout`` seconds."""
        if self.closed and self._queue.empty():
            return None
        if timeout is None:
            return await self._queue.get()
        return await asyncio.wait_for(self._queue.get(), timeout)

    def close(self) -> None:
        if not self.closed:
            self.closed = True
            self._on_close(self)
            self._queue.put_nowait(None)

    def __aiter__(self) -> Subscription:
        return self

    async def __anext__(self) -> JsonDict:
        event = await self.get()
        if event is None:
            raise StopAsyncIteration
        return event

    def __enter__(self) -> Subscription:
        return self

    def __exit__(
        self,
        exc_type: type[BaseException] | None,
        exc: BaseException | None,
        tb: TracebackType | None,
    ) -> None:
        self.close()


class EventLog:
    """Numbered change events (per chat and recent), live subscriptions, and ``wait_for``."""

    def __init__(self, wall_clock: Callable[[], float]) -> None:
        self.wall_clock = wall_clock
        self._seq = 0
        self._recent: deque[JsonDict] = deque(maxlen=50)
        self._subscriptions: set[Subscription] = set()
        self._changed = asyncio.Event()

    def now(self) -> int:
        """Telegram's ``date``: whole seconds of the wall clock."""
        return int(self.wall_clock())

    def touch(self) -> None:
        """Signal a change that has no event of its own (e.g. a Bot API call arrived)."""
        # A fresh Event per change: waiters grab the current one before checking state,
        # so no change between check and wait is ever lost.
        event, self._changed = self._changed, asyncio.Event()
        event.set()

    def emit(self, chat: EmuChat | None, kind: str, /, **fields: Any) -> JsonDict:
        """Record a change (in the chat's history too) and wake subscribers and waiters."""
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
        self.touch()
        return event

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
