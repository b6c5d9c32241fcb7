"""The bot's side of the review: a finished game's deal found again, fairness (the stored
result is the same whatever the hidden cards were), the fleet's queue and its leases."""

from __future__ import annotations

import random
from dataclasses import replace
from typing import Any

import pytest
from redis.asyncio import Redis
from test_ai_review import SMALL, _play, _same_public_deals

from ai.review import GameRecord
from bot.domain import flow
from bot.domain.flow import Moment, Person, Timing
from bot.domain.place import Place
from bot.domain.records import ChatGame
from bot.domain.review import (
    ReviewResult,
    ReviewSubject,
    costliest,
    judge_point,
    moment,
    player_points,
    review_seed,
    review_subject,
)
from bot.store.reviews import NEW_MESSAGE, ReviewJob, ReviewStore
from engine import Rules, apply, legal_actions, new_game, waiting_for

CHAT = -100321
T0 = Moment(0.0, Timing(turn_timeout=60.0, ai_delay=1.0, notify_quiet=0.0))
PEOPLE = [Person(uid, f"P{uid}") for uid in (1, 2, 3)]


def play_to_the_end(game: ChatGame, seed: int) -> ChatGame:
    """Random legal moves through the flow (as taps would make them) until the end."""
    rng = random.Random(seed)
    while game.phase == "playing":
        state = game.engine_state()
        seat = rng.choice(waiting_for(state))
        action = rng.choice(legal_actions(state, seat))
        user = game.seats[seat].user_id
        game, _ = flow.play(game, T0, game.game_id, user, state.step, action)
    return game


def replayed(record: GameRecord) -> Any:
    state = new_game(
        record.rules,
        record.num_players,
        seed=record.seed,
        deck=record.deck,
        dealer=record.dealer,
        first_game=record.first_game,
    )
    for seat, action in record.actions:
        state = apply(state, seat, action)
    return state


def test_every_game_of_a_series_is_dealt_again_for_its_review() -> None:
    """The first game (lowest trump leads) and the later ones (the durak deals, the
    left neighbour leads) replay to the very game the bot recorded."""
    game, _ = flow.new_lobby(None, T0, Place(CHAT), "Club", PEOPLE[0], "sr0001")
    for person in PEOPLE[1:]:
        game, _ = flow.join(game, T0, "sr0001", person)
    game.rules = game.rules.model_copy(update={"series_length": 3})
    game, _ = flow.start(game, T0, "sr0001", 1, [])
    firsts = []
    for number in range(3):
        game = play_to_the_end(game, seed=number)
        subject = review_subject(game)
        assert subject is not None
        assert replayed(subject.record).all_events() == game.engine_state().all_events()
        assert ReviewSubject.from_json(subject.to_json()) == subject
        firsts.append(subject.record.first_game)
        if number < 2:
            game, _ = flow.next_game(game, T0, game.game_id, f"sr000{number + 2}")
            game, _ = flow.start(game, T0, game.game_id, 1, [])
    assert firsts[0] is True
    assert game.series is not None and game.series.games_played == 3


def stored_review(record: GameRecord, seat: int) -> str:
    """What a worker stores for ``record``: its pipeline, judged at a small budget."""
    subject = ReviewSubject(Place(CHAT), "fair01", "Club", (1, None), record)
    points = player_points(subject, seat)
    seed = review_seed("fair01", seat)
    found = []
    for point in points:
        costly = judge_point(point, seed, SMALL)
        if costly is not None:
            found.append(moment(point, costly))
    return costliest(seat, len(points), found).to_json()


def test_swapping_hidden_opponent_cards_changes_nothing_stored() -> None:
    record, end = _play(["easy", "normal"], seed=4)
    assert end.durak is not None
    seat = 1 - end.durak
    others = list(_same_public_deals(record, seat))[:2]
    assert others, "no hidden swap found"
    assert all(other.deck != record.deck for other in others)
    stored = stored_review(record, seat)
    assert ReviewResult.from_json(stored).decisions > 5
    for other in others:
        assert stored_review(other, seat) == stored


# --- the queue ----------------------------------------------------------------------------


@pytest.fixture
async def store(any_redis: Redis) -> ReviewStore:
    return ReviewStore(any_redis, ttl=3600)


async def test_one_review_per_player_at_a_time_and_a_few_per_minute(store: ReviewStore) -> None:
    ann, bob, cat = (ReviewJob(Place(CHAT), "gm0001", uid, "en") for uid in (1, 2, 3))
    assert await store.request(ann, minute=10, per_minute=2) == "queued"
    assert await store.request(ann, minute=10, per_minute=2) == "running"
    assert await store.request(bob, minute=10, per_minute=2) == "queued"
    assert await store.request(cat, minute=10, per_minute=2) == "busy"
    assert await store.request(cat, minute=11, per_minute=2) == "queued"


async def test_a_lease_that_runs_out_is_taken_by_another_worker(store: ReviewStore) -> None:
    job = ReviewJob(Place(CHAT), "gm0001", 1, "en")
    assert await store.request(job, minute=0, per_minute=5) == "queued"
    first = await store.claim(now=100.0, lease=30.0)
    assert first is not None and first.job == job
    assert await store.claim(now=110.0, lease=30.0) is None  # held
    renewed = await store.renew(first, 150.0)
    assert renewed is not None
    assert await store.claim(now=140.0, lease=30.0) is None  # renewed: still held
    second = await store.claim(now=151.0, lease=30.0)  # the first worker died
    assert second is not None and second.job == job
    assert await store.renew(renewed, 200.0) is None  # the first one lost it
    assert await store.request(job, minute=0, per_minute=5) == "running"
    await store.finish(second)
    assert await store.claim(now=1000.0, lease=30.0) is None
    assert await store.request(job, minute=1, per_minute=5) == "queued"


async def test_the_progress_message_and_a_new_result_message_never_both_count(
    store: ReviewStore,
) -> None:
    job = ReviewJob(Place(CHAT), "gm0001", 1, "en")
    await store.request(job, minute=0, per_minute=5)
    assert await store.message_of(job) is None
    assert await store.claim_message(job, 77)
    assert not await store.claim_message(job, NEW_MESSAGE)  # the result edits message 77
    assert await store.message_of(job) == 77
    other = replace(job, user_id=2)
    await store.request(other, minute=0, per_minute=5)
    assert await store.claim_message(other, NEW_MESSAGE)  # sent anew: the progress goes
    assert not await store.claim_message(other, 78)
    assert await store.message_of(other) is None


def test_rules_of_the_record_survive_storage() -> None:
    record = GameRecord(Rules(deck_size=24, partners=False), 2, (), seed=5, dealer=1)
    subject = ReviewSubject(Place(CHAT), "gm0001", "Club", (1, 2), record, ("A", "B"), (None, None))
    assert ReviewSubject.from_json(subject.to_json()) == subject


async def test_the_process_pool_is_given_the_players_views_and_nothing_else() -> None:
    from ai.review import DecisionPoint, ReviewBudget
    from bot.app.review_worker import ReviewWorker
    from bot.store.reviews import Lease
    from engine import PlayerView, State

    record, _ = _play(["easy", "normal"], seed=4)
    subject = ReviewSubject(Place(CHAT), "fair01", "Club", (1, None), record)
    sent: list[tuple[Any, ...]] = []

    class Pool:
        async def think(self, work: Any, *args: Any) -> Any:
            sent.append(args)
            return work(*args)

    class Quiet:
        store = None

        async def show_progress(self, *args: Any) -> None:
            return None

    worker = ReviewWorker(Quiet(), Pool(), budget=SMALL)  # type: ignore[arg-type]
    held = Lease(ReviewJob(Place(CHAT), "fair01", 1, "en"), until=float("inf"))
    judged = await worker._judge(held, subject, 0)
    assert judged is not None and judged[1] is not None
    assert len(sent) == judged[1].decisions > 0
    for point, seed, budget in sent:
        assert type(point) is DecisionPoint and type(point.view) is PlayerView
        assert isinstance(seed, int) and isinstance(budget, ReviewBudget)
        assert not any(isinstance(v, State | GameRecord) for v in vars_of(point))


def vars_of(point: Any) -> list[Any]:
    return [getattr(point, name) for name in point.__slots__]
