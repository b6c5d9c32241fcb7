"""The throw-in window's policy and the tapper's own hand, in the pure flow
(``bot.domain.flow.turns``): the long window for someone who moved lately, the short one
for a player who went away, and which hands may wait for the calm delay."""

from __future__ import annotations

from test_bot_pace import ANN, GID, LONG, TIMING, at, lobby

from bot.domain import flow
from bot.domain.flow.turns import LATELY_WINDOWS
from bot.domain.records import ChatGame
from engine import Attack, Take, legal_actions, must_act


def lead_a_pair_then_take(take_at: float) -> ChatGame:
    """The attacker leads at 1.0 a card they hold a pair of; the defender takes at
    ``take_at``: only the attacker's throw-in is left."""
    game, _ = flow.start(lobby(), at(0.0), GID, ANN.user_id, [])
    state = game.engine_state()
    hand = state.hand(state.attacker)
    lead = next(
        a
        for a in legal_actions(state, state.attacker)
        if isinstance(a, Attack)
        and len(a.cards) == 1
        and sum(c.rank == a.cards[0].rank for c in hand) > 1
    )
    attacker = game.seats[state.attacker].user_id
    assert attacker is not None
    game, effects = flow.play(game, at(1.0), GID, attacker, state.step, lead)
    assert attacker not in effects.calm  # the tapper's own hand is shown at once
    state = game.engine_state()
    defender = game.seats[state.defender].user_id
    assert defender is not None
    game, effects = flow.play(game, at(take_at), GID, defender, state.step, Take())
    assert defender not in effects.calm
    assert attacker not in effects.calm  # the take gave the attacker something to do
    assert must_act(game.engine_state()).kind == "throw_in"
    return game


def test_an_attacker_who_moved_lately_gets_the_long_window() -> None:
    game = lead_a_pair_then_take(take_at=3.0)
    assert game.turn_deadline == 3.0 + LONG
    assert game.wait_window == LONG  # the turn gate counts it again from a late landing


def test_an_attacker_away_for_a_while_gets_the_short_window() -> None:
    away = 1.0 + LATELY_WINDOWS * TIMING.throw_in_window + 1.0
    game = lead_a_pair_then_take(take_at=away)
    assert game.turn_deadline == away + TIMING.throw_in_window
    assert game.wait_window == TIMING.throw_in_window
    # The window closes then: the bot passes for them and the bout goes on.
    before = game.engine_state().step
    game, _ = flow.on_timeout(game, at(away + TIMING.throw_in_window))
    assert game.engine_state().step > before


def test_the_reminded_player_is_known_until_they_move() -> None:
    game, _ = flow.start(lobby(), at(0.0), GID, ANN.user_id, [])
    assert flow.reminded_user(game) is None
    assert game.reminder_due is not None
    game, effects = flow.remind(game, at(game.reminder_due))
    leader = must_act(game.engine_state()).player
    assert leader is not None
    user = game.seats[leader].user_id
    assert effects.notify == {user} and flow.reminded_user(game) == user
    state = game.engine_state()
    assert user is not None
    game, _ = flow.play(game, at(50.0), GID, user, state.step, legal_actions(state, leader)[0])
    assert flow.reminded_user(game) is None
