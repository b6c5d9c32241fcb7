"""REDIS_WAIT_REPLICAS: a stored move waits until a replica has it (real master + replica,
and a real Redis Cluster); a replica that does not answer costs the timeout, not the move."""

from __future__ import annotations

import asyncio
import contextlib
import os
import shutil
import signal
import subprocess
import time
from collections.abc import AsyncIterator, Callable, Iterator
from dataclasses import dataclass
from pathlib import Path

import pytest
from redis.asyncio import Redis
from redis.asyncio.cluster import RedisCluster
from support.cluster import Cluster, redis_cluster
from support.harness import free_port

from bot.domain.place import Place
from bot.domain.records import ChatGame, Seat
from bot.store.replica_wait import WAIT_SHORT, ReplicaWait
from bot.store.storage import Storage, Write, table_key
from engine import Rules, new_game

CHAT = -100901
START_TIMEOUT = 10.0


@dataclass
class Pair:
    master: Redis
    replica: Redis
    replica_process: subprocess.Popen[bytes]


def _server(port: int, *extra: str) -> subprocess.Popen[bytes]:
    binary = shutil.which("redis-server")
    if binary is None:  # never skip silently: tests/run.sh installs it
        pytest.fail("redis-server is not installed")
    return subprocess.Popen(
        [binary, "--port", str(port), "--bind", "127.0.0.1", "--save", "", *extra],
        stdout=subprocess.DEVNULL,
        stderr=subprocess.DEVNULL,
    )


async def _linked(master: Redis, replica: Redis) -> bool:
    with contextlib.suppress(Exception):
        info = await replica.info("replication")
        return info.get("master_link_status") == "up" and bool(
            (await master.info("replication")).get("connected_slaves")
        )
    return False


@pytest.fixture
async def pair(tmp_path: Path) -> AsyncIterator[Pair]:
    """A master and a replica of it (``redis-server --replicaof``)."""
    master_port, replica_port = free_port(), free_port()
    processes = [_server(master_port, "--repl-diskless-sync-delay", "0", "--dir", str(tmp_path))]
    replica_of = ("--replicaof", "127.0.0.1", str(master_port), "--dir", str(tmp_path))
    processes.append(_server(replica_port, *replica_of))
    master = Redis(port=master_port)
    replica = Redis(port=replica_port)
    try:
        deadline = time.monotonic() + START_TIMEOUT
        while not await _linked(master, replica):
            assert time.monotonic() < deadline, "the replica never linked to its master"
            await asyncio.sleep(0.05)  # other processes: polled, with a deadline
        yield Pair(master, replica, processes[1])
    finally:
        await master.aclose()
        await replica.aclose()
        for process in processes:
            with contextlib.suppress(ProcessLookupError):
                os.kill(process.pid, signal.SIGCONT)
            process.terminate()
            try:
                process.wait(5)
            except subprocess.TimeoutExpired:
                process.kill()


def a_running_game(chat_id: int) -> ChatGame:
    state = new_game(Rules(), 2, seed=7)
    return ChatGame(
        game_id="g-wait",
        chat_id=chat_id,
        creator_id=1,
        phase="playing",
        seats=[Seat(user_id=1, name="Ann"), Seat(user_id=2, name="Bob")],
        state=state.to_dict(),
    )


def store(game: ChatGame) -> Callable[[ChatGame | None], Write[None]]:
    def change(_: ChatGame | None) -> Write[None]:
        return Write(game, None)

    return change


async def test_a_stored_move_is_on_the_replica_when_the_write_returns(pair: Pair) -> None:
    waits: list[int] = []
    wait = ReplicaWait(pair.master, 1, 2000)

    async def after_commit(place: Place) -> None:
        waits.append(await wait(place))

    storage = Storage(pair.master, finished_ttl=60, idle_ttl=60, after_commit=after_commit)
    for step in range(20):
        game = a_running_game(CHAT)
        game.last_seen_step = step
        await storage.update_table(Place(CHAT), store(game))
        # Read from the replica at once: WAIT made sure it has this very write.
        raw = await pair.replica.get(table_key(Place(CHAT)))
        assert raw is not None and f'"last_seen_step":{step}'.encode() in raw
    assert waits == [1] * 20


async def test_a_replica_that_does_not_answer_costs_the_timeout_not_the_move(
    pair: Pair,
) -> None:
    storage = Storage(
        pair.master, finished_ttl=60, idle_ttl=60, after_commit=ReplicaWait(pair.master, 1, 300)
    )
    short_before = WAIT_SHORT._value.get()
    os.kill(pair.replica_process.pid, signal.SIGSTOP)  # alive but silent
    try:
        started = time.monotonic()
        await asyncio.wait_for(storage.update_table(Place(CHAT), store(a_running_game(CHAT))), 5)
        took = time.monotonic() - started
    finally:
        os.kill(pair.replica_process.pid, signal.SIGCONT)
    assert 0.3 <= took < 3.0
    assert await pair.master.get(table_key(Place(CHAT))) is not None  # stored all the same
    assert WAIT_SHORT._value.get() == short_before + 1


@pytest.fixture(scope="module")
def cluster(tmp_path_factory: pytest.TempPathFactory) -> Iterator[Cluster]:
    try:
        with redis_cluster(tmp_path_factory.mktemp("wait-cluster")) as running:
            yield running
    except RuntimeError as err:  # never skip silently: tests/run.sh installs redis
        pytest.fail(str(err))


async def test_on_a_cluster_the_wait_goes_to_the_games_own_master(cluster: Cluster) -> None:
    deadline = time.monotonic() + START_TIMEOUT
    while not all(  # a new cluster's replicas are still syncing when its slots are up
        "connected_slaves:1" in cluster.cli(port, "info", "replication")
        and "state=online" in cluster.cli(port, "info", "replication")
        for port in cluster.masters()
    ):
        assert time.monotonic() < deadline, "the cluster's replicas never came online"
        await asyncio.sleep(0.1)  # other processes: polled, with a deadline
    client = RedisCluster.from_url(cluster.url)
    try:
        wait = ReplicaWait(client, 1, 2000)  # type: ignore[arg-type]
        # Chats whose slots are served by different masters: each has its one replica.
        acks = [await wait(Place(chat)) for chat in (CHAT, -100902, -100903, 904, 905, 906)]
        assert acks == [1] * 6
        assert await ReplicaWait(client, 2, 100)(Place(CHAT)) == 1  # type: ignore[arg-type]
    finally:
        await client.aclose()
