"""Opt-in: after a game's move is stored, wait until replicas have it (Redis ``WAIT``).

Redis replicates asynchronously: the master acknowledges a write before any replica has
it. A move the bot answered (the tap's answer, the edited table) just before the master
dies may be missing on the replica that is promoted: the game goes back one move, which
the players saw happen. ``WAIT n ms`` after the commit holds the answer until ``n``
replicas acknowledged the write, or ``ms`` passed; it never undoes the write, so after a
timeout the move stands on the master alone, as without WAIT (logged and counted).
With the wait, only a master lost together with those replicas loses the move; Sentinel
and Cluster promote the replica with the newest data.

``WAIT`` counts the writes made on its own connection, while the transaction ran on a
pooled connection already handed back; so the probe is a tiny write to the game's own
hash slot (the same master) followed by ``WAIT`` on one connection: a replica that has
the later probe has the move too (one replication stream, in order).
"""

from __future__ import annotations

import logging
import time

from prometheus_client import Counter, Histogram
from redis.asyncio import Redis
from redis.asyncio.cluster import PipelineCommand, RedisCluster
from redis.exceptions import ClusterDownError, RedisClusterException, RedisError

from bot.domain.place import Place
from bot.ops.metrics import REGISTRY

log = logging.getLogger(__name__)

PROBE_TTL_MS = 10_000

WAIT_SECONDS = Histogram(
    "durak_replica_wait_seconds",
    "Time a stored move waited for replicas (REDIS_WAIT_REPLICAS).",
    buckets=(0.0005, 0.001, 0.002, 0.005, 0.01, 0.025, 0.05, 0.1, 0.25, 0.5, 1.0),
    registry=REGISTRY,
)
WAIT_SHORT = Counter(
    "durak_replica_wait_short",
    "Stored moves fewer replicas acknowledged than REDIS_WAIT_REPLICAS within the timeout.",
    registry=REGISTRY,
)


def probe_key(chat_id: int) -> str:
    """In the chat's hash slot (``durak:{chat}:…``), so on the master that has its table
    (every place of the chat is in that slot)."""
    return f"durak:{{{chat_id}}}:replicated"


class ReplicaWait:
    """``await wait(place)`` after a commit: the number of replicas that have it."""

    def __init__(self, redis: Redis, replicas: int, timeout_ms: int) -> None:
        self.redis = redis
        self.replicas = replicas
        self.timeout_ms = timeout_ms
        self._last_warning = 0.0

    async def __call__(self, place: Place) -> int:
        started = time.perf_counter()
        key = probe_key(place.chat_id)
        try:
            if isinstance(self.redis, RedisCluster):
                acked = await self._on_cluster(key)
            else:
                async with self.redis.pipeline(transaction=False) as pipe:
                    pipe.set(key, 1, px=PROBE_TTL_MS)
                    pipe.execute_command("WAIT", self.replicas, self.timeout_ms)
                    _, acked = await pipe.execute()
        except (RedisError, RedisClusterException) as err:
            # The move is stored: only the wait failed (a failover under way, say).
            log.warning("waiting for replicas failed: %s", err)
            acked = 0
        WAIT_SECONDS.observe(time.perf_counter() - started)
        if int(acked) < self.replicas:
            WAIT_SHORT.inc()
            if time.monotonic() - self._last_warning > 60:  # at most a line a minute
                self._last_warning = time.monotonic()
                log.warning(
                    "a stored move reached %s of %s replicas within %s ms",
                    acked,
                    self.replicas,
                    self.timeout_ms,
                )
        return int(acked)

    async def _on_cluster(self, key: str) -> int:
        """Probe and WAIT on one connection to the master of the key's slot (the cluster
        client would send a keyless WAIT to every master, each on its own connection)."""
        cluster: RedisCluster = self.redis  # type: ignore[assignment]
        if not cluster.nodes_manager.slots_cache:
            await cluster.initialize()
        node = cluster.get_node_from_key(key)
        if node is None:  # mid-failover: nobody serves the slot yet
            raise ClusterDownError(f"no master serves the slot of {key}")
        commands = [
            PipelineCommand(0, "SET", key, 1, "PX", PROBE_TTL_MS),
            PipelineCommand(1, "WAIT", self.replicas, self.timeout_ms),
        ]
        await node.execute_pipeline(commands)
        for command in commands:
            if isinstance(command.result, Exception):
                raise command.result
        acked = commands[1].result
        assert isinstance(acked, int)
        return acked
