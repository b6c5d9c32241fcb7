"""The endgame solver on games that go round in circles (transfers), and Hard's
visible fallback when its search fails."""

from __future__ import annotations

import logging
import random

import pytest

from ai import HardPlayer, player
from ai.solver import MAX_DEPTH, Solver, SolverBudget
from engine import Rules, State, apply, new_game, view, waiting_for
from engine.core import thaw


def _transfer_endgame(seed: int) -> State:
    """A 2-player perevodnoy game played by Normal, in a random order among the players
    who may act, up to the moment the stock runs out."""
    rng = random.Random(seed)
    state = new_game(Rules.preset("perevodnoy"), 2, seed=seed)
    players = [player("normal", seed), player("normal", seed + 1)]
    while not state.over and state.stock:
        p = rng.choice(waiting_for(state))
        state = apply(state, p, players[p].choose(view(state, p)))
    assert not state.over
    return state


def test_a_long_transfer_chain_is_solved_without_recursion_error() -> None:
    """Seed 60 made the old solver recurse about 485 calls deep (RecursionError): the
    same cards travel back and forth by transfers and pick-ups with no discard."""
    state = _transfer_endgame(60)
    solver = Solver(200_000)
    value = solver.value(thaw(state))
    assert value in (-1, 0, 1)
    assert solver.repeats > 0  # the position really cycles
    assert not solver.path and solver.depth == 0  # the path unwinds completely


def test_the_depth_cap_gives_up_cleanly() -> None:
    state = _transfer_endgame(60)
    solver = Solver(10**7)
    solver.depth = MAX_DEPTH - 3  # as if called from deep inside a search
    with pytest.raises(SolverBudget):
        solver.value(thaw(state))


def test_hard_decides_every_move_of_a_cycling_perevodnoy_endgame() -> None:
    state = _transfer_endgame(60)
    hard = [player("hard", seed=1), player("hard", seed=2)]
    steps = 0
    while not state.over:
        p = waiting_for(state)[0]
        v = view(state, p)
        action = hard[p].choose(v)
        assert action in v.legal_actions
        state = apply(state, p, action)
        steps += 1
    assert steps > 0


def test_a_failing_search_is_logged_and_normal_plays(
    monkeypatch: pytest.MonkeyPatch, caplog: pytest.LogCaptureFixture
) -> None:
    def broken(self: HardPlayer, *args: object) -> object:
        raise RuntimeError("search bug")

    monkeypatch.setattr(HardPlayer, "_search", broken)
    state = new_game(Rules.preset("classic"), 2, seed=5)
    p = waiting_for(state)[0]
    v = view(state, p)
    with caplog.at_level(logging.ERROR, logger="ai.hard"):
        action = HardPlayer(seed=3).choose(v)
    assert action in v.legal_actions
    assert action == player("normal", seed=3).choose(v)
    assert any("search bug" in (r.exc_text or "") for r in caplog.records)
