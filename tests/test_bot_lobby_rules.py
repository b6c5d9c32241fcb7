"""Lobbies that cannot block a group (issue 15, item 9), as the pure flow runs them."""

from __future__ import annotations

import pytest

from bot.domain import flow
from bot.domain.flow import FlowError, Moment, Person, Timing
from bot.domain.place import Place
from bot.domain.records import ChatGame

CHAT, GID = -100900, "lb0001"
TIMING = Timing(turn_timeout=60.0, ai_delay=1.0, notify_quiet=0.0)
ANN, BOB, CAROL = Person(1, "Ann"), Person(2, "Bob"), Person(3, "Carol")


def at(now: float) -> Moment:
    return Moment(now, TIMING)


def lobby(*joiners: Person, now: float = 0.0) -> ChatGame:
    game, _ = flow.new_lobby(None, at(now), Place(CHAT), "Club", ANN, GID)
    for person in joiners:
        game, _ = flow.join(game, at(now), GID, person)
    return game


def test_joins_do_not_extend_the_lobby_and_it_closes_on_time() -> None:
    game = lobby(BOB)
    closes = game.lobby_expires_at
    assert closes == flow.LOBBY_LIFETIME
    game, _ = flow.join(game, at(closes - 1), GID, CAROL)
    assert game.lobby_expires_at == closes
    with pytest.raises(FlowError, match="lobby_closed"):
        flow.start(game.model_copy(deep=True), at(closes), GID, ANN.user_id, [])
    # /newgame no longer finds it open: a new lobby replaces it.
    fresh, _ = flow.new_lobby(game, at(closes), Place(CHAT), "Club", BOB, "lb0002")
    assert fresh.creator_id == BOB.user_id and fresh.lobby_expires_at == closes + closes
    with pytest.raises(FlowError, match="lobby_open"):
        flow.new_lobby(lobby(BOB), at(closes - 1), Place(CHAT), "Club", BOB, "lb0003")


def test_a_creator_who_leaves_hands_the_lobby_on() -> None:
    game = lobby(BOB, CAROL)
    game, _ = flow.leave_lobby(game, at(5.0), GID, ANN.user_id)
    assert game.creator_id == BOB.user_id and game.creator_seen_at == 5.0


def test_the_creator_counts_as_away_after_a_while_without_a_tap() -> None:
    game = lobby(BOB)
    assert not flow.creator_away(game, flow.CREATOR_AWAY - 1)
    assert flow.creator_away(game, flow.CREATOR_AWAY)
    # Bob's taps do not keep the lobby his; Ann's do keep her present.
    game, _ = flow.join(game, at(200.0), GID, CAROL)
    assert flow.creator_away(game, flow.CREATOR_AWAY)
    game, _ = flow.change_option(game, at(200.0), GID, ANN.user_id, "deck")
    assert not flow.creator_away(game, flow.CREATOR_AWAY)


def test_unreachable_joiners_are_removed_or_dropped_after_the_deadline() -> None:
    game = lobby(BOB, CAROL)
    waiting = {BOB.user_id}
    with pytest.raises(FlowError, match="waiting_dm"):
        flow.start(game.model_copy(deep=True), at(flow.DM_DEADLINE - 1), GID, 1, waiting)
    started, effects = flow.start(game.model_copy(deep=True), at(flow.DM_DEADLINE), GID, 1, waiting)
    assert started.phase == "playing" and [s.name for s in started.seats] == ["Ann", "Carol"]
    assert [(n.key, n.kwargs) for n in effects.announce] == [
        ("group.player_dropped", {"name": "Bob"})
    ]
    # The creator (or an admin) may remove them at once.
    dropped, _ = flow.drop_unreachable(game.model_copy(deep=True), at(1.0), GID, 1, waiting)
    assert [s.name for s in dropped.seats] == ["Ann", "Carol"]
    with pytest.raises(FlowError, match="all_reachable"):
        flow.drop_unreachable(dropped, at(2.0), GID, 1, set())
