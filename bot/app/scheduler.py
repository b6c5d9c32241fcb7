"""Turn timers and computer moves, driven by a Redis sorted set.

Each running game has one entry: its place → the time something is due (a computer
move or a turn deadline). Any process may claim a due entry; a compare-and-set lease
decides the one winner. Every ``max_sleep`` seconds the loop reads every shard for the
timers due before its next read, and keeps them (and the ones this process sets) in a
local heap; it wakes for each of those and claims just that one. So a timer costs one
claim, not a read of every shard: with many tables a timer is due every few
milliseconds. A timer that another process moved sooner is seen at the next read (at
most ``max_sleep`` late); one it moved later or removed is simply not claimed. After a
restart the entries are still in Redis, so every game's timer still fires.

A timer that cannot be written (Redis unreachable) is kept in memory and written again
on every tick until Redis takes it: a claimed timer whose game failed is never lost.
"""

from __future__ import annotations

import asyncio
import contextlib
import heapq
import logging
import time
from collections.abc import Awaitable, Callable

from bot.domain.place import Place
from bot.store.keys import place_shard, timers_key
from bot.store.storage import Storage

log = logging.getLogger(__name__)


class Scheduler:
    def __init__(
        self,
        storage: Storage,
        fire: Callable[[Place], Awaitable[None]],
        *,
        sweep: Callable[[float], Awaitable[None]] | None = None,
        clock: Callable[[], float] = time.time,
        max_sleep: float = 1.0,
    ) -> None:
        self.storage = storage
        self.fire = fire
        self.clock = clock
        self.max_sleep = max_sleep
        self._wake = asyncio.Event()
        self._wake_at = 0.0
        """When the sleeping loop wakes next (0: it is not sleeping): a timer due later
        needs no wake-up, which spares a tick per move."""
        self._ticking = False
        self._upcoming: list[tuple[float, Place, str]] = []
        """Timers due before the next read (due, place, key), from that read or set here."""
        self._next_read = 0.0
        self._task: asyncio.Task[None] | None = None
        self._running: set[asyncio.Task[None]] = set()
        self._stopping = False
        self.unsaved: dict[Place, float] = {}
        """Timers Redis did not take yet: place -> due time."""
        self.sweep = sweep
        """Run every read: keeps this worker's output leases and takes over a dead one's."""

    async def schedule(self, place: Place, due: float) -> None:
        """Set the game's timer; never raises: a failed write is kept and retried."""
        try:
            await self.storage.set_timer(place, due)
        except Exception as err:
            log.warning("could not set the timer of chat %s (%s); keeping it", place, err)
            self.unsaved[place] = min(due, self.unsaved.get(place, due))
        if due <= self._next_read:  # later ones the next read finds
            heapq.heappush(self._upcoming, (due, place, timers_key(place_shard(place))))
            if due < self._wake_at or self._ticking:
                self._wake.set()

    async def _flush_unsaved(self) -> None:
        for place, due in list(self.unsaved.items()):
            await self.storage.set_timer(place, due)  # raises while Redis is away
            if self.unsaved.get(place) == due:
                del self.unsaved[place]

    def wake(self) -> None:
        """Read the timers now (e.g. after the clock jumped)."""
        self._next_read = 0.0
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
        self._ticking = True
        try:
            if self.clock() >= self._next_read:
                await self._read()
            await self._claim_due()
        finally:
            self._ticking = False
        if self._wake.is_set():
            return  # a timer was set during the tick: look at it first
        first = self._upcoming[0][0] if self._upcoming else float("inf")
        wake_at = min(self._next_read, first)
        sleep = wake_at - self.clock()
        if sleep > 0:
            self._wake_at = wake_at
            # asyncio.timeout, not wait_for: Python 3.11's wait_for loses a cancellation
            # that arrives just as the wake-up event is set, and stop() then waits forever.
            with contextlib.suppress(TimeoutError):
                async with asyncio.timeout(sleep):
                    await self._wake.wait()
            self._wake_at = 0.0

    async def _read(self) -> None:
        """The periodic part: unsaved timers, a dead worker's leftovers, and every
        shard's timers due before the next read."""
        await self._flush_unsaved()
        await self.storage.settle_pending_stats(self.clock())  # a dead worker's user totals
        if self.sweep is not None:
            await self.sweep(time.time())  # leases are wall-clock times shared by workers
        now = self.clock()
        self._next_read = now + self.max_sleep
        for entry in await self.storage.timers_due_by(self._next_read):
            heapq.heappush(self._upcoming, entry)

    async def _claim_due(self) -> None:
        """Claim and fire every known timer that is due (a stale entry's claim fails)."""
        now = self.clock()
        claimed: set[Place] = set()
        while self._upcoming and self._upcoming[0][0] <= now:
            _, place, key = heapq.heappop(self._upcoming)
            if place in claimed or not await self.storage.claim_timer(place, key, now):
                continue
            claimed.add(place)
            task = asyncio.create_task(self._fire(place))
            self._running.add(task)
            task.add_done_callback(self._running.discard)

    async def _fire(self, place: Place) -> None:
        try:
            await self.fire(place)
        except Exception:
            log.exception("timer of chat %s failed; retrying shortly", place)
            await self.schedule(place, self.clock() + 1.0)
        finally:
            await self.storage.release_timer(place)  # the lease ends: done or rescheduled
