"""Computer players: legal, reproducible, budget-bounded; the arena runs."""

from __future__ import annotations

import random
import time

import pytest

import ai
from ai import Budget, HardPlayer, NoMoveError, player
from ai.arena import main as arena_main
from engine import PRESETS, PlayerView, Rules, apply, new_game, view, waiting_for

TINY = Budget(playouts=40, min_worlds=2, max_worlds=4, endgame_nodes=3000, late_nodes=300)


def _make(level: str, seed: int) -> ai.Player:
    return player(level, seed=seed, budget=TINY)


def _play(
    rules: Rules, levels: list[str], seed: int, record: list[str] | None = None
) -> tuple[int | None, int]:
    n = len(levels)
    players = [_make(level, seed * 10 + s) for s, level in enumerate(levels)]
    state = new_game(rules, n, seed=seed)
    decisions = 0
    while not state.over:
        p = waiting_for(state)[0]
        v = view(state, p)
        action = players[p].choose(v)
        assert action in v.legal_actions
        if record is not None:
            record.append(f"{p}:{action}")
        state = apply(state, p, action)
        decisions += 1
    return state.durak, decisions


@pytest.mark.parametrize("preset", sorted(PRESETS))
def test_every_level_plays_only_legal_actions(preset: str) -> None:
    rules = Rules.preset(preset)
    rng = random.Random(preset)
    total = 0
    for n in range(2, rules.max_players + 1):
        levels = [rng.choice(ai.LEVELS) for _ in range(n)]
        levels[0] = "hard"
        _, decisions = _play(rules, levels, rng.randrange(10**6))
        total += decisions
        for _ in range(2):
            _, decisions = _play(rules, [rng.choice(["easy", "normal"]) for _ in range(n)], n)
            total += decisions
    assert total > 200


@pytest.mark.parametrize("level", ai.LEVELS)
def test_random_positions_and_players_created_mid_game(level: str) -> None:
    """Random positions (random legal play), any seat that may act, a fresh player."""
    rng = random.Random(level)
    checked = 0
    for preset in sorted(PRESETS):
        rules = Rules.preset(preset)
        for _ in range(3):
            n = rng.randrange(2, rules.max_players + 1)
            state = new_game(rules, n, seed=rng.randrange(10**9))
            while not state.over:
                for p in range(n):
                    v = view(state, p)
                    if v.legal_actions and rng.random() < 0.3:
                        assert _make(level, checked).choose(v) in v.legal_actions
                        checked += 1
                p = waiting_for(state)[0]
                state = apply(state, p, rng.choice(view(state, p).legal_actions))
    assert checked > 300


def test_same_seed_same_decisions() -> None:
    rules = Rules.preset("perevodnoy")
    for levels in (["hard", "normal"], ["hard", "easy", "normal"]):
        first: list[str] = []
        second: list[str] = []
        _play(rules, levels, 7, first)
        _play(rules, levels, 7, second)
        assert first == second


def test_no_move_and_unknown_level() -> None:
    state = new_game(Rules(), 2, seed=1)
    idle = next(p for p in range(2) if not view(state, p).legal_actions)
    for level in ai.LEVELS:
        with pytest.raises(NoMoveError):
            player(level).choose(view(state, idle))
    with pytest.raises(ValueError):
        player("impossible")


def test_time_cap_stops_a_huge_search() -> None:
    huge = Budget(playouts=10**7, min_worlds=10**6, max_worlds=10**6, time_cap=0.05)
    hard = HardPlayer(seed=3, budget=huge)
    state = new_game(Rules(), 3, seed=5)
    v: PlayerView = view(state, waiting_for(state)[0])
    t0 = time.perf_counter()
    assert hard.choose(v) in v.legal_actions
    assert time.perf_counter() - t0 < 2.0
    assert 1 <= hard.last_worlds < 10**6


def test_default_hard_budget_is_respected() -> None:
    """Generous: the 1 s cap plus slack for a loaded machine."""
    rng = random.Random(9)
    hard = HardPlayer(seed=1)
    state = new_game(Rules(), 2, seed=12)
    slowest = 0.0
    while not state.over:
        p = waiting_for(state)[0]
        v = view(state, p)
        if p == 0:
            t0 = time.perf_counter()
            action = hard.choose(v)
            slowest = max(slowest, time.perf_counter() - t0)
        else:
            action = rng.choice(v.legal_actions)
        state = apply(state, p, action)
    assert slowest < 2.5


def test_arena_runs_and_reports(capsys: pytest.CaptureFixture[str]) -> None:
    assert arena_main(["normal", "easy", "easy", "--games", "6", "--rules", "neighbours"]) == 0
    out = capsys.readouterr().out
    assert "games=6" in out and "95% CI" in out and "p99" in out
    assert arena_main(["hard", "normal", "--games", "2", "--hard-playouts", "30"]) == 0
    assert "hard" in capsys.readouterr().out
