"""All Bot API output (except callback answers) goes through here.

One lane per chat serialises that chat's sends and edits and paces them (20 a minute
in a group, about one a second in a private chat, 30 a second overall). A lane
holds *what* to refresh, not rendered text: a refresh job reads the latest record
from Redis when its turn comes, so many quick moves coalesce into one edit, and a
429 only delays the edit — the move itself is already stored. Unchanged content is
never re-sent, and "message is not modified" counts as success.
"""

from __future__ import annotations

import asyncio
import contextlib
import datetime as dtm
import itertools
import logging
import time
import warnings
from collections.abc import Awaitable, Callable, Hashable, Iterable
from dataclasses import dataclass, field

from telegram import Bot, Message
from telegram.error import BadRequest, Forbidden, RetryAfter, TelegramError

from bot.hand_modes import HandMode as HandMode  # defined by the service's side now
from bot.pacing import ChatPacer, GlobalLimiter
from bot.records import Table
from bot.render import Rendered
from bot.storage import Storage, Write

log = logging.getLogger(__name__)

GroupRenderer = Callable[[Table], Awaitable[Rendered]]
HandRenderer = Callable[[Table, int], Awaitable[Rendered]]
"""Renders a seat's hand, in whatever mode the service keeps for it."""
MAX_ATTEMPTS = 5


def retry_seconds(err: RetryAfter) -> float:
    with warnings.catch_warnings():
        # PTB warns that the type changes to timedelta in a later version; both work here.
        warnings.simplefilter("ignore")
        value = err.retry_after
    return value.total_seconds() if isinstance(value, dtm.timedelta) else float(value)


@dataclass
class Job:
    run: Callable[[Lane, Job], Awaitable[None]]
    notify: bool = False
    attempts: int = 0
    not_before: float = 0.0
    """A calm refresh waits until then, so a quick next change merges into it."""


@dataclass
class Lane:
    chat_id: int
    pacer: ChatPacer
    jobs: dict[Hashable, Job] = field(default_factory=dict)
    task: asyncio.Task[None] | None = None
    wake: asyncio.Event = field(default_factory=asyncio.Event)


@dataclass
class OutboxStats:
    sent: int = 0
    edited: int = 0
    deleted: int = 0
    skipped: int = 0
    retry_after: int = 0
    not_modified: int = 0


class Outbox:
    def __init__(
        self,
        bot: Bot,
        storage: Storage,
        *,
        render_group: GroupRenderer,
        render_hand: HandRenderer,
        group_interval: float,
        group_max_per_minute: int,
        calm_delay: float,
        private_interval: float,
        global_rate: float,
        clock: Callable[[], float] = time.monotonic,
    ) -> None:
        self.bot = bot
        self.storage = storage
        self.render_group = render_group
        self.render_hand = render_hand
        self.group_interval = group_interval
        self.calm_delay = calm_delay
        self.group_max_per_minute = group_max_per_minute
        self.private_interval = private_interval
        self.clock = clock
        self.limiter = GlobalLimiter(global_rate, clock)
        self.lanes: dict[int, Lane] = {}
        self.digests: dict[tuple[int, int], str] = {}
        self.stats = OutboxStats()
        self._ids = itertools.count()
        self._idle = asyncio.Event()
        self._idle.set()
        self._active = 0
        self.closed = False

    # --- what callers ask for -------------------------------------------------------------

    def refresh(self, table: Table, notify: Iterable[int] = (), calm: Iterable[int] = ()) -> None:
        """Show the latest state of ``table``: its group message and every hand."""
        self._enqueue(table.chat_id, ("group",), Job(self._group_job(table.chat_id)))
        wake, later = set(notify), set(calm)
        if table.phase in ("playing", "finished"):
            for seat in table.seats:
                uid = seat.user_id
                if uid is not None and (table.phase == "playing" or seat.hand_message_id):
                    self.refresh_hand(table.chat_id, uid, uid in wake, calm=uid in later)

    def refresh_hand(
        self, chat_id: int, user_id: int, notify: bool = False, *, calm: bool = False
    ) -> None:
        not_before = self.clock() + self.calm_delay if calm else 0.0
        job = Job(self._hand_job(chat_id, user_id), notify, not_before=not_before)
        self._enqueue(user_id, ("hand", chat_id), job)

    def say(
        self,
        chat_id: int,
        content: Rendered,
        *,
        reply_to: int | None = None,
        on_sent: Callable[[Message], Awaitable[None]] | None = None,
    ) -> None:
        """Send a new message (paced like everything else in that chat)."""

        async def run(lane: Lane, job: Job) -> None:
            await self._pace(lane)
            message = await self.bot.send_message(
                chat_id,
                content.text,
                parse_mode="HTML",
                reply_markup=content.markup,
                reply_to_message_id=reply_to,
                allow_sending_without_reply=True,
            )
            self.stats.sent += 1
            if on_sent is not None:
                await on_sent(message)

        self._enqueue(chat_id, ("say", next(self._ids)), Job(run))

    async def idle(self) -> None:
        """Wait until every lane is empty (tests, shutdown)."""
        while self._active or any(lane.jobs for lane in self.lanes.values()):
            self._idle.clear()
            await self._idle.wait()

    async def close(self) -> None:
        self.closed = True
        for lane in self.lanes.values():
            if lane.task is not None:
                lane.task.cancel()
                with contextlib.suppress(asyncio.CancelledError, Exception):
                    await lane.task

    # --- lanes ------------------------------------------------------------------------------

    def _enqueue(self, chat_id: int, key: Hashable, job: Job) -> None:
        if self.closed:
            return
        lane = self.lanes.get(chat_id)
        if lane is None:
            group = chat_id < 0
            pacer = ChatPacer(
                self.group_interval if group else self.private_interval,
                window_max=self.group_max_per_minute if group else 1_000_000,
                window=60.0,
                clock=self.clock,
            )
            lane = self.lanes[chat_id] = Lane(chat_id, pacer)
        existing = lane.jobs.get(key)
        if existing is not None:
            existing.notify = existing.notify or job.notify
            existing.not_before = min(existing.not_before, job.not_before)
        else:
            lane.jobs[key] = job
        lane.wake.set()
        if lane.task is None or lane.task.done():
            self._active += 1
            lane.task = asyncio.create_task(self._drain(lane), name=f"outbox:{chat_id}")

    async def _drain(self, lane: Lane) -> None:
        try:
            while lane.jobs and not self.closed:
                now = self.clock()
                ready = next(((k, j) for k, j in lane.jobs.items() if j.not_before <= now), None)
                if ready is None:
                    # Only calm refreshes are left: wait for their time or for news.
                    wait = min(j.not_before for j in lane.jobs.values()) - now
                    lane.wake.clear()
                    with contextlib.suppress(TimeoutError):
                        await asyncio.wait_for(lane.wake.wait(), wait)
                    continue
                delay = lane.pacer.delay()
                if delay > 0:
                    await asyncio.sleep(delay)
                    continue
                key, job = ready
                del lane.jobs[key]
                try:
                    await job.run(lane, job)
                except RetryAfter as err:
                    seconds = retry_seconds(err)
                    self.stats.retry_after += 1
                    log.warning("429 in chat %s: retrying in %ss", lane.chat_id, seconds)
                    lane.pacer.back_off(seconds)
                    self._requeue(lane, key, job)
                except Forbidden as err:
                    await self._forbidden(lane.chat_id, err)
                except TelegramError as err:
                    job.attempts += 1
                    log.warning("Bot API error in chat %s: %s", lane.chat_id, err)
                    if job.attempts < MAX_ATTEMPTS:
                        lane.pacer.back_off(0.5 * job.attempts)
                        self._requeue(lane, key, job)
                except Exception:
                    log.exception("outbox job failed in chat %s", lane.chat_id)
        finally:
            self._active -= 1
            self._idle.set()

    @staticmethod
    def _requeue(lane: Lane, key: Hashable, job: Job) -> None:
        if key in lane.jobs:
            lane.jobs[key].notify = lane.jobs[key].notify or job.notify
        else:
            lane.jobs = {key: job, **lane.jobs}

    async def _pace(self, lane: Lane) -> None:
        delay = lane.pacer.delay()
        if delay > 0:
            await asyncio.sleep(delay)
        # Group tables yield to private hands when the bot is near its global limit:
        # players need their buttons; a table edit that waits merges more moves.
        await self.limiter.acquire(low_priority=lane.chat_id < 0)
        lane.pacer.record()

    async def _forbidden(self, chat_id: int, err: Forbidden) -> None:
        log.info("chat %s refuses messages: %s", chat_id, err)
        if chat_id > 0:
            record = await self.storage.user(chat_id)
            record.dm_open = False
            await self.storage.save_user(chat_id, record)

    # --- refreshing one message -----------------------------------------------------------

    async def _edit_or_send(
        self, lane: Lane, content: Rendered, message_id: int | None, *, force_new: bool
    ) -> int | None:
        """Show ``content`` in ``message_id`` (or a new message); returns a new id if sent."""
        chat_id = lane.chat_id
        digest = content.digest()
        if message_id is not None and not force_new:
            if self.digests.get((chat_id, message_id)) == digest:
                self.stats.skipped += 1
                return None
            await self._pace(lane)
            try:
                await self.bot.edit_message_text(
                    content.text,
                    chat_id=chat_id,
                    message_id=message_id,
                    parse_mode="HTML",
                    reply_markup=content.markup,
                )
                self.stats.edited += 1
                self.digests[(chat_id, message_id)] = digest
                return None
            except BadRequest as err:
                text = str(err).lower()
                if "not modified" in text:
                    self.stats.not_modified += 1
                    self.digests[(chat_id, message_id)] = digest
                    return None
                if "not found" not in text and "can't be edited" not in text:
                    raise
        await self._pace(lane)
        message = await self.bot.send_message(
            chat_id, content.text, parse_mode="HTML", reply_markup=content.markup
        )
        self.stats.sent += 1
        self.digests[(chat_id, message.message_id)] = digest
        if message_id is not None:
            self.digests.pop((chat_id, message_id), None)
            try:
                await self.bot.delete_message(chat_id, message_id)
                self.stats.deleted += 1
            except TelegramError as err:
                log.debug("could not delete %s/%s: %s", chat_id, message_id, err)
        return message.message_id

    def _group_job(self, chat_id: int) -> Callable[[Lane, Job], Awaitable[None]]:
        async def run(lane: Lane, job: Job) -> None:
            table = await self.storage.load_table(chat_id)
            if table is None:
                return
            content = await self.render_group(table)
            lobby = table.phase in ("lobby", "cancelled")
            current = table.lobby_message_id if lobby else table.table_message_id
            if table.phase == "cancelled" and current is None:
                return
            new_id = await self._edit_or_send(lane, content, current, force_new=False)
            if new_id is not None:
                await self._store_group_id(chat_id, table.game_id, lobby, new_id)

        return run

    async def _store_group_id(self, chat_id: int, game_id: str, lobby: bool, new_id: int) -> None:
        def change(t: Table | None) -> Write[None]:
            if t is None or t.game_id != game_id:
                return Write(None, None)
            if lobby:
                t.lobby_message_id = new_id
            else:
                t.table_message_id = new_id
            return Write(t, None)

        await self.storage.update_table(chat_id, change)

    def _hand_job(self, chat_id: int, user_id: int) -> Callable[[Lane, Job], Awaitable[None]]:
        async def run(lane: Lane, job: Job) -> None:
            table = await self.storage.load_table(chat_id)
            if table is None or table.state is None:
                return
            seat = next((i for i, s in enumerate(table.seats) if s.user_id == user_id), None)
            if seat is None:
                return
            info = table.seats[seat]
            if table.phase != "playing" and info.hand_message_id is None:
                return
            content = await self.render_hand(table, seat)
            new_id = await self._edit_or_send(
                lane,
                content,
                info.hand_message_id,
                force_new=job.notify and table.phase == "playing",
            )
            if new_id is not None:
                await self._store_hand_id(chat_id, table.game_id, seat, new_id)

        return run

    async def _store_hand_id(self, chat_id: int, game_id: str, seat: int, new_id: int) -> None:
        def change(t: Table | None) -> Write[None]:
            if t is None or t.game_id != game_id or seat >= len(t.seats):
                return Write(None, None)
            t.seats[seat].hand_message_id = new_id
            return Write(t, None)

        await self.storage.update_table(chat_id, change)
