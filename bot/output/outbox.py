"""All Bot API output (except callback answers) goes through here.

One lane per chat serialises that chat's sends and edits and paces them (20 a minute
in a group, about one a second in a private chat, 30 a second overall). A lane
holds *what* to refresh, not rendered text: a refresh job reads the latest record
from Redis when its turn comes, so many quick moves coalesce into one edit, and a
429 only delays the edit — the move itself is already stored. Unchanged content is
never re-sent, and "message is not modified" counts as success.

Failures: refreshes are retried with backoff until they land (they re-read the record,
so a retry shows the latest state, and a finished game's last refresh is the results).
A request that timed out may still have been carried out, so it is never repeated
blindly: a reply is dropped, an edit waits until the late one must have landed, and a
new message whose id we never learned is treated as shown until the next change. In a
group the table and the results go before announcements, and command replies come last,
merged (one pending per kind) and bounded. Idle chats are forgotten.

Durability: what a move owes the screen is stored with the move (``bot.store.storage.Owed``);
the jobs here work it off and clear each mark once done, so a worker that dies leaves the
rest to another worker's sweeper (``deliver``). A new message (a notifying hand, a note,
a first table message) is sent by one worker at a time and marked done right after.
What a message shows is kept in Redis too (``bot.store.storage.Screen``), and one worker at a
time refreshes a given message, from the record as it is then: in a fleet, an edit that
another worker made since is never mistaken for our own last one, and an edit of an older
record never lands after a newer one.
"""

from __future__ import annotations

import asyncio
import contextlib
import contextvars
import datetime as dtm
import itertools
import logging
import time
import warnings
from collections.abc import Awaitable, Callable, Hashable, Iterable, Iterator
from dataclasses import dataclass, field
from typing import Any

from redis.exceptions import RedisError
from telegram import Bot, Message
from telegram.error import BadRequest, ChatMigrated, Forbidden, RetryAfter, TelegramError

from bot.domain.bounded import BoundedDict
from bot.domain.hand_modes import HandMode as HandMode  # defined by the service's side now
from bot.domain.records import ChatGame
from bot.render import Rendered
from bot.store.storage import (
    HAND_TARGET,
    OwedOutput,
    Reowe,
    Screen,
    ScreenBusy,
    Storage,
    Write,
    delete_field,
    hand_target,
)
from bot.transport.delivery import backoff_seconds, possibly_applied, transient
from bot.transport.pacing import ChatBusy, ChatPacer, GlobalLimiter, SendLimiter

log = logging.getLogger(__name__)

GroupRenderer = Callable[[ChatGame], Awaitable[Rendered]]
Refresh = Callable[["Lane", "Job", OwedOutput, ChatGame | None, Screen], Awaitable[None]]
"""A message's refresh, given what it read (``Outbox._refresh_message``)."""
HandRenderer = Callable[[ChatGame, int], Awaitable[Rendered]]
"""Renders a seat's hand, in whatever mode the service keeps for it."""
MigrationHook = Callable[[int, int], Awaitable[None]]
NoteRenderer = Callable[[int, dict[str, Any]], Awaitable[Rendered | None]]
"""Renders an owed note (an announcement, the results) for a group; None: nothing to say."""
MAX_ATTEMPTS = 5
"""For errors that will not pass by themselves (a bad request): then the job is dropped."""

TABLE, ANNOUNCE, REPLY = 0, 1, 2
"""Priorities in a chat's lane: the table (and results) first, command replies last."""
MAX_PENDING_REPLIES = 6
"""Per chat: more pending command replies than this drop the oldest (a flood's tail)."""
MAX_PENDING_ANNOUNCEMENTS = 50
MAX_REMEMBERED = 20_000
"""Digests, modes and unconfirmed sends kept (least recently written forgotten first)."""


class SendBusy(Exception):
    """Another worker is sending this message's replacement right now: look again soon
    (its id will be in the record then, and an edit is all that is left to do)."""


class _MustCall(Exception):
    """A refresh that only looked found a call to make: it paces, claims the message and
    looks again (see ``Outbox._refresh_message``)."""


SEND_BUSY_RETRY = 0.3
SCREEN_BUSY_RETRY = 0.1
"""Another worker is refreshing the message: about one edit's round trip."""
TAPS_FIRST_WAIT = 0.05
"""At most this long a job about to render waits for the taps being answered: a spinner
is what people feel, a message a moment later is not (see ``Outbox.answering``)."""
NOTIFY_LATE = 2.0
"""A turn's notifying hand that leaves more than this long after its move asked for it is
edited in place instead (see ``Outbox._hand_job``)."""
IN_FLIGHT_SECONDS = 2.0
"""Jobs past their chat's pacing that may read, render and wait for the global budget at
once: this many seconds of the global rate, per kind of chat. The others wait *before*
reading, so a burst of moves does not read and render every record at once (the taps
keep the CPU), and what finally goes out is rendered just before it is sent."""


# The Bot API's method names are case-insensitive (its documentation says so). PTB warns
# callers of ``do_api_request`` that name one of its typed methods (``edit_message_text``,
# ``editMessageText``) to use that method instead; here the raw answer is the point (see
# ``Outbox._edit_text``), so these calls name methods in a spelling PTB does not define.
RAW_EDIT = "EditMessageText"
RAW_SEND = "SendMessage"


@dataclass
class ReplyScope:
    """The command being answered: its replies merge with a pending reply of that kind."""

    kind: str
    count: int = 0


REPLY_SCOPE: contextvars.ContextVar[ReplyScope | None] = contextvars.ContextVar(
    "durak_reply_scope", default=None
)


def hand_targets(table: ChatGame) -> list[int]:
    """The users whose hand message shows ``table`` (and so follows its changes)."""
    if table.phase not in ("playing", "finished"):
        return []
    return [
        seat.user_id
        for seat in table.seats
        if seat.user_id is not None and (table.phase == "playing" or seat.hand_message_id)
    ]


def _message_params(chat_id: int, content: Rendered) -> dict[str, Any]:
    """A raw send's or edit's text and keyboard (see ``RAW_EDIT``)."""
    params: dict[str, Any] = {"chat_id": chat_id, "text": content.text, "parse_mode": "HTML"}
    if content.markup is not None:
        params["reply_markup"] = content.markup
    return params


def shown_in_group(table: ChatGame) -> set[int | None]:
    return {table.lobby_message_id, table.table_message_id}


def shown_elsewhere(job: Job, owed: OwedOutput) -> bool:
    """A move's refresh whose target is no longer owed: shown since, by any worker."""
    return job.owed_target is not None and owed.rev > 0 and job.owed_target not in owed.targets


def earliest(a: float | None, b: float | None) -> float | None:
    return b if a is None else a if b is None else min(a, b)


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
    priority: int = TABLE
    refresh: bool = True
    """A refresh re-reads the record, so it may run again; a one-off message may not."""
    owed_chat: int | None = None
    """The group whose owed output (``bot.store.storage.output_key``) this job works off."""
    settles: tuple[str, ...] = ()
    """The owed fields this job fulfils once it is done (or given up)."""
    covers: int | None = None
    """The revision of owed output the job read before rendering (None: any)."""
    owed_target: str | None = None
    """Set when the job only works off that owed target (a move's refresh): if the target
    is no longer owed when it runs, another worker has shown that revision or a later
    one, and the job has nothing to do (in a fleet a table's moves land on different
    workers, each queueing the same refreshes)."""
    requeued: bool = False
    queued_at: float | None = None
    """When the oldest request merged into this job was made (hand jobs)."""
    looked_at: float | None = None
    """When this run of the job first read the record (``Outbox._refresh_message``)."""
    rendered: tuple[ChatGame, Rendered] | None = None
    """What this run rendered while it looked, and from which record."""

    async def render(self, table: ChatGame, render: Callable[[], Awaitable[Rendered]]) -> Rendered:
        """``render()``, or what it gave for this same record when the job looked: read
        again under the claim, an unchanged record is the very same parsed copy (the
        storage shares one per record), so its rendering need not be repeated."""
        if self.rendered is not None and self.rendered[0] is table:
            return self.rendered[1]
        content = await render()
        self.rendered = (table, content)
        return content


@dataclass
class Lane:
    chat_id: int
    pacer: ChatPacer
    jobs: dict[Hashable, Job] = field(default_factory=dict)
    task: asyncio.Task[None] | None = None
    wake: asyncio.Event = field(default_factory=asyncio.Event)
    recheck: float | None = None
    """Set by a job whose edit may be overtaken by a late one: run it again then."""
    sent_at: float | None = None
    """Wall-clock time the lane's latest request left (after pacing): what it carried
    is on screen from about then."""


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
    """Turn notifications that went out late, as edits instead (``NOTIFY_LATE``)."""
    looked: int = 0
    """Message refreshes that read the record without the message's claim."""
    claimed: int = 0
    """... and those that then claimed it, to call Telegram."""
    claim_busy: int = 0
    """Claims another worker held (tried again soon)."""
    chat_busy: int = 0
    """Calls another worker's send to the same chat made wait (fleet pacing)."""


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
        wall_clock: Callable[[], float] = time.time,
        settle_delay: float = 30.0,
        idle_forget: float = 120.0,
    ) -> None:
        """``settle_delay``: how long a timed-out request may still land (the read timeout);
        ``idle_forget``: seconds after which an idle chat's lane is dropped."""
        self.bot = bot
        self.storage = storage
        self.render_group = render_group
        self.render_hand = render_hand
        self.group_interval = group_interval
        self.calm_delay = calm_delay
        self.group_max_per_minute = group_max_per_minute
        self.private_interval = private_interval
        self.clock = clock
        self.limiter: SendLimiter = GlobalLimiter(global_rate, clock)
        in_flight = max(4, round(IN_FLIGHT_SECONDS * global_rate))
        self._in_flight = {True: asyncio.Semaphore(in_flight), False: asyncio.Semaphore(in_flight)}
        """Per kind (group or private chat): groups wait longest for the global budget and
        must not hold back the hands' turns."""
        self._answering = 0
        self._answered = asyncio.Event()
        self._answered.set()
        self.wall_clock = wall_clock
        self.settle_delay = settle_delay
        self.reconcile_after = 2 * settle_delay
        """A hand send that timed out and was not used since may be sent again after this,
        when the game waits for that player (the turn gate asks)."""
        self.idle_forget = idle_forget
        self.lanes: dict[int, Lane] = {}
        self.unconfirmed: BoundedDict[tuple[int, Hashable], tuple[str, float]] = BoundedDict(
            MAX_REMEMBERED
        )
        """(chat, slot) -> digest and time of a new message whose send timed out."""
        self.suspect: BoundedDict[tuple[int, int], float] = BoundedDict(MAX_REMEMBERED)
        """(chat, message) -> until when an edit that timed out may still land."""
        self.shown: BoundedDict[tuple[int, int], tuple[str, int]] = BoundedDict(MAX_REMEMBERED)
        """(group, user) -> the game and step whose hand was last marked as on screen."""
        self.live_tables: BoundedDict[int, tuple[str, int]] = BoundedDict(MAX_REMEMBERED)
        """Group -> (game id, message id) of a lobby or game this process shows."""
        self.on_migrated: MigrationHook | None = None
        self.owing: dict[int, int] = {}
        """Group -> jobs of this process still working off its owed output."""
        self.stats = OutboxStats()
        self._last_sweep = clock()
        self._ids = itertools.count()
        self._idle = asyncio.Event()
        self._idle.set()
        self._active = 0
        self.closed = False

    # --- what callers ask for -------------------------------------------------------------

    def refresh(
        self,
        table: ChatGame,
        notify: Iterable[int] = (),
        calm: Iterable[int] = (),
        skip: Iterable[int] = (),
        *,
        owed: bool = False,
    ) -> None:
        """Show the latest state of ``table``: its group message and every hand (but
        those of ``skip``: known to show what they would show). ``owed``: only while the
        stored owed output still asks for it (see ``Job.owed_target``)."""
        self._refresh_group(table.chat_id, owed=owed)
        wake, later, same = set(notify), set(calm), set(skip)
        for uid in hand_targets(table):
            if uid not in same:
                self.refresh_hand(table.chat_id, uid, uid in wake, calm=uid in later, owed=owed)

    async def shows_hand(
        self, group_id: int, user_id: int, message_id: int, content: Rendered
    ) -> bool:
        """Whether the user's hand message is known to show ``content`` (and no worker is
        changing it right now)."""
        if (user_id, message_id) in self.suspect:
            return False
        screen = await self.storage.screen(group_id, hand_target(user_id))
        return screen is not None and screen.shows(message_id, content.digest())

    def refresh_hand(
        self,
        chat_id: int,
        user_id: int,
        notify: bool = False,
        *,
        calm: bool = False,
        owed: bool = False,
    ) -> None:
        not_before = self.clock() + self.calm_delay if calm else 0.0
        job = Job(
            self._hand_job(chat_id, user_id),
            notify,
            not_before=not_before,
            queued_at=self.clock(),
        )
        job.owed_chat, job.settles = chat_id, (f"owe:hand:{user_id}", f"new:{user_id}")
        job.owed_target = hand_target(user_id) if owed else None
        self._enqueue(user_id, ("hand", chat_id), job)

    def deliver(self, chat_id: int, owed: OwedOutput, render_note: NoteRenderer) -> None:
        """Work off output another worker owed and did not finish (it died): every target
        is rendered afresh from the stored record, every note still unsent is sent."""
        for target in owed.targets:
            if target == "group":
                self._refresh_group(chat_id, owed=True)
            elif target.startswith(HAND_TARGET):
                self.refresh_hand(chat_id, int(target.removeprefix(HAND_TARGET)), owed=True)
        for user in owed.notify:
            if hand_target(user) not in owed.targets:
                self.refresh_hand(chat_id, user)
        for note_id in owed.notes:
            self.send_note(chat_id, note_id, render_note)
        for where, message_id in owed.deletes:
            self._retire_owed(chat_id, where, message_id)

    def _retire_owed(self, owed_chat: int, chat_id: int, message_id: int) -> None:
        async def run(lane: Lane, job: Job) -> None:
            await self.retire(chat_id, message_id)

        job = Job(run, refresh=False, owed_chat=owed_chat)
        job.settles = (delete_field(chat_id, message_id),)
        self._enqueue(chat_id, ("retire", message_id), job)

    def send_note(self, chat_id: int, note_id: str, render_note: NoteRenderer) -> None:
        """Send an owed note once: it is cleared in Redis right after Telegram took it."""

        async def run(lane: Lane, job: Job) -> None:
            note = await self.storage.owed_note(chat_id, note_id)
            if note is None:
                return  # sent already (by this worker or another)
            content = await render_note(chat_id, note)
            if content is None:
                return
            claim = f"note:{note_id}"
            if not await self.storage.claim_send(chat_id, claim):
                raise SendBusy(chat_id, claim)  # another worker is sending it right now
            try:
                if await self.storage.owed_note(chat_id, note_id) is None:
                    return  # it was sent between our first look and the claim
                await self._pace(lane)
                await self.bot.send_message(
                    lane.chat_id, content.text, parse_mode="HTML", reply_markup=content.markup
                )
                self.stats.sent += 1
                # Cleared before the claim ends, so nobody can see it unsent and unclaimed.
                await self.storage.settle_output(chat_id, {f"note:{note_id}": None})
            finally:
                with contextlib.suppress(RedisError):
                    await self.storage.release_send(chat_id, claim)

        job = Job(run, priority=ANNOUNCE, refresh=False, owed_chat=chat_id)
        job.settles = (f"note:{note_id}",)
        self._enqueue(chat_id, ("note", note_id), job)

    def _refresh_group(self, chat_id: int, *, owed: bool = False) -> None:
        job = Job(self._group_job(chat_id), owed_chat=chat_id, settles=("owe:group",))
        job.owed_target = "group" if owed else None
        self._enqueue(chat_id, ("group",), job)

    def owing_chats(self) -> set[int]:
        """Groups whose owed output this process is still working off."""
        return {chat for chat, count in self.owing.items() if count > 0}

    def say(
        self,
        chat_id: int,
        content: Rendered,
        *,
        reply_to: int | None = None,
        on_sent: Callable[[Message], Awaitable[None]] | None = None,
        kind: str | None = None,
    ) -> None:
        """Send a new message (paced like everything else in that chat).

        A command's reply (``kind``, or the command being handled) replaces a pending
        reply of the same kind in that chat and waits behind the game's messages."""

        async def run(lane: Lane, job: Job) -> None:
            await self._pace(lane)
            message = await self.bot.send_message(
                lane.chat_id,
                content.text,
                parse_mode="HTML",
                reply_markup=content.markup,
                reply_to_message_id=reply_to,
                allow_sending_without_reply=True,
            )
            self.stats.sent += 1
            if on_sent is not None:
                await on_sent(message)

        scope = REPLY_SCOPE.get()
        key: Hashable
        if kind is None and scope is not None:
            # One command may answer with several messages (the rules): merge each part.
            kind = f"{scope.kind}#{scope.count}"
            scope.count += 1
        if kind is not None:
            key, priority = ("reply", kind), REPLY
        else:
            key, priority = ("say", next(self._ids)), ANNOUNCE
        self._enqueue(chat_id, key, Job(run, priority=priority, refresh=False), replace=True)

    @contextlib.contextmanager
    def coming(self) -> Iterator[None]:
        """Output about to be queued (a stored move, shown after its tap's answer): the
        outbox does not count as idle meanwhile."""
        self._active += 1
        try:
            yield
        finally:
            self._active -= 1
            self._idle.set()

    @contextlib.contextmanager
    def answering(self) -> Iterator[None]:
        """A tap is being answered. Jobs about to render wait until no tap is (at most
        ``TAPS_FIRST_WAIT``): each of the tap's Redis round trips otherwise queues behind
        every job whose reply came in meanwhile, a millisecond or two of rendering each."""
        self._answering += 1
        self._answered.clear()
        try:
            yield
        finally:
            self._answering -= 1
            if not self._answering:
                self._answered.set()

    async def _taps_first(self) -> None:
        if self._answering:
            with contextlib.suppress(TimeoutError):
                await asyncio.wait_for(self._answered.wait(), TAPS_FIRST_WAIT)

    async def idle(self) -> None:
        """Wait until every lane is empty (tests, shutdown)."""
        while self._active or any(lane.jobs for lane in self.lanes.values()):
            self._idle.clear()
            await self._idle.wait()

    async def close(self) -> None:
        """Stop sending; what is still owed is handed back, so another worker sends it at
        once (it is all in Redis: nothing is lost with this process's queues)."""
        self.closed = True
        for lane in self.lanes.values():
            if lane.task is not None:
                lane.task.cancel()
                with contextlib.suppress(asyncio.CancelledError, Exception):
                    await lane.task
        with contextlib.suppress(RedisError):
            await self.storage.hand_back_output()

    # --- lanes ------------------------------------------------------------------------------

    def _enqueue(self, chat_id: int, key: Hashable, job: Job, *, replace: bool = False) -> None:
        if self.closed:
            return
        self._sweep()
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
        if existing is not None and not replace:
            existing.notify = existing.notify or job.notify
            existing.not_before = min(existing.not_before, job.not_before)
            existing.queued_at = earliest(existing.queued_at, job.queued_at)
            if job.owed_target is None:
                existing.owed_target = None  # one of them must run regardless
        else:
            lane.jobs[key] = job  # a newer reply of one kind takes the pending one's place
            if job.owed_chat is not None:
                self.owing[job.owed_chat] = self.owing.get(job.owed_chat, 0) + 1
            elif job.priority != TABLE:
                self._bound(lane, job.priority)
        lane.wake.set()
        if lane.task is None or lane.task.done():
            self._active += 1
            lane.task = asyncio.create_task(self._drain(lane), name=f"outbox:{chat_id}")

    def _bound(self, lane: Lane, priority: int) -> None:
        limit = MAX_PENDING_REPLIES if priority == REPLY else MAX_PENDING_ANNOUNCEMENTS
        same = [k for k, j in lane.jobs.items() if j.priority == priority and j.owed_chat is None]
        for key in same[: max(0, len(same) - limit)]:
            del lane.jobs[key]
            self.stats.dropped_replies += 1

    def _sweep(self) -> None:
        """Forget lanes idle for a while: their pacing windows are long over."""
        now = self.clock()
        if now - self._last_sweep < self.idle_forget / 4:
            return
        self._last_sweep = now
        for chat_id, lane in list(self.lanes.items()):
            busy = lane.jobs or (lane.task is not None and not lane.task.done())
            if not busy and lane.pacer.idle_for() >= self.idle_forget:
                del self.lanes[chat_id]

    async def _drain(self, lane: Lane) -> None:
        try:
            while lane.jobs and not self.closed:
                now = self.clock()
                ready = min(
                    ((k, j) for k, j in lane.jobs.items() if j.not_before <= now),
                    key=lambda item: item[1].priority,
                    default=None,
                )
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
                job.requeued = False
                try:
                    async with self._in_flight[lane.chat_id < 0]:
                        await job.run(lane, job)
                    if lane.recheck is not None:
                        job.not_before, lane.recheck = lane.recheck, None
                        self._requeue(lane, key, job)
                except ChatBusy as busy:  # another worker sent here: read again after it
                    self.stats.chat_busy += 1
                    lane.pacer.back_off(busy.seconds)
                    self._requeue(lane, key, job)
                except RetryAfter as err:
                    seconds = retry_seconds(err)
                    self.stats.retry_after += 1
                    log.warning("429 in chat %s: retrying in %ss", lane.chat_id, seconds)
                    lane.pacer.back_off(seconds)
                    await self.limiter.back_off(lane.chat_id, seconds)
                    self._requeue(lane, key, job)
                except SendBusy:
                    lane.pacer.back_off(SEND_BUSY_RETRY)
                    self._requeue(lane, key, job)
                except ScreenBusy:
                    self.stats.claim_busy += 1
                    lane.pacer.back_off(SCREEN_BUSY_RETRY)
                    self._requeue(lane, key, job)
                except ChatMigrated as err:
                    self._requeue(lane, key, job)
                    await self._migrated(lane, err.new_chat_id)
                    return
                except Forbidden as err:
                    await self._forbidden(lane.chat_id, err)
                except (TelegramError, RedisError) as err:
                    self._failed(lane, key, job, err)
                except Exception:
                    log.exception("outbox job failed in chat %s", lane.chat_id)
                if not job.requeued:
                    await self._settle(job)
        finally:
            self._active -= 1
            self._idle.set()

    async def _settle(self, job: Job) -> None:
        """A job is over (done, or given up): its owed fields are cleared in Redis right
        away. For a new message this is the one step between Telegram's answer and the
        mark; a worker that dies exactly there leaves the message to be sent again."""
        chat = job.owed_chat
        if chat is None:
            return
        left = self.owing.get(chat, 0) - 1
        if left > 0:
            self.owing[chat] = left
        else:
            self.owing.pop(chat, None)
        # Notes and deletes are done whatever the revision; a refresh only up to the one it
        # read (none read: it failed before rendering, so it settles nothing of that kind).
        fields: dict[str, int | None] = {
            name: None if name.startswith(("note:", "del:")) else job.covers
            for name in job.settles
            if job.covers is not None or name.startswith(("note:", "del:"))
        }
        try:
            done = await self.storage.settle_output(chat, fields)
            if done and chat not in self.owing:
                await self.storage.release_output(chat)
        except RedisError as err:  # what stays owed is swept up after the lease
            log.warning("could not mark output of chat %s as shown: %s", chat, err)

    def _failed(self, lane: Lane, key: Hashable, job: Job, err: Exception) -> None:
        job.attempts += 1
        log.warning("output to chat %s failed (attempt %s): %s", lane.chat_id, job.attempts, err)
        if isinstance(err, TelegramError) and possibly_applied(err):
            self.stats.unconfirmed += 1
            if not job.refresh:
                return  # the reply may be showing already: never send it twice
            # A late edit may still land: ours goes after it, with the latest content.
            lane.pacer.back_off(self.settle_delay)
            self._requeue(lane, key, job)
            return
        if (transient(err) and job.refresh) or job.attempts < MAX_ATTEMPTS:
            self.stats.retried += 1
            lane.pacer.back_off(backoff_seconds(job.attempts))
            self._requeue(lane, key, job)

    async def _migrated(self, lane: Lane, new_chat_id: int) -> None:
        """The group became a supergroup: move the game there and send there from now on."""
        old = lane.chat_id
        log.info("chat %s migrated to %s", old, new_chat_id)
        if self.on_migrated is not None:
            try:
                await self.on_migrated(old, new_chat_id)
            except Exception:
                # The records stay under the old id for now; the output follows anyway,
                # and the migration service message (or the next call) moves them later.
                log.exception("could not move chat %s to %s", old, new_chat_id)
        jobs, lane.jobs = lane.jobs, {}
        self.live_tables.pop(old, None)
        for key, job in jobs.items():
            if job.owed_chat is not None:  # counted again when enqueued below
                self.owing[job.owed_chat] = self.owing.get(job.owed_chat, 1) - 1
            self._enqueue(new_chat_id, key, job)

    def _requeue(self, lane: Lane, key: Hashable, job: Job) -> None:
        job.requeued = True
        if key in lane.jobs:
            lane.jobs[key].notify = lane.jobs[key].notify or job.notify
            lane.jobs[key].queued_at = earliest(lane.jobs[key].queued_at, job.queued_at)
            if job.owed_chat is not None:  # the pending job does this one's work too
                self.owing[job.owed_chat] = self.owing.get(job.owed_chat, 1) - 1
        else:
            lane.jobs = {key: job, **lane.jobs}

    async def _pace(self, lane: Lane) -> None:
        delay = lane.pacer.delay()
        if delay > 0:
            await asyncio.sleep(delay)
        # Group tables yield to private hands when the bot is near its global limit:
        # players need their buttons; a table edit that waits merges more moves.
        await self.limiter.acquire(low_priority=lane.chat_id < 0, chat_id=lane.chat_id)
        lane.pacer.record()
        lane.sent_at = self.wall_clock()

    async def _forbidden(self, chat_id: int, err: Forbidden) -> None:
        log.info("chat %s refuses messages: %s", chat_id, err)
        if chat_id > 0:
            record = await self.storage.user(chat_id)
            record.dm_open = False
            await self.storage.save_user(chat_id, record)

    # --- refreshing one message -----------------------------------------------------------

    async def _edit_text(self, chat_id: int, message_id: int, content: Rendered) -> None:
        """``editMessageText`` with its answer left unread: ``Bot.edit_message_text`` would
        build a whole ``Message`` from it (about 0.7 ms of CPU, a third of a move's
        output) that nothing here looks at."""
        params = _message_params(chat_id, content) | {"message_id": message_id}
        await self.bot.do_api_request(RAW_EDIT, api_kwargs=params)

    async def _send_text(self, chat_id: int, content: Rendered) -> int:
        """``sendMessage``, reading only the new message's id from the answer (as above)."""
        sent = await self.bot.do_api_request(RAW_SEND, api_kwargs=_message_params(chat_id, content))
        return int(sent["message_id"])

    async def _edit_or_send(
        self,
        lane: Lane,
        content: Rendered,
        message_id: int | None,
        screen: Screen,
        *,
        force_new: bool,
        slot: Hashable,
        reconcile: bool = False,
        on_new: Callable[[int, int | None], Awaitable[None]] | None = None,
        still_due: Callable[[], Awaitable[bool]] | None = None,
        owed_chat: int | None = None,
    ) -> int | None:
        """Show ``content`` in ``message_id`` (or a new message); returns a new id if sent.

        ``slot`` names the message's role (the table, one user's hand) for remembering
        a send that timed out: its content counts as shown until the next change, or
        (``reconcile``) until ``reconcile_after`` passed without anyone using it.
        ``on_new`` stores a new message's id (and the replaced one's, owed to be deleted
        from ``owed_chat``'s output) at once, before anything else is sent;
        ``still_due`` re-reads, once this worker alone may send, whether the new message is
        still wanted (another worker may have sent it since this job read the record);
        ``screen`` is what the message shows, updated here as it changes."""
        chat_id = lane.chat_id
        digest = content.digest()
        if message_id is not None and not force_new:
            if screen.shows(message_id, digest) and (chat_id, message_id) not in self.suspect:
                self.stats.skipped += 1
                return None
            if not screen.claimed:
                raise _MustCall
            try:
                await self._edit_text(chat_id, message_id, content)
                self.stats.edited += 1
                self.unconfirmed.pop((chat_id, slot), None)
                until = self.suspect.pop((chat_id, message_id), None)
                if until is not None and until > self.clock():
                    lane.recheck = until  # a late edit may still land: edit again then
                    screen.unknown()
                else:
                    screen.now_shows(message_id, digest)
                return None
            except BadRequest as err:
                text = str(err).lower()
                if "not modified" in text:
                    self.stats.not_modified += 1
                    screen.now_shows(message_id, digest)
                    self.unconfirmed.pop((chat_id, slot), None)
                    return None
                if "not found" not in text and "can't be edited" not in text:
                    raise
            except TelegramError as err:
                if possibly_applied(err):
                    # What shows is unknown until an edit of ours lands after the late one.
                    screen.unknown()
                    self.suspect[(chat_id, message_id)] = self.clock() + 3 * self.settle_delay
                raise
        attempt = self.unconfirmed.get((chat_id, slot))
        same = attempt is not None and message_id is None and attempt[0] == digest
        if attempt is not None and same:
            fresh = self.clock() - attempt[1] < self.reconcile_after
            if fresh or not reconcile:
                self.stats.skipped += 1  # possibly showing already: wait for a change
                return None
        if not screen.claimed:
            raise _MustCall
        claim = ":".join(str(part) for part in (slot if isinstance(slot, tuple) else (slot,)))
        if not await self.storage.claim_send(chat_id, claim):
            raise SendBusy(chat_id, claim)
        try:
            if still_due is not None and not await still_due():
                raise SendBusy(chat_id, claim)  # sent meanwhile: start over from the record
            try:
                sent_id = await self._send_text(chat_id, content)
            except TelegramError as err:
                if not possibly_applied(err):
                    raise
                self.stats.unconfirmed += 1
                self.unconfirmed[(chat_id, slot)] = (digest, self.clock())
                log.warning("send to chat %s timed out; treating it as shown", chat_id)
                return None
            self.unconfirmed.pop((chat_id, slot), None)
            self.stats.sent += 1
            screen.now_shows(sent_id, digest)
            if on_new is not None:
                with contextlib.suppress(RedisError):  # then on_new fails as well, and says so
                    await self.storage.note_sent(screen, sent_id)
                await on_new(sent_id, message_id)
                screen.unstored = None
        finally:
            with contextlib.suppress(RedisError):
                await self.storage.release_send(chat_id, claim)
        if message_id is not None:
            await self.retire(chat_id, message_id)
            if owed_chat is not None and on_new is not None:
                with contextlib.suppress(RedisError):  # else the sweeper deletes it again
                    await self.storage.settle_output(
                        owed_chat, {delete_field(chat_id, message_id): None}
                    )
        return sent_id

    async def retire(self, chat_id: int, message_id: int) -> None:
        """Delete a message we no longer keep up to date (its buttons would mislead)."""
        try:
            await self.bot.delete_message(chat_id, message_id)
            self.stats.deleted += 1
        except TelegramError as err:
            log.debug("could not delete %s/%s: %s", chat_id, message_id, err)

    async def _refresh_message(
        self,
        lane: Lane,
        job: Job,
        chat_id: int,
        role: str,
        known: Callable[[ChatGame], set[int | None]],
        refresh: Refresh,
    ) -> None:
        """Run a message's ``refresh``: first only looking, without the message's claim.
        Most refreshes find the message showing what it would show: one read, nothing
        else. One that must call Telegram waits for the chat's pacing, then claims the
        message and runs again from a fresh read (a move may have come meanwhile), so an
        edit always shows the record as it is under the claim. ``known``: the ids of this
        role's messages that the record holds."""
        job.looked_at, job.rendered = self.clock(), None
        self.stats.looked += 1
        owed, table, screen = await self.storage.peek_screen(chat_id, role)
        if screen.unstored is None:
            try:
                await refresh(lane, job, owed, table, screen)
                return
            except _MustCall:
                pass
        await self._pace(lane)
        owed, table, screen = await self.storage.open_screen(chat_id, role)
        self.stats.claimed += 1
        try:
            held = set() if table is None else known(table)
            await self._drop_unstored(lane.chat_id, screen, held)
            await refresh(lane, job, owed, table, screen)
        finally:
            await self._close_screen(chat_id, screen)

    def _group_job(self, chat_id: int) -> Callable[[Lane, Job], Awaitable[None]]:
        async def run(lane: Lane, job: Job) -> None:
            await self._refresh_message(lane, job, chat_id, "group", shown_in_group, refresh)

        async def refresh(
            lane: Lane, job: Job, owed: OwedOutput, table: ChatGame | None, screen: Screen
        ) -> None:
            job.covers = owed.rev
            if table is None or shown_elsewhere(job, owed):
                return
            await self._taps_first()
            content = await job.render(table, lambda: self.render_group(table))
            lobby = table.phase in ("lobby", "cancelled")
            current = table.lobby_message_id if lobby else table.table_message_id
            if table.phase == "cancelled" and current is None:
                return

            async def store(new_id: int, replaced: int | None) -> None:
                retire = None if replaced is None else (chat_id, replaced)
                reowe = Reowe(["group"], job.covers or 0)
                await self._store_group_id(
                    table.chat_id, table.game_id, lobby, new_id, retire, reowe
                )
                if reowe.newer:
                    lane.recheck = self.clock()  # show what came meanwhile in it too

            async def still_due() -> bool:
                now = await self.storage.load_table(chat_id)
                shown = (
                    None if now is None else now.lobby_message_id if lobby else now.table_message_id
                )
                return now is not None and now.game_id == table.game_id and shown == current

            new_id = await self._edit_or_send(
                lane,
                content,
                current,
                screen,
                force_new=False,
                slot=("group", table.game_id),
                on_new=store,
                still_due=still_due,
                owed_chat=chat_id,
            )
            shown = new_id or current
            if table.phase in ("lobby", "playing") and shown is not None:
                self.live_tables[table.chat_id] = (table.game_id, shown)
            else:
                self.live_tables.pop(table.chat_id, None)

        return run

    async def _drop_unstored(self, where: int, screen: Screen, known: set[int | None]) -> None:
        """Delete a message a worker sent and died before storing (the record names
        another): nobody would ever keep it up to date."""
        if screen.unstored is not None and screen.unstored not in known:
            log.info("chat %s: deleting message %s, sent but never stored", where, screen.unstored)
            await self.retire(where, screen.unstored)
        screen.unstored = None

    async def _close_screen(self, chat_id: int, screen: Screen) -> None:
        try:
            await self.storage.close_screen(chat_id, screen)
        except RedisError as err:  # the claim runs out by itself
            log.warning("could not record what a message of chat %s shows: %s", chat_id, err)

    async def _store_group_id(
        self,
        chat_id: int,
        game_id: str,
        lobby: bool,
        new_id: int,
        retire: tuple[int, int] | None = None,
        reowe: Reowe | None = None,
    ) -> None:
        def change(t: ChatGame | None) -> Write[None]:
            if t is None or t.game_id != game_id:
                return Write(None, None)
            if lobby:
                t.lobby_message_id = new_id
            else:
                t.table_message_id = new_id
            return Write(t, None, retire=retire, reowe=reowe)

        await self.storage.update_table(chat_id, change)

    def _hand_job(self, chat_id: int, user_id: int) -> Callable[[Lane, Job], Awaitable[None]]:
        async def run(lane: Lane, job: Job) -> None:
            await self._refresh_message(lane, job, chat_id, hand_target(user_id), hands, refresh)

        def hands(table: ChatGame) -> set[int | None]:
            return {s.hand_message_id for s in table.seats if s.user_id == user_id}

        async def refresh(
            lane: Lane, job: Job, owed: OwedOutput, table: ChatGame | None, screen: Screen
        ) -> None:
            job.covers = owed.rev
            if table is None or table.state is None:
                return
            if user_id not in owed.notify and shown_elsewhere(job, owed):
                return
            seat = next((i for i, s in enumerate(table.seats) if s.user_id == user_id), None)
            if seat is None:
                return
            info = table.seats[seat]
            if table.phase != "playing" and info.hand_message_id is None:
                return
            await self._taps_first()
            content = await job.render(table, lambda: self.render_hand(table, seat))
            slot = ("hand", table.chat_id, table.game_id)
            # Whether the hand comes as a new (notifying) message is decided by the owed
            # output in Redis, so one notification is sent once whichever worker sends it.
            notify = user_id in owed.notify or (owed.rev == 0 and job.notify)
            quieted = notify and self._late(job, table, info.hand_message_id)
            if quieted:
                # The bot is behind (the global budget is spent): a send and a delete
                # would cost two calls where an edit costs one, and slow every table
                # further. Settling the job settles the notification too; a player who
                # is away still gets the reminder before their turn times out.
                notify = False

            async def store(new_id: int, replaced: int | None) -> None:
                retire = None if replaced is None else (user_id, replaced)
                reowe = Reowe([hand_target(user_id)], owed.rev)
                await self._store_hand_id(
                    table.chat_id, table.game_id, seat, new_id, user_id, owed.rev, retire, reowe
                )
                if reowe.newer:
                    lane.recheck = self.clock()  # show what came meanwhile in it too

            async def still_due() -> bool:
                now = await self.storage.load_table(chat_id)
                if now is None or now.game_id != table.game_id or seat >= len(now.seats):
                    return False
                if now.seats[seat].hand_message_id != info.hand_message_id:
                    return False
                return not notify or user_id in (await self.storage.owed_output(chat_id)).notify

            new_id = await self._edit_or_send(
                lane,
                content,
                info.hand_message_id,
                screen,
                force_new=notify and table.phase == "playing",
                slot=slot,
                reconcile=table.phase == "playing",
                on_new=store,
                still_due=still_due,
                owed_chat=chat_id,
            )
            self.stats.quieted += quieted
            on_screen = new_id is not None or info.hand_message_id is not None
            confirmed = on_screen and (lane.chat_id, slot) not in self.unconfirmed
            if confirmed and table.phase == "playing":
                # The turn timer waits for this (see bot.app.turn_gate).
                step = int(table.state.get("step", 0))
                seen = (table.game_id, step)
                if self.shown.get((table.chat_id, user_id)) != seen:
                    # From when the request left: the turn gate counts a player's
                    # wait from then (bot.app.turn_gate), so pacing delays are not theirs.
                    at = lane.sent_at if lane.sent_at is not None else self.wall_clock()
                    await self.storage.mark_hand_shown(
                        table.chat_id, user_id, table.game_id, step, at
                    )
                    self.shown[(table.chat_id, user_id)] = seen

        return run

    def _late(self, job: Job, table: ChatGame, message_id: int | None) -> bool:
        """Whether a turn's notification may go out as an edit: the hand message exists,
        the job runs more than ``NOTIFY_LATE`` after it was asked for, and it is not the
        reminder before a timeout (that one always comes as a new message). The job runs
        from when it first looked: the wait for the chat's pacing after that is the same
        for a send as for an edit."""
        if message_id is None or job.queued_at is None or table.phase != "playing":
            return False
        if table.state is not None and table.reminded_step == table.state.get("step"):
            return False
        started = self.clock() if job.looked_at is None else job.looked_at
        return started - job.queued_at > NOTIFY_LATE

    async def _store_hand_id(
        self,
        chat_id: int,
        game_id: str,
        seat: int,
        new_id: int,
        user_id: int,
        rev: int,
        retire: tuple[int, int] | None,
        reowe: Reowe,
    ) -> None:
        """The new hand's id, and its notification marked done, in one transaction: the
        only window for a second notifying send is between Telegram's answer and this."""

        def change(t: ChatGame | None) -> Write[None]:
            if t is None or t.game_id != game_id or seat >= len(t.seats):
                return Write(None, None)
            t.seats[seat].hand_message_id = new_id
            return Write(t, None, settle={f"new:{user_id}": rev}, retire=retire, reowe=reowe)

        await self.storage.update_table(chat_id, change)
