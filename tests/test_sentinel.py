"""REDIS_SENTINELS: the bot finds its master through Sentinel and follows a failover (a real
master, a replica and a sentinel, all redis-server processes started here)."""

from __future__ import annotations

import asyncio
import contextlib
import shutil
import subprocess
import time
from collections.abc import AsyncIterator
from dataclasses import dataclass
from pathlib import Path

import pytest
from pydantic import SecretStr
from redis.asyncio import Redis
from redis.exceptions import ConnectionError, ReadOnlyError, TimeoutError
from support.harness import free_port

from bot.domain.place import Place
from bot.domain.records import ChatGame, Seat
from bot.ops.settings import Settings
from bot.store.redis_connect import connect
from bot.store.storage import Storage, Write

CHAT = -100931
MASTER = "durak"
DEADLINE = 20.0
"""Seconds for the servers to link up, and for the sentinel to notice a dead master and
promote its replica (it waits ``down-after-milliseconds`` first)."""


@dataclass
class Servers:
    master_port: int
    replica_port: int
    sentinel_port: int
    processes: dict[str, subprocess.Popen[bytes]]


def _start(*args: str) -> subprocess.Popen[bytes]:
    binary = shutil.which("redis-server")
    if binary is None:  # never skip silently: tests/run.sh installs it
        pytest.fail("redis-server is not installed")
    return subprocess.Popen([binary, *args], stdout=subprocess.DEVNULL, stderr=subprocess.DEVNULL)


async def _until(check: object, what: str) -> None:
    """Poll another process's state (nothing to await there) until ``check()`` holds."""
    deadline = time.monotonic() + DEADLINE
    while True:
        with contextlib.suppress(ConnectionError, TimeoutError, OSError):
            if await check():  # type: ignore[operator]
                return
        assert time.monotonic() < deadline, f"{what} did not happen within {DEADLINE} s"
        await asyncio.sleep(0.1)


@pytest.fixture
async def servers(tmp_path: Path) -> AsyncIterator[Servers]:
    master_port, replica_port, sentinel_port = free_port(), free_port(), free_port()
    common = ("--bind", "127.0.0.1", "--save", "", "--appendonly", "no")
    conf = tmp_path / "sentinel.conf"  # Sentinel rewrites its file: one of its own
    conf.write_text(
        f"port {sentinel_port}\nbind 127.0.0.1\n"
        f"sentinel monitor {MASTER} 127.0.0.1 {master_port} 1\n"
        f"sentinel down-after-milliseconds {MASTER} 1000\n"
        f"sentinel failover-timeout {MASTER} 5000\n"
    )
    processes = {
        "master": _start("--port", str(master_port), "--dir", str(tmp_path), *common),
        "replica": _start(
            "--port",
            str(replica_port),
            "--replicaof",
            "127.0.0.1",
            str(master_port),
            "--dir",
            str(tmp_path),
            *common,
        ),
    }
    try:
        replica = Redis(port=replica_port)
        try:

            async def linked() -> bool:
                info = await replica.info("replication")
                return bool(info.get("master_link_status") == "up")

            await _until(linked, "the replica's link to its master")
        finally:
            await replica.aclose()
        processes["sentinel"] = _start(str(conf), "--sentinel")
        sentinel = Redis(port=sentinel_port)
        try:

            async def watching() -> bool:
                replicas = await sentinel.execute_command("SENTINEL", "REPLICAS", MASTER)
                return bool(replicas)

            await _until(watching, "the sentinel's discovery of the replica")
        finally:
            await sentinel.aclose()
        yield Servers(master_port, replica_port, sentinel_port, processes)
    finally:
        for process in processes.values():
            if process.poll() is None:
                process.kill()
            process.wait()


def _lobby(game_id: str) -> ChatGame:
    seats = [Seat(user_id=1, name="Ann"), Seat(user_id=2, name="Bob")]
    return ChatGame(chat_id=CHAT, game_id=game_id, creator_id=1, seats=seats)


async def _store(storage: Storage, game_id: str) -> None:
    """One write through the bot's storage; a failover in progress answers "try again",
    as a tap would be answered, and the write is tried again."""

    def change(_: ChatGame | None) -> Write[str]:
        return Write(_lobby(game_id), game_id)

    deadline = time.monotonic() + DEADLINE
    while True:
        try:
            assert await storage.update_table(Place(CHAT), change) == game_id
            return
        except (ConnectionError, TimeoutError, ReadOnlyError):
            assert time.monotonic() < deadline, "no master took the write"
            await asyncio.sleep(0.1)


async def test_the_bot_follows_the_master_through_a_sentinel_failover(servers: Servers) -> None:
    settings = Settings(
        telegram_bot_token=SecretStr("5550009:sentinel-token"),
        redis_sentinels=f"127.0.0.1:{servers.sentinel_port}",
        redis_sentinel_master=MASTER,
        _env_file=None,  # type: ignore[call-arg]
    )
    redis = connect(settings)
    storage = Storage(redis, finished_ttl=3600, idle_ttl=3600)
    try:
        await _store(storage, "before")
        # The replica has the game before its master goes (WAIT: replication is asynchronous).
        assert await redis.execute_command("WAIT", 1, 5000) == 1
        servers.processes["master"].kill()
        servers.processes["master"].wait()
        await _store(storage, "after")  # lands on the promoted replica
        promoted = Redis(port=servers.replica_port)
        try:
            role = await promoted.info("replication")
            assert role["role"] == "master"
            loaded = await Storage(promoted, finished_ttl=3600, idle_ttl=3600).load_table(
                Place(CHAT)
            )
        finally:
            await promoted.aclose()
        assert loaded is not None and loaded.game_id == "after"
    finally:
        await redis.aclose()
