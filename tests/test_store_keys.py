"""The key vocabulary (bot.store.keys): every key spelt exactly as data already stored is.

The expected strings are hard-coded as the store wrote them before the keys had a module
of their own: a key that changes strands what Redis holds under the old one.
"""

from __future__ import annotations

import fakeredis

from bot.domain.place import Place
from bot.domain.roles import hand_owner, hand_role
from bot.store import keys, owed_fields, storage
from bot.store.keys import (
    ALL_OUTPUT_INDEX_KEYS,
    ALL_RUNNING_KEYS,
    ALL_TIMER_KEYS,
    PENDING_SHARDS,
    RUNNING_KEY,
    SHARDS,
    TIMERS_KEY,
    counted_key,
    edit_claim_key,
    lost_notice_key,
    migrated_key,
    moved_key,
    output_index_key,
    output_key,
    pending_index_key,
    pending_stats_key,
    quarantine_key,
    running_key,
    screen_key,
    send_claim_key,
    settings_key,
    shard_of,
    shown_key,
    stats_key,
    table_key,
    timers_key,
    user_key,
    user_stats_key,
)

GROUP = -100


def test_a_chats_keys_share_its_hash_tag() -> None:
    assert table_key(Place(GROUP)) == "durak:{-100}:table"
    assert stats_key(GROUP) == "durak:{-100}:stats"
    assert settings_key(GROUP) == "durak:{-100}:settings"
    assert moved_key(GROUP) == "durak:{-100}:moved"
    assert shown_key(Place(GROUP)) == "durak:{-100}:shown"
    assert output_key(Place(GROUP)) == "durak:{-100}:output"
    assert screen_key(Place(GROUP)) == "durak:{-100}:screen"
    assert lost_notice_key(Place(GROUP), "g1") == "durak:{-100}:lost:g1"
    assert pending_stats_key(Place(GROUP), "g1") == "durak:{-100}:pending-stats:g1"
    assert migrated_key(-1002, GROUP) == "durak:{-1002}:migrated-from:-100"


def test_quarantine_keys_carry_the_time_to_the_microsecond() -> None:
    assert quarantine_key(Place(GROUP), 1700000000.5) == "durak:{-100}:quarantine:1700000000.500000"


def test_claim_keys_keep_their_stored_words() -> None:
    assert edit_claim_key(Place(GROUP), "group") == "durak:{-100}:editing:group"
    assert edit_claim_key(Place(GROUP), "hand:7") == "durak:{-100}:editing:hand:7"
    assert send_claim_key(Place(GROUP), "hand:7") == "durak:{-100}:sending:hand:7"


def test_a_users_keys_share_its_hash_tag() -> None:
    assert user_key(7) == "durak:user:{7}"
    assert user_stats_key(7) == "durak:user:{7}:stats"
    assert counted_key(7, Place(GROUP), "g1") == "durak:user:{7}:counted:-100:g1"


def test_indexes_are_sharded_each_shard_its_own_slot() -> None:
    assert (SHARDS, PENDING_SHARDS) == (16, 4)
    assert shard_of(GROUP) == 12  # Python's modulo: never negative
    assert shard_of(GROUP, PENDING_SHARDS) == 0
    assert shard_of(-1001) == 7
    assert timers_key(3) == "durak:{timers:3}:due"
    assert running_key(3) == "durak:{running:3}:chats"
    assert output_index_key(5) == "durak:{output:5}:chats"
    assert pending_index_key(2) == "durak:{pending:2}:games"


def test_the_keys_from_before_sharding_are_still_read() -> None:
    assert TIMERS_KEY == "durak:{timers}:due"
    assert RUNNING_KEY == "durak:{timers}:running"
    assert ALL_TIMER_KEYS[:3] == (
        "durak:{timers}:due",
        "durak:{timers:0}:due",
        "durak:{timers:1}:due",
    )
    assert ALL_RUNNING_KEYS[:2] == ("durak:{timers}:running", "durak:{running:0}:chats")
    assert len(ALL_TIMER_KEYS) == len(ALL_RUNNING_KEYS) == 17
    assert ALL_TIMER_KEYS[-1] == "durak:{timers:15}:due"
    assert ALL_OUTPUT_INDEX_KEYS[:2] == ("durak:{output:0}:chats", "durak:{output:1}:chats")
    assert ALL_OUTPUT_INDEX_KEYS[-1] == "durak:{output:15}:chats"
    assert len(ALL_OUTPUT_INDEX_KEYS) == 16


def test_owed_output_fields_keep_their_stored_spelling() -> None:
    assert owed_fields.REV == "rev"
    assert owed_fields.owe("group") == "owe:group"
    assert owed_fields.owe("hand:7") == "owe:hand:7"
    assert owed_fields.notify(7) == "new:7"
    assert owed_fields.note("0000000003.001") == "note:0000000003.001"
    assert owed_fields.delete(GROUP, 42) == "del:-100:42"


def test_names_callers_import_from_storage_are_still_there() -> None:
    assert storage.table_key is keys.table_key
    assert storage.output_key(Place(GROUP)) == "durak:{-100}:output"
    assert hand_role(7) == "hand:7" and hand_owner("hand:7") == 7 and hand_owner("group") is None
    for name in storage.__all__:
        assert hasattr(storage, name), name


async def test_the_screen_record_and_claims_are_stored_under_those_keys() -> None:
    redis = fakeredis.aioredis.FakeRedis()
    store = storage.Storage(redis, finished_ttl=100, idle_ttl=1000)
    _, _, screen = await store.open_screen(Place(GROUP), "group")
    await store.note_sent(screen, 55)
    assert await redis.exists("durak:{-100}:editing:group")
    assert await redis.hgetall("durak:{-100}:screen") == {b"open:group": b"1", b"sent:group": b"55"}
    assert await store.claim_send(Place(GROUP), "hand:7")
    assert await redis.exists("durak:{-100}:sending:hand:7")
    screen.now_shows(55, "d1")
    screen.unstored = None
    await store.close_screen(Place(GROUP), screen)
    assert await redis.hgetall("durak:{-100}:screen") == {b"group": b"55:d1"}
    assert not await redis.exists("durak:{-100}:editing:group")


def test_rating_keys_live_in_the_games_the_users_and_the_seasons_slots() -> None:
    assert keys.pending_rating_key(Place(GROUP), "g1") == "durak:{-100}:pending-rating:g1"
    assert keys.rating_plan_key(Place(GROUP), "g1") == "durak:{-100}:rating-plan:g1"
    assert keys.user_rating_key(7, GROUP, "2026-12") == "durak:user:{7}:rating:-100:2026-12"
    assert keys.user_rating_key(7, None, "2026-12") == "durak:user:{7}:rating:all:2026-12"
    assert keys.rated_key(7, Place(GROUP), "g1") == "durak:user:{7}:rated:-100:g1"
    assert keys.rating_history_key(7) == "durak:user:{7}:rating-history"
    assert keys.leaderboard_key(GROUP, "2026-12") == "durak:{-100}:leaderboard:2026-12"
    assert keys.leaderboard_players_key(GROUP, "2026-12") == (
        "durak:{-100}:leaderboard-players:2026-12"
    )
    assert keys.leaderboard_key(None, "2026-12") == "durak:{ratings:2026-12}:leaderboard"
    assert keys.leaderboard_players_key(None, "2026-12") == "durak:{ratings:2026-12}:players"
