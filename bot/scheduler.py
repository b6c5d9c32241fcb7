"""Turn timers and computer moves, driven by a Redis sorted set.

Each running game has one entry: chat id → the time something is due (a computer
move or a turn deadline). Any process may claim a due entry; ZREM decides the one
winner. The loop sleeps until the earliest entry (at most ``max_sleep``, so timers
set by other processes are seen) or until this process adds an earlier one. After
a restart the entries are still in Redis, so every game's timer still fires.

A timer that cannot be written (Redis unreachable) is kept in memory and written again
on every tick until Redis takes it: a claimed timer whose game failed is never lost.
"""

from __future__ import annotations

import asyncio
import contextlib
import logging
import time
from collections.abc import Awaitable, Callable

from bot.storage import Storage

log = logging.getLogger(__name__)


class Scheduler:
    def __init__(
        self,
        storage: Storage,
        fire: Callable[[int], Awaitable[None]],
        *,
        clock: Callable[[], float] = time.time,
        max_sleep: float = 1.0,
    ) -> None:
        self.storage = storage
        self.fire = fire
        self.clock = clock
        self.max_sleep = max_sleep
        self._wake = asyncio.Event()
        self._wake_at = 0.0
        """When the sleeping loop looks at the timers next: a timer due later needs no
        wake-up, which spares a tick (and its reads of every shard) per move."""
        self._ticking = False
        self._set_meanwhile = float("inf")
        """The earliest due time set while a tick runs (its reads may have missed it)."""
        self._task: asyncio.Task[None] | None = None
        self._running: set[asyncio.Task[None]] = set()
        self._busy: set[int] = set()
        self._stopping = False
        self.unsaved: dict[int, float] = {}
        """Timers Redis did not take yet: chat id -> due time."""
        self.sweep: Callable[[float], Awaitable[None]] | None = None
        """Run every tick: keeps this worker's output leases and takes over a dead one's."""

    async def schedule(self, chat_id: int, due: float) -> None:
        """Set the chat's timer; never raises: a failed write is kept and retried."""
        try:
            await self.storage.set_timer(chat_id, due)
        except Exception as err:
            log.warning("could not set the timer of chat %s (%s); keeping it", chat_id, err)
            self.unsaved[chat_id] = min(due, self.unsaved.get(chat_id, due))
        if self._ticking:
            self._set_meanwhile = min(self._set_meanwhile, due)
        elif due < self._wake_at:
            self._wake.set()

    async def _flush_unsaved(self) -> None:
        for chat_id, due in list(self.unsaved.items()):
            await self.storage.set_timer(chat_id, due)  # raises while Redis is away
            if self.unsaved.get(chat_id) == due:
                del self.unsaved[chat_id]

    def wake(self) -> None:
        """Look at the timers now (e.g. after the clock jumped)."""
        self._wake.set()

    def start(self) -> None:
        if self._task is None:
            self._stopping = False
            self._task = asyncio.create_task(self._loop(), name="durak-scheduler")

    async def stop(self) -> None:
        if self._task is not None:
            # The flag ends the loop even if an await inside swallows the cancellation.
            self._stopping = True
            self._wake.set()
            self._task.cancel()
            with contextlib.suppress(asyncio.CancelledError):
                await self._task
            self._task = None
        for task in list(self._running):
            task.cancel()
        for task in list(self._running):
            with contextlib.suppress(asyncio.CancelledError, Exception):
                await task

    async def _loop(self) -> None:
        while not self._stopping:
            try:
                await self._tick()
            except asyncio.CancelledError:
                raise
            except Exception:
                log.exception("scheduler tick failed")
                await asyncio.sleep(self.max_sleep)

    async def _tick(self) -> None:
        self._wake.clear()
        self._ticking, self._set_meanwhile = True, float("inf")
        try:
            due = await self._look()
        finally:
            self._ticking = False
        due = min(due, self._set_meanwhile)
        sleep = min(self.max_sleep, due - self.clock())
        if sleep > 0:
            self._wake_at = self.clock() + sleep
            # asyncio.timeout, not wait_for: Python 3.11's wait_for loses a cancellation
            # that arrives just as the wake-up event is set, and stop() then waits forever.
            with contextlib.suppress(TimeoutError):
                async with asyncio.timeout(sleep):
                    await self._wake.wait()

    async def _look(self) -> float:
        """Fire what is due; returns when the next timer is due (infinity: none)."""
        await self._flush_unsaved()
        await self.storage.settle_pending_stats(self.clock())  # a dead worker's user totals
        if self.sweep is not None:
            await self.sweep(time.time())  # leases are wall-clock times shared by workers
        for chat_id in await self.storage.claim_due(self.clock()):
            task = asyncio.create_task(self._fire(chat_id))
            self._running.add(task)
            task.add_done_callback(self._running.discard)
        due = await self.storage.next_due()
        return float("inf") if due is None else due

    async def _fire(self, chat_id: int) -> None:
        try:
            await self.fire(chat_id)
        except Exception:
            log.exception("timer of chat %s failed; retrying shortly", chat_id)
            await self.schedule(chat_id, self.clock() + 1.0)
        finally:
            await self.storage.release_timer(chat_id)  # the lease ends: done or rescheduled
