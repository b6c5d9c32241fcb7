"""Fleet-wide pacing: Telegram's budgets in Redis, shared by every worker.

The limiter's budgets on a real redis-server (three limiters stand for three workers),
on a real Redis Cluster (one script call per send stays in one slot), and the fallbacks;
then three real worker processes behind a webhook front with the emulator's real flood
limits: several groups play to the end, 0 × 429, every message shows the final state.
"""

from __future__ import annotations

import asyncio
import time
from collections.abc import Iterator

import fakeredis
import pytest
from redis.asyncio import Redis
from redis.asyncio.cluster import RedisCluster
from support.cluster import Cluster, redis_cluster
from support.harness import free_port

from bot.fleet_pacing import CHAT, GLOBAL, FleetLimiter

GROUP, OTHER_GROUP, ANN, BOB = -100501, -100502, 501, 502


def limiters(redis: Redis, count: int = 3, **budget: float) -> list[FleetLimiter]:
    """``count`` limiters on one Redis, as ``count`` workers would build them."""
    values: dict[str, float] = {
        "group_interval": 0.0,
        "group_max_per_minute": 3,
        "private_interval": 1.0,
        "global_rate": 1000.0,
    }
    values |= budget
    return [
        FleetLimiter(
            redis,
            group_interval=values["group_interval"],
            group_max_per_minute=int(values["group_max_per_minute"]),
            private_interval=values["private_interval"],
            global_rate=values["global_rate"],
        )
        for _ in range(count)
    ]


async def booked(worker: FleetLimiter, chat: int) -> bool:
    """One attempt to send to ``chat`` now (or within a booked global slot)."""
    _, cause = await worker.try_acquire(chat)
    return cause == 0


async def test_a_groups_minute_budget_is_shared_by_every_worker(real_redis: Redis) -> None:
    one, two, three = limiters(real_redis, group_max_per_minute=3)
    for worker in (one, two, three):
        assert await booked(worker, GROUP)
    wait_ms, cause = await one.try_acquire(GROUP)
    assert cause == CHAT and 55_000 < wait_ms <= 60_000  # the first send leaves the window
    wait_ms, cause = await three.try_acquire(GROUP)
    assert cause == CHAT and 55_000 < wait_ms <= 60_000
    assert await booked(two, OTHER_GROUP)  # another group has its own


async def test_spacing_in_a_chat_holds_across_workers(real_redis: Redis) -> None:
    one, two, _ = limiters(real_redis, private_interval=1.0, group_interval=3.0)
    assert await booked(one, ANN)
    wait_ms, cause = await two.try_acquire(ANN)
    assert cause == CHAT and 900 < wait_ms <= 1000
    assert await booked(two, GROUP)
    wait_ms, cause = await one.try_acquire(GROUP)
    assert cause == CHAT and 2900 < wait_ms <= 3000


async def test_a_429_holds_the_chat_for_every_worker(real_redis: Redis) -> None:
    one, two, _ = limiters(real_redis, group_max_per_minute=100)
    await one.back_off(GROUP, 7.0)
    wait_ms, cause = await two.try_acquire(GROUP)
    assert cause == CHAT and 6_900 < wait_ms <= 7_000
    await two.back_off(GROUP, 1.0)  # a shorter hold never shortens a longer one
    wait_ms, _ = await one.try_acquire(GROUP)
    assert wait_ms > 6_000


async def test_global_rate_is_shared_and_evenly_spaced(real_redis: Redis) -> None:
    rate, per_worker = 50.0, 20
    workers = limiters(real_redis, global_rate=rate, private_interval=0.0)
    granted: list[float] = []

    async def send_all(worker: FleetLimiter, first_chat: int) -> None:
        for chat in range(first_chat, first_chat + per_worker):
            await worker.acquire(chat_id=chat)
            granted.append(time.monotonic())

    started = time.monotonic()
    await asyncio.wait_for(
        asyncio.gather(*(send_all(w, 1000 * (i + 1)) for i, w in enumerate(workers))), 10
    )
    total = len(workers) * per_worker
    assert len(granted) == total
    # Evenly spaced at 1/rate: three workers alone would have taken a third of this.
    assert time.monotonic() - started >= (total - 1) / rate * 0.9
    granted.sort()
    busiest = max(sum(1 for t in granted if s <= t < s + 1.0) for s in granted)
    assert busiest <= rate + 1
    # One script call per send: a send that must wait books its slot in that call.
    assert sum(w.calls for w in workers) == total


async def test_low_priority_sends_leave_a_fifth_of_the_rate_free(real_redis: Redis) -> None:
    (worker,) = limiters(real_redis, count=1, global_rate=10.0, private_interval=0.0)
    for chat in range(2000, 2008):  # 8 = four fifths of a second's 10, 100 ms apart
        await asyncio.wait_for(worker.acquire(chat_id=chat, low_priority=True), 5)
    # The ninth low-priority send would be a second after the first: too far to book.
    _, cause = await worker.try_acquire(-2100, low_priority=True)
    assert cause == GLOBAL
    delay_ms, cause = await worker.try_acquire(3000)  # a hand goes out after the spacing
    assert cause == 0 and delay_ms <= 100


async def test_without_redis_the_process_paces_alone() -> None:
    down: Redis = Redis.from_url(f"redis://127.0.0.1:{free_port()}/0", socket_connect_timeout=1)
    (worker,) = limiters(down, count=1)
    try:
        await asyncio.wait_for(worker.acquire(chat_id=GROUP), 5)  # sent anyway
        assert worker.local_until > time.monotonic()  # and Redis is left alone a while
        before = worker.calls
        await asyncio.wait_for(worker.acquire(chat_id=ANN), 5)
        assert worker.calls == before
    finally:
        await down.aclose()


async def test_a_store_without_lua_keeps_per_process_pacing() -> None:
    store = fakeredis.aioredis.FakeRedis()
    (worker,) = limiters(store, count=1)
    await asyncio.wait_for(worker.acquire(chat_id=GROUP), 5)
    await asyncio.wait_for(worker.acquire(chat_id=GROUP), 5)
    assert worker.scripted is False and worker.calls == 1  # asked once, then never again
    await store.aclose()


@pytest.fixture(scope="module")
def cluster(tmp_path_factory: pytest.TempPathFactory) -> Iterator[Cluster]:
    try:
        with redis_cluster(tmp_path_factory.mktemp("pacing-cluster")) as running:
            yield running
    except RuntimeError as err:  # never skip silently: tests/run.sh installs redis
        pytest.fail(str(err))


async def test_on_a_cluster_each_send_is_one_call_in_one_slot(cluster: Cluster) -> None:
    client = RedisCluster.from_url(cluster.url)
    try:
        workers = [
            FleetLimiter(
                client,  # type: ignore[arg-type]
                group_interval=0.0,
                group_max_per_minute=2,
                private_interval=0.0,
                global_rate=300.0,
                shards=3,
            )
            for _ in range(3)
        ]
        chats = [GROUP, OTHER_GROUP, ANN, BOB, -100503, 503]
        for chat in chats:  # every shard is used: a cross-slot script would fail here
            assert await booked(workers[chat % 3], chat)
        assert await booked(workers[1], GROUP)
        wait_ms, cause = await workers[2].try_acquire(GROUP)  # the third in a minute
        assert cause == CHAT and wait_ms > 55_000
        assert sum(w.calls for w in workers) == len(chats) + 2
    finally:
        await client.aclose()
