"""One lane per chat: its jobs in priority order, paced, retried; blind to what they show.

A lane serialises its chat's calls and paces them (``ChatPacer`` for the chat, the
``SendLimiter`` for the whole bot). Jobs wait under opaque keys: a job queued under a key
already pending merges into that one (``Job.absorb``), so quick requests for the same
thing cost one call. A job says how it went by what it returns (``BackOff``,
``RunAgainAt``) or by the Bot API's and Redis's own errors: a 429 holds the chat, a call
that may have landed late waits until it must have, other failures back off and retry.
Idle lanes are forgotten.
"""

from __future__ import annotations

import asyncio
import contextlib
import logging
import time
from collections.abc import Awaitable, Callable, Hashable, Iterator
from dataclasses import dataclass, field
from typing import Any, Generic, Protocol, Self, TypeVar

from redis.exceptions import RedisError
from telegram.error import ChatMigrated, Forbidden, RetryAfter, TelegramError

from bot.transport.bot_api import retry_seconds
from bot.transport.delivery import (
    backoff_seconds,
    possibly_applied,
    refused_by_group,
    transient,
)
from bot.transport.pacing import ChatBusy, ChatPacer, SendLimiter

log = logging.getLogger(__name__)

TABLE, ANNOUNCE, REPLY = 0, 1, 2
"""Priorities in a chat's lane: the table (and results) first, command replies last."""
MAX_PENDING_REPLIES = 6
"""Per chat: more pending command replies than this drop the oldest (a flood's tail)."""
MAX_PENDING_ANNOUNCEMENTS = 50
MAX_ATTEMPTS = 5
"""For errors that will not pass by themselves (a bad request): then the job is dropped."""


@dataclass(frozen=True)
class BackOff:
    """Not done: someone else holds what the job needs; run it again after ``seconds``."""

    seconds: float


@dataclass(frozen=True)
class RunAgainAt:
    """Done for now, but what it showed may be overtaken: run it again at ``when``."""

    when: float


Outcome = BackOff | RunAgainAt | None
"""None: the job is over."""


class QueueCounters(Protocol):
    retry_after: int
    unconfirmed: int
    dropped_replies: int
    retried: int
    chat_busy: int


@dataclass(kw_only=True, eq=False)
class Job:
    priority: int = TABLE
    not_before: float = 0.0
    """A calm job waits until then, so a quick next request merges into it."""
    repeatable: bool = True
    """It works out afresh what to send, so it may run again after a failure; a one-off
    message may not (it might show twice)."""
    account: Hashable | None = None
    """Whose work this is (the caller's name for it: for the outbox, a game's place),
    counted while queued or running (``ChatLanes.working_for``); None: a message that may
    be dropped when too many of its kind are pending."""
    urgent: bool = False
    """Someone waits on it to act (a player's buttons shown in a group): near the bot's
    global limit it neither waits behind nor yields to the group's other calls, which a
    later edit merges into."""
    attempts: int = 0
    requeued: bool = False

    async def run(self, lane: Lane[Any]) -> Outcome:
        raise NotImplementedError

    def absorb(self, newer: Self) -> None:
        """``newer`` was queued under this pending job's key: this one does its work too."""
        self.not_before = min(self.not_before, newer.not_before)

    def absorb_rerun(self, ran: Self) -> None:
        """``ran`` must run again while this one waits under its key: this one does it."""


J = TypeVar("J", bound=Job)


class Pacing(Protocol):
    async def pace(self, lane: Lane[Any]) -> None: ...


@dataclass(eq=False)
class Lane(Generic[J]):
    chat_id: int
    pacer: ChatPacer
    pacing: Pacing
    jobs: dict[Hashable, J] = field(default_factory=dict)
    task: asyncio.Task[None] | None = None
    wake: asyncio.Event = field(default_factory=asyncio.Event)
    sent_at: float | None = None
    """Wall-clock time the lane's latest request left (after pacing): what it carried
    is on screen from about then."""
    urgent: bool = False
    """The job running now is ``Job.urgent``."""

    async def pace(self) -> None:
        """Wait for this chat's budget and the bot's; a job calls this just before a call."""
        await self.pacing.pace(self)


@dataclass(frozen=True)
class LaneSettings:
    group_interval: float
    group_max_per_minute: int
    private_interval: float
    in_flight: int
    """Jobs per kind of chat (group or private) that may run at once: the others wait
    *before* reading what to send, so a burst does not read everything at once."""
    settle_delay: float
    """How long a timed-out request may still land (the read timeout)."""
    idle_forget: float
    """Seconds after which an idle chat's lane is dropped."""

    def pacer(self, chat_id: int, clock: Callable[[], float]) -> ChatPacer:
        group = chat_id < 0
        return ChatPacer(
            self.group_interval if group else self.private_interval,
            window_max=self.group_max_per_minute if group else 1_000_000,
            window=60.0,
            clock=clock,
        )


async def _refusal_ignored(job: Any, err: TelegramError) -> None:
    """Lanes whose owner has nothing to end when a group refuses messages."""


@dataclass(frozen=True)
class LaneEvents(Generic[J]):
    """What the owner of the jobs hears from the lanes."""

    finished: Callable[[J], Awaitable[None]]
    """A job is over (done, or given up); its account no longer counts it."""
    migrated: Callable[[int, int], Awaitable[None]]
    """(old, new): the group became a supergroup; its jobs move there after this."""
    forbidden: Callable[[int, Forbidden], Awaitable[None]]
    """A private chat refuses messages (the person blocked the bot)."""
    refused: Callable[[J, TelegramError], Awaitable[None]] = _refusal_ignored
    """A group, or the forum topic the job wrote to, refuses messages for good (closed,
    deleted, the bot may not post): the job is over, not retried; so is every job of its
    account still waiting in that chat (``delivery.refused_by_group``)."""


class ChatLanes(Generic[J]):
    def __init__(
        self,
        settings: LaneSettings,
        limiter: SendLimiter,
        counters: QueueCounters,
        events: LaneEvents[J],
        *,
        clock: Callable[[], float] = time.monotonic,
        wall_clock: Callable[[], float] = time.time,
    ) -> None:
        self.settings = settings
        self.limiter = limiter
        self.counters = counters
        self.events = events
        self.clock = clock
        self.wall_clock = wall_clock
        self.lanes: dict[int, Lane[J]] = {}
        self._in_flight = {
            True: asyncio.Semaphore(settings.in_flight),
            False: asyncio.Semaphore(settings.in_flight),
        }
        """Per kind (group or private chat): groups wait longest for the global budget and
        must not hold back the hands' turns."""
        self._accounts: dict[Hashable, int] = {}
        self._last_sweep = clock()
        self._idle = asyncio.Event()
        self._idle.set()
        self._active = 0
        self.closed = False

    # --- queueing ---------------------------------------------------------------------------

    def enqueue(self, chat_id: int, key: Hashable, job: J, *, replace: bool = False) -> None:
        """Queue ``job`` under ``key``, merging it into a pending one (``replace``: taking
        that one's place instead, as a newer reply of one kind does)."""
        if self.closed:
            return
        self._sweep()
        lane = self.lanes.get(chat_id)
        if lane is None:
            lane = self.lanes[chat_id] = Lane(
                chat_id, self.settings.pacer(chat_id, self.clock), self
            )
        existing = lane.jobs.get(key)
        if existing is not None and not replace:
            existing.absorb(job)
        else:
            lane.jobs[key] = job
            if job.account is not None:
                self._accounts[job.account] = self._accounts.get(job.account, 0) + 1
            elif job.priority != TABLE:
                self._bound(lane, job.priority)
        lane.wake.set()
        if lane.task is None or lane.task.done():
            self._active += 1
            lane.task = asyncio.create_task(self._drain(lane), name=f"outbox:{chat_id}")

    def working_for(self, account: Hashable) -> bool:
        """Whether the lanes still count jobs of ``account`` (queued or running)."""
        return account in self._accounts

    def open_accounts(self) -> set[Hashable]:
        return {account for account, count in self._accounts.items() if count > 0}

    def _bound(self, lane: Lane[J], priority: int) -> None:
        limit = MAX_PENDING_REPLIES if priority == REPLY else MAX_PENDING_ANNOUNCEMENTS
        same = [k for k, j in lane.jobs.items() if j.priority == priority and j.account is None]
        for key in same[: max(0, len(same) - limit)]:
            del lane.jobs[key]
            self.counters.dropped_replies += 1

    def _sweep(self) -> None:
        """Forget lanes idle for a while: their pacing windows are long over."""
        now = self.clock()
        if now - self._last_sweep < self.settings.idle_forget / 4:
            return
        self._last_sweep = now
        for chat_id, lane in list(self.lanes.items()):
            busy = lane.jobs or (lane.task is not None and not lane.task.done())
            if not busy and lane.pacer.idle_for() >= self.settings.idle_forget:
                del self.lanes[chat_id]

    def _requeue(self, lane: Lane[J], key: Hashable, job: J) -> None:
        job.requeued = True
        pending = lane.jobs.get(key)
        if pending is not None:
            pending.absorb_rerun(job)
            self._fold(job)  # the pending job does this one's work too
        else:
            lane.jobs = {key: job, **lane.jobs}

    def _fold(self, job: J) -> None:
        if job.account is not None:
            self._accounts[job.account] = self._accounts.get(job.account, 1) - 1

    def _over(self, job: J) -> None:
        account = job.account
        if account is None:
            return
        left = self._accounts.get(account, 0) - 1
        if left > 0:
            self._accounts[account] = left
        else:
            self._accounts.pop(account, None)

    # --- draining ---------------------------------------------------------------------------

    async def _drain(self, lane: Lane[J]) -> None:
        try:
            while lane.jobs and not self.closed:
                picked = await self._next_ready(lane)
                if picked is None:
                    continue
                key, job = picked
                if await self._run(lane, key, job):
                    return  # the chat moved: its jobs went with it
                if not job.requeued:
                    self._over(job)
                    await self.events.finished(job)
        finally:
            self._active -= 1
            self._idle.set()

    async def _next_ready(self, lane: Lane[J]) -> tuple[Hashable, J] | None:
        """The most urgent job whose time has come, once the chat may be sent to; None
        after a wait (for a calm job's time, news or pacing): look again then."""
        now = self.clock()
        ready = min(
            ((k, j) for k, j in lane.jobs.items() if j.not_before <= now),
            key=lambda item: (item[1].priority, not item[1].urgent),
            default=None,
        )
        if ready is None:
            # Only calm jobs are left: wait for their time or for news.
            wait = min(j.not_before for j in lane.jobs.values()) - now
            lane.wake.clear()
            with contextlib.suppress(TimeoutError):
                await asyncio.wait_for(lane.wake.wait(), wait)
            return None
        delay = lane.pacer.delay()
        if delay > 0:
            await asyncio.sleep(delay)
            return None
        del lane.jobs[ready[0]]
        ready[1].requeued = False
        return ready

    async def _run(self, lane: Lane[J], key: Hashable, job: J) -> bool:
        """Run one job and requeue it if it must run again; True if the chat moved."""
        try:
            async with self._in_flight[lane.chat_id < 0 and not job.urgent]:
                lane.urgent = job.urgent
                outcome = await job.run(lane)
            if isinstance(outcome, BackOff):
                lane.pacer.back_off(outcome.seconds)
                self._requeue(lane, key, job)
            elif isinstance(outcome, RunAgainAt):
                job.not_before = outcome.when
                self._requeue(lane, key, job)
        except ChatBusy as busy:  # another worker sent here: read again after it
            self.counters.chat_busy += 1
            lane.pacer.back_off(busy.seconds)
            self._requeue(lane, key, job)
        except RetryAfter as err:
            seconds = retry_seconds(err)
            self.counters.retry_after += 1
            log.warning("429 in chat %s: retrying in %ss", lane.chat_id, seconds)
            lane.pacer.back_off(seconds)
            await self.limiter.back_off(lane.chat_id, seconds)
            self._requeue(lane, key, job)
        except ChatMigrated as err:
            self._requeue(lane, key, job)
            await self._migrated(lane, err.new_chat_id)
            return True
        except TelegramError as err:
            if refused_by_group(lane.chat_id, err):
                await self._refused(lane, job, err)
            elif isinstance(err, Forbidden):
                await self.events.forbidden(lane.chat_id, err)
            else:
                self._failed(lane, key, job, err)
        except RedisError as err:
            self._failed(lane, key, job, err)
        except Exception:
            log.exception("outbox job failed in chat %s", lane.chat_id)
        return False

    def _failed(self, lane: Lane[J], key: Hashable, job: J, err: Exception) -> None:
        job.attempts += 1
        log.warning("output to chat %s failed (attempt %s): %s", lane.chat_id, job.attempts, err)
        if isinstance(err, TelegramError) and possibly_applied(err):
            self.counters.unconfirmed += 1
            if not job.repeatable:
                return  # the message may be showing already: never send it twice
            # A late edit may still land: ours goes after it, with the latest content.
            lane.pacer.back_off(self.settings.settle_delay)
            self._requeue(lane, key, job)
            return
        # A 5xx or a network error means Telegram did nothing: a one-off message (a
        # result, an announcement) is as safe to send again as a refresh, and dropping it
        # would lose it for good (nothing stays owed). Only refusals give up.
        if transient(err) or job.attempts < MAX_ATTEMPTS:
            self.counters.retried += 1
            lane.pacer.back_off(backoff_seconds(job.attempts))
            self._requeue(lane, key, job)

    async def _refused(self, lane: Lane[J], job: J, err: TelegramError) -> None:
        """The group or topic refuses messages: the jobs of the same account waiting here
        end with this one (they would only be refused in turn), then the owner hears."""
        log.info("chat %s refuses messages for %s: %s", lane.chat_id, job.account, err)
        if job.account is not None:
            for key, pending in list(lane.jobs.items()):
                if pending.account == job.account:
                    del lane.jobs[key]
                    self._over(pending)
                    await self.events.finished(pending)
        await self.events.refused(job, err)

    async def _migrated(self, lane: Lane[J], new_chat_id: int) -> None:
        """The group became a supergroup: send there from now on."""
        log.info("chat %s migrated to %s", lane.chat_id, new_chat_id)
        await self.events.migrated(lane.chat_id, new_chat_id)
        jobs, lane.jobs = lane.jobs, {}
        for key, job in jobs.items():
            self._fold(job)  # counted again when enqueued below
            self.enqueue(new_chat_id, key, job)

    async def pace(self, lane: Lane[Any]) -> None:
        delay = lane.pacer.delay()
        if delay > 0:
            await asyncio.sleep(delay)
        # Group tables yield to hands when the bot is near its global limit: players need
        # their buttons; a table edit that waits merges more moves.
        low = lane.chat_id < 0 and not lane.urgent
        await self.limiter.acquire(low_priority=low, chat_id=lane.chat_id)
        lane.pacer.record()
        lane.sent_at = self.wall_clock()

    # --- the lanes as a whole ---------------------------------------------------------------

    @contextlib.contextmanager
    def coming(self) -> Iterator[None]:
        """Jobs about to be queued: the lanes do not count as idle meanwhile."""
        self._active += 1
        try:
            yield
        finally:
            self._active -= 1
            self._idle.set()

    async def idle(self) -> None:
        """Wait until every lane is empty."""
        while self._active or any(lane.jobs for lane in self.lanes.values()):
            self._idle.clear()
            await self._idle.wait()

    async def close(self) -> None:
        """Stop: every lane's task ends; what it held is dropped."""
        self.closed = True
        for lane in self.lanes.values():
            if lane.task is not None:
                lane.task.cancel()
                with contextlib.suppress(asyncio.CancelledError, Exception):
                    await lane.task
