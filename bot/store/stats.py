"""Statistics: a group's totals (with each game's end) and each user's (exactly once).

The totals are the chat's (``stats_key``: every place of the chat adds to them); what a
game's end leaves pending is the game's (its place's keys).

A game's end adds to the chat's totals in the move's own transaction and leaves the user
totals it owes pending there (``pending_stats_key``, indexed in another slot first). They
are then added once per user and game, each with its once marker (``counted_key``), by
the worker that ended the game or, should it die, by any worker's periodic settling. The
game's rating (``bot.store.ratings``) is left pending and settled the same way, under the
same index entry.
"""

from __future__ import annotations

import json
from collections.abc import Awaitable, Callable
from typing import Any

from redis.exceptions import WatchError

from bot.domain.place import Place
from bot.domain.records import StatDelta, StatLine
from bot.ops import metrics
from bot.store.conditional import MAX_RETRIES, as_text
from bot.store.keys import (
    PENDING_SHARDS,
    counted_key,
    parse_pending_member,
    pending_index_key,
    pending_member,
    pending_stats_key,
    place_shard,
    stats_key,
    user_stats_key,
)
from bot.store.transactions import Lifetimes, StorageConflict, Transactions

SETTLE_EVERY = 30.0
"""Seconds between one process's looks for user totals a dead worker left pending."""

SettleGame = Callable[[Place, str], Awaitable[None]]


class GameStats:
    """The chats' and the users' totals, and the user totals still pending."""

    def __init__(self, db: Transactions, lives: Lifetimes) -> None:
        self._db = db
        self._lives = lives
        self._next_settle = 0.0

    # --- inside a move's transaction ----------------------------------------------

    async def index_pending(self, client: Any, place: Place, game_id: str) -> None:
        """Before the move's transaction (another slot): a crash after it leaves an entry
        the settling finds; an entry without pending totals is dropped."""
        await client.sadd(
            pending_index_key(place_shard(place, PENDING_SHARDS)), pending_member(place, game_id)
        )

    def write(self, pipe: Any, place: Place, game_id: str, deltas: list[StatDelta]) -> None:
        """Add the game's end to its group's totals (the chat's, whichever place) and
        leave the users' pending (MULTI)."""
        for delta in deltas:
            _add_stats(pipe, stats_key(place.chat_id), delta)
        if deltas:
            pending = json.dumps([vars(delta) for delta in deltas])
            pipe.set(pending_stats_key(place, game_id), pending, ex=self._lives.finished)

    # --- user totals, exactly once --------------------------------------------------

    async def settle_game(self, place: Place, game_id: str) -> None:
        """Add a finished game to each human's totals (once per user and game, whoever
        calls and however often), then forget the pending entry (not the index entry:
        ``unindex``, once everything else the game's end left pending is settled too)."""
        redis = self._db.redis
        raw = await redis.get(pending_stats_key(place, game_id))
        if raw is not None:
            for item in json.loads(raw):
                await self._count_once(place, game_id, StatDelta(**item))
            await redis.delete(pending_stats_key(place, game_id))

    async def unindex(self, place: Place, game_id: str) -> None:
        """The game's end left nothing pending any more: the settling stops looking."""
        await self._db.redis.srem(
            pending_index_key(place_shard(place, PENDING_SHARDS)), pending_member(place, game_id)
        )

    async def settle_pending(self, now: float, settle_game: SettleGame) -> int:
        """Finish what a worker that died after a game's end left (its user totals, its
        rating), each game through ``settle_game``: at most every ``SETTLE_EVERY`` seconds
        per process. Returns how many games were looked at."""
        if now < self._next_settle:
            return 0
        self._next_settle = now + SETTLE_EVERY
        looked = 0
        for shard in range(PENDING_SHARDS):
            for member in await self._db.redis.smembers(pending_index_key(shard)):
                await settle_game(*parse_pending_member(as_text(member)))
                looked += 1
        return looked

    async def _count_once(self, place: Place, game_id: str, delta: StatDelta) -> None:
        """One transaction in the user's slot: the once marker and the counts together."""
        marker = counted_key(delta.user_id, place, game_id)
        for _ in range(MAX_RETRIES):
            async with self._db.transaction(marker) as pipe:
                try:
                    await pipe.watch(marker)
                    if await pipe.get(marker) is not None:
                        await pipe.unwatch()  # type: ignore[no-untyped-call]
                        return
                    pipe.multi()  # type: ignore[no-untyped-call]
                    pipe.set(marker, "1", ex=self._lives.settings)
                    _add_stats(pipe, user_stats_key(delta.user_id), delta)
                    await pipe.execute()
                    return
                except WatchError:
                    metrics.storage_conflict()
        raise StorageConflict(f"totals of user {delta.user_id} kept changing")

    # --- reading ----------------------------------------------------------------------

    async def chat_stats(self, chat_id: int) -> list[StatLine]:
        return _stat_lines(await self._db.redis.hgetall(stats_key(chat_id)))

    async def user_stats(self, user_id: int) -> StatLine:
        lines = _stat_lines(await self._db.redis.hgetall(user_stats_key(user_id)))
        return lines[0] if lines else StatLine(user_id=user_id)


def copy_chat_stats(pipe: Any, stats: dict[Any, Any], chat_id: int) -> None:
    """Add another chat's totals (its hash) to ``chat_id``'s, in ``pipe``'s MULTI."""
    for field_name, value in stats.items():
        name = as_text(field_name)
        if name.endswith(":name"):
            pipe.hset(stats_key(chat_id), name, value)
        else:
            pipe.hincrby(stats_key(chat_id), name, int(value))


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
