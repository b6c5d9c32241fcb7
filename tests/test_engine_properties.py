"""Property tests over random seeds, player counts and rule options."""

from __future__ import annotations

import dataclasses
import random
from collections.abc import Iterator

from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st

from engine import (
    Action,
    Card,
    IllegalActionError,
    Rules,
    State,
    apply,
    legal_actions,
    new_game,
    result,
    view,
    waiting_for,
)
from engine.actions import ATTACK_ONE, BEAT, PASS, SWAP, TAKE, TRANSFER
from engine.cards import deck_cards, mask_of
from engine.game import is_legal
from engine.rules import HAND_SIZE

MAX_STEPS = 3000


@st.composite
def games(draw: st.DrawFn) -> tuple[Rules, int, int]:
    """Rules in every option combination, a player count they allow, a seed."""
    deck_size = draw(st.sampled_from([24, 36, 52]))
    players = draw(st.integers(2, min(6, deck_size // HAND_SIZE)))
    rules = Rules(
        deck_size=deck_size,
        variant=draw(st.sampled_from(["podkidnoy", "perevodnoy"])),
        throw_in=draw(st.sampled_from(["all", "neighbours"])),
        multi_card_lead=draw(st.booleans()),
        first_bout_limit=draw(st.sampled_from(["always", "from_four_players", "off", True, False])),
        trump_swap=draw(st.booleans()),
        partners=players in (4, 6) and draw(st.booleans()),
    )
    seed = draw(st.integers(0, 2**32 - 1))
    return rules, players, seed


def random_illegal_candidates(rng: random.Random, state: State) -> Iterator[Action]:
    """A few arbitrary actions, legal or not, to cross-check ``is_legal``."""
    cards = deck_cards(state.rules.deck_size)
    for _ in range(3):
        a, b = rng.choice(cards), rng.choice(cards)
        yield rng.choice([ATTACK_ONE[a], BEAT[a][b], TRANSFER[a], SWAP[a], TAKE, PASS])


def cards_in(obj: object, seen: set[int] | None = None) -> Iterator[Card]:
    """Every card reachable from a view, and a check that no ``State`` is reachable."""
    seen = seen if seen is not None else set()
    if id(obj) in seen:
        return
    seen.add(id(obj))
    assert not isinstance(obj, State), "a view must never carry the full state"
    if isinstance(obj, Card):
        yield obj
    elif isinstance(obj, tuple | list):
        for item in obj:
            yield from cards_in(item, seen)
    elif dataclasses.is_dataclass(obj) and not isinstance(obj, type):
        for field in dataclasses.fields(obj):
            yield from cards_in(getattr(obj, field.name), seen)


def check_invariants(state: State) -> None:
    deck = mask_of(deck_cards(state.rules.deck_size))
    parts = [*state.hands, mask_of(state.stock), state.discard, mask_of(state.attack)]
    parts.append(mask_of(c for c in state.defense if c is not None))
    union = 0
    for part in parts:
        assert union & part == 0, "a card is in two places"
        union |= part
    assert union == deck, "cards were lost or created"
    for known, hand in zip(state.known, state.hands, strict=True):
        assert known & ~hand == 0, "known cards must be in the hand"
    if state.over:
        assert waiting_for(state) == ()
        assert all(legal_actions(state, p) == [] for p in range(state.num_players))
        return
    assert len(state.attack) <= state.limit <= 6
    unbeaten = sum(c is None for c in state.defense)
    if not state.taking:
        assert unbeaten <= state.hand_size(state.defender)
    if not state.attack and not state.stock:
        assert all((state.hands[p] != 0) != (p in state.out) for p in range(state.num_players))
    if not state.attack and state.stock:
        assert all(state.hand_size(p) >= HAND_SIZE for p in range(state.num_players))
    waiting = waiting_for(state)
    assert waiting, "someone can always act until the game ends"
    for player in waiting:
        assert legal_actions(state, player), f"{player} is waited on but cannot act"


def check_view(state: State, player: int) -> None:
    seen = set(cards_in(view(state, player)))
    hidden_stock = set(state.stock[:-1]) if state.stock else set()
    assert not seen & hidden_stock, "a view shows cards still in the stock"
    for other in range(state.num_players):
        if other == player:
            continue
        unknown = set(Card(c) for c in range(52) if state.hands[other] >> c & 1) - {
            Card(c) for c in range(52) if state.known[other] >> c & 1
        }
        assert not seen & unknown, f"player {player}'s view shows {other}'s hidden cards"


@settings(max_examples=120, deadline=None, suppress_health_check=[HealthCheck.too_slow])
@given(games())
def test_random_games_keep_every_invariant_and_end(game: tuple[Rules, int, int]) -> None:
    rules, players, seed = game
    rng = random.Random(seed)
    state = new_game(rules, players, seed=seed, dealer=rng.randrange(players))
    for step in range(MAX_STEPS):
        check_invariants(state)
        if step % 7 == 0:
            assert State.from_json(state.to_json()) == state
            check_view(state, rng.randrange(players))
        if state.over:
            break
        movers = [p for p in range(players) if legal_actions(state, p)]
        player = rng.choice(movers)
        legal = legal_actions(state, player)
        for candidate in random_illegal_candidates(rng, state):
            assert is_legal(state, player, candidate) == (candidate in legal), candidate
            if candidate not in legal:
                try:
                    apply(state, player, candidate)
                except IllegalActionError:
                    pass
                else:
                    raise AssertionError(f"illegal {candidate} was applied")
        for action in legal:
            assert is_legal(state, player, action)
        before = state
        state = apply(state, player, rng.choice(legal))
        assert before.step + 1 == state.step
    assert state.over, "every game ends"
    final = result(state)
    assert final is not None
    assert sorted(final.order) == list(range(players))  # everyone finishes exactly once
    holding = final.order[len(state.out) :]  # who still held cards at the end
    assert final.durak is None or final.durak == holding[0]
    assert final.draw == (not holding) == (not final.losers)
    if rules.partners:
        assert {p % 2 for p in holding} <= {final.losing_team}
        assert final.losers == tuple(p for p in range(players) if p % 2 == final.losing_team)
    else:
        assert len(holding) <= 1 and final.losing_team is None
    assert State.from_json(state.to_json()) == state


@settings(max_examples=40, deadline=None)
@given(games())
def test_same_seed_same_game(game: tuple[Rules, int, int]) -> None:
    rules, players, seed = game
    assert new_game(rules, players, seed=seed) == new_game(rules, players, seed=seed)


def test_history_in_a_view_is_the_public_event_log() -> None:
    state = new_game(Rules(), 3, seed=11)
    rng = random.Random(11)
    while not state.over:
        player = waiting_for(state)[0]
        state = apply(state, player, rng.choice(legal_actions(state, player)))
    events = view(state, 1).history
    assert events[0].kind == "game_started" and events[-1].kind == "game_over"
    # Every event but the others' passes (the viewer's own pass is theirs to see).
    public = [e for e in state.all_events() if e.kind != "passed" or e.player == 1]
    assert list(events) == public and len(public) < len(state.all_events())


def test_hot_path_tuple_layouts_match_the_classes() -> None:
    # engine.game builds states and these events with tuple.__new__ in field order.
    from engine.events import Attacked, Beaten, BoutStarted, Discarded, Drew, Passed, PickedUp, Took

    assert State._fields == (
        "rules", "num_players", "dealer", "trump", "trump_card", "stock", "hands", "known",
        "discard", "attack", "defense", "ranks", "leader", "attacker", "defender", "limit",
        "passed", "taking", "bout", "out", "over", "durak", "step", "events", "history",
    )  # fmt: skip
    assert Attacked._fields == ("player", "cards", "kind")
    assert Beaten._fields == ("player", "attack", "card", "kind")
    assert Took._fields == Passed._fields == ("player", "kind")
    assert PickedUp._fields == ("player", "cards", "kind")
    assert Discarded._fields == ("cards", "kind")
    assert Drew._fields == ("player", "count", "trump_card", "kind")
    assert BoutStarted._fields == ("attacker", "defender", "limit", "kind")
