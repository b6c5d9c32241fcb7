"""Timers (when each game must act by itself) and the index of running games.

Both hold each game's ``Place.text``.

Both are sharded over ``SHARDS`` keys, each its own slot; the keys from before sharding
are still read and drained. A worker takes a due timer by leasing it: the lease moves
it ``TIMER_LEASE`` seconds ahead for exactly one worker, so one that dies mid-timer
leaves it to come back for another.
"""

from __future__ import annotations

from bot.domain.place import Place
from bot.store.conditional import ConditionalWrites, as_text
from bot.store.keys import (
    ALL_RUNNING_KEYS,
    ALL_TIMER_KEYS,
    RUNNING_KEY,
    TIMERS_KEY,
    place_shard,
    running_key,
    timers_key,
)
from bot.store.transactions import Transactions

TIMER_LEASE = 30.0
"""A leased timer comes back after this long unless its worker finished with it: a
worker that died mid-timer leaves it to another."""


class Timers:
    """When each game must act next, and the timer leases this process holds."""

    def __init__(self, db: Transactions, conditional: ConditionalWrites) -> None:
        self._db = db
        self._conditional = conditional
        self._held: dict[Place, tuple[str, float]] = {}
        """Timer leases this process holds and has not released: place -> (key, lease)."""

    async def set(self, place: Place, due: float) -> None:
        await self._db.redis.zadd(timers_key(place_shard(place)), {place.text: due})

    async def due_by(self, until: float, limit: int) -> list[tuple[float, Place, str]]:
        """Timers due by ``until`` (at most ``limit`` per shard): (due, place, key)."""
        found = await self._db.read_each(
            ALL_TIMER_KEYS,
            lambda client, key: client.zrangebyscore(
                key, "-inf", until, start=0, num=limit, withscores=True
            ),
        )
        return [
            (float(score), Place.parse(as_text(member)), key)
            for key, members in zip(ALL_TIMER_KEYS, found, strict=True)
            for member, score in members
        ]

    async def lease(self, place: Place, key: str, now: float) -> bool:
        """Lease the game's timer in ``key`` if it is due by ``now``: true for exactly one
        of several workers; ``release`` ends the lease when its work is done."""
        lease = now + TIMER_LEASE
        if not await self._conditional.lease_due(key, place.text, now, lease):
            return False
        self._held[place] = (key, lease)
        return True

    async def release(self, place: Place) -> None:
        """The timer's work is done: drop it unless a new due time replaced the lease."""
        held = self._held.pop(place, None)
        if held is None:
            return
        key, lease = held
        await self._conditional.drop_if(key, place.text, lease)  # a new due time stays

    async def due_of(self, place: Place) -> float | None:
        for key in (timers_key(place_shard(place)), TIMERS_KEY):
            due = await self._db.redis.zscore(key, place.text)
            if due is not None:
                return float(due)
        return None

    async def remove(self, place: Place) -> None:
        await self._db.redis.zrem(timers_key(place_shard(place)), place.text)

    async def remove_unsharded(self, place: Place) -> None:
        """From the key of before sharding (an upgrade may have left it there)."""
        await self._db.redis.zrem(TIMERS_KEY, place.text)


class RunningGames:
    """The places whose game is being played (the index a restarted worker resumes)."""

    def __init__(self, db: Transactions, timers: Timers) -> None:
        self._db = db
        self._timers = timers

    async def follow(self, place: Place, phase: str) -> None:
        """The game's phase changed: in the index while it is played; out of it, and
        without its timer, once it is not."""
        if phase == "playing":
            await self.add(place)
            return
        await self.remove(place)
        await self._timers.remove(place)
        await self.remove_unsharded(place)
        await self._timers.remove_unsharded(place)

    async def places(self) -> list[Place]:
        places: set[Place] = set()
        for key in ALL_RUNNING_KEYS:
            places.update(Place.parse(as_text(m)) for m in await self._db.redis.smembers(key))
        return sorted(places)

    async def add(self, place: Place) -> None:
        await self._db.redis.sadd(running_key(place_shard(place)), place.text)

    async def remove(self, place: Place) -> None:
        await self._db.redis.srem(running_key(place_shard(place)), place.text)

    async def remove_unsharded(self, place: Place) -> None:
        """From the key of before sharding (an upgrade may have left it there)."""
        await self._db.redis.srem(RUNNING_KEY, place.text)
