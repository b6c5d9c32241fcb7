"""Timers (when each chat's game must act by itself) and the index of running games.

Both are sharded over ``SHARDS`` keys, each its own slot; the keys from before sharding
are still read and drained. A worker takes a due timer by leasing it: the lease moves
it ``TIMER_LEASE`` seconds ahead for exactly one worker, so one that dies mid-timer
leaves it to come back for another.
"""

from __future__ import annotations

from bot.store.conditional import ConditionalWrites, as_text
from bot.store.keys import (
    ALL_RUNNING_KEYS,
    ALL_TIMER_KEYS,
    RUNNING_KEY,
    TIMERS_KEY,
    running_key,
    shard_of,
    timers_key,
)
from bot.store.transactions import Transactions

TIMER_LEASE = 30.0
"""A leased timer comes back after this long unless its worker finished with it: a
worker that died mid-timer leaves it to another."""


class Timers:
    """When each chat's game must act next, and the timer leases this process holds."""

    def __init__(self, db: Transactions, conditional: ConditionalWrites) -> None:
        self._db = db
        self._conditional = conditional
        self._held: dict[int, tuple[str, float]] = {}
        """Timer leases this process holds and has not released: chat id -> (key, lease)."""

    async def set(self, chat_id: int, due: float) -> None:
        await self._db.redis.zadd(timers_key(shard_of(chat_id)), {str(chat_id): due})

    async def due_by(self, until: float, limit: int) -> list[tuple[float, int, str]]:
        """Timers due by ``until`` (at most ``limit`` per shard): (due, chat id, key)."""
        found = await self._db.read_each(
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

    async def lease(self, chat_id: int, key: str, now: float) -> bool:
        """Lease the chat's timer in ``key`` if it is due by ``now``: true for exactly one
        of several workers; ``release`` ends the lease when its work is done."""
        lease = now + TIMER_LEASE
        if not await self._conditional.lease_due(key, str(chat_id), now, lease):
            return False
        self._held[chat_id] = (key, lease)
        return True

    async def release(self, chat_id: int) -> None:
        """The timer's work is done: drop it unless a new due time replaced the lease."""
        held = self._held.pop(chat_id, None)
        if held is None:
            return
        key, lease = held
        await self._conditional.drop_if(key, str(chat_id), lease)  # a new due time stays

    async def due_of(self, chat_id: int) -> float | None:
        for key in (timers_key(shard_of(chat_id)), TIMERS_KEY):
            due = await self._db.redis.zscore(key, str(chat_id))
            if due is not None:
                return float(due)
        return None

    async def remove(self, chat_id: int) -> None:
        await self._db.redis.zrem(timers_key(shard_of(chat_id)), str(chat_id))

    async def remove_unsharded(self, chat_id: int) -> None:
        """From the key of before sharding (an upgrade may have left it there)."""
        await self._db.redis.zrem(TIMERS_KEY, str(chat_id))


class RunningGames:
    """The chats whose game is being played (the index a restarted worker resumes)."""

    def __init__(self, db: Transactions, timers: Timers) -> None:
        self._db = db
        self._timers = timers

    async def follow(self, chat_id: int, phase: str) -> None:
        """The game's phase changed: in the index while it is played; out of it, and
        without its timer, once it is not."""
        if phase == "playing":
            await self.add(chat_id)
            return
        await self.remove(chat_id)
        await self._timers.remove(chat_id)
        await self.remove_unsharded(chat_id)
        await self._timers.remove_unsharded(chat_id)

    async def chats(self) -> list[int]:
        chats: set[int] = set()
        for key in ALL_RUNNING_KEYS:
            chats.update(int(m) for m in await self._db.redis.smembers(key))
        return sorted(chats)

    async def add(self, chat_id: int) -> None:
        await self._db.redis.sadd(running_key(shard_of(chat_id)), str(chat_id))

    async def remove(self, chat_id: int) -> None:
        await self._db.redis.srem(running_key(shard_of(chat_id)), str(chat_id))

    async def remove_unsharded(self, chat_id: int) -> None:
        """From the key of before sharding (an upgrade may have left it there)."""
        await self._db.redis.srem(RUNNING_KEY, str(chat_id))
