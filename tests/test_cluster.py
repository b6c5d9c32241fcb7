"""The bot on a real Redis Cluster (three masters, one replica each, started here):
one-slot transactions, a sharded index and timers, leased timers, stats exactly once,
a chat migration across slots, a full game, and a master failover mid-game."""

from __future__ import annotations

import asyncio
import json
import subprocess
import threading
import time
from collections.abc import AsyncIterator, Iterator

import pytest
from redis.asyncio import Redis
from redis.asyncio.cluster import RedisCluster
from support.cluster import Cluster, redis_cluster
from support.harness import FakeClock, harness, open_lobby, play_out, press
from support.timers import claim_due

from bot.domain.flow import Moment, Person, Timing, join, new_lobby
from bot.domain.place import Place
from bot.domain.records import ChatGame
from bot.store.storage import (
    SHARDS,
    TIMER_LEASE,
    StatDelta,
    Storage,
    Write,
    running_key,
    table_key,
    timers_key,
)

GROUP = -100777
ANN, BOB = 31, 32


@pytest.fixture(scope="module")
def cluster(tmp_path_factory: pytest.TempPathFactory) -> Iterator[Cluster]:
    try:
        with redis_cluster(tmp_path_factory.mktemp("cluster")) as running:
            yield running
    except RuntimeError as err:  # never skip silently: tests/run.sh installs redis
        pytest.fail(str(err))


@pytest.fixture
async def client(cluster: Cluster) -> AsyncIterator[Redis]:
    rc = RedisCluster.from_url(cluster.url)
    await rc.flushall()
    yield rc  # type: ignore[misc]
    await rc.aclose()


def store(redis: Redis) -> Storage:
    return Storage(redis, finished_ttl=3600, idle_ttl=3600)


def slot_owner(cluster: Cluster, key: str) -> int:
    slot = int(cluster.cli(cluster.ports[0], "cluster", "keyslot", key))
    slots = json.loads(
        subprocess.run(
            ["redis-cli", "-p", str(cluster.ports[0]), "--json", "cluster", "slots"],
            capture_output=True,
            text=True,
            check=True,
        ).stdout
    )
    for first, last, master, *_ in slots:
        if first <= slot <= last:
            return int(master[1])
    raise AssertionError(f"slot {slot} has no owner")


def test_index_and_timers_are_spread_over_every_master(cluster: Cluster) -> None:
    owners = {slot_owner(cluster, running_key(n)) for n in range(SHARDS)}
    owners |= {slot_owner(cluster, timers_key(n)) for n in range(SHARDS)}
    assert len(owners) == 3  # no single node (let alone key) takes every game


def lobby_write(table: ChatGame | None) -> Write[str]:
    moment = Moment(time.time(), Timing(turn_timeout=60, ai_delay=0, notify_quiet=20))
    if table is None:
        table, _ = new_lobby(None, moment, Place(GROUP), "Cluster", Person(ANN, "Ann"), "g1")
    joined, _ = join(table, moment, table.game_id, Person(BOB, "Bob"))
    return Write(joined, table.game_id)


async def test_transactions_never_run_in_a_helper_thread(
    client: Redis, monkeypatch: pytest.MonkeyPatch
) -> None:
    """redis-py's cluster pipeline runs WATCH commands via asyncio.run in a thread the event
    loop joins, which hung a worker mid-failover; every transaction of ours must run on the
    loop itself (bot/store/slot_clients.py)."""
    s = store(client)
    await client.get(table_key(Place(GROUP)))  # the cluster client learns the slots first

    def no_threads(self: threading.Thread) -> None:
        raise AssertionError(f"a thread was started: {self.name}")

    monkeypatch.setattr(threading.Thread, "start", no_threads)
    assert await s.update_table(Place(GROUP), lobby_write) == "g1"
    await s.set_timer(Place(GROUP), 1.0)
    assert await claim_due(s, 2.0) == [Place(GROUP)]
    await s.release_timer(Place(GROUP))
    new = GROUP * 1000 - 2
    moved = await s.migrate_chat(GROUP, new)
    assert moved is not None and moved.chat_id == new


async def test_table_changes_and_a_migration_across_slots(client: Redis) -> None:
    s = store(client)
    assert await s.update_table(Place(GROUP), lobby_write) == "g1"
    loaded = await s.load_table(Place(GROUP))
    assert loaded is not None and [seat.name for seat in loaded.seats] == ["Ann", "Bob"]
    new = GROUP * 1000 - 1  # the supergroup id: another slot
    moved = await s.migrate_chat(GROUP, new)
    assert moved is not None and moved.chat_id == new
    assert await s.migrate_chat(GROUP, new) is None  # a repeat (crash, retry) does nothing
    assert await client.get(table_key(Place(GROUP))) is None
    again = await s.load_table(Place(GROUP))  # old ids follow the group
    assert again is not None and again.chat_id == new


async def test_two_workers_claim_a_timer_once_and_a_dead_claim_is_taken_over(
    client: Redis,
) -> None:
    first, second = store(client), store(client)
    chats = [Place(chat) for chat in range(-500, -520, -1)]
    for chat in chats:
        await first.set_timer(chat, 100.0)
    got = await asyncio.gather(claim_due(first, 150.0), claim_due(second, 150.0))
    assert sorted(got[0] + got[1]) == sorted(chats)  # every timer, each once
    assert not set(got[0]) & set(got[1])
    assert await claim_due(first, 150.0 + TIMER_LEASE / 2) == []  # leased, not yet back
    for chat in got[1]:
        await second.release_timer(chat)  # finished: gone for good
    # The first worker dies without releasing: its timers come back after the lease.
    third = store(client)
    taken = await claim_due(third, 150.0 + TIMER_LEASE + 1)
    assert sorted(taken) == sorted(got[0])
    assert not set(await claim_due(store(client), 1e12)) & set(got[1])


class CrashAfterCommit(Storage):
    """Dies right after the game's end is committed, before the user totals are added."""

    async def settle_game_stats(self, place: Place, game_id: str) -> None:
        raise ConnectionError("worker killed")


async def test_user_totals_are_counted_exactly_once_after_a_crash(client: Redis) -> None:
    crashing, other = CrashAfterCommit(client, finished_ttl=3600, idle_ttl=3600), store(client)
    await crashing.update_table(Place(GROUP), lobby_write)

    def finish(table: ChatGame | None) -> Write[None]:
        assert table is not None
        done = table.model_copy(update={"phase": "finished"})
        deltas = [StatDelta(ANN, "Ann", durak=1), StatDelta(BOB, "Bob", first=1)]
        return Write(done, None, stats=deltas)

    with pytest.raises(ConnectionError):
        await crashing.update_table(Place(GROUP), finish)
    assert (await other.user_stats(ANN)).played == 0  # not yet: the worker died
    assert [line.played for line in await other.chat_stats(GROUP)] == [1, 1]  # with the move
    assert await other.settle_pending_stats(0.0) == 1
    assert await store(client).settle_pending_stats(0.0) == 0  # nothing left to do
    await other.settle_game_stats(Place(GROUP), "g1")  # a repeat counts nothing
    ann, bob = await other.user_stats(ANN), await other.user_stats(BOB)
    assert (ann.played, ann.durak, bob.played, bob.first) == (1, 1, 1, 1)


async def test_a_full_game_on_the_cluster_survives_a_master_failover(
    cluster: Cluster, client: Redis
) -> None:
    async with harness(client, FakeClock()) as h:
        for uid, name in ((ANN, "Ann"), (BOB, "Bob")):
            h.emu.add_user(uid, name)
        h.emu.add_group(GROUP, "Cluster Club", members=[ANN, BOB], creator=ANN)
        await h.start_bot()
        for uid in (ANN, BOB):
            await h.emu.user_starts_bot(uid)
            await h.wait_text(uid, "Hi!")
        lobby = await open_lobby(h, GROUP, ANN)
        await press(h, BOB, GROUP, lobby.message_id, text="Join")
        await h.wait_text(GROUP, "2. Bob")
        await press(h, ANN, GROUP, lobby.message_id, text="Start")
        await h.wait_text(GROUP, "Trump:")
        failover = asyncio.create_task(_fail_over(cluster, table_key(Place(GROUP))))
        result = await play_out(h, GROUP, [ANN, BOB], timeout=20.0)
        await failover
        assert "Durak" in result.text or "draw" in result.text
        table = await h.table(GROUP)
        assert table.phase == "finished"
        lines = await h.games.storage.chat_stats(GROUP)
        assert sorted(line.played for line in lines) == [1, 1]  # counted once each
        await h.settle()
        assert h.emu.stats.too_many_requests == 0


async def _fail_over(cluster: Cluster, key: str) -> None:
    """Promote the replica of the master that holds the game (CLUSTER FAILOVER)."""
    await asyncio.sleep(0.3)  # a few moves in
    master = slot_owner(cluster, key)
    master_id = cluster.cli(master, "cluster", "myid").strip()
    replica = next(
        int(line.split()[1].split(":")[1].split("@")[0])
        for line in cluster.cli(master, "cluster", "nodes").splitlines()
        if line.split()[3] == master_id  # the 4th field of a replica: its master's id
    )
    await asyncio.to_thread(cluster.cli, replica, "cluster", "failover")
    for _ in range(100):
        if slot_owner(cluster, key) == replica:
            return
        await asyncio.sleep(0.1)
    raise AssertionError("the failover did not happen")
