"""Views reveal nothing hidden: worlds that differ only in hidden cards look the same.

A hidden card is one the viewer cannot place: an opponent's card nobody was shown, or
a card in the stock above the face-up trump card. Two worlds that split those cards
differently between opponents (same hand sizes) and order the stock differently, with
the same public history, must give every player the same ``view`` (apart from their
own hand, which is the same in both) and the table the same ``public_view``.
"""

from __future__ import annotations

import dataclasses
import random

from deck_builder import game, play, position
from hypothesis import HealthCheck, given, settings
from test_engine_properties import MAX_STEPS, games
from test_engine_rules import SPANISH_EXAMPLE_HANDS

from engine import (
    MustAct,
    Pass,
    PlayerView,
    PublicView,
    Rules,
    State,
    apply,
    legal_actions,
    must_act,
    new_game,
    public_view,
    view,
    waiting_for,
)
from engine.cards import Card, cards_of
from engine.events import Passed


def other_world(state: State, viewer: int | None, rng: random.Random) -> State:
    """``state`` with the cards ``viewer`` cannot place dealt again at random among
    the opponents (each keeps their hand size and shown cards) and the stock above
    its face-up card; ``viewer=None`` hides every hand (the table's view)."""
    n = state.num_players
    pool: list[Card] = []
    for p in range(n):
        if p != viewer:
            pool += cards_of(state.hands[p] & ~state.known[p])
    hidden_stock = list(state.stock[:-1])  # the last card lies face up
    pool += hidden_stock
    rng.shuffle(pool)
    hands = list(state.hands)
    for p in range(n):
        if p == viewer:
            continue
        shown = state.hands[p] & state.known[p]
        count = state.hands[p].bit_count() - shown.bit_count()
        dealt, pool = pool[:count], pool[count:]
        hands[p] = shown | sum(1 << c for c in dealt)
    assert len(pool) == len(hidden_stock)
    stock = (*pool, state.stock[-1]) if state.stock else ()
    known = tuple(k & h for k, h in zip(state.known, state.hands, strict=True))
    return state._replace(hands=tuple(hands), stock=stock, known=known)


def _check_worlds(state: State, rng: random.Random) -> None:
    table = public_view(state)
    assert public_view(other_world(state, None, rng)) == table
    for viewer in range(state.num_players):
        mine = view(state, viewer)
        assert view(other_world(state, viewer, rng), viewer) == mine
        assert mine.must_act == table.must_act and mine.waiting_for == table.waiting_for


@settings(max_examples=60, deadline=None, suppress_health_check=[HealthCheck.too_slow])
@given(games())
def test_views_are_the_same_in_every_world_the_viewer_cannot_tell_apart(
    game_: tuple[Rules, int, int],
) -> None:
    rules, players, seed = game_
    rng = random.Random(seed)
    state = new_game(rules, players, seed=seed, dealer=rng.randrange(players))
    for step in range(MAX_STEPS):
        if step % 3 == 0 or state.over:
            _check_worlds(state, rng)
        if state.over:
            break
        movers = [p for p in range(players) if legal_actions(state, p)]
        player = rng.choice(movers)
        state = apply(state, player, rng.choice(legal_actions(state, player)))
    assert state.over


def test_public_view_has_no_hand_at_all() -> None:
    names = {f.name for f in dataclasses.fields(PublicView)}
    assert "hand" not in names and "hands" not in names and "legal_actions" not in names
    state = new_game(Rules(), 3, seed=2)
    table = public_view(state)
    assert not hasattr(table, "hand")
    assert table.hand_sizes == (6, 6, 6)


def test_the_issues_leak_is_gone_waiting_for_names_every_attacker_by_seat() -> None:
    state = game(SPANISH_EXAMPLE_HANDS, "9♠", dealer=2)
    assert (state.attacker, state.defender) == (3, 0)  # 6♠, the lowest trump
    state = play(state, "3: attack 7♥", "0: beat 7♥ 10♥")
    # Only seat 1 holds a 7 or a 10 ...
    assert waiting_for(state) == (1,)
    # ... but the views and the table name every attacker whose seat may add cards.
    assert must_act(state) == MustAct("throw_in", None, (3, 1, 2))
    assert view(state, 0).waiting_for == (3, 1, 2)
    assert public_view(state).waiting_for == (3, 1, 2)
    state = play(state, "1: pass")  # nobody else could add: the bout is over
    assert must_act(state) == MustAct("lead", 0, ())


def test_must_act_defend_throw_in_and_passes() -> None:
    state = position(["7♠ 7♦ 8♣", "9♠ 10♠ J♠", "7♣ 8♦ 9♦"], "A♥", attacker=0)
    state = play(state, "0: attack 7♠")
    assert must_act(state) == MustAct("defend", 1, (0, 2))
    assert must_act(state).seats == (1, 0, 2)
    state = play(state, "2: pass")  # a pass stands until a new rank lands ...
    assert legal_actions(state, 2) == []
    # ... but only seat 2 knows it: only a player holding a 7 can pass.
    assert must_act(state) == MustAct("defend", 1, (0, 2))
    assert view(state, 2).passed == (2,)
    assert view(state, 0).passed == () == public_view(state).passed
    state = play(state, "1: beat 7♠ 9♠")
    assert must_act(state) == MustAct("throw_in", None, (0, 2))
    state = play(state, "0: attack 7♦", "1: take")
    assert must_act(state) == MustAct("throw_in", None, (0, 2))


def test_must_act_is_over_when_the_game_is() -> None:
    state = new_game(Rules(), 2, seed=4)
    rng = random.Random(4)
    while not state.over:
        p = waiting_for(state)[0]
        state = apply(state, p, rng.choice(legal_actions(state, p)))
    assert must_act(state) == MustAct("over", None, ())
    assert public_view(state).waiting_for == ()


def _unseen_pass(before: PlayerView | PublicView, after: PlayerView | PublicView) -> None:
    """``after`` is ``before`` moved on by one step that showed nothing."""
    assert after.step == before.step + 1 and after.last_events == ()
    assert dataclasses.replace(after, step=before.step, last_events=before.last_events) == before


def _passes_unseen(rules: Rules, players: int, seed: int) -> int:
    """Plays a random game, checking each pass that leaves the bout going; their count."""
    rng = random.Random(seed)
    state = new_game(rules, players, seed=seed, dealer=rng.randrange(players))
    passes = 0
    for _ in range(MAX_STEPS):
        if state.over:
            break
        movers = [p for p in range(players) if legal_actions(state, p)]
        player = rng.choice(movers)
        action = rng.choice(legal_actions(state, player))
        after = apply(state, player, action)
        if action == Pass() and after.bout == state.bout and not after.over:
            passes += 1  # the bout goes on: this step shows nothing but the pass
            _unseen_pass(public_view(state), public_view(after))
            for p in range(players):
                if p != player:
                    _unseen_pass(view(state, p), view(after, p))
            mine = view(after, player)
            assert mine.passed == (player,) and mine.last_events == (Passed(player),)
        state = after
    assert state.over
    return passes


@settings(max_examples=40, deadline=None, suppress_health_check=[HealthCheck.too_slow])
@given(games())
def test_a_pass_shows_nobody_but_the_passer_anything_but_a_step(
    game_: tuple[Rules, int, int],
) -> None:
    # Only a player holding a card of a table rank can pass: whoever else saw the pass
    # would know of that card.
    _passes_unseen(*game_)


def test_passes_that_leave_the_bout_going_are_common_at_four() -> None:
    assert sum(_passes_unseen(Rules(), 4, seed) for seed in range(10)) >= 10
