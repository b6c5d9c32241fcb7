"""Hard's work per decision is bounded by count (playouts, solver nodes), scaled to
the table, so decisions stay fast at the largest table; the wall-clock cap is only a
safety net (``test_ai_players`` checks it stops a huge search). Counting instead of
timing keeps these checks firm on a loaded machine."""

from __future__ import annotations

import random
import time

import pytest

from ai import Budget, HardPlayer, player
from ai.hard import playout_cost
from engine import Rules, apply, new_game, view, waiting_for


def _decisions(
    preset: str, n: int, seed: int, hard_seats: int
) -> list[tuple[float, int, int, float]]:
    """Each Hard decision of a game against Normal: (playout cost, candidates,
    playouts, wall seconds), with a random order among players who may act."""
    rng = random.Random(seed)
    state = new_game(Rules.preset(preset), n, seed=seed)
    hards = [HardPlayer(seed=s) for s in range(hard_seats)]
    others = [player("normal", seed=s) for s in range(n)]
    out = []
    while not state.over:
        p = rng.choice(waiting_for(state))
        v = view(state, p)
        if p < hard_seats:
            t0 = time.perf_counter()
            action = hards[p].choose(v)
            wall = time.perf_counter() - t0
            if hards[p].last_worlds:
                out.append((playout_cost(v), len(v.legal_actions), hards[p].last_playouts, wall))
        else:
            action = others[p].choose(v)
        assert action in v.legal_actions
        state = apply(state, p, action)
    return out


@pytest.mark.parametrize(("preset", "n"), [("full_deck", 6), ("full_deck", 2)])
def test_work_per_decision_is_scaled_to_the_table(preset: str, n: int) -> None:
    budget = Budget()
    decisions = _decisions(preset, n, seed=4, hard_seats=2)
    assert len(decisions) >= 10
    for cost, candidates, playouts, _wall in decisions:
        planned = budget.playouts / cost
        # At most twice the planned playouts (a floor of worlds for many candidates),
        # or the floor itself: two worlds per candidate.
        assert playouts <= max(2 * planned, 2 * candidates) + candidates
    # The work (playouts x cost per playout) is level: the big table gets fewer.
    works = sorted(p * c for c, _, p, _ in decisions)
    assert works[len(works) // 2] <= 1.2 * budget.playouts


def test_the_largest_table_stays_cheaper_than_the_reference_work() -> None:
    """Six players and 52 cards: a fresh playout costs about twice a two-player 36-card
    one (measured 2.2 times), so a decision there plans about half the playouts."""
    state = new_game(Rules.preset("full_deck"), 6, seed=1)
    big = playout_cost(view(state, 0))
    state = new_game(Rules.preset("classic"), 2, seed=1)
    small = playout_cost(view(state, 0))
    assert small == pytest.approx(1.0, abs=0.05)
    assert 1.8 < big < 2.6


def test_the_endgame_solver_stays_within_its_node_budget() -> None:
    budget = Budget()
    rng = random.Random(3)
    for seed in range(3):
        state = new_game(Rules.preset("perevodnoy"), 2, seed=seed)
        hard = HardPlayer(seed=seed)
        while not state.over:
            p = rng.choice(waiting_for(state))
            v = view(state, p)
            action = hard.choose(v) if p == 0 else rng.choice(v.legal_actions)
            if p == 0:
                # The root solve, then (when it gives up) one late solve; each stops
                # one node past its budget.
                assert hard.last_nodes <= budget.endgame_nodes + budget.late_nodes + 2
            state = apply(state, p, action)
