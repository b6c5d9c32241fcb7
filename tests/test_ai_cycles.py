"""Computer players never cycle: a long run of taken bouts switches every level to
progress mode (``ai.cycles``), so all-computer games always end."""

from __future__ import annotations

import random

import pytest

import ai
from ai import Budget, player
from ai.cycles import progress_action, streak, streak_limit
from ai.policy import playout
from engine import PRESETS, Rules, apply, new_game, view, waiting_for
from engine.actions import PASS, TAKE, Attack, Beat
from engine.core import OVER, thaw

TINY = Budget(playouts=40, min_worlds=2, max_worlds=4, endgame_nodes=3000, late_nodes=300)

# All-computer games that cycled forever with the previous heuristics (found by
# playing random seeds: each ran past 3,000 actions, the same cards led and taken
# round and round in a stock-empty endgame).
CYCLED = [
    ("short", ["easy", "easy", "easy"], 455852),
    ("full_deck", ["easy", "easy", "easy", "easy"], 298011),
    ("podkidnoy", ["normal", "normal", "normal", "easy", "normal"], 174788),
    ("classic", ["easy", "normal", "normal", "normal", "normal"], 730634),
    ("neighbours", ["normal"] * 6, 429195),
    ("perevodnoy", ["normal", "easy", "easy", "normal", "normal", "easy"], 659944),
    ("strict", ["easy", "easy", "easy", "normal", "normal", "easy"], 618177),
]


def _play(rules: Rules, levels: list[str], seed: int, cap: int) -> int | None:
    """Actions until the game ends, or None after ``cap`` actions."""
    players = [player(lv, seed=seed * 10 + s, budget=TINY) for s, lv in enumerate(levels)]
    state = new_game(rules, len(levels), seed=seed)
    for n in range(cap):
        if state.over:
            return n
        p = waiting_for(state)[0]
        v = view(state, p)
        action = players[p].choose(v)
        assert action in v.legal_actions
        state = apply(state, p, action)
    return None


@pytest.mark.parametrize(("preset", "levels", "seed"), CYCLED)
def test_games_that_used_to_cycle_now_end(preset: str, levels: list[str], seed: int) -> None:
    assert _play(Rules.preset(preset), levels, seed, 1000) is not None


@pytest.mark.parametrize(("preset", "levels", "seed"), CYCLED[:3])
def test_hard_in_a_cycling_game_ends_it(preset: str, levels: list[str], seed: int) -> None:
    levels = ["hard", *levels[1:]]
    assert _play(Rules.preset(preset), levels, seed, 1500) is not None


def test_progress_mode_breaks_a_cycle_in_the_middle() -> None:
    """Play a formerly cycling game with the old-style loop, well into its streak of
    taken bouts: every decision there is the progress-mode one, and it is legal."""
    preset, levels, seed = CYCLED[0]
    rules = Rules.preset(preset)
    players = [player(lv, seed=seed * 10 + s) for s, lv in enumerate(levels)]
    state = new_game(rules, len(levels), seed=seed)
    seen_progress = 0
    while not state.over:
        p = waiting_for(state)[0]
        v = view(state, p)
        forced = progress_action(v)
        action = players[p].choose(v)
        if forced is not None:
            assert streak(v) >= streak_limit(v.num_players)
            assert action == forced
            seen_progress += 1
            if TAKE in v.legal_actions:
                # The defender beats whenever it can.
                assert (
                    isinstance(action, Beat)
                    or not any(isinstance(a, Beat) for a in v.legal_actions)
                    or len([c for _, c in v.table if c is None]) > 1
                )
            elif v.table:
                assert action == PASS
            else:
                assert isinstance(action, Attack) and len(action.cards) == 1
        state = apply(state, p, action)
    assert seen_progress > 0


def test_random_all_computer_games_end_within_a_bound() -> None:
    rng = random.Random(2026)
    presets = sorted(PRESETS)
    games = 0
    for _ in range(400):
        rules = Rules.preset(rng.choice(presets))
        n = rng.randint(2, rules.max_players)
        levels = [rng.choice(["easy", "normal"]) for _ in range(n)]
        if rng.random() < 0.2:
            levels[rng.randrange(n)] = "hard"
        assert _play(rules, levels, rng.randrange(10**6), 2000) is not None, (rules, levels)
        games += 1
    assert games == 400


def test_streak_counts_taken_bouts_since_progress() -> None:
    rules = Rules.preset("classic")
    state = new_game(rules, 2, seed=1)
    assert streak(view(state, 0)) == 0
    assert all(progress_action(view(state, p)) is None for p in range(2))
    assert ai.LEVELS  # the module is importable with the package


def test_hard_playouts_end_by_progress_mode() -> None:
    """Hard's playouts (the shared heuristic on ``engine.core`` positions) end on their
    own, long before their safety bound, from every position of formerly cycling games."""
    for preset, levels, seed in CYCLED:
        rules = Rules.preset(preset)
        for start in range(0, 200, 7):
            state = new_game(rules, len(levels), seed=seed)
            players = [player(lv, seed=seed * 10 + s) for s, lv in enumerate(levels)]
            for _ in range(start):
                if state.over:
                    break
                p = waiting_for(state)[0]
                state = apply(state, p, players[p].choose(view(state, p)))
            if state.over:
                break
            position = thaw(state)
            playout(position, max_steps=10**5)
            assert position[OVER]
