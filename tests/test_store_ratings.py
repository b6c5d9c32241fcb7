"""Ratings through the store (bot.store.ratings): every finished game with a human rated
exactly once, in the group's season and overall, whoever settles it and whenever a worker
dies; leaderboards, seasons, histories, result lines; records from before ratings.

Games end here through flow's ``finish`` on hand-made engine results, so the store rates
what the bot would; the expected numbers come from the pure model (bot.domain.rating).
"""

from __future__ import annotations

import asyncio
import json
from collections.abc import AsyncIterator, Awaitable, Callable, Iterator
from datetime import UTC, datetime
from pathlib import Path
from typing import Any

import pytest
from fakeredis.aioredis import FakeRedis
from redis.asyncio import Redis
from redis.asyncio.cluster import RedisCluster
from support.cluster import Cluster, redis_cluster
from support.harness import open_lobby, play_out, press

from ai import player
from bot.domain.flow import Effects
from bot.domain.flow.results import finish, rated_game
from bot.domain.place import Place
from bot.domain.rating import (
    Computer,
    FinishedGame,
    Human,
    Participant,
    RatingRecord,
    apply_update,
    game_from_state,
    rate_game,
)
from bot.domain.records import AiLevel, ChatGame, ChatSettings, Seat
from bot.store.keys import (
    PENDING_SHARDS,
    leaderboard_key,
    pending_index_key,
    pending_rating_key,
    pending_stats_key,
    rating_plan_key,
    settings_key,
    shard_of,
    table_key,
    user_rating_key,
)
from bot.store.rating_codec import pending_from_json
from bot.store.ratings import GameRatings
from bot.store.storage import Storage, Write, season_at
from engine import Rules, apply, new_game, view, waiting_for
from engine.events import PlayerOut
from engine.state import History

GROUP, OTHER = -1001, -1002
ANN, BOB, CY, DI = 11, 12, 13, 14
NAMES = {ANN: "Ann", BOB: "Bob", CY: "Cy", DI: "Di"}
DECEMBER = datetime(2026, 12, 31, 23, 30, tzinfo=UTC).timestamp()
JANUARY = datetime(2027, 1, 1, 0, 30, tzinfo=UTC).timestamp()
FIXTURES = Path(__file__).parent / "fixtures" / "records" / "v1"

Who = int | AiLevel
"""A seat: a human's user id, or a computer's level."""


def storage(redis: Redis) -> Storage:
    return Storage(redis, finished_ttl=3600, idle_ttl=3600)


class CrashAfterCommit(Storage):
    """Dies right after the game's end is committed, before anything is settled."""

    async def settle_game_stats(self, place: Place, game_id: str) -> None:
        raise ConnectionError("worker killed")


def crashing(redis: Redis) -> Storage:
    return CrashAfterCommit(redis, finished_ttl=3600, idle_ttl=3600)


def seat(who: Who) -> Seat:
    if isinstance(who, int):
        return Seat(user_id=who, name=NAMES[who])
    return Seat(name=f"Computer ({who})", ai=who)


def participant(who: Who) -> Participant:
    return Human(who) if isinstance(who, int) else Computer(who)


def game_end(
    seats: list[Who],
    finished: tuple[tuple[int, ...], ...],
    durak: int | None,
    *,
    left: tuple[int, ...] = (),
    partners: bool = False,
    chat_id: int = GROUP,
    game_id: str = "g1",
    at: float = DECEMBER,
    early: bool = False,
) -> Callable[[ChatGame | None], Write[None]]:
    """A change that ends a game with this result (an engine state made by hand: who went
    out on which move, the durak), the way the bot does: through ``finish``."""

    def change(_: ChatGame | None) -> Write[None]:
        rules = Rules.parse({**Rules().model_dump(), "partners": partners})
        table = ChatGame(
            game_id=game_id,
            chat_id=chat_id,
            creator_id=next((w for w in seats if isinstance(w, int)), 1),
            phase="playing",
            rules=rules,
            seats=[seat(who) for who in seats],
        )
        history: History | None = None
        for group in finished:
            history = (history, tuple(PlayerOut(s) for s in group))
        out = tuple(s for g in finished for s in g)
        state = new_game(rules, len(seats), seed=7)._replace(
            over=not early, durak=durak, out=out, history=history
        )
        table.set_engine_state(state)
        for s in left:
            table.seats[s].left, table.seats[s].ai = True, "normal"
        table.forced_durak = left[0] if left else None
        effects = Effects()
        finish(table, state, effects, early=early, now=at)
        return Write(table, None, stats=effects.stats)

    return change


def expected(
    seats: list[Who],
    finished: tuple[tuple[int, ...], ...],
    durak: int | None,
    *,
    left: tuple[int, ...] = (),
    partners: bool = False,
    records: dict[int, RatingRecord] | None = None,
) -> dict[int, RatingRecord]:
    """What the model makes of the game: each human's record after it."""
    teams = tuple(s % 2 for s in range(len(seats))) if partners else None
    game = FinishedGame(tuple(participant(w) for w in seats), finished, durak, left, teams)
    updates = rate_game(game, records or {})
    assert updates is not None
    return {uid: update.new for uid, update in updates.items()}


async def rated(store: Storage, chat_id: int, season: str, *users: int) -> list[RatingRecord]:
    return [await store.user_rating(uid, chat_id, season) for uid in users]


async def overall(store: Storage, season: str, *users: int) -> list[RatingRecord]:
    return [await store.user_rating(uid, None, season) for uid in users]


async def rating_keys(redis: Redis) -> list[str]:
    found = [key.decode() async for key in redis.scan_iter("durak:user:*:rating:*")]
    return sorted(found)


# --- what a game's result does to the ratings ---------------------------------------------


async def test_the_finishing_order_rates_each_player_in_both_scopes(any_redis: Redis) -> None:
    store = storage(any_redis)
    seats: list[Who] = [ANN, BOB, CY]
    await store.update_table(Place(GROUP), game_end(seats, ((1,), (0,)), durak=2))
    model = expected(seats, ((1,), (0,)), durak=2)
    season = season_at(DECEMBER)
    assert season == "2026-12"
    assert await rated(store, GROUP, season, ANN, BOB, CY) == [model[ANN], model[BOB], model[CY]]
    assert await overall(store, season, ANN, BOB, CY) == [model[ANN], model[BOB], model[CY]]
    bob = model[BOB]
    assert (bob.games, bob.wins) == (1, 1) and model[CY].wins == 0
    assert model[BOB].mu > model[ANN].mu > model[CY].mu

    lines = await store.rating_lines(Place(GROUP), "g1")
    assert set(lines) == {ANN, BOB, CY}
    newcomer = RatingRecord().display
    assert (lines[BOB].old, lines[BOB].new) == (newcomer, bob.display)
    assert lines[BOB].delta == bob.display - newcomer > 0 > lines[CY].delta
    assert lines[BOB].provisional  # one game: not yet listed
    assert (await store.rating_lines(Place(GROUP), "g1", overall=True))[BOB] == lines[BOB]

    [entry] = await store.rating_history(BOB, 10)
    assert (entry.chat_id, entry.season, entry.finished_at) == (GROUP, season, DECEMBER)
    assert (entry.before, entry.after) == (newcomer, bob.display)
    assert (entry.overall_before, entry.overall_after) == (newcomer, bob.display)
    # Nothing is left pending: the entry is gone, the index is empty.
    assert not await any_redis.exists(pending_rating_key(Place(GROUP), "g1"))
    assert await store.settle_pending_stats(0.0) == 0


async def test_a_draw_counts_the_game_and_nobody_wins(any_redis: Redis) -> None:
    store = storage(any_redis)
    seats: list[Who] = [ANN, BOB]
    await store.update_table(Place(GROUP), game_end(seats, ((0, 1),), durak=None))
    ann, bob = await rated(store, GROUP, season_at(DECEMBER), ANN, BOB)
    assert (ann.games, ann.wins, bob.games, bob.wins) == (1, 0, 1, 0)
    assert ann.mu == pytest.approx(bob.mu) == pytest.approx(RatingRecord().mu)
    assert ann.sigma < RatingRecord().sigma  # a game says something even when drawn


async def test_partners_are_rated_as_teams(any_redis: Redis) -> None:
    store = storage(any_redis)
    seats: list[Who] = [ANN, BOB, CY, DI]  # teams: Ann and Cy, Bob and Di
    await store.update_table(
        Place(GROUP), game_end(seats, ((0,), (3,), (2,)), durak=1, partners=True)
    )
    model = expected(seats, ((0,), (3,), (2,)), durak=1, partners=True)
    got = await rated(store, GROUP, season_at(DECEMBER), ANN, BOB, CY, DI)
    assert got == [model[ANN], model[BOB], model[CY], model[DI]]
    assert got[0].mu == pytest.approx(got[2].mu) and got[1].mu == pytest.approx(got[3].mu)
    assert [r.wins for r in got] == [1, 0, 1, 0]  # Di went out before Cy: the team lost


async def test_a_leaver_ranks_last_below_the_durak_the_cards_made(any_redis: Redis) -> None:
    store = storage(any_redis)
    seats: list[Who] = [ANN, BOB, CY]
    # Cy left (the bot's durak); the computer played the seat out; Bob lost the cards.
    await store.update_table(Place(GROUP), game_end(seats, ((0,), (2,)), durak=1, left=(2,)))
    model = expected(seats, ((0,), (2,)), durak=1, left=(2,))
    ann, bob, cy = await rated(store, GROUP, season_at(DECEMBER), ANN, BOB, CY)
    assert [ann, bob, cy] == [model[ANN], model[BOB], model[CY]]
    assert ann.mu > bob.mu > cy.mu and cy.wins == 0
    assert [line.durak for line in await store.chat_stats(GROUP) if line.user_id == CY] == [1]


async def test_a_game_its_leaver_ended_early_ranks_the_leaver_last(any_redis: Redis) -> None:
    store = storage(any_redis)
    seats: list[Who] = [ANN, BOB, CY]
    # Ann went out; Cy left, which ended the game with Bob still holding cards.
    change = game_end(seats, ((0,),), durak=None, left=(2,), early=True)
    table = change(None).table
    assert table is not None
    assert rated_game(table) == FinishedGame(
        (Human(ANN), Human(BOB), Human(CY)), ((0,),), durak=2, left=(2,)
    )
    await store.update_table(Place(GROUP), change)
    model = expected(seats, ((0,),), durak=2, left=(2,))
    ann, bob, cy = await rated(store, GROUP, season_at(DECEMBER), ANN, BOB, CY)
    assert [ann, bob, cy] == [model[ANN], model[BOB], model[CY]]
    assert ann.mu > bob.mu > cy.mu


async def test_computer_seats_rate_the_humans_only(any_redis: Redis) -> None:
    store = storage(any_redis)
    seats: list[Who] = ["hard", ANN, "easy"]
    await store.update_table(Place(GROUP), game_end(seats, ((1,), (2,)), durak=0))
    model = expected(seats, ((1,), (2,)), durak=0)
    season = season_at(DECEMBER)
    assert await rated(store, GROUP, season, ANN) == [model[ANN]]
    assert await rating_keys(any_redis) == [
        user_rating_key(ANN, GROUP, season),
        user_rating_key(ANN, None, season),
    ]
    assert set(await store.rating_lines(Place(GROUP), "g1")) == {ANN}


async def test_a_game_without_a_human_is_never_rated(any_redis: Redis) -> None:
    store = storage(any_redis)
    change = game_end(["easy", "hard"], ((1,),), durak=0)
    table = change(None).table
    assert table is not None and rated_game(table) is None
    await store.update_table(Place(GROUP), change)
    assert await rating_keys(any_redis) == []
    assert not await any_redis.exists(pending_rating_key(Place(GROUP), "g1"))
    assert await store.rating_lines(Place(GROUP), "g1") == {}


async def test_a_group_with_rating_off_counts_stats_but_rates_nothing(any_redis: Redis) -> None:
    store = storage(any_redis)
    assert json.loads(ChatSettings().to_json()) == {
        "schema": 1,
        "lang": None,
        "how_to_shown": False,
    }
    await store.save_chat_settings(GROUP, ChatSettings(lang="en", rating=False))
    assert (await store.chat_settings(GROUP)).rating is False
    await store.update_table(Place(GROUP), game_end([ANN, BOB], ((0,),), durak=1))
    assert (await store.user_stats(ANN)).played == 1
    assert await rating_keys(any_redis) == []
    assert await store.rating_lines(Place(GROUP), "g1") == {}
    # Another group keeps the default: rated.
    await store.update_table(Place(OTHER), game_end([ANN, BOB], ((0,),), durak=1, chat_id=OTHER))
    assert (await store.user_rating(ANN, OTHER, season_at(DECEMBER))).games == 1
    assert (await store.user_rating(ANN, None, season_at(DECEMBER))).games == 1


# --- exactly once ---------------------------------------------------------------------------


async def assert_rated_once(
    store: Storage, *users: int, chat_id: int = GROUP, games_overall: int = 1
) -> None:
    """The group's game counted once for each of ``users``: in the group's season, overall
    (where ``games_overall`` games of theirs were rated in all), in their histories and on
    the group's leaderboard."""
    season = season_at(DECEMBER)
    assert [r.games for r in await rated(store, chat_id, season, *users)] == [1] * len(users)
    assert [r.games for r in await overall(store, season, *users)] == [games_overall] * len(users)
    for uid in users:
        assert len(await store.rating_history(uid, 10)) == games_overall
    board = await store.top(chat_id, season, min_games=0, limit=10)
    assert sorted((line.user_id, line.games) for line in board) == [
        (uid, 1) for uid in sorted(users)
    ]


async def test_settling_twice_rates_once(any_redis: Redis) -> None:
    store = storage(any_redis)
    await store.update_table(Place(GROUP), game_end([ANN, BOB, CY], ((0,), (1,)), durak=2))
    before = await rated(store, GROUP, season_at(DECEMBER), ANN, BOB, CY)
    await store.settle_game_stats(Place(GROUP), "g1")
    await store.settle_game_stats(Place(GROUP), "g1")
    assert await rated(store, GROUP, season_at(DECEMBER), ANN, BOB, CY) == before
    await assert_rated_once(store, ANN, BOB, CY)


async def test_two_workers_settling_at_once_rate_once(any_redis: Redis) -> None:
    with pytest.raises(ConnectionError):
        await crashing(any_redis).update_table(
            Place(GROUP), game_end([ANN, BOB, CY], ((0,),), durak=2)
        )
    first, second = storage(any_redis), storage(any_redis)
    await asyncio.gather(
        first.settle_game_stats(Place(GROUP), "g1"),
        second.settle_game_stats(Place(GROUP), "g1"),
        first.settle_pending_stats(0.0),
        second.settle_pending_stats(0.0),
    )
    await assert_rated_once(first, ANN, BOB, CY)
    model = expected([ANN, BOB, CY], ((0,),), durak=2)
    assert await rated(first, GROUP, season_at(DECEMBER), ANN) == [model[ANN]]
    assert (await first.user_stats(ANN)).played == 1


async def test_a_crash_between_the_commit_and_the_rating(any_redis: Redis) -> None:
    with pytest.raises(ConnectionError):
        await crashing(any_redis).update_table(Place(GROUP), game_end([ANN, BOB], ((0,),), durak=1))
    other = storage(any_redis)
    assert await any_redis.exists(pending_rating_key(Place(GROUP), "g1"))  # with the move
    assert (await other.user_rating(ANN, GROUP, season_at(DECEMBER))).games == 0  # not yet
    assert await other.settle_pending_stats(0.0) == 1
    assert await storage(any_redis).settle_pending_stats(0.0) == 0  # nothing left to do
    await other.settle_game_stats(Place(GROUP), "g1")  # a repeat rates nothing
    await assert_rated_once(other, ANN, BOB)


async def test_a_crash_while_applying_leaves_the_rest_to_the_next_settling(
    any_redis: Redis, monkeypatch: pytest.MonkeyPatch
) -> None:
    with pytest.raises(ConnectionError):
        await crashing(any_redis).update_table(
            Place(GROUP), game_end([ANN, BOB, CY], ((0,),), durak=2)
        )
    apply_once = GameRatings._apply_once
    applied: list[int] = []

    async def dies_after_the_first(self: GameRatings, *args: Any) -> None:
        if applied:
            raise ConnectionError("worker killed")
        await apply_once(self, *args)
        applied.append(args[3])  # (chat, game, plan, user id, player)

    monkeypatch.setattr(GameRatings, "_apply_once", dies_after_the_first)
    dying = storage(any_redis)
    with pytest.raises(ConnectionError):
        await dying.settle_game_stats(Place(GROUP), "g1")
    monkeypatch.undo()
    [first] = applied
    assert (await dying.user_rating(first, GROUP, season_at(DECEMBER))).games == 1
    assert await dying.rating_lines(Place(GROUP), "g1")  # the plan stands: the lines too
    assert await storage(any_redis).settle_pending_stats(0.0) == 1
    await assert_rated_once(dying, ANN, BOB, CY)
    model = expected([ANN, BOB, CY], ((0,),), durak=2)
    assert await rated(dying, GROUP, season_at(DECEMBER), ANN, BOB, CY) == [
        model[ANN],
        model[BOB],
        model[CY],
    ]


async def test_a_game_elsewhere_between_plan_and_apply_is_not_lost(any_redis: Redis) -> None:
    """Ann's games in two groups are both planned from her same overall rating, then
    applied one after the other: the second carries its change over the first."""
    dying = crashing(any_redis)
    for chat in (GROUP, OTHER):
        with pytest.raises(ConnectionError):
            await dying.update_table(
                Place(chat), game_end([ANN, BOB], ((0,),), durak=1, chat_id=chat)
            )
    store = storage(any_redis)
    ratings: Any = store._ratings
    plans = {}
    for chat in (GROUP, OTHER):
        pending = await any_redis.get(pending_rating_key(Place(chat), "g1"))
        assert pending is not None
        plans[chat] = await ratings._plan_once(Place(chat), "g1", pending_from_json(pending))
    assert plans[GROUP].players[ANN].overall.old == plans[OTHER].players[ANN].overall.old
    assert await store.settle_pending_stats(0.0) == 2
    ann = await store.user_rating(ANN, None, season_at(DECEMBER))
    first = plans[GROUP].players[ANN].overall
    both = apply_update(first.new, plans[OTHER].players[ANN].overall)
    assert ann == both and (ann.games, ann.wins) == (2, 2)
    assert ann.mu == pytest.approx(RatingRecord().mu + 2 * (first.new.mu - first.old.mu))
    assert (await store.user_rating(ANN, OTHER, season_at(DECEMBER))).games == 1
    [line] = [e for e in await store.top(None, season_at(DECEMBER), 0, 5) if e.user_id == ANN]
    assert (line.games, line.rating) == (2, ann.display)


# --- leaderboards, seasons ------------------------------------------------------------------


async def test_leaderboards_list_players_with_enough_games(any_redis: Redis) -> None:
    store = storage(any_redis)
    for n in range(3):  # Ann beats Bob three times; Cy joins the last game and loses
        seats: list[Who] = [ANN, BOB, CY] if n == 2 else [ANN, BOB]
        durak = 2 if n == 2 else 1
        await store.update_table(
            Place(GROUP), game_end(seats, ((0,), (1,))[: len(seats) - 1], durak, game_id=f"g{n}")
        )
    season = season_at(DECEMBER)
    board = await store.top(GROUP, season, min_games=2, limit=10)
    assert [(line.place, line.user_id, line.name, line.games) for line in board] == [
        (1, ANN, "Ann", 3),
        (2, BOB, "Bob", 3),
    ]
    assert (
        board[0].wins == 3
        and board[0].rating == (await store.user_rating(ANN, GROUP, season)).display
    )
    assert [line.user_id for line in await store.top(GROUP, season, 0, 10)] == [ANN, BOB, CY]
    assert [line.user_id for line in await store.top(GROUP, season, 0, 1)] == [ANN]
    assert [line.user_id for line in await store.top(None, season, 3, 10)] == [ANN, BOB]
    assert await store.top(OTHER, season, 0, 10) == []
    assert len(await store.rating_history(ANN, 2)) == 2  # newest first, as many as asked
    assert (await store.rating_history(ANN, 1))[0].after == board[0].rating


async def test_a_game_in_december_and_one_in_january_are_different_seasons(
    any_redis: Redis,
) -> None:
    store = storage(any_redis)
    await store.update_table(Place(GROUP), game_end([ANN, BOB], ((0,),), durak=1, at=DECEMBER))
    await store.update_table(
        Place(GROUP), game_end([ANN, BOB], ((1,),), durak=0, game_id="g2", at=JANUARY)
    )
    december, january = season_at(DECEMBER), season_at(JANUARY)
    assert (december, january) == ("2026-12", "2027-01")
    fresh = expected([ANN, BOB], ((1,),), durak=0)  # January starts everyone afresh
    for scope in (GROUP, None):
        ann_dec, ann_jan = [await store.user_rating(ANN, scope, s) for s in (december, january)]
        assert (ann_dec.games, ann_dec.wins, ann_jan.games, ann_jan.wins) == (1, 1, 1, 0)
        assert ann_jan == fresh[ANN]
        assert [e.wins for e in await store.top(scope, january, 0, 5)] == [1, 0]
    assert await any_redis.exists(leaderboard_key(GROUP, december), leaderboard_key(None, january))
    seasons = [entry.season for entry in await store.rating_history(ANN, 10)]
    assert seasons == [january, december]


# --- records from before ratings --------------------------------------------------------------


async def test_records_from_before_ratings_still_load_and_settle(any_redis: Redis) -> None:
    store = storage(any_redis)
    await any_redis.set(settings_key(GROUP), (FIXTURES / "chat_settings.json").read_text())
    settings = await store.chat_settings(GROUP)
    assert settings.rating and settings.lang is not None
    await any_redis.set(table_key(Place(GROUP)), (FIXTURES / "table_finished.json").read_text())
    table = await store.load_table(Place(GROUP))
    assert table is not None and table.phase == "finished"
    game = rated_game(table)  # what the rating would have made of it
    assert game is not None and len(game.seats) == len(table.seats)
    # A game that ended before ratings left user totals pending, and no rating.
    await any_redis.set(
        pending_stats_key(Place(GROUP), "old"), json.dumps([{"user_id": ANN, "name": "Ann"}])
    )
    await any_redis.sadd(pending_index_key(shard_of(GROUP, PENDING_SHARDS)), f"{GROUP}:old")
    assert await store.settle_pending_stats(0.0) == 1
    assert (await store.user_stats(ANN)).played == 1
    assert (
        await rating_keys(any_redis) == [] and await store.rating_lines(Place(GROUP), "old") == {}
    )


async def test_an_unreadable_pending_rating_is_dropped_not_retried_forever(
    any_redis: Redis,
) -> None:
    store = storage(any_redis)
    await any_redis.set(pending_rating_key(Place(GROUP), "bad"), "{not json")
    await any_redis.sadd(pending_index_key(shard_of(GROUP, PENDING_SHARDS)), f"{GROUP}:bad")
    assert await store.settle_pending_stats(0.0) == 1
    assert not await any_redis.exists(pending_rating_key(Place(GROUP), "bad"))
    assert await store.settle_pending_stats(1e9) == 0
    assert not await any_redis.exists(rating_plan_key(Place(GROUP), "bad"))


# --- a Redis Cluster -----------------------------------------------------------------------------


@pytest.fixture(scope="module")
def cluster(tmp_path_factory: pytest.TempPathFactory) -> Iterator[Cluster]:
    try:
        with redis_cluster(tmp_path_factory.mktemp("cluster")) as running:
            yield running
    except RuntimeError as err:  # never skip silently: tests/run.sh installs redis
        pytest.fail(str(err))


@pytest.fixture
async def cluster_client(cluster: Cluster) -> AsyncIterator[Redis]:
    rc = RedisCluster.from_url(cluster.url)
    await rc.flushall()
    yield rc  # type: ignore[misc]
    await rc.aclose()


async def test_on_a_cluster_each_step_stays_in_one_slot(cluster_client: Redis) -> None:
    """Games in two groups (two slots), their players' ratings in theirs, the overall
    board in its own: a crash, two settlers at once, then the boards."""
    settle: list[Awaitable[None]] = []
    for chat in (GROUP, OTHER):
        with pytest.raises(ConnectionError):
            await crashing(cluster_client).update_table(
                Place(chat), game_end([ANN, BOB, CY], ((0,), (1,)), durak=2, chat_id=chat)
            )
        settle += [storage(cluster_client).settle_game_stats(Place(chat), "g1") for _ in range(2)]
    await asyncio.gather(*settle)
    for chat in (GROUP, OTHER):
        await assert_rated_once(
            storage(cluster_client), ANN, BOB, CY, chat_id=chat, games_overall=2
        )
    store = storage(cluster_client)
    board = await store.top(None, season_at(DECEMBER), 2, 10)
    assert [(line.user_id, line.games) for line in board] == [(ANN, 2), (BOB, 2), (CY, 2)]


async def test_a_stale_copy_never_overwrites_the_leaderboard(any_redis: Redis) -> None:
    """Two settlers may copy a player's record to a board in either order: the copy with
    fewer games loses (a Lua step on Redis, a WATCH transaction without Lua)."""
    store = storage(any_redis)
    boards: Any = store._boards
    season = season_at(DECEMBER)
    newer, older = RatingRecord(30.0, 5.0, 2, 2), RatingRecord(27.0, 6.0, 1, 1)
    await boards.copy(GROUP, season, ANN, "Ann", newer)
    await boards.copy(GROUP, season, ANN, "Ann (old name)", older)
    [line] = await store.top(GROUP, season, 0, 5)
    assert (line.name, line.games, line.rating) == ("Ann", 2, newer.display)
    assert await any_redis.zscore(leaderboard_key(GROUP, season), str(ANN)) == newer.display
    scripted = store._boards._conditional.scripted
    assert scripted == (not isinstance(any_redis, FakeRedis))


async def test_a_game_the_engine_played_out_is_rated_as_the_model_rates_it(
    any_redis: Redis,
) -> None:
    """Not made by hand: the computer plays a 4-seat game out, every seat a human's."""
    rules = Rules.preset("classic")
    players = [player("easy", seed=40 + s) for s in range(4)]
    state = new_game(rules, 4, seed=4)
    while not state.over:
        p = waiting_for(state)[0]
        state = apply(state, p, players[p].choose(view(state, p)))
    users = [ANN, BOB, CY, DI]

    def change(_: ChatGame | None) -> Write[None]:
        table = ChatGame(
            game_id="g1",
            chat_id=GROUP,
            creator_id=ANN,
            phase="playing",
            rules=rules,
            seats=[seat(uid) for uid in users],
        )
        table.set_engine_state(state)
        effects = Effects()
        finish(table, state, effects, early=False, now=DECEMBER)
        return Write(table, None, stats=effects.stats)

    store = storage(any_redis)
    await store.update_table(Place(GROUP), change)
    updates = rate_game(game_from_state(state, [Human(uid) for uid in users]), {})
    assert updates is not None
    got = await rated(store, GROUP, season_at(DECEMBER), *users)
    assert got == [updates[uid].new for uid in users]


async def test_a_game_played_in_the_bot_is_rated(make_harness: Any) -> None:
    async with make_harness() as h:
        for uid in (ANN, BOB):
            h.emu.add_user(uid, NAMES[uid])
        h.emu.add_group(GROUP, "Rated Club", members=[ANN, BOB], creator=ANN)
        await h.start_bot()
        for uid in (ANN, BOB):
            await h.emu.user_starts_bot(uid)
            await h.wait_text(uid, "Hi!")
        lobby = await open_lobby(h, GROUP, ANN)
        await press(h, BOB, GROUP, lobby.message_id, text="Join")
        await h.wait_text(GROUP, "2. Bob")
        await press(h, ANN, GROUP, lobby.message_id, text="Start")
        await h.wait_text(GROUP, "Trump:")
        await play_out(h, GROUP, [ANN, BOB])
        table = await h.table(GROUP)
        assert table.phase == "finished" and table.finished_at is not None
        store: Storage = h.games.storage
        season = season_at(table.finished_at)
        records = [await store.user_rating(uid, GROUP, season) for uid in (ANN, BOB)]
        assert [r.games for r in records] == [1, 1]
        assert set(await store.rating_lines(Place(GROUP), table.game_id)) == {ANN, BOB}
        await h.settle()
