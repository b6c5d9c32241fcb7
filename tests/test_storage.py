"""The Redis repository against fakeredis and a real redis-server."""

from __future__ import annotations

import asyncio

from redis.asyncio import Redis

from bot.records import Table
from bot.storage import (
    TIMERS_KEY,
    StatDelta,
    Storage,
    Write,
    settings_key,
    stats_key,
    table_key,
    user_key,
)

CHAT = -1001


def storage(redis: Redis) -> Storage:
    return Storage(redis, finished_ttl=100, idle_ttl=1000)


def lobby(game_id: str = "abc123") -> Table:
    return Table(game_id=game_id, chat_id=CHAT, creator_id=1)


def test_keys_are_per_chat_and_cluster_ready() -> None:
    assert table_key(CHAT) == "durak:{-1001}:table"
    assert stats_key(CHAT) == "durak:{-1001}:stats"
    assert settings_key(CHAT) == "durak:{-1001}:settings"
    assert user_key(7) == "durak:user:{7}"
    assert "{" in TIMERS_KEY


async def test_concurrent_updates_are_never_lost(any_redis: Redis) -> None:
    store = storage(any_redis)
    await store.update_table(CHAT, lambda t: Write(lobby(), None))

    def bump(table: Table | None) -> Write[int]:
        assert table is not None
        table.last_seen_step += 1
        return Write(table, table.last_seen_step)

    # Separate clients, like separate processes.
    values = await asyncio.gather(*(store.update_table(CHAT, bump) for _ in range(25)))
    assert sorted(values) == list(range(25))
    table = await store.load_table(CHAT)
    assert table is not None and table.last_seen_step == 24


async def test_ttls_follow_the_phase(any_redis: Redis) -> None:
    store = storage(any_redis)
    await store.update_table(CHAT, lambda t: Write(lobby(), None))
    assert 900 < await any_redis.ttl(table_key(CHAT)) <= 1000

    def finish(table: Table | None) -> Write[None]:
        assert table is not None
        table.phase = "finished"
        return Write(table, None, stats=[StatDelta(5, "Ann", durak=1)])

    await store.update_table(CHAT, finish)
    assert 0 < await any_redis.ttl(table_key(CHAT)) <= 100
    [line] = await store.chat_stats(CHAT)
    assert (line.user_id, line.name, line.played, line.durak, line.first) == (5, "Ann", 1, 1, 0)
    mine = await store.user_stats(5)
    assert mine.played == 1 and mine.durak == 1


async def test_a_change_that_stores_nothing(any_redis: Redis) -> None:
    store = storage(any_redis)
    assert await store.update_table(CHAT, lambda t: Write(None, "nothing")) == "nothing"
    assert await store.load_table(CHAT) is None


async def test_unreadable_records_count_as_absent(any_redis: Redis) -> None:
    store = storage(any_redis)
    await any_redis.set(table_key(CHAT), '{"schema": 99}')
    assert await store.load_table(CHAT) is None
    await any_redis.set(user_key(3), "not json")
    assert (await store.user(3)).dm_open is False


async def test_exactly_one_claimant_wins_a_due_timer(any_redis: Redis) -> None:
    first, second = storage(any_redis), storage(any_redis)
    await first.set_timer(CHAT, 10.0)
    await first.set_timer(-2, 50.0)
    assert await first.next_due() == 10.0
    got = await asyncio.gather(first.claim_due(20.0), second.claim_due(20.0))
    assert sorted(got, key=len) == [[], [CHAT]]
    assert await first.claim_due(20.0) == []
    assert await first.next_due() == 50.0


async def test_chat_language_is_set_by_the_first_caller(any_redis: Redis) -> None:
    store = storage(any_redis)
    assert await store.init_chat_lang(CHAT, "de") == "de"
    assert await store.init_chat_lang(CHAT, "es") == "de"
