"""Connect to Redis as configured: a URL, a Redis Cluster, Sentinel, or a private server.

``REDIS_URL`` (``redis://`` or ``rediss://`` for TLS) names one server; with
``REDIS_CLUSTER=true`` it names any node of a cluster. ``REDIS_SENTINELS`` (host:port,…)
with ``REDIS_SENTINEL_MASTER`` asks Sentinel for the current master. Without any of these:
a private ``redis-server`` with an append-only file under ``DATA_DIR`` when the binary is
installed, else an in-memory store that forgets everything on restart.
"""

from __future__ import annotations

import atexit
import contextlib
import logging
import shutil
import socket
import subprocess
import time
from pathlib import Path
from typing import cast

import redis as sync_redis
from redis.asyncio import BlockingConnectionPool, Redis
from redis.asyncio.cluster import RedisCluster
from redis.asyncio.sentinel import Sentinel

from bot.ops.settings import Settings

log = logging.getLogger("bot")

# During an outage a call fails within seconds (taps then get "try again") instead of
# hanging on a dead connection.
SOCKET_TIMEOUT = 5.0
CONNECT_TIMEOUT = 3.0
EMBEDDED_START_TIMEOUT = 10.0
AOF_OPTIONS = ("--appendonly", "yes", "--appendfsync", "everysec", "--save", "")
UNIX_PATH_MAX = 100  # sun_path is 108 bytes on Linux; keep a margin


def connect(settings: Settings) -> Redis:
    """The Redis client the bot uses, of whichever kind the settings ask for.

    A cluster client is returned as ``Redis``: it offers the same commands, and the
    storage keeps every multi-key transaction inside one hash slot.
    """
    if settings.redis_sentinels:
        return connect_sentinel(settings)
    if settings.redis_url and settings.redis_cluster:
        cluster = RedisCluster.from_url(
            settings.redis_url,
            max_connections=settings.redis_max_connections,
            socket_timeout=SOCKET_TIMEOUT,
            socket_connect_timeout=CONNECT_TIMEOUT,
        )
        log.info("Redis Cluster through %s", _safe_url(settings.redis_url))
        return cast(Redis, cluster)
    if settings.redis_url:
        return _pooled(settings.redis_url, settings.redis_max_connections)
    server = shutil.which("redis-server")
    if server is not None:
        private = start_private_server(server, Path(settings.data_dir))
        return _pooled(private, settings.redis_max_connections)
    import fakeredis

    log.warning(
        "REDIS_URL is not set and redis-server is not installed: using an in-memory store. "
        "Games and statistics do NOT survive a restart; set REDIS_URL=redis://host:6379/0 "
        "for real use."
    )
    store: Redis = fakeredis.aioredis.FakeRedis()
    return store


def connect_sentinel(settings: Settings) -> Redis:
    nodes = [_host_port(item) for item in settings.redis_sentinels.split(",") if item.strip()]
    sentinel = Sentinel(  # type: ignore[no-untyped-call, unused-ignore]
        nodes, socket_timeout=SOCKET_TIMEOUT, socket_connect_timeout=CONNECT_TIMEOUT
    )
    log.info(
        "Redis through Sentinel (%d sentinels), master %r",
        len(nodes),
        settings.redis_sentinel_master,
    )
    master: Redis = sentinel.master_for(
        settings.redis_sentinel_master,
        redis_class=Redis,
        socket_timeout=SOCKET_TIMEOUT,
        socket_connect_timeout=CONNECT_TIMEOUT,
    )
    return master


def _pooled(url: str, max_connections: int) -> Redis:
    # A blocking pool: a burst of updates waits for a free connection instead of
    # failing with "Too many connections".
    pool = BlockingConnectionPool.from_url(
        url,
        max_connections=max_connections,
        timeout=20,
        socket_timeout=SOCKET_TIMEOUT,
        socket_connect_timeout=CONNECT_TIMEOUT,
    )
    return Redis(connection_pool=pool)


def start_private_server(binary: str, data_dir: Path) -> str:
    """Start (or reuse) a redis-server only this bot talks to; returns its URL.

    It listens on a Unix socket in ``data_dir`` (mode 700, no TCP port) and appends
    every write to an AOF there, so games survive a restart of the bot. A server left
    running by an earlier bot that was killed is reused rather than duplicated.
    """
    data_dir = data_dir.resolve()
    data_dir.mkdir(parents=True, exist_ok=True)
    sock = data_dir / "redis.sock"
    if len(str(sock)) <= UNIX_PATH_MAX:
        url, listen = f"unix://{sock}", ["--port", "0", "--unixsocket", str(sock)]
        listen += ["--unixsocketperm", "700"]
    else:  # a deep DATA_DIR: fall back to a loopback port
        port = _free_port()
        url, listen = f"redis://127.0.0.1:{port}/0", ["--port", str(port), "--bind", "127.0.0.1"]
    if sock.exists() and _answers(f"unix://{sock}"):
        log.info("Using the private redis-server already running in %s", data_dir)
        return f"unix://{sock}"
    process = subprocess.Popen(
        [binary, *listen, "--dir", str(data_dir), *AOF_OPTIONS],
        stdout=subprocess.DEVNULL,
        stderr=subprocess.DEVNULL,
    )
    deadline = time.monotonic() + EMBEDDED_START_TIMEOUT
    while not _answers(url):
        if process.poll() is not None or time.monotonic() > deadline:
            process.kill()
            raise RuntimeError(f"the private redis-server in {data_dir} did not start")
        time.sleep(0.05)  # startup, before any event loop: a short poll is fine
    atexit.register(_shutdown, url, process)
    log.warning(
        "REDIS_URL is not set: started a private redis-server (append-only file in %s). "
        "Games survive restarts of the bot; set REDIS_URL for a shared or managed Redis.",
        data_dir,
    )
    return url


def _answers(url: str) -> bool:
    try:
        client = sync_redis.Redis.from_url(url, socket_timeout=0.5, socket_connect_timeout=0.5)
        try:
            return bool(client.ping())
        finally:
            client.close()
    except (sync_redis.RedisError, OSError):
        return False


def _shutdown(url: str, process: subprocess.Popen[bytes]) -> None:
    """SHUTDOWN flushes the AOF before the server exits."""
    with contextlib.suppress(sync_redis.RedisError, OSError):  # it drops the connection
        sync_redis.Redis.from_url(url, socket_timeout=2).shutdown(nosave=False)
    try:
        process.wait(timeout=5)
    except subprocess.TimeoutExpired:
        process.kill()


def _free_port() -> int:
    with socket.socket() as probe:
        probe.bind(("127.0.0.1", 0))
        return int(probe.getsockname()[1])


def _host_port(item: str) -> tuple[str, int]:
    host, _, port = item.strip().rpartition(":")
    return (host or item.strip(), int(port) if host else 26379)


def _safe_url(url: str) -> str:
    """The URL without its password, for logs."""
    scheme, sep, rest = url.partition("://")
    return f"{scheme}{sep}{rest.rpartition('@')[2]}"
