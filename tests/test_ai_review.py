"""The Hard player's review of a finished game: fair (views only), legal suggestions,
the obvious mistake found, and a well-played game left mostly alone."""

from __future__ import annotations

import random
from collections.abc import Iterator
from dataclasses import replace

import pytest

import ai
from ai.hard import Budget, HardPlayer
from ai.policy import playout
from ai.review import (
    GameRecord,
    ReviewBudget,
    actions_from_events,
    candidates,
    decision_points,
    describe_en,
    durak_chances,
    judge_points,
    review,
)
from engine import (
    Action,
    Card,
    IllegalActionError,
    PlayerView,
    Rules,
    State,
    Swap,
    apply,
    core,
    legal_actions,
    new_game,
    parse_action,
    view,
    waiting_for,
)
from engine.cards import deck_cards

SMALL = ReviewBudget(
    screen_playouts=90,
    screen_min_worlds=4,
    screen_max_worlds=24,
    refine_batch=24,
    refine_max_worlds=48,
    endgame_nodes=8_000,
)
"""A test budget: a fraction of the default's work, the same logic."""
FAST_HARD = Budget(playouts=120)
"""Hard at a third of its work, to play the test games quickly."""


def _deck(rules: Rules, seed: int) -> tuple[Card, ...]:
    order = list(deck_cards(rules.deck_size))
    random.Random(seed).shuffle(order)
    return tuple(order)


def _play(
    levels: list[str], seed: int, rules: Rules | None = None, max_actions: int = 10_000
) -> tuple[GameRecord, State]:
    """A game of computer players from an explicit deck, as the arena plays it (a
    seeded random one of the players who may act goes first)."""
    rules = rules or Rules()
    n = len(levels)
    record = GameRecord(rules, n, (), deck=_deck(rules, seed))
    state = new_game(rules, n, deck=record.deck)
    players = [
        ai.player(level, seed=seed * 8 + s, budget=FAST_HARD) for s, level in enumerate(levels)
    ]
    order = random.Random(seed)
    actions: list[tuple[int, Action]] = []
    while not state.over and len(actions) < max_actions:
        waiting = waiting_for(state)
        p = waiting[0] if len(waiting) == 1 else order.choice(waiting)
        action = players[p].choose(view(state, p))
        actions.append((p, action))
        state = apply(state, p, action)
    return replace(record, actions=tuple(actions)), state


def _replay(record: GameRecord) -> State:
    state = new_game(record.rules, record.num_players, deck=record.deck)
    for p, action in record.actions:
        state = apply(state, p, action)
    return state


# --- fairness ------------------------------------------------------------------------


def _never_public(state: State) -> set[Card]:
    """Cards that never appeared in any event of the game (so never face up)."""
    public: set[Card] = {state.trump_card}
    for event in state.all_events():
        for value in event:
            items = value if isinstance(value, tuple) else (value,)
            public.update(c for c in items if isinstance(c, Card))
    return set(deck_cards(state.rules.deck_size)) - public


def _same_public_deals(record: GameRecord, seat: int) -> Iterator[GameRecord]:
    """Records dealt differently (two hidden cards swapped between opponents, or an
    opponent and the stock) whose same actions replay and show ``seat`` exactly the
    same view at every one of its decisions."""
    assert record.deck is not None
    hidden = _never_public(_replay(record))
    points = decision_points(record, seat)
    dealt = _replay(replace(record, actions=()))
    deck = record.deck
    spots = [i for i, c in enumerate(deck) if c in hidden]
    for a, i in enumerate(spots):
        for j in spots[a + 1 :]:
            swapped = list(deck)
            swapped[i], swapped[j] = swapped[j], swapped[i]
            other = replace(record, deck=tuple(swapped))
            try:
                other_points = decision_points(other, seat)
            except IllegalActionError:  # the new deal makes a recorded action illegal
                continue
            other_dealt = _replay(replace(other, actions=()))
            moved = other_dealt.hands != dealt.hands or other_dealt.stock != dealt.stock
            if moved and other_points == points:  # not two cards of one hand
                yield other


def _true_playouts(record: GameRecord, seat: int) -> list[list[int | None]]:
    """What a cheating review would see: each action's playout from the true state."""
    state = _replay(replace(record, actions=()))
    found = []
    for p, action in record.actions:
        if p == seat:
            results = []
            for candidate in legal_actions(state, p):
                position = core.thaw(state)
                core.play(position, p, candidate)
                results.append(playout(position))
            found.append(results)
        state = apply(state, p, action)
    return found


@pytest.mark.parametrize(
    ("levels", "seed", "cut"),
    [(["normal", "easy", "normal"], 5, 30), (["easy", "normal"], 4, None)],
    ids=["three-players-mid-game", "two-players-finished"],
)
def test_swapping_hidden_cards_leaves_the_review_unchanged(
    levels: list[str], seed: int, cut: int | None
) -> None:
    record, end = _play(levels, seed)
    if cut is not None:
        record = replace(record, actions=record.actions[:cut])  # unfinished: many secrets
        seat = 0
    else:
        # Finished, only the durak's last cards stayed hidden: review the winner, and
        # swap the durak's unseen cards with unseen ones they drew from the stock.
        assert end.durak is not None
        seat = 1 - end.durak
    others = list(_same_public_deals(record, seat))[:2]
    assert others, "no hidden swap found"
    # The swaps matter: an evaluator that played out the true positions would tell them apart.
    truth = _true_playouts(record, seat)
    assert any(_true_playouts(other, seat) != truth for other in others)
    verdicts = [v for _, v in judge_points(decision_points(record, seat), SMALL, seed=9)]
    assert verdicts
    for other in others:
        other_verdicts = judge_points(decision_points(other, seat), SMALL, seed=9)
        assert [v for _, v in other_verdicts] == verdicts


def test_the_search_only_ever_receives_views(monkeypatch: pytest.MonkeyPatch) -> None:
    seen: list[object] = []
    original = HardPlayer.outcomes

    def spy(self: HardPlayer, v: PlayerView, *args: object, **kwargs: object) -> object:
        seen.append(v)
        assert isinstance(v, PlayerView)
        assert not any(isinstance(a, State) for a in (*args, *kwargs.values()))
        return original(self, v, *args, **kwargs)  # type: ignore[arg-type]

    monkeypatch.setattr(HardPlayer, "outcomes", spy)
    record, _ = _play(["normal", "hard"], seed=3, max_actions=30)
    review(record, 0, budget=SMALL)
    assert seen


def test_a_record_rebuilt_from_the_events_replays_the_game() -> None:
    record, state = _play(["easy", "normal", "easy"], seed=11, rules=Rules.preset("perevodnoy"))
    assert actions_from_events(state.all_events()) == record.actions
    assert _replay(record).all_events() == state.all_events()


# --- legal suggestions -----------------------------------------------------------------


@pytest.mark.parametrize(
    ("levels", "rules"),
    [
        (["normal", "hard"], Rules()),
        (["normal", "easy", "hard", "easy"], Rules.preset("perevodnoy")),
        (["easy", "hard", "easy", "normal"], Rules(partners=True)),
    ],
    ids=["two", "four-transfers", "partners"],
)
def test_suggestions_are_legal_moves_of_the_view_at_the_time(
    levels: list[str], rules: Rules
) -> None:
    record, _ = _play(levels, seed=7, rules=rules)
    points = {p.number: p for p in decision_points(record, 0)}
    result = review(record, 0, budget=SMALL, seed=1)
    assert result.decisions == len(points) and len(result.costly) <= 3
    costs = [c.cost for c in result.costly]
    assert costs == sorted(costs, reverse=True)
    for costly in result.costly:
        point = points[costly.number]
        assert len(candidates(point.view)) >= 2 and not isinstance(point.taken, Swap)
        assert costly.taken == point.taken == record.actions[costly.action_index][1]
        assert costly.best in point.view.legal_actions and costly.best != costly.taken
        assert costly.bout == point.view.bout
        assert 0 <= costly.durak_best < costly.durak_taken <= 1
        assert costly.cost >= SMALL.min_cost and costly.cost > costly.noise
        assert describe_en(costly)


def test_one_decision_gives_a_durak_chance_per_action() -> None:
    record, _ = _play(["normal", "normal"], seed=2, max_actions=12)
    point = decision_points(record, 0)[0]
    chances = durak_chances(point.view, budget=SMALL)
    assert list(chances) == candidates(point.view)
    assert all(0 <= c <= 1 for c in chances.values())
    calls: list[tuple[int, int]] = []
    result = review(record, 0, budget=SMALL, progress=lambda k, n: calls.append((k, n)))
    assert calls == [(k, result.decisions) for k in range(1, result.decisions + 1)]


# --- an obvious mistake ----------------------------------------------------------------

# A two-player 24-card game (trump: spades, the K♠ at the bottom), played by Hard on both
# sides except for one move. With the stock gone player 0 holds K♠ and must answer 10♥:
# beating it with K♠ wins the game (the exact solver proves it), and player 0 took.
ENDGAME_DECK = "J♣ A♥ A♣ A♦ Q♣ 10♦ A♠ K♥ Q♥ 9♥ 9♠ 10♥ 10♠ 10♣ K♦ 9♦ K♣ J♦ Q♦ Q♠ J♥ J♠ 9♣ K♠"
ENDGAME_ACTIONS = (
    "1: swap 9♠; 1: attack Q♣; 0: take; 1: attack Q♥; 1: attack 10♣; 0: take; 1: pass; "
    "1: attack 9♦; 0: take; 1: attack A♠; 0: take; 1: pass; 1: attack J♦ J♣; "
    "0: beat J♦ A♠; 0: beat J♣ Q♣; 1: pass; 0: attack 9♥ 9♦; 1: beat 9♦ 10♠; "
    "1: beat 9♥ Q♠; 0: attack Q♥; 1: take; 0: attack 10♥; 0: attack 10♦; 0: pass; "
    "0: attack A♥; 1: beat A♥ Q♠; 0: attack A♦; 1: beat A♦ 10♠; 0: attack 10♣; "
    "1: beat 10♣ K♣; 0: attack K♥; 1: take; 0: attack 9♣; 1: beat 9♣ 10♣; 0: pass; "
    "1: attack 9♥ 9♦; 0: beat 9♥ J♥; 0: beat 9♦ 9♠; 0: attack J♠; 1: beat J♠ Q♠; "
    "1: attack 10♥; 0: take; 1: attack Q♥ Q♦; 0: take; 1: attack K♥ K♦ K♣; 0: take; "
    "1: attack 10♦; 0: beat 10♦ Q♦; 1: pass; 0: attack 10♥; 1: beat 10♥ A♥; "
    "1: attack A♦ A♣; 0: take; 1: attack 10♠; 0: beat 10♠ K♠"
)
MISTAKE = 41
"""The index of the fatal ``0: take`` in ``ENDGAME_ACTIONS``."""


def _endgame_record() -> GameRecord:
    moves = []
    for text in ENDGAME_ACTIONS.split("; "):
        seat, action = text.split(": ")
        moves.append((int(seat), parse_action(action)))
    deck = tuple(Card.parse(c) for c in ENDGAME_DECK.split())
    return GameRecord(Rules(deck_size=24), 2, tuple(moves), deck=deck)


def test_the_review_names_the_losing_take_and_the_winning_beat() -> None:
    record = _endgame_record()
    assert record.actions[MISTAKE] == (0, parse_action("take"))
    assert _replay(record).durak == 0
    result = review(record, 0, budget=SMALL, seed=3)
    worst = result.costly[0]
    assert worst.action_index == MISTAKE
    assert worst.taken == parse_action("take")
    assert worst.best == parse_action("beat 10♥ K♠")
    assert worst.exact and worst.durak_taken == 1.0 and worst.durak_best == 0.0
    assert all(c.cost < worst.cost for c in result.costly[1:])
    assert "take" in describe_en(worst) and "100%" in describe_en(worst)


# --- a game played well ----------------------------------------------------------------


def test_hard_against_easy_shows_few_costs_and_far_smaller_than_easys() -> None:
    """Hard's play (at a third of its budget) draws few and small costs, far below
    those of the Easy player it beats, game for game. (Over eight such games Hard's
    largest reported cost was 0.27 at this review budget, Easy's top three 0.2 to 1.)"""
    hard_costs: list[float] = []
    easy_costs: list[float] = []
    for seed in (0, 1):
        record, _ = _play(["hard", "easy"], seed)
        hard = review(record, 0, budget=SMALL, seed=seed)
        easy = review(record, 1, budget=SMALL, seed=seed)
        assert hard.decisions >= 10
        assert len(hard.costly) <= 2
        hard_costs += (c.cost for c in hard.costly)
        easy_costs += (c.cost for c in easy.costly)
    assert all(cost < 0.35 for cost in hard_costs)
    assert sum(easy_costs) > 2 * sum(hard_costs) + 0.5
