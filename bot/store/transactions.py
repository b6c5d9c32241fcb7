"""What every repository of the store shares: one slot's transactions, the records' lives.

Every transaction touches one hash slot. A repository that adds to another's transaction
(a move writes its record, its owed output and its pending stats in one MULTI) is given
that transaction's pipeline rather than opening its own.
"""

from __future__ import annotations

import contextlib
from collections.abc import AsyncIterator, Callable
from dataclasses import dataclass
from typing import Any

from redis.asyncio import Redis
from redis.asyncio.client import Pipeline
from redis.asyncio.cluster import RedisCluster

from bot.store.slot_clients import NODE_LOST, TOPOLOGY_CHANGED, SlotClients

ENDED_PHASES = ("finished", "cancelled")


class StorageConflict(RuntimeError):
    """The same record kept changing under us; give up rather than spin."""


@dataclass(frozen=True)
class Lifetimes:
    """Seconds each kind of record lives after its last write (or read, for settings)."""

    finished: int
    """A finished or cancelled game, and what only matters while it is recent."""
    idle: int
    """A game still open, and what follows it (its screen, its owed output)."""
    settings: int
    """Group settings and user records (renewed by every read)."""

    def of_table(self, phase: str) -> int:
        return self.finished if phase in ENDED_PHASES else self.idle


class Transactions:
    """WATCH/MULTI pipelines on one Redis or, per slot, on a Redis Cluster."""

    def __init__(self, redis: Redis) -> None:
        self.redis = redis
        self._slots = SlotClients(redis) if isinstance(redis, RedisCluster) else None
        """Where WATCH transactions run on a Redis Cluster; None on a single Redis."""

    @contextlib.asynccontextmanager
    async def transaction(self, key: str) -> AsyncIterator[Pipeline]:
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

    def aside(self, pipe: Any) -> Any:
        """Where to write a key of another slot while ``pipe`` holds a watched connection.

        On one Redis that is the same connection (every key is on that server; WATCH
        mode runs commands at once): asking the pool for a second connection while
        holding one lets a burst of moves hold every connection, each waiting for
        another, until the pool's timeout. On a cluster the key may live on another
        master, so it goes through the cluster client (a pool per node).
        """
        return pipe if self._slots is None else self.redis

    async def read_each(self, keys: tuple[str, ...], read: Callable[[Any, str], Any]) -> list[Any]:
        """``read(client, key)`` for every key (the shards of an index) in one pipeline
        without MULTI: one round trip on one Redis, one per master on a cluster (its
        pipeline groups the commands by node and sends them at once; no transaction, so
        none of redis-py's helper threads, see ``bot.store.slot_clients``)."""
        async with self.redis.pipeline(transaction=False) as pipe:
            for key in keys:
                read(pipe, key)
            return list(await pipe.execute())
