"""Every level in every option combination (partners included): legal moves only,
reproducible, and partners play for their team."""

from __future__ import annotations

import itertools
import random

import pytest

from ai import Budget, HardPlayer, player
from ai.arena import Match, Tally, play_game
from engine import FirstBoutLimit, Rules, apply, new_game, view, waiting_for
from engine.actions import PASS
from engine.core import ATTACK, PASSED, Position

TINY = Budget(playouts=30, min_worlds=2, max_worlds=3, endgame_nodes=2000, late_nodes=200)

OPTIONS = list(
    itertools.product(
        (24, 36, 52),
        ("podkidnoy", "perevodnoy"),
        ("all", "neighbours"),
        (True, False),  # multi-card lead
        tuple(FirstBoutLimit),
        (True, False),  # trump swap
        (False, True),  # partners
    )
)


def _rules(option: tuple[object, ...]) -> Rules:
    deck, variant, throw_in, multi, first, swap, partners = option
    return Rules.parse(
        {
            "deck_size": deck,
            "variant": variant,
            "throw_in": throw_in,
            "multi_card_lead": multi,
            "first_bout_limit": first,
            "trump_swap": swap,
            "partners": partners,
        }
    )


def _tables(rules: Rules) -> list[int]:
    if rules.partners:
        return [n for n in (4, 6) if n <= rules.max_players]
    return list(range(2, rules.max_players + 1))


@pytest.mark.parametrize("part", range(4))
def test_every_level_is_legal_in_every_option_combination(part: int) -> None:
    """Random legal games; at random positions any seat that may act asks a fresh
    player of each level (Hard with a tiny budget, at fewer positions)."""
    checked = 0
    hard_checked = 0
    for index, option in enumerate(OPTIONS):
        if index % 4 != part:
            continue
        rules = _rules(option)
        tables = _tables(rules)
        if not tables:
            continue  # partners need 4 or 6 seats: the 24-card deck seats at most 4
        rng = random.Random(f"{index}")
        n = rng.choice(tables)
        state = new_game(rules, n, seed=rng.randrange(10**9))
        while not state.over:
            for p in waiting_for(state):
                v = view(state, p)
                if rng.random() < 0.25:
                    for level in ("easy", "normal"):
                        assert player(level, seed=checked).choose(v) in v.legal_actions
                        checked += 1
                if rng.random() < 0.01:
                    assert HardPlayer(seed=checked, budget=TINY).choose(v) in v.legal_actions
                    hard_checked += 1
            p = rng.choice(waiting_for(state))
            state = apply(state, p, rng.choice(view(state, p).legal_actions))
    assert checked > 1000
    assert hard_checked > 5


def test_partners_games_are_reproducible_from_the_seed() -> None:
    rules = Rules.parse({"partners": True})
    match = Match(("hard", "normal", "easy", "normal"), rules, 5, TINY)
    tallies = []
    for _ in range(2):
        tally = Tally()
        play_game(match, 0, 1, tally)
        tallies.append(tally)
    assert tallies[0].games == 1
    assert tallies[0].duraks == tallies[1].duraks
    assert tallies[0].team_losses == tallies[1].team_losses
    assert [len(t) for t in tallies[0].times.values()] == [
        len(t) for t in tallies[1].times.values()
    ]


def test_normal_partners_beat_easy_partners() -> None:
    rules = Rules.parse({"partners": True})
    match = Match(("normal", "easy", "normal", "easy"), rules, 11, Budget())
    tally = Tally()
    for deal in range(25):
        for rotation in range(4):
            play_game(match, deal, rotation, tally)
    decided = tally.games - tally.draws
    assert decided >= 80
    assert tally.team_losses[1] + tally.team_losses[0] == decided
    assert tally.team_losses[1] > 0.6 * decided  # measured about 83%


def test_hard_counts_a_partner_durak_as_a_loss(monkeypatch: pytest.MonkeyPatch) -> None:
    """Where Normal would throw in, Hard passes when its playouts say a throw-in makes
    its partner the durak and a pass makes an opponent the durak."""
    rules = Rules.parse({"partners": True})
    rng = random.Random(2)
    for seed in range(200):
        state = new_game(rules, 4, seed=seed)
        while not state.over:
            found = None
            for p in waiting_for(state):
                v = view(state, p)
                if PASS in v.legal_actions and player("normal").choose(v) != PASS:
                    found = v
            if found is not None:
                break
            p = rng.choice(waiting_for(state))
            state = apply(state, p, rng.choice(view(state, p).legal_actions))
        if found is not None:
            break
    assert found is not None
    me = found.player

    def fake_playout(position: Position, *args: object, **kwargs: object) -> int:
        passed = position[PASSED] >> me & 1 or not position[ATTACK]  # the pass may end the bout
        return (me + 1) % 4 if passed else (me + 2) % 4

    monkeypatch.setattr("ai.hard.playout", fake_playout)
    assert HardPlayer(seed=1, budget=TINY).choose(found) == PASS
