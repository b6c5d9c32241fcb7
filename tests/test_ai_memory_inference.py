"""Hard's softer inferences: hints about missing cards, and spotting the simplest play."""

from __future__ import annotations

import random

import pytest

from ai import player
from ai.cycles import progress_action
from ai.memory import LOW_PLAIN, Memory
from ai.policy import simple_decide, to_action
from engine import Rules, apply, new_game, view, waiting_for
from engine.cards import CARD_RANK_MASK, mask_of
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


@pytest.mark.parametrize("game", range(10))
def test_hints_about_normal_players_hold(game: int) -> None:
    """World sampling trusts the hints, so they must fit the Normal heuristic too (the
    computer players' default seat), not only the simplest play: a Normal player takes
    rather than spend a high trump early, leads what the defender cannot beat late on,
    and passes only without low plain cards of a table rank. Any order of the players
    who may act at once."""
    presets = ["classic", "perevodnoy", "neighbours", "full_deck", "short", "strict"]
    rules, levels = _games(["normal"], presets, 10)[game]
    n = len(levels)
    players = [player("normal", seed=game * 10 + s) for s in range(n)]
    state = new_game(rules, n, seed=100 + game)
    order = random.Random(game)
    memory = Memory()
    hinted = 0
    while not state.over:
        v = view(state, 0)
        memory.update(v)
        for q in range(1, n):
            hidden = state.hands[q] & ~mask_of(v.known_cards[q])
            for drawn, mask in memory.hints[q]:
                assert (hidden & mask).bit_count() <= drawn
                hinted += drawn == 0 and mask != 0
        waiting = waiting_for(state)
        p = waiting[order.randrange(len(waiting))]
        state = apply(state, p, players[p].choose(view(state, p)))
    assert hinted  # the check above is not empty


def test_an_attacker_who_adds_nothing_with_room_left_lacks_low_cards_of_table_ranks() -> None:
    """At the end of a bout, an attacker who could have added (room on the table) and
    did not most likely holds no plain card of a table rank up to 10, whether it passed
    or was never asked (at a real table nobody can tell those apart)."""
    checked = 0
    for seed in range(10):
        state = new_game(Rules(), 2, seed=seed)
        players = [player("normal", seed=s) for s in range(2)]
        memory = Memory()
        while not state.over:
            before = view(state, 1)
            p = waiting_for(state)[0]
            state = apply(state, p, players[p].choose(view(state, p)))
            after = view(state, 1)
            memory.update(after)
            new = after.history[len(before.history) :]
            if before.defender != 1 or not any(e.kind == "discarded" for e in new):
                continue
            low = 0
            for a, d in before.table:
                low |= CARD_RANK_MASK[a] | (0 if d is None else CARD_RANK_MASK[d])
            low &= LOW_PLAIN[before.trump]
            if low and len(before.table) < before.limit:
                assert any(mask & low == low for _, mask in memory.hints[0])
                checked += 1
    assert checked >= 10
