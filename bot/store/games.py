"""A chat's game record: read, shared with readers that only look, changed by moves.

Every change is WATCH / GET / validate / change / MULTI SET EXEC, retried when another
writer got there first: two taps at the same moment, or two processes, never lose or
duplicate a move. A move's owed output, its pending stats and its pending rating join the
same MULTI. An unreadable record is moved aside (quarantined), never overwritten.
"""

from __future__ import annotations

import json
import logging
import time
from collections.abc import Callable
from dataclasses import dataclass
from typing import Generic, TypeVar

from pydantic import ValidationError
from redis.asyncio.client import Pipeline
from redis.exceptions import WatchError

from bot.domain.bounded import BoundedDict
from bot.domain.place import Place
from bot.domain.records import ChatGame
from bot.domain.schema import UnreadableRecord, current_json
from bot.ops import metrics
from bot.store.conditional import MAX_RETRIES
from bot.store.keys import lost_notice_key, moved_key, output_key, quarantine_key, table_key
from bot.store.output import OwedChanges, OwedOutputs
from bot.store.ratings import GameRatings
from bot.store.stats import GameStats
from bot.store.timers import RunningGames
from bot.store.transactions import Lifetimes, StorageConflict, Transactions
from bot.store.write import Write

log = logging.getLogger(__name__)
T = TypeVar("T")
SHARED_TABLES_KEPT = 2_000
QUARANTINE_TTL = 90 * 24 * 3600
"""Long enough for an operator to look at it, or for a fixed release to upgrade it."""

Change = Callable[[ChatGame | None], Write[T]]
Quarantined = Callable[[Place, str], None]
"""Told (place, game id) after an unreadable table was moved aside."""


@dataclass
class Committed(Generic[T]):
    """What ``GameRecords.update`` did: ``write``, stored for ``place`` (None: nothing
    was stored), and whether the game's phase changed with it."""

    write: Write[T]
    place: Place | None = None
    phase_changed: bool = False


class GameRecords:
    """The games' records (``table_key``), and the one transaction of a move."""

    def __init__(
        self,
        db: Transactions,
        lives: Lifetimes,
        *,
        output: OwedOutputs,
        stats: GameStats,
        ratings: GameRatings,
        running: RunningGames,
        quarantined: Quarantined,
    ) -> None:
        self._db = db
        self._lives = lives
        self._output = output
        self._stats = stats
        self._ratings = ratings
        self._running = running
        self._quarantined = quarantined
        self._shared: BoundedDict[Place, tuple[bytes | str, ChatGame]] = BoundedDict(
            SHARED_TABLES_KEPT
        )
        """Place -> (stored JSON, its parsed table) for readers that only look."""

    # --- reading ----------------------------------------------------------------------

    async def load(self, place: Place) -> ChatGame | None:
        raw = await self._db.redis.get(table_key(place))
        if raw is None:
            moved = await self.moved_to(place.chat_id)
            if moved is not None:
                place = place.in_chat(moved)
                raw = await self._db.redis.get(table_key(place))
        table, problem = read_table(raw)
        if problem is None:
            return table
        await self.quarantine(place, raw, problem)
        return None

    async def shared(self, place: Place, raw: bytes | str) -> ChatGame | None:
        """The table stored as ``raw``. Every message of one move (the group, each hand,
        each Mini App viewer) reads the same record, and parsing it is the costliest step
        of each: readers that only look share one parsed copy, which they must not
        change. Writers always parse their own (``update``)."""
        known = self._shared.get(place)
        if known is not None and known[0] == raw:
            return known[1]
        table, problem = read_table(raw)
        if problem is not None:
            await self.quarantine(place, raw, problem)
            return None
        if table is not None:
            self._shared[place] = (raw, table)
        return table

    async def moved_to(self, chat_id: int) -> int | None:
        """Where a group that became a supergroup lives now (every place follows it)."""
        raw = await self._db.redis.get(moved_key(chat_id))
        return None if raw is None else int(raw)

    async def lost_notice_once(self, place: Place, game_id: str) -> bool:
        """True for exactly one caller: the one who tells the group its game was lost."""
        key = lost_notice_key(place, game_id)
        return bool(await self._db.redis.set(key, "1", nx=True, ex=self._lives.finished))

    async def quarantine(self, place: Place, raw: bytes | str | None, problem: str) -> None:
        """Move an unreadable table aside (only if it is still that record), log it, and
        tell ``quarantined``. The place can then start a new game."""
        assert raw is not None
        key = table_key(place)
        async with self._db.transaction(key) as pipe:
            try:
                await pipe.watch(key)
                if await pipe.get(key) != _as_bytes(raw):
                    await pipe.unwatch()  # type: ignore[no-untyped-call]
                    return  # someone else moved or rewrote it already
                stamp = time.time()
                pipe.multi()  # type: ignore[no-untyped-call]
                pipe.set(quarantine_key(place, stamp), raw, ex=QUARANTINE_TTL)
                pipe.delete(key)
                await pipe.execute()
            except WatchError:
                return  # it changed under us: the next reader decides again
        metrics.quarantined("table")
        await self._running.remove(place)  # another slot
        game_id = _game_id_of(raw)
        log.error(
            "chat %s: unreadable table (%s) moved to %s; the group is told",
            place,
            problem,
            quarantine_key(place, stamp),
        )
        self._quarantined(place, game_id)

    # --- changing -----------------------------------------------------------------------

    async def update(self, place: Place, change: Change[T]) -> Committed[T]:
        """Run ``change`` on the current table and store its result atomically.

        ``change`` may run more than once (after a conflict), so it must be pure.
        """
        redirected = False
        for _ in range(MAX_RETRIES):
            key = table_key(place)
            async with self._db.transaction(key) as pipe:
                try:
                    await pipe.watch(key, output_key(place))
                    raw = await pipe.get(key)
                    current, problem = read_table(raw)
                    if problem is not None:
                        await pipe.unwatch()  # type: ignore[no-untyped-call]
                        await self.quarantine(place, raw, problem)
                        continue
                    if current is None and not redirected:
                        redirected = True
                        # On the watched connection: waiting for a second one while
                        # holding this deadlocks a burst of new chats on the pool.
                        moved_raw = await pipe.get(moved_key(place.chat_id))
                        if moved_raw is not None:  # the group became a supergroup
                            place = place.in_chat(int(moved_raw))
                            await pipe.unwatch()  # type: ignore[no-untyped-call]
                            continue
                    return await self._commit(pipe, place, current, change)
                except WatchError:
                    metrics.storage_conflict()
                    continue
        raise StorageConflict(f"table of {place} kept changing")

    async def _commit(
        self, pipe: Pipeline, place: Place, current: ChatGame | None, change: Change[T]
    ) -> Committed[T]:
        """``change`` applied to ``current`` and stored with what it owes, in one MULTI."""
        # Read before ``change``: flow operations change the record in place.
        before = current.phase if current is not None else None
        write = change(current)
        table = write.table
        if table is None:
            await pipe.unwatch()  # type: ignore[no-untyped-call]
            return Committed(write)
        owed: OwedChanges | None = None
        rating: str | None = None
        try:
            if write.stats:  # the game's end: its user totals and rating are owed
                await self._stats.index_pending(self._db.aside(pipe), place, table.game_id)
                rating = await self._ratings.stage(pipe, place, table)
            owed = await self._output.stage(pipe, place, write)
            pipe.multi()  # type: ignore[no-untyped-call]
            pipe.set(table_key(place), table.to_json(), ex=self._lives.of_table(table.phase))
            self._output.write(pipe, place, owed)
            self._stats.write(pipe, place, table.game_id, write.stats)
            self._ratings.write(pipe, place, table.game_id, rating)
            await pipe.execute()
        finally:
            if owed is not None and owed.counted:
                self._output.move_done(place)
        return Committed(write, place, phase_changed=before != table.phase)


def read_table(raw: bytes | str | None) -> tuple[ChatGame | None, str | None]:
    """The table, or why it cannot be read (then it must be quarantined, not overwritten)."""
    if raw is None:
        return None, None
    try:
        return ChatGame.model_validate_json(current_json("Table", raw)), None
    except (UnreadableRecord, ValidationError) as err:
        return None, str(err).splitlines()[0]


def parse_table(raw: bytes | str | None) -> ChatGame | None:
    """For places that only look (a migration's copy): unreadable counts as absent there,
    the readers have quarantined it already or will."""
    return read_table(raw)[0]


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
