"""What every part of the outbox shares: the calls, the records, the counters, the clock."""

from __future__ import annotations

import asyncio
import contextlib
import time
from collections.abc import Awaitable, Callable, Iterator
from dataclasses import dataclass, field
from typing import Any

from bot.domain.place import Place
from bot.output.screen_cache import ScreenCache
from bot.store.storage import Storage
from bot.transport.bot_api import BotApi


@dataclass
class OutboxStats:
    sent: int = 0
    edited: int = 0
    deleted: int = 0
    skipped: int = 0
    retry_after: int = 0
    not_modified: int = 0
    unconfirmed: int = 0
    """Requests that timed out and may or may not have been carried out."""
    dropped_replies: int = 0
    retried: int = 0
    quieted: int = 0
    """Turn notifications that went out late, as edits instead (``planner.NOTIFY_LATE``)."""
    looked: int = 0
    """Message refreshes that read the record without the message's claim."""
    claimed: int = 0
    """... and those that then claimed it, to call Telegram."""
    claim_busy: int = 0
    """Claims another worker held (tried again soon)."""
    chat_busy: int = 0
    """Calls another worker's send to the same chat made wait (fleet pacing)."""


class TapsFirst:
    """While a tap is being answered, jobs about to render wait until it is (at most
    ``wait`` seconds): each of the tap's Redis round trips otherwise queues behind every
    job whose reply came in meanwhile, a millisecond or two of rendering each. A spinner
    is what people feel, a message a moment later is not."""

    def __init__(self, wait: float) -> None:
        self.wait = wait
        self._answering = 0
        self._answered = asyncio.Event()
        self._answered.set()

    @contextlib.contextmanager
    def answering(self) -> Iterator[None]:
        self._answering += 1
        self._answered.clear()
        try:
            yield
        finally:
            self._answering -= 1
            if not self._answering:
                self._answered.set()

    async def first(self) -> None:
        """Let the taps being answered go first."""
        if self._answering:
            with contextlib.suppress(TimeoutError):
                await asyncio.wait_for(self._answered.wait(), self.wait)


SentHook = Callable[[Place, int], Awaitable[None]]
"""Told (place, message id) of a message sent there."""
NoteSentHook = Callable[[Place, dict[str, Any], int], Awaitable[None]]
"""Told (place, note, message id) of an owed note sent there."""


@dataclass
class OutputContext:
    api: BotApi
    storage: Storage
    taps: TapsFirst
    settle_delay: float
    """How long a timed-out request may still land (the read timeout)."""
    clock: Callable[[], float] = time.monotonic
    wall_clock: Callable[[], float] = time.time
    cache: ScreenCache = field(default_factory=ScreenCache)
    stats: OutboxStats = field(default_factory=OutboxStats)
    reply_sent: SentHook | None = None
    """Told (place, message id) of each command's reply sent (tidy-up deletes it later)."""
    note_sent: NoteSentHook | None = None
    """Told (place, note, message id) of each owed note sent into a game's place."""

    @property
    def reconcile_after(self) -> float:
        """A hand send that timed out and was not used since may be sent again after this,
        when the game waits for that player (the turn gate asks)."""
        return 2 * self.settle_delay

    async def retire(self, chat_id: int, message_id: int) -> None:
        """Delete a message we no longer keep up to date (its buttons would mislead)."""
        if await self.api.delete_message(chat_id, message_id):
            self.stats.deleted += 1
