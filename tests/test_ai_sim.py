"""The search simulator and the endgame solver against the engine."""

from __future__ import annotations

import random

import pytest

from ai.policy import decide, to_action
from ai.sim import NONE, Sim
from ai.solver import Solver, moves
from engine import PRESETS, Rules, apply, legal_actions, new_game, result, waiting_for
from engine.actions import Swap
from engine.state import State


def _same(sim: Sim, state: State) -> None:
    assert sim.hands == list(state.hands)
    assert sim.discard == state.discard
    assert sim.stock[sim.sp :] == [int(c) for c in state.stock]
    assert sim.trump_card == state.trump_card
    assert sim.attack == [int(c) for c in state.attack]
    assert sim.defense == [NONE if c is None else int(c) for c in state.defense]
    assert sim.out == list(state.out)
    assert (sim.over, sim.durak) == (state.over, state.durak)
    final = result(state)
    if final is not None:
        assert [p for p in range(state.num_players) if sim.is_loser(p)] == list(final.losers)
    if state.attack:
        assert Sim.from_state(state).emptied == sim.emptied
    if not state.over:
        assert (sim.attacker, sim.defender, sim.leader, sim.limit) == (
            state.attacker,
            state.defender,
            state.leader,
            state.limit,
        )
        assert (sim.passed, sim.taking, sim.ranks, sim.bout) == (
            state.passed,
            state.taking,
            state.ranks,
            state.bout,
        )
        assert sim.waiting() == list(waiting_for(state))


# Every preset, plus the options no preset covers.
SIM_RULES = {
    **{name: Rules.preset(name) for name in sorted(PRESETS)},
    "partners": Rules(partners=True, deck_size=52),
    "partners_transfer_neighbours": Rules(
        partners=True, variant="perevodnoy", throw_in="neighbours", deck_size=52
    ),
    "first_bout_from_four": Rules(first_bout_limit="from_four_players", variant="perevodnoy"),
}


def _player_counts(rules: Rules) -> list[int]:
    counts = range(2, rules.max_players + 1)
    return [n for n in counts if n in (4, 6)] if rules.partners else list(counts)


@pytest.mark.parametrize("name", sorted(SIM_RULES))
def test_sim_follows_the_engine_on_random_games(name: str) -> None:
    rules = SIM_RULES[name]
    rng = random.Random(name)
    for n in _player_counts(rules):
        for _ in range(6 if not rules.partners else 12):
            state = new_game(rules, n, seed=rng.randrange(10**9), dealer=rng.randrange(n))
            sim = Sim.from_state(state)
            while not state.over:
                waiting = waiting_for(state)
                p = waiting[0] if rng.random() < 0.85 else rng.randrange(n)
                actions = legal_actions(state, p)
                if not actions:
                    continue
                action = rng.choice(actions)
                if isinstance(action, Swap):
                    assert sim.can_swap(p)
                state = apply(state, p, action)
                sim.apply(p, action)
                _same(sim, state)


@pytest.mark.parametrize("name", sorted(SIM_RULES))
def test_heuristic_and_solver_moves_are_the_engine_legal_actions(name: str) -> None:
    rules = SIM_RULES[name]
    rng = random.Random(name + "moves")
    for n in _player_counts(rules):
        for _ in range(4):
            state = new_game(rules, n, seed=rng.randrange(10**9))
            while not state.over:
                p = waiting_for(state)[0]
                sim = Sim.from_state(state)
                legal = legal_actions(state, p)
                assert {to_action(m) for m in moves(sim, p)} == set(legal)
                action = to_action(decide(sim, p))
                assert action in legal
                state = apply(state, p, action if rng.random() < 0.7 else rng.choice(legal))


def _brute(state: State) -> int:
    """Plain minimax over the engine (no pruning, no table): +1 when seat 1 is durak."""
    if state.over:
        return 0 if state.durak is None else (1 if state.durak == 1 else -1)
    p = waiting_for(state)[0]
    values = [_brute(apply(state, p, a)) for a in legal_actions(state, p)]
    return max(values) if p == 0 else min(values)


@pytest.mark.parametrize("preset", ["classic", "perevodnoy", "strict", "short"])
def test_endgame_solver_agrees_with_brute_force(preset: str) -> None:
    rules = Rules.preset(preset)
    rng = random.Random(preset + "solver")
    checked = 0
    while checked < 15:
        state = new_game(rules, 2, seed=rng.randrange(10**9))
        while not state.over:
            cards = sum(h.bit_count() for h in state.hands)
            if not state.stock and not state.attack and cards <= 7:
                break
            p = waiting_for(state)[0]
            legal = legal_actions(state, p)
            heuristic = to_action(decide(Sim.from_state(state), p))
            state = apply(state, p, heuristic if rng.random() < 0.7 else rng.choice(legal))
        if state.over:
            continue
        assert Solver(10**6).value(Sim.from_state(state)) == _brute(state)
        checked += 1
