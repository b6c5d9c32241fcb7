"""Optimistic transactions on a Redis Cluster, each on a plain client to its slot's master.

redis-py's asyncio ``ClusterPipeline`` runs the commands of a WATCH transaction through
``asyncio.run`` in a helper thread that the event loop's thread joins, on connections made
on the main loop. When such a command has to wait for the network (a failover, a slow
node), the main loop is blocked in the join and nothing can wake the helper: the whole
process hangs, timeouts included. Every transaction of ours touches one hash slot, so it
can run on an ordinary asyncio client connected to that slot's master instead — the same
WATCH/MULTI/EXEC a single Redis uses, with nothing run in a thread.
"""

from __future__ import annotations

import logging
from typing import Any

from redis.asyncio import Redis
from redis.asyncio.cluster import RedisCluster
from redis.asyncio.connection import SSLConnection
from redis.exceptions import (
    AskError,
    ClusterDownError,
    ConnectionError,
    ReadOnlyError,
    TimeoutError,
    TryAgainError,
)

log = logging.getLogger(__name__)

TOPOLOGY_CHANGED = (AskError, ClusterDownError, ReadOnlyError, TryAgainError)
"""Answers that mean the slot is (about to be) served elsewhere. ``MovedError`` is an
``AskError``. The command was not run: asking the cluster for its slots again is enough."""

NODE_LOST = (ConnectionError, TimeoutError)

_COPIED = (
    "username",
    "password",
    "credential_provider",
    "socket_timeout",
    "socket_connect_timeout",
    "socket_keepalive",
    "client_name",
)
_SSL = (
    "ssl_keyfile",
    "ssl_certfile",
    "ssl_cert_reqs",
    "ssl_ca_certs",
    "ssl_ca_data",
    "ssl_check_hostname",
    "ssl_min_version",
    "ssl_ciphers",
)


class SlotClients:
    """One plain client per master, picked by the slot of a transaction's key."""

    def __init__(self, cluster: RedisCluster) -> None:
        self.cluster = cluster
        self._clients: dict[str, Redis] = {}
        options = cluster.get_connection_kwargs()
        self._options: dict[str, Any] = {
            name: options[name] for name in _COPIED if options.get(name) is not None
        }
        if options.get("connection_class") is SSLConnection:
            self._options["ssl"] = True
            self._options |= {name: options[name] for name in _SSL if name in options}

    async def client_for(self, key: str) -> Redis:
        """The client of the master that serves ``key``'s slot now (as last learned)."""
        if not self.cluster.nodes_manager.slots_cache:
            await self.cluster.initialize()
        node = self.cluster.get_node_from_key(key)
        if node is None:  # a slot nobody serves (mid-failover): learn the slots again
            await self.cluster.nodes_manager.initialize()
            node = self.cluster.get_node_from_key(key)
            if node is None:
                raise ClusterDownError(f"no master serves the slot of {key}")
        client = self._clients.get(node.name)
        if client is None:
            client = Redis(host=node.host, port=int(node.port), **self._options)
            self._clients[node.name] = client
        return client

    async def forget(self, key: str, err: Exception) -> None:
        """After a redirect or a lost node: learn the cluster's slots again, so the next
        transaction on ``key`` goes to the master serving it now. The caller's operation
        fails this once (it was not applied, or its outcome is unknown), as it would on a
        single Redis that went away."""
        log.warning("Redis Cluster: transaction on %s failed (%s); refreshing slots", key, err)
        node = self.cluster.get_node_from_key(key)
        stale = None if node is None else self._clients.pop(node.name, None)
        if stale is not None:
            await stale.aclose()
        await self.cluster.nodes_manager.initialize()

    async def aclose(self) -> None:
        for client in self._clients.values():
            await client.aclose()
        self._clients.clear()
