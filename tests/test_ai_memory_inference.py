"""Hard's softer inferences: hints about missing cards, and spotting the simplest play."""

from __future__ import annotations

import random

import pytest

from ai import player
from ai.cycles import progress_action
from ai.memory import Memory
from ai.policy import simple_decide, to_action
from engine import Rules, apply, new_game, view, waiting_for
from engine.cards import mask_of
from engine.core import actor, thaw


def _games(levels_of: list[str], presets: list[str], count: int) -> list[tuple[Rules, list[str]]]:
    rng = random.Random(7)
    out = []
    for _ in range(count):
        rules = Rules.preset(rng.choice(presets))
        n = rng.randint(2, min(4, rules.max_players))
        out.append((rules, [rng.choice(levels_of) for _ in range(n)]))
    return out


@pytest.mark.parametrize("game", range(12))
def test_simple_decide_plays_like_easy_and_memory_reads_it(game: int) -> None:
    rules, levels = _games(["easy", "normal"], ["classic", "perevodnoy", "strict"], 12)[game]
    n = len(levels)
    players = [player(level, seed=game * 10 + s) for s, level in enumerate(levels)]
    state = new_game(rules, n, seed=game)
    memory = Memory()
    steps = 0
    while not state.over and steps < 3000:
        p = waiting_for(state)[0]
        v = view(state, p)
        memory.update(v)
        for q, level in enumerate(levels):
            if q == p or level != "easy":
                continue
            assert memory.simple[q]
            # Easy's hand never breaks a hint beyond the cards it drew since.
            hidden = state.hands[q] & ~mask_of(v.known_cards[q])
            for drawn, mask in memory.hints[q]:
                assert (hidden & mask).bit_count() <= drawn
        action = players[p].choose(v)
        if levels[p] == "easy":
            position = thaw(state)
            # The same move, except in the anti-cycling progress mode (ai.cycles).
            if actor(position) == p and progress_action(v) is None:
                assert to_action(simple_decide(position, p)) == action
        state = apply(state, p, action)
        steps += 1


def test_normal_play_is_told_apart_from_the_simplest() -> None:
    flagged = 0
    for seed in range(6):
        state = new_game(Rules(), 2, seed=seed)
        players = [player("normal", seed=seed * 2 + s) for s in range(2)]
        memory = Memory()
        while not state.over:
            p = waiting_for(state)[0]
            state = apply(state, p, players[p].choose(view(state, p)))
        memory.update(view(state, 0))
        flagged += sum(not s for s in memory.simple)
    assert flagged >= 9


def test_hints_of_a_player_created_mid_game_match_one_that_watched() -> None:
    state = new_game(Rules(), 3, seed=5)
    players = [player(level, seed=s) for s, level in enumerate(["easy", "normal", "easy"])]
    watcher = Memory()
    while not state.over:
        v = view(state, 0)
        watcher.update(v)
        late = Memory()
        late.update(v)
        assert late.hints == watcher.hints
        assert late.simple == watcher.simple
        p = waiting_for(state)[0]
        state = apply(state, p, players[p].choose(view(state, p)))
