"""The Redis repository against fakeredis and a real redis-server."""

from __future__ import annotations

import asyncio

from redis.asyncio import Redis
from support.timers import claim_due, next_due

from bot.domain.place import Place
from bot.domain.records import ChatGame
from bot.store.storage import (
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


def lobby(game_id: str = "abc123") -> ChatGame:
    return ChatGame(game_id=game_id, chat_id=CHAT, creator_id=1)


def test_keys_are_per_chat_and_cluster_ready() -> None:
    assert table_key(Place(CHAT)) == "durak:{-1001}:table"
    assert stats_key(CHAT) == "durak:{-1001}:stats"
    assert settings_key(CHAT) == "durak:{-1001}:settings"
    assert user_key(7) == "durak:user:{7}"
    assert "{" in TIMERS_KEY


async def test_concurrent_updates_are_never_lost(any_redis: Redis) -> None:
    store = storage(any_redis)
    await store.update_table(Place(CHAT), lambda t: Write(lobby(), None))

    def bump(table: ChatGame | None) -> Write[int]:
        assert table is not None
        table.last_seen_step += 1
        return Write(table, table.last_seen_step)

    # Separate clients, like separate processes.
    values = await asyncio.gather(*(store.update_table(Place(CHAT), bump) for _ in range(25)))
    assert sorted(values) == list(range(25))
    table = await store.load_table(Place(CHAT))
    assert table is not None and table.last_seen_step == 24


async def test_ttls_follow_the_phase(any_redis: Redis) -> None:
    store = storage(any_redis)
    await store.update_table(Place(CHAT), lambda t: Write(lobby(), None))
    assert 900 < await any_redis.ttl(table_key(Place(CHAT))) <= 1000

    def finish(table: ChatGame | None) -> Write[None]:
        assert table is not None
        table.phase = "finished"
        return Write(table, None, stats=[StatDelta(5, "Ann", durak=1)])

    await store.update_table(Place(CHAT), finish)
    assert 0 < await any_redis.ttl(table_key(Place(CHAT))) <= 100
    [line] = await store.chat_stats(CHAT)
    assert (line.user_id, line.name, line.played, line.durak, line.first) == (5, "Ann", 1, 1, 0)
    mine = await store.user_stats(5)
    assert mine.played == 1 and mine.durak == 1


async def test_a_change_that_stores_nothing(any_redis: Redis) -> None:
    store = storage(any_redis)
    assert await store.update_table(Place(CHAT), lambda t: Write(None, "nothing")) == "nothing"
    assert await store.load_table(Place(CHAT)) is None


async def test_unreadable_records_count_as_absent(any_redis: Redis) -> None:
    store = storage(any_redis)
    await any_redis.set(table_key(Place(CHAT)), '{"schema": 99}')
    assert await store.load_table(Place(CHAT)) is None
    await any_redis.set(user_key(3), "not json")
    assert (await store.user(3)).dm_open is False


async def test_exactly_one_claimant_wins_a_due_timer(any_redis: Redis) -> None:
    first, second = storage(any_redis), storage(any_redis)
    await first.set_timer(Place(CHAT), 10.0)
    await first.set_timer(Place(-2), 50.0)
    assert await next_due(first) == 10.0
    got = await asyncio.gather(claim_due(first, 20.0), claim_due(second, 20.0))
    assert sorted(got, key=len) == [[], [Place(CHAT)]]
    assert await claim_due(first, 20.0) == []
    assert await next_due(first) == 50.0


async def test_chat_language_is_set_by_the_first_caller(any_redis: Redis) -> None:
    store = storage(any_redis)
    assert await store.init_chat_lang(CHAT, "de") == "de"
    assert await store.init_chat_lang(CHAT, "es") == "de"


async def test_a_migration_moves_game_stats_and_settings_at_once(any_redis: Redis) -> None:
    store = storage(any_redis)
    new = -1009
    table = lobby()
    table.lobby_message_id = 5
    await store.update_table(Place(CHAT), lambda _: Write(table, None, stats=[StatDelta(1, "Ann")]))
    await store.init_chat_lang(CHAT, "de")
    moved = await store.migrate_chat(CHAT, new)
    assert moved is not None and moved.chat_id == new
    assert moved.lobby_message_id is None  # message ids belong to the old chat
    assert await any_redis.get(table_key(Place(CHAT))) is None
    assert await any_redis.exists(stats_key(CHAT)) == 0
    assert [line.played for line in await store.chat_stats(new)] == [1]
    assert (await store.chat_settings(new)).lang == "de"
    # Old ids (in buttons already sent) still find the game.
    found = await store.load_table(Place(CHAT))
    assert found is not None and found.chat_id == new
    changed = await store.update_table(Place(CHAT), lambda t: Write(t, t.chat_id if t else None))
    assert changed == new
    # The second report of the same migration changes nothing.
    assert await store.migrate_chat(CHAT, new) is None
    assert [line.played for line in await store.chat_stats(new)] == [1]


async def test_settings_and_users_expire_unless_used(any_redis: Redis) -> None:
    store = Storage(any_redis, finished_ttl=100, idle_ttl=1000, settings_ttl=500)
    await store.init_chat_lang(CHAT, "es")
    assert 0 < await any_redis.ttl(settings_key(CHAT)) <= 500
    await any_redis.expire(settings_key(CHAT), 10)
    assert (await store.chat_settings(CHAT)).lang == "es"
    assert await any_redis.ttl(settings_key(CHAT)) > 10  # a read renews it
    await store.save_user(7, await store.user(7))
    assert 0 < await any_redis.ttl(user_key(7)) <= 500


async def test_the_first_time_a_hand_was_shown_is_kept(any_redis: Redis) -> None:
    store = storage(any_redis)
    await store.mark_hand_shown(Place(CHAT), 7, "abc123", 3, 100.0)
    await store.mark_hand_shown(Place(CHAT), 7, "abc123", 3, 200.0)
    assert (await store.hands_shown(Place(CHAT)))[7].at == 100.0
    await store.mark_hand_shown(Place(CHAT), 7, "abc123", 4, 300.0)
    shown = (await store.hands_shown(Place(CHAT)))[7]
    assert (shown.step, shown.at) == (4, 300.0)
    assert await store.claim_lost_notice(Place(CHAT), "abc123")
    assert not await store.claim_lost_notice(Place(CHAT), "abc123")
