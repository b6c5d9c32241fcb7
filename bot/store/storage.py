"""The one Redis repository: typed keys, validated JSON, optimistic transactions.

Keys are per chat with a ``{chat_id}`` hash tag so one chat's keys share a cluster
slot and can change together in one MULTI. Every table change is WATCH / GET /
validate / change / MULTI SET EXEC, retried when another writer got there first:
two taps at the same moment, or two processes, never lose or duplicate a move.
"""

from __future__ import annotations

import contextlib
import json
import logging
import time
from collections.abc import AsyncIterator, Awaitable, Callable
from dataclasses import dataclass, field
from typing import Any, Generic, TypeVar

from pydantic import ValidationError
from redis.asyncio import Redis
from redis.asyncio.client import Pipeline
from redis.asyncio.cluster import RedisCluster
from redis.exceptions import WatchError

from bot.domain.bounded import BoundedDict
from bot.domain.records import ChatGame, ChatSettings, StatDelta, StatLine, UserRecord
from bot.domain.schema import UnreadableRecord, current_json
from bot.ops import metrics
from bot.store.conditional import MAX_RETRIES, ConditionalWrites, as_text
from bot.store.slot_clients import NODE_LOST, TOPOLOGY_CHANGED, SlotClients

log = logging.getLogger(__name__)
T = TypeVar("T")
LANGUAGE_CACHE_SECONDS = 10.0
SHARED_TABLES_KEPT = 2_000
LANGUAGES_KEPT = 20_000
ENDED_PHASES = ("finished", "cancelled")


def table_key(chat_id: int) -> str:
    return f"durak:{{{chat_id}}}:table"


def stats_key(chat_id: int) -> str:
    return f"durak:{{{chat_id}}}:stats"


def settings_key(chat_id: int) -> str:
    return f"durak:{{{chat_id}}}:settings"


def moved_key(chat_id: int) -> str:
    """Where a group that became a supergroup lives now (old ids in buttons follow it)."""
    return f"durak:{{{chat_id}}}:moved"


def shown_key(chat_id: int) -> str:
    """Per player of the chat's game: the step of the last hand known to be on screen."""
    return f"durak:{{{chat_id}}}:shown"


def lost_key(chat_id: int, game_id: str) -> str:
    return f"durak:{{{chat_id}}}:lost:{game_id}"


def quarantine_key(chat_id: int, stamp: float) -> str:
    """Where an unreadable table is moved (same slot: the move is one transaction)."""
    return f"durak:{{{chat_id}}}:quarantine:{stamp:.6f}"


QUARANTINE_TTL = 90 * 24 * 3600
"""Long enough for an operator to look at it, or for a fixed release to upgrade it."""


def user_key(user_id: int) -> str:
    return f"durak:user:{{{user_id}}}"


def user_stats_key(user_id: int) -> str:
    return f"durak:user:{{{user_id}}}:stats"


TIMERS_KEY = "durak:{timers}:due"
RUNNING_KEY = "durak:{timers}:running"
"""Before sharding: one key each. Still read (and drained) so an upgrade loses nothing."""
SHARDS = 16
"""The running-games index and the timers are split over this many keys, each in its own
cluster slot, so no single key takes every game's traffic."""
TIMER_LEASE = 30.0
"""A claimed timer comes back after this long unless its worker finished with it: a
worker that died mid-timer leaves it to another."""
PENDING_SHARDS = 4
SETTLE_EVERY = 30.0


def shard_of(chat_id: int, shards: int = SHARDS) -> int:
    return chat_id % shards


def timers_key(shard: int) -> str:
    return f"durak:{{timers:{shard}}}:due"


def running_key(shard: int) -> str:
    return f"durak:{{running:{shard}}}:chats"


def pending_stats_key(chat_id: int, game_id: str) -> str:
    """Per finished game: the user totals still to add (written with the game's end)."""
    return f"durak:{{{chat_id}}}:pending-stats:{game_id}"


def pending_index_key(shard: int) -> str:
    return f"durak:{{pending:{shard}}}:games"


def counted_key(user_id: int, chat_id: int, game_id: str) -> str:
    """Set once a game was added to the user's totals: a repeat adds nothing."""
    return f"durak:user:{{{user_id}}}:counted:{chat_id}:{game_id}"


def migrated_key(new: int, old: int) -> str:
    return f"durak:{{{new}}}:migrated-from:{old}"


def output_key(chat_id: int) -> str:
    """What the chat's last moves still owe the screen (written with each move)."""
    return f"durak:{{{chat_id}}}:output"


def output_index_key(shard: int) -> str:
    """Chats that may owe output, each scored with the time its claim's lease ends."""
    return f"durak:{{output:{shard}}}:chats"


OUTPUT_LEASE = 10.0
"""Default seconds a worker holds a chat's owed output before another worker's sweeper
takes it over (``Settings.output_lease``). The holder renews it while it is still
sending, so only a dead (or frozen) worker loses it."""


HAND_TARGET = "hand:"


def hand_target(user_id: int) -> str:
    """The owed-output target of a player's hand message (see ``Owed``)."""
    return f"{HAND_TARGET}{user_id}"


def delete_field(chat_id: int, message_id: int) -> str:
    """The owed-output field of a replaced message still to delete."""
    return f"del:{chat_id}:{message_id}"


def sending_key(chat_id: int, slot: str) -> str:
    return f"durak:{{{chat_id}}}:sending:{slot}"


def screen_key(chat_id: int) -> str:
    """What each message of the chat's game shows, as the last worker to change it saw:
    one field per message role (``group``, ``hand:<user id>``), "<message id>:<digest>";
    ``open:<role>`` while a worker may be changing it (see ``Storage.open_screen``), and
    ``sent:<role>``, the id of a new message the record may not hold yet."""
    return f"durak:{{{chat_id}}}:screen"


def _open(role: str) -> str:
    return f"open:{role}"


def _sent(role: str) -> str:
    return f"sent:{role}"


def editing_key(chat_id: int, role: str) -> str:
    """Held by the one worker refreshing that message right now (``Storage.open_screen``)."""
    return f"durak:{{{chat_id}}}:editing:{role}"


ALL_TIMER_KEYS = (TIMERS_KEY, *(timers_key(n) for n in range(SHARDS)))
ALL_RUNNING_KEYS = (RUNNING_KEY, *(running_key(n) for n in range(SHARDS)))


# In a cluster pipeline EXISTS is split by slot and never sent at once: use GET there.


class StorageConflict(RuntimeError):
    """The same record kept changing under us; give up rather than spin."""


@dataclass(frozen=True)
class HandShown:
    game_id: str
    step: int
    at: float
    """Wall-clock time the hand for ``step`` was confirmed on screen."""


@dataclass
class Owed:
    """What a move must show, stored in the move's own transaction (see ``output_key``).

    ``targets``: "group" and "hand:<user id>", each re-rendered from the stored record
    (idempotent); ``notify``: users whose hand is re-sent as a new message; ``notes``: new
    group messages (announcements, results), each sent once. ``rev`` and ``note_ids`` are
    filled in when the move commits."""

    targets: list[str]
    notify: list[int] = field(default_factory=list)
    notes: list[dict[str, Any]] = field(default_factory=list)
    rev: int = 0
    note_ids: list[str] = field(default_factory=list)


@dataclass(frozen=True)
class OwedOutput:
    """What a chat still owes the screen, read back from ``output_key``."""

    rev: int
    targets: dict[str, int]
    """Target -> the revision it must show at least."""
    notify: dict[int, int]
    notes: dict[str, dict[str, Any]]
    """Note id -> note; ids sort in the order the notes were made."""
    deletes: list[tuple[int, int]] = field(default_factory=list)
    """(chat, message) of messages replaced by a new one and not yet deleted."""

    @property
    def complete(self) -> bool:
        return not (self.targets or self.notify or self.notes or self.deletes)


@dataclass
class Reowe:
    """A new message's id being stored by a job that rendered revision ``seen``: if a
    move came since, the targets are owed again (the move's own job may have edited the
    message this one replaces). ``newer`` tells the job to render again."""

    targets: list[str]
    seen: int
    newer: bool = False


class ScreenBusy(Exception):
    """Another worker is refreshing this message right now: read again after it."""


@dataclass
class Screen:
    """What one message shows, as the whole fleet knows it (``screen_key``).

    Every worker's refresh of a message reads the record and this under the message's
    edit claim, and writes this back before the claim ends. So no worker skips an edit
    because of what it alone showed last (another may have edited the message since), and
    no edit of an older record lands after a newer one."""

    chat_id: int
    role: str
    message_id: int | None = None
    digest: str | None = None
    unstored: int | None = None
    """A new message sent in this role whose id the record may lack: its worker died (or
    Redis failed) between Telegram's answer and storing it (``Storage.note_sent``)."""
    changed: bool = False
    """Differs from what Redis holds (``close_screen`` writes it then)."""
    noted: bool = False
    """An id was noted as sent (``unstored``) in Redis, by this job or a dead one."""
    claimed: bool = False
    """Read under the message's edit claim (``Storage.open_screen``): this worker alone
    may change the message now; else only looked at (``Storage.peek_screen``)."""

    def shows(self, message_id: int | None, digest: str) -> bool:
        return message_id is not None and (self.message_id, self.digest) == (message_id, digest)

    def now_shows(self, message_id: int | None, digest: str | None) -> None:
        if (self.message_id, self.digest) != (message_id, digest):
            self.message_id, self.digest, self.changed = message_id, digest, True

    def unknown(self) -> None:
        """An edit that timed out may still land: whoever is next edits, whatever it shows."""
        self.now_shows(None, None)


def _screen_read(chat_id: int, role: str, fields: list[Any]) -> Screen:
    """The screen from its record, its open mark and its noted send (``screen_key``)."""
    shown, left_open, sent = fields
    screen = _screen_of(chat_id, role, shown)
    if left_open:
        screen.unknown()
    if sent is not None:
        screen.unstored, screen.noted = int(as_text(sent)), True
    return screen


def _screen_of(chat_id: int, role: str, raw: bytes | str | None) -> Screen:
    if raw is None:
        return Screen(chat_id, role)
    message_id, _, digest = as_text(raw).partition(":")
    return Screen(chat_id, role, int(message_id), digest or None)


@dataclass
class Write(Generic[T]):
    """What a change function decided: the table to store (None: store nothing)."""

    table: ChatGame | None
    value: T
    stats: list[StatDelta] = field(default_factory=list)
    output: Owed | None = None
    """Output this change owes the screen (a move); recorded in the same transaction."""
    settle: dict[str, int | None] = field(default_factory=dict)
    reowe: Reowe | None = None
    retire: tuple[int, int] | None = None
    """(chat, message) replaced by the new message this change stores: to be deleted,
    owed until it is (a worker that dies first leaves the delete to another)."""
    """Owed-output fields this change fulfils (e.g. a new hand message's id stored):
    each is cleared in the same transaction if it asks for at most that revision."""


class Storage:
    """All Redis access of the bot goes through here."""

    def __init__(
        self,
        redis: Redis,
        *,
        finished_ttl: int,
        idle_ttl: int,
        settings_ttl: int = 180 * 24 * 3600,
        output_lease: float = OUTPUT_LEASE,
    ) -> None:
        self.redis = redis
        self.output_lease = output_lease
        self.output_sweep_every = min(1.0, output_lease / 4)
        self.send_claim_ms = int(2000 * output_lease)
        """How long one worker alone may send a message's replacement: a send slower
        than this (Telegram answering very late) is the one case where two workers may
        both send it."""
        self.finished_ttl = finished_ttl
        self.idle_ttl = idle_ttl
        self.settings_ttl = settings_ttl
        """Group settings and user records expire this long after their last use."""
        self._leases: dict[int, tuple[str, float]] = {}
        """Timers this process claimed and has not released: chat id -> (key, lease)."""
        self._next_settle = 0.0
        self._output_leases: dict[int, float] = {}
        """Chats whose owed output this process holds: chat id -> the lease it wrote."""
        self._committing: dict[int, int] = {}
        """Moves of this process between their index entry and their commit, per chat."""
        self._next_output_sweep = 0.0
        self._slots = SlotClients(redis) if isinstance(redis, RedisCluster) else None
        """Where WATCH transactions run on a Redis Cluster; None on a single Redis."""
        self._conditional = ConditionalWrites(redis, self._transaction)
        self._shared: BoundedDict[int, tuple[bytes | str, ChatGame]] = BoundedDict(
            SHARED_TABLES_KEPT
        )
        """Chat id -> (stored JSON, its parsed table) for readers that only look."""
        self._languages: BoundedDict[str, tuple[str | None, float]] = BoundedDict(LANGUAGES_KEPT)
        """Settings or user key -> (language, remembered until): see ``_language``."""
        self.on_quarantine: Callable[[int, str], None] | None = None
        """Called with (chat_id, game_id) after an unreadable table was moved aside."""
        self.after_commit: Callable[[int], Awaitable[object]] | None = None
        """Awaited with the chat id after a table write (bot.store.replica_wait: Redis WAIT)."""

    @contextlib.asynccontextmanager
    async def _transaction(self, key: str) -> AsyncIterator[Pipeline]:
        """A WATCH/MULTI pipeline for keys in ``key``'s slot.

        On a Redis Cluster it runs on a plain client to that slot's master (see
        ``bot.store.slot_clients``: redis-py's cluster transactions can hang the event loop).
        """
        if self._slots is None:
            async with self.redis.pipeline(transaction=True) as pipe:
                yield pipe
            return
        client = await self._slots.client_for(key)
        try:
            async with client.pipeline(transaction=True) as pipe:
                yield pipe
        except (*TOPOLOGY_CHANGED, *NODE_LOST) as err:
            await self._slots.forget(key, err)
            raise

    def _aside(self, pipe: Any) -> Any:
        """Where to write a key of another slot while ``pipe`` holds a watched connection.

        On one Redis that is the same connection (every key is on that server; WATCH
        mode runs commands at once): asking the pool for a second connection while
        holding one lets a burst of moves hold every connection, each waiting for
        another, until the pool's timeout. On a cluster the key may live on another
        master, so it goes through the cluster client (a pool per node).
        """
        return pipe if self._slots is None else self.redis

    async def _read_each(self, keys: tuple[str, ...], read: Callable[[Any, str], Any]) -> list[Any]:
        """``read(client, key)`` for every key (the shards of an index) in one pipeline
        without MULTI: one round trip on one Redis, one per master on a cluster (its
        pipeline groups the commands by node and sends them at once; no transaction, so
        none of redis-py's helper threads, see ``bot.store.slot_clients``)."""
        async with self.redis.pipeline(transaction=False) as pipe:
            for key in keys:
                read(pipe, key)
            return list(await pipe.execute())

    # --- tables -------------------------------------------------------------------

    async def load_table(self, chat_id: int) -> ChatGame | None:
        raw = await self.redis.get(table_key(chat_id))
        if raw is None:
            moved = await self.moved_to(chat_id)
            if moved is not None:
                chat_id = moved
                raw = await self.redis.get(table_key(moved))
        table, problem = _read_table(raw)
        if problem is None:
            return table
        await self._quarantine(chat_id, raw, problem)
        return None

    async def open_screen(
        self, chat_id: int, role: str
    ) -> tuple[OwedOutput, ChatGame | None, Screen]:
        """Take the edit claim of the chat's ``role`` message and read, at one moment in
        one round trip, the chat's owed output, its record and what that message shows.
        ``ScreenBusy`` if another worker holds the claim; ``close_screen`` ends it (a
        worker that dies holding it loses it after ``send_claim_ms``).

        The claim also marks the message open until ``close_screen``: a claim that ran out
        with the mark still there was held by a worker that died, maybe with an edit on
        its way, so what the message shows is unknown (the next refresh edits it)."""
        return await self._read_screen(chat_id, role, claim=True)

    async def peek_screen(
        self, chat_id: int, role: str
    ) -> tuple[OwedOutput, ChatGame | None, Screen]:
        """Like ``open_screen``, without the claim: to see whether there is anything to do.
        A message some worker may be changing right now reads as unknown."""
        return await self._read_screen(chat_id, role, claim=False)

    async def _read_screen(
        self, chat_id: int, role: str, *, claim: bool
    ) -> tuple[OwedOutput, ChatGame | None, Screen]:
        screens = screen_key(chat_id)
        async with self._transaction(output_key(chat_id)) as pipe:
            if claim:
                pipe.set(editing_key(chat_id, role), "1", nx=True, px=self.send_claim_ms)
            pipe.hgetall(output_key(chat_id))
            pipe.get(table_key(chat_id))
            pipe.hmget(screens, [role, _open(role), _sent(role)])
            if claim:
                pipe.hset(screens, _open(role), "1")  # the holder's own mark already, if busy
                pipe.expire(screens, max(self.idle_ttl, self.finished_ttl))
            answers = await pipe.execute()
        if claim and not answers.pop(0):
            raise ScreenBusy(chat_id, role)
        owed_raw, raw, shown = answers[:3]
        screen = _screen_read(chat_id, role, shown)
        screen.claimed = claim
        return _owed_of(owed_raw), await self._shared_table(chat_id, raw), screen

    async def note_sent(self, screen: Screen, message_id: int) -> None:
        """A new message went out in ``screen``'s role: its id, kept until the record holds
        it (``close_screen`` then drops it), so that a worker dying in between leaves it
        to be deleted by the next refresh rather than in the chat for good."""
        screen.unstored, screen.noted = message_id, True
        await self.redis.hset(screen_key(screen.chat_id), _sent(screen.role), str(message_id))

    async def close_screen(self, chat_id: int, screen: Screen) -> None:
        """What the message shows now (if that changed), and its edit claim ended."""
        screens = screen_key(chat_id)
        async with self._transaction(output_key(chat_id)) as pipe:
            if screen.changed and screen.message_id is not None and screen.digest is not None:
                pipe.hset(screens, screen.role, f"{screen.message_id}:{screen.digest}")
            elif screen.changed:
                pipe.hdel(screens, screen.role)
            done = [_open(screen.role)]
            if screen.noted and screen.unstored is None:
                done.append(_sent(screen.role))
            pipe.hdel(screens, *done)
            pipe.delete(editing_key(chat_id, screen.role))
            await pipe.execute()

    async def screen(self, chat_id: int, role: str) -> Screen | None:
        """What the chat's ``role`` message shows; None while a worker is changing it."""
        shown, left_open = await self.redis.hmget(screen_key(chat_id), [role, _open(role)])
        return None if left_open is not None else _screen_of(chat_id, role, shown)

    async def peek_table(self, chat_id: int) -> ChatGame | None:
        """Like ``load_table``, for readers that only look (see ``_shared_table``)."""
        return await self._shared_table(chat_id, await self.redis.get(table_key(chat_id)))

    async def _shared_table(self, chat_id: int, raw: bytes | str | None) -> ChatGame | None:
        """The table stored as ``raw``. Every message of one move (the group, each hand,
        each Mini App viewer) reads the same record, and parsing it is the costliest step
        of each: readers that only look share one parsed copy, which they must not
        change. Writers always parse their own (``update_table``)."""
        if raw is None:  # none, or the group became a supergroup: the careful way
            return await self.load_table(chat_id)
        known = self._shared.get(chat_id)
        if known is not None and known[0] == raw:
            return known[1]
        table, problem = _read_table(raw)
        if problem is not None:
            await self._quarantine(chat_id, raw, problem)
            return None
        if table is not None:
            self._shared[chat_id] = (raw, table)
        return table

    async def _quarantine(self, chat_id: int, raw: bytes | str | None, problem: str) -> None:
        """Move an unreadable table aside (only if it is still that record), log it, and
        let ``on_quarantine`` tell the group. The chat can then start a new game."""
        assert raw is not None
        key = table_key(chat_id)
        async with self._transaction(key) as pipe:
            try:
                await pipe.watch(key)
                if await pipe.get(key) != _as_bytes(raw):
                    await pipe.unwatch()  # type: ignore[no-untyped-call]
                    return  # someone else moved or rewrote it already
                stamp = time.time()
                pipe.multi()  # type: ignore[no-untyped-call]
                pipe.set(quarantine_key(chat_id, stamp), raw, ex=QUARANTINE_TTL)
                pipe.delete(key)
                await pipe.execute()
            except WatchError:
                return  # it changed under us: the next reader decides again
        metrics.quarantined("table")
        await self.redis.srem(running_key(shard_of(chat_id)), str(chat_id))  # another slot
        game_id = _game_id_of(raw)
        log.error(
            "chat %s: unreadable table (%s) moved to %s; the group is told",
            chat_id,
            problem,
            quarantine_key(chat_id, stamp),
        )
        if self.on_quarantine is not None:
            self.on_quarantine(chat_id, game_id)

    async def moved_to(self, chat_id: int) -> int | None:
        raw = await self.redis.get(moved_key(chat_id))
        return None if raw is None else int(raw)

    async def update_table(self, chat_id: int, change: Callable[[ChatGame | None], Write[T]]) -> T:
        """Run ``change`` on the current table and store its result atomically.

        ``change`` may run more than once (after a conflict), so it must be pure.
        """
        key = table_key(chat_id)
        redirected = False
        for _ in range(MAX_RETRIES):
            owed_fields: _OwedFields | None = None
            async with self._transaction(key) as pipe:
                try:
                    await pipe.watch(key, output_key(chat_id))
                    raw = await pipe.get(key)
                    current, problem = _read_table(raw)
                    if problem is not None:
                        await pipe.unwatch()  # type: ignore[no-untyped-call]
                        await self._quarantine(chat_id, raw, problem)
                        continue
                    if current is None and not redirected:
                        redirected = True
                        # On the watched connection: waiting for a second one while
                        # holding this deadlocks a burst of new chats on the pool.
                        moved_raw = await pipe.get(moved_key(chat_id))
                        moved = None if moved_raw is None else int(moved_raw)
                        if moved is not None:  # the group became a supergroup
                            chat_id, key = moved, table_key(moved)
                            await pipe.unwatch()  # type: ignore[no-untyped-call]
                            continue
                    # Read before ``change``: flow operations change the record in place.
                    before = current.phase if current is not None else None
                    write = change(current)
                    if write.table is None:
                        await pipe.unwatch()  # type: ignore[no-untyped-call]
                        return write.value
                    if write.stats:
                        # Indexed before the transaction (another slot): a crash after it
                        # leaves an entry the settler finds; an index without entry is dropped.
                        await self._aside(pipe).sadd(
                            pending_index_key(shard_of(chat_id, PENDING_SHARDS)),
                            f"{chat_id}:{write.table.game_id}",
                        )
                    owed_fields = await self._owed_fields(pipe, chat_id, write)
                    pipe.multi()  # type: ignore[no-untyped-call]
                    ttl = self.finished_ttl if write.table.phase in ENDED_PHASES else self.idle_ttl
                    pipe.set(key, write.table.to_json(), ex=ttl)
                    if owed_fields.stale:
                        pipe.hdel(output_key(chat_id), *owed_fields.stale)
                    if owed_fields.new:
                        pipe.hset(output_key(chat_id), mapping=owed_fields.new)
                        pipe.expire(output_key(chat_id), self.idle_ttl)
                    for delta in write.stats:
                        _add_stats(pipe, stats_key(chat_id), delta)
                    if write.stats:
                        pending = json.dumps([vars(delta) for delta in write.stats])
                        pipe.set(
                            pending_stats_key(chat_id, write.table.game_id),
                            pending,
                            ex=self.finished_ttl,
                        )
                    await pipe.execute()
                except WatchError:
                    metrics.storage_conflict()
                    continue
                finally:
                    if owed_fields is not None and owed_fields.counted:
                        self._moves_done(chat_id)
            if self.after_commit is not None:
                await self.after_commit(chat_id)
            await self._after_write(write, phase_changed=before != write.table.phase)
            return write.value
        raise StorageConflict(f"table of chat {chat_id} kept changing")

    async def _owed_fields(self, pipe: Any, chat_id: int, write: Write[Any]) -> _OwedFields:
        """The output hash's changes for ``write`` (read inside its WATCH). A move is
        indexed first (another slot), so a crash after its commit leaves it findable."""
        fields = _OwedFields()
        if write.settle:
            names = list(write.settle)
            for name, value in zip(
                names, await pipe.hmget(output_key(chat_id), names), strict=True
            ):
                bound = write.settle[name]
                if value is not None and (bound is None or int(value) <= bound):
                    fields.stale.append(name)
        if write.retire is not None:
            fields.new[delete_field(*write.retire)] = "1"
        if write.reowe is not None:
            current = int(await pipe.hget(output_key(chat_id), "rev") or 0)
            write.reowe.newer = current > write.reowe.seen
            if write.reowe.newer:
                fields.new.update({f"owe:{t}": str(current) for t in write.reowe.targets})
        owed = write.output
        if owed is None:
            return fields
        rev = int(await pipe.hget(output_key(chat_id), "rev") or 0) + 1
        self._committing[chat_id] = self._committing.get(chat_id, 0) + 1
        fields.counted = True
        lease = time.time() + self.output_lease
        await self._aside(pipe).zadd(output_index_key(shard_of(chat_id)), {str(chat_id): lease})
        self._output_leases[chat_id] = lease
        owed.rev = rev
        owed.note_ids = [f"{rev:010d}.{i:03d}" for i in range(len(owed.notes))]
        fields.new["rev"] = str(rev)
        for target in owed.targets:
            fields.new[f"owe:{target}"] = str(rev)
        for user in owed.notify:
            fields.new[f"new:{user}"] = str(rev)
        for note_id, note in zip(owed.note_ids, owed.notes, strict=True):
            fields.new[f"note:{note_id}"] = json.dumps(note, default=str)
        fields.stale = [name for name in fields.stale if name not in fields.new]
        return fields

    def _moves_done(self, chat_id: int) -> None:
        left = self._committing.get(chat_id, 0) - 1
        if left > 0:
            self._committing[chat_id] = left
        else:
            self._committing.pop(chat_id, None)

    async def _after_write(self, write: Write[Any], *, phase_changed: bool) -> None:
        """Keys in other cluster slots: user totals, the index of running games."""
        table = write.table
        assert table is not None
        if write.stats:
            await self.settle_game_stats(table.chat_id, table.game_id)
        if not phase_changed:
            return
        chat, shard = str(table.chat_id), shard_of(table.chat_id)
        if table.phase == "playing":
            await self.redis.sadd(running_key(shard), chat)
        else:
            await self.redis.srem(running_key(shard), chat)
            await self.redis.zrem(timers_key(shard), chat)
            await self.redis.srem(RUNNING_KEY, chat)
            await self.redis.zrem(TIMERS_KEY, chat)

    # --- owed output: what committed moves still have to show ----------------------

    async def owed_output(self, chat_id: int) -> OwedOutput:
        return _owed_of(await self.redis.hgetall(output_key(chat_id)))

    async def owed_note(self, chat_id: int, note_id: str) -> dict[str, Any] | None:
        raw = await self.redis.hget(output_key(chat_id), f"note:{note_id}")
        return None if raw is None else _note_of(raw)

    async def settle_output(self, chat_id: int, fields: dict[str, int | None]) -> bool:
        """Clear the owed ``fields`` that ask for at most the given revision (None: any);
        true when the chat then owes nothing."""
        try:
            left = await self._conditional.settle(output_key(chat_id), fields)
        except WatchError:
            raise StorageConflict(f"output of chat {chat_id} kept changing") from None
        return _owed_of(left).complete

    async def claim_send(self, chat_id: int, slot: str) -> bool:
        """True for one worker at a time: the one that may send ``slot``'s new message
        (a hand that notifies, a first table message) until ``release_send``. A claim
        whose worker died ends after ``send_claim_ms``."""
        return bool(
            await self.redis.set(sending_key(chat_id, slot), "1", nx=True, px=self.send_claim_ms)
        )

    async def release_send(self, chat_id: int, slot: str) -> None:
        await self.redis.delete(sending_key(chat_id, slot))

    async def release_output(self, chat_id: int) -> None:
        """This process showed everything the chat owed: drop its index entry, unless a
        newer move (ours, mid-commit, or another worker's, which writes a new lease) owes
        more."""
        if self._committing.get(chat_id):
            return
        held = self._output_leases.pop(chat_id, None)
        if held is not None:
            await self._drop_if(output_index_key(shard_of(chat_id)), str(chat_id), held)

    async def renew_output_leases(self, now: float, chats: set[int]) -> None:
        """Extend the leases this process holds for ``chats`` (still sending) when half
        of one is gone; a lease that someone else took over, or that ran out while this
        process had nothing left to send for it (a sweeper's now), is forgotten."""
        for chat_id, until in list(self._output_leases.items()):
            if until < now and chat_id not in chats and not self._committing.get(chat_id):
                del self._output_leases[chat_id]
        for chat_id in chats:
            held = self._output_leases.get(chat_id)
            if held is None or held - now > self.output_lease / 2:
                continue
            key, lease = output_index_key(shard_of(chat_id)), now + self.output_lease
            if await self._move_if(key, str(chat_id), held, lease):
                self._output_leases[chat_id] = lease
            elif self._output_leases.get(chat_id) == held:
                del self._output_leases[chat_id]

    async def claim_owed_output(self, now: float, limit: int = 50) -> list[tuple[int, OwedOutput]]:
        """Owed output whose lease ran out (its worker died or gave it back), leased to
        this process now; at most every ``output_sweep_every`` seconds. Entries that owe
        nothing any more are dropped."""
        if now < self._next_output_sweep:
            return []
        self._next_output_sweep = now + self.output_sweep_every
        claimed = []
        keys = tuple(output_index_key(shard) for shard in range(SHARDS))
        due = await self._read_each(
            keys, lambda client, key: client.zrangebyscore(key, "-inf", now, start=0, num=limit)
        )
        for key, members in zip(keys, due, strict=True):
            for member in members:
                name = as_text(member)
                lease = now + self.output_lease
                if not await self._lease(key, name, now, lease):
                    continue  # another sweeper was first
                chat_id = int(name)
                self._output_leases[chat_id] = lease
                owed = await self.owed_output(chat_id)
                if owed.complete:
                    await self.release_output(chat_id)
                else:
                    claimed.append((chat_id, owed))
        return claimed

    async def hand_back_output(self) -> None:
        """At shutdown: what this process still owes becomes due now for another worker."""
        for chat_id, held in list(self._output_leases.items()):
            await self._move_if(output_index_key(shard_of(chat_id)), str(chat_id), held, 0.0)
        self._output_leases.clear()

    async def _move_if(self, key: str, member: str, score: float, new: float) -> bool:
        """Set ``member``'s score to ``new`` if it is still ``score`` (nobody else's)."""
        return await self._conditional.move_if(key, member, score, new)

    async def _drop_if(self, key: str, member: str, score: float) -> None:
        await self._conditional.drop_if(key, member, score)

    # --- user totals, exactly once ------------------------------------------------

    async def settle_game_stats(self, chat_id: int, game_id: str) -> None:
        """Add a finished game to each human's totals (once per user and game, whoever
        calls and however often), then forget the pending entry."""
        raw = await self.redis.get(pending_stats_key(chat_id, game_id))
        if raw is not None:
            for item in json.loads(raw):
                await self._count_once(chat_id, game_id, StatDelta(**item))
            await self.redis.delete(pending_stats_key(chat_id, game_id))
        await self.redis.srem(
            pending_index_key(shard_of(chat_id, PENDING_SHARDS)), f"{chat_id}:{game_id}"
        )

    async def settle_pending_stats(self, now: float) -> int:
        """Finish what a worker that died after a game's end left: at most every
        ``SETTLE_EVERY`` seconds per process. Returns how many games were looked at."""
        if now < self._next_settle:
            return 0
        self._next_settle = now + SETTLE_EVERY
        looked = 0
        for shard in range(PENDING_SHARDS):
            for member in await self.redis.smembers(pending_index_key(shard)):
                text = as_text(member)
                chat, _, game_id = text.partition(":")
                await self.settle_game_stats(int(chat), game_id)
                looked += 1
        return looked

    async def _count_once(self, chat_id: int, game_id: str, delta: StatDelta) -> None:
        """One transaction in the user's slot: the marker and the counts together."""
        marker = counted_key(delta.user_id, chat_id, game_id)
        for _ in range(MAX_RETRIES):
            async with self._transaction(marker) as pipe:
                try:
                    await pipe.watch(marker)
                    if await pipe.get(marker) is not None:
                        await pipe.unwatch()  # type: ignore[no-untyped-call]
                        return
                    pipe.multi()  # type: ignore[no-untyped-call]
                    pipe.set(marker, "1", ex=self.settings_ttl)
                    _add_stats(pipe, user_stats_key(delta.user_id), delta)
                    await pipe.execute()
                    return
                except WatchError:
                    metrics.storage_conflict()
        raise StorageConflict(f"totals of user {delta.user_id} kept changing")

    # --- the running-games index ----------------------------------------------------

    async def running_chats(self) -> list[int]:
        chats: set[int] = set()
        for key in ALL_RUNNING_KEYS:
            chats.update(int(m) for m in await self.redis.smembers(key))
        return sorted(chats)

    async def migrate_chat(self, old: int, new: int) -> ChatGame | None:
        """Move a group's game, statistics and settings to its new (supergroup) id;
        returns the moved table. Safe to call twice (the second does nothing).

        The two ids live in different cluster slots, so this is two transactions: copy
        into the new chat (marked, so a repeat after a crash copies nothing twice), then
        retire the old one. The indexes (other slots) follow.
        """
        moved, due = await self._copy_chat(old, new)
        await self._retire_chat(old, new)
        old_shard, new_shard = shard_of(old), shard_of(new)
        await self.redis.srem(running_key(old_shard), str(old))
        await self.redis.srem(RUNNING_KEY, str(old))
        await self.redis.zrem(timers_key(old_shard), str(old))
        await self.redis.zrem(TIMERS_KEY, str(old))
        if moved is not None and moved.phase == "playing":
            await self.redis.sadd(running_key(new_shard), str(new))
            if due is not None:
                await self.redis.zadd(timers_key(new_shard), {str(new): due})
        return moved

    async def _due_of(self, chat_id: int) -> float | None:
        for key in (timers_key(shard_of(chat_id)), TIMERS_KEY):
            due = await self.redis.zscore(key, str(chat_id))
            if due is not None:
                return float(due)
        return None

    async def _copy_chat(self, old: int, new: int) -> tuple[ChatGame | None, float | None]:
        """Old chat's records into the new chat, once (``migrated_key`` marks it done)."""
        table = _parse_table(await self.redis.get(table_key(old)))
        stats = await self.redis.hgetall(stats_key(old))
        chat_settings = await self.redis.get(settings_key(old))
        due = await self._due_of(old)
        watched = [table_key(new), settings_key(new), migrated_key(new, old)]
        for _ in range(MAX_RETRIES):
            async with self._transaction(watched[0]) as pipe:
                try:
                    await pipe.watch(*watched)
                    if await pipe.get(migrated_key(new, old)) is not None:
                        await pipe.unwatch()  # type: ignore[no-untyped-call]
                        return None, None
                    taken = await pipe.get(table_key(new)) is not None
                    has_settings = await pipe.get(settings_key(new)) is not None
                    pipe.multi()  # type: ignore[no-untyped-call]
                    moved = None
                    if table is not None and not taken:
                        # Message ids belong to the old chat: the new one gets new messages.
                        moved = table.model_copy(
                            update={
                                "chat_id": new,
                                "table_message_id": None,
                                "lobby_message_id": None,
                            }
                        )
                        ttl = self.finished_ttl if moved.phase in ENDED_PHASES else self.idle_ttl
                        pipe.set(table_key(new), moved.to_json(), ex=ttl)
                    for field_name, value in stats.items():
                        name = field_name.decode() if isinstance(field_name, bytes) else field_name
                        if name.endswith(":name"):
                            pipe.hset(stats_key(new), name, value)
                        else:
                            pipe.hincrby(stats_key(new), name, int(value))
                    if chat_settings is not None and not has_settings:
                        pipe.set(settings_key(new), chat_settings, ex=self.settings_ttl)
                    pipe.set(migrated_key(new, old), "1", ex=self.idle_ttl)
                    await pipe.execute()
                    return moved, due
                except WatchError:
                    metrics.storage_conflict()
                    continue
        raise StorageConflict(f"chat {new} kept changing during a migration")

    async def _retire_chat(self, old: int, new: int) -> None:
        async with self._transaction(table_key(old)) as pipe:
            pipe.delete(table_key(old), shown_key(old), stats_key(old), settings_key(old))
            pipe.set(moved_key(old), str(new), ex=self.idle_ttl)
            await pipe.execute()

    # --- what is on screen --------------------------------------------------------

    async def mark_hand_shown(
        self, chat_id: int, user_id: int, game_id: str, step: int, at: float
    ) -> None:
        """Remember when the hand for ``step`` first landed (a later refresh of the same
        step, e.g. after a restart, keeps the first time)."""
        prefix = f"{game_id}:{step}:"
        await self._conditional.set_first(
            shown_key(chat_id), str(user_id), prefix, f"{prefix}{at}", self.idle_ttl
        )

    async def hands_shown(self, chat_id: int) -> dict[int, HandShown]:
        shown = {}
        for user, value in (await self.redis.hgetall(shown_key(chat_id))).items():
            text = as_text(value)
            game_id, step, at = text.split(":")
            shown[int(user)] = HandShown(game_id, int(step), float(at))
        return shown

    async def claim_lost_notice(self, chat_id: int, game_id: str) -> bool:
        """True for exactly one caller: the one who tells the group its game was lost."""
        return bool(
            await self.redis.set(lost_key(chat_id, game_id), "1", nx=True, ex=self.finished_ttl)
        )

    # --- timers -------------------------------------------------------------------

    async def set_timer(self, chat_id: int, due: float) -> None:
        await self.redis.zadd(timers_key(shard_of(chat_id)), {str(chat_id): due})

    async def timers_due_by(self, until: float, limit: int = 100) -> list[tuple[float, int, str]]:
        """Timers due by ``until`` (at most ``limit`` per shard): (due, chat id, key)."""
        found = await self._read_each(
            ALL_TIMER_KEYS,
            lambda client, key: client.zrangebyscore(
                key, "-inf", until, start=0, num=limit, withscores=True
            ),
        )
        return [
            (float(score), int(as_text(member)), key)
            for key, members in zip(ALL_TIMER_KEYS, found, strict=True)
            for member, score in members
        ]

    async def claim_timer(self, chat_id: int, key: str, now: float) -> bool:
        """Lease the chat's timer in ``key`` if it is due by ``now``: the claim moves it
        ``TIMER_LEASE`` seconds into the future for exactly one claimant;
        ``release_timer`` ends it when done. A worker that dies mid-timer leaves it to
        come back."""
        lease = now + TIMER_LEASE
        if not await self._lease(key, str(chat_id), now, lease):
            return False
        self._leases[chat_id] = (key, lease)
        return True

    async def release_timer(self, chat_id: int) -> None:
        """The timer's work is done: drop it unless a new due time replaced the lease."""
        held = self._leases.pop(chat_id, None)
        if held is None:
            return
        key, lease = held
        await self._drop_if(key, str(chat_id), lease)  # a new due time written meanwhile stays

    async def _lease(self, key: str, member: str, now: float, lease: float) -> bool:
        """Move a due timer to ``lease``: true for exactly one of several claimants."""
        return await self._conditional.lease_due(key, member, now, lease)

    # --- chat settings, users, stats ---------------------------------------------

    # Settings and user records expire when unused; every read renews them (GETEX).

    async def chat_settings(self, chat_id: int) -> ChatSettings:
        raw = await self.redis.getex(settings_key(chat_id), ex=self.settings_ttl)
        return _parse(ChatSettings, raw) or ChatSettings()

    async def save_chat_settings(self, chat_id: int, settings: ChatSettings) -> None:
        self._languages.pop(settings_key(chat_id), None)
        await self.redis.set(
            settings_key(chat_id), settings.model_dump_json(by_alias=True), ex=self.settings_ttl
        )

    async def chat_language(self, chat_id: int) -> str | None:
        """The group's language, as ``chat_settings`` says (see ``_language``)."""
        return await self._language(settings_key(chat_id), self.chat_settings, chat_id)

    async def user_language(self, user_id: int) -> str | None:
        """The language a user chose with /language, if any (see ``_language``)."""
        return await self._language(user_key(user_id), self.user, user_id)

    async def _language(
        self, key: str, read: Callable[[int], Awaitable[ChatSettings | UserRecord]], of: int
    ) -> str | None:
        """Every message rendered needs its reader's language: remembered for a few
        seconds, so a move's renders cost no read each. A change made through this process
        shows at once; one made through another worker within ``LANGUAGE_CACHE_SECONDS``."""
        now = time.monotonic()
        known = self._languages.get(key)
        if known is not None and known[1] > now:
            return known[0]
        lang = (await read(of)).lang
        self._languages[key] = (lang, now + LANGUAGE_CACHE_SECONDS)
        return lang

    async def init_chat_lang(self, chat_id: int, lang: str) -> str:
        """The chat's language; the first caller's language when it has none yet."""
        key = settings_key(chat_id)
        fresh = ChatSettings(lang=lang).model_dump_json(by_alias=True)
        if await self.redis.set(key, fresh, nx=True, ex=self.settings_ttl):
            self._languages.pop(key, None)
            return lang
        current = await self.chat_settings(chat_id)
        return current.lang or lang

    async def user(self, user_id: int) -> UserRecord:
        raw = await self.redis.getex(user_key(user_id), ex=self.settings_ttl)
        return _parse(UserRecord, raw) or UserRecord()

    async def save_user(self, user_id: int, record: UserRecord) -> None:
        self._languages.pop(user_key(user_id), None)
        await self.redis.set(
            user_key(user_id), record.model_dump_json(by_alias=True), ex=self.settings_ttl
        )

    async def chat_stats(self, chat_id: int) -> list[StatLine]:
        return _stat_lines(await self.redis.hgetall(stats_key(chat_id)))

    async def user_stats(self, user_id: int) -> StatLine:
        lines = _stat_lines(await self.redis.hgetall(user_stats_key(user_id)))
        return lines[0] if lines else StatLine(user_id=user_id)


@dataclass
class _OwedFields:
    new: dict[Any, Any] = field(default_factory=dict)
    """Field -> value (str); typed loosely for redis-py's invariant mapping type."""
    stale: list[str] = field(default_factory=list)
    counted: bool = False
    """A move: counted in ``Storage._committing`` until its transaction is over."""


def _note_of(raw: Any) -> dict[str, Any]:
    note = json.loads(raw)
    return note if isinstance(note, dict) else {}


def _owed_of(raw: dict[Any, Any]) -> OwedOutput:
    rev, targets, notify, notes, deletes = 0, {}, {}, {}, []
    for key, value in raw.items():
        name, text = as_text(key), as_text(value)
        kind, _, rest = name.partition(":")
        if name == "rev":
            rev = int(text)
        elif kind == "owe":
            targets[rest] = int(text)
        elif kind == "new":
            notify[int(rest)] = int(text)
        elif kind == "note":
            notes[rest] = _note_of(text)
        elif kind == "del":
            chat, _, message = rest.partition(":")
            deletes.append((int(chat), int(message)))
    return OwedOutput(rev, targets, notify, dict(sorted(notes.items())), sorted(deletes))


def _add_stats(pipe: Any, key: str, delta: StatDelta) -> None:
    uid = delta.user_id
    pipe.hset(key, f"{uid}:name", delta.name)
    pipe.hincrby(key, f"{uid}:played", delta.played)
    pipe.hincrby(key, f"{uid}:durak", delta.durak)
    pipe.hincrby(key, f"{uid}:first", delta.first)


def _stat_lines(raw: dict[Any, Any]) -> list[StatLine]:
    lines: dict[int, StatLine] = {}
    for key, value in raw.items():
        k = as_text(key)
        v = as_text(value)
        uid_text, _, name = k.partition(":")
        try:
            uid = int(uid_text)
        except ValueError:
            continue
        line = lines.setdefault(uid, StatLine(user_id=uid))
        if name == "name":
            line.name = v
        elif name in ("played", "durak", "first"):
            setattr(line, name, int(v))
    return list(lines.values())


def _parse_table(raw: bytes | str | None) -> ChatGame | None:
    """For places that only look (a migration's copy): unreadable counts as absent there,
    the readers above have quarantined it already or will."""
    return _read_table(raw)[0]


def _read_table(raw: bytes | str | None) -> tuple[ChatGame | None, str | None]:
    """The table, or why it cannot be read (then it must be quarantined, not overwritten)."""
    if raw is None:
        return None, None
    try:
        return ChatGame.model_validate_json(current_json("Table", raw)), None
    except (UnreadableRecord, ValidationError) as err:
        return None, str(err).splitlines()[0]


M = TypeVar("M", ChatGame, ChatSettings, UserRecord)


def _parse(model: type[M], raw: bytes | str | None) -> M | None:
    """Settings and user records: small preferences, re-asked when lost. An unreadable
    one is logged and replaced by the defaults (it holds no game)."""
    if raw is None:
        return None
    try:
        return model.model_validate_json(current_json(model.__name__, raw))
    except (UnreadableRecord, ValidationError):
        log.exception("unreadable %s record; using the defaults", model.__name__)
        metrics.quarantined(model.__name__)
        return None


def _as_bytes(raw: bytes | str) -> bytes:
    return raw if isinstance(raw, bytes) else raw.encode()


def _game_id_of(raw: bytes | str) -> str:
    """The game id of a damaged record when it can still be seen, for the one notice."""
    try:
        data = json.loads(raw)
    except ValueError:
        return "unknown"
    game_id = data.get("game_id") if isinstance(data, dict) else None
    return game_id if isinstance(game_id, str) else "unknown"
