"""Hard's search on the rules core: positions played without events, the heuristic's
and the solver's moves, and the endgame solver, all against the public engine."""

from __future__ import annotations

import random
from collections.abc import Callable

import pytest

from ai.policy import decide, do, playout, simple_decide, to_action
from ai.solver import Solver, moves
from engine import PRESETS, Rules, apply, core, legal_actions, new_game, waiting_for
from engine.actions import Swap
from engine.state import State

# The fields a search keeps up to date; the public record (known cards, step, events,
# history) is the public API's: a search plays without it.
PUBLIC_RECORD = ("known", "step", "events", "history")
SEARCH_FIELDS = [i for i, name in enumerate(State._fields) if name not in PUBLIC_RECORD]


def _same(position: core.Position, state: State) -> None:
    for i in SEARCH_FIELDS:
        expected = list(state.hands) if i == core.HANDS else state[i]
        assert position[i] == expected, State._fields[i]
    assert position[core.EMPTIED] == core.thaw(state)[core.EMPTIED]
    assert core.waiting(position) == waiting_for(state)
    assert core.actor(position) == (waiting_for(state) or (-1,))[0]


# Every preset, plus the options no preset covers.
SEARCH_RULES = {
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


@pytest.mark.parametrize("name", sorted(SEARCH_RULES))
def test_a_search_position_follows_the_engine_on_random_games(name: str) -> None:
    """One position thawed at the deal and played on without events (as a playout
    does, copying it at each step as the search branches) stays equal to the engine's
    states, which thaw, step with events and freeze at every action."""
    rules = SEARCH_RULES[name]
    rng = random.Random(name)
    for n in _player_counts(rules):
        for _ in range(6 if not rules.partners else 12):
            state = new_game(rules, n, seed=rng.randrange(10**9), dealer=rng.randrange(n))
            position = core.thaw(state)
            while not state.over:
                waiting = waiting_for(state)
                p = waiting[0] if rng.random() < 0.85 else rng.randrange(n)
                actions = legal_actions(state, p)
                if not actions:
                    continue
                action = rng.choice(actions)
                if isinstance(action, Swap):
                    assert core.can_swap(position, p)
                state = apply(state, p, action)
                position = core.copy(position)
                core.play(position, p, action)
                _same(position, state)


@pytest.mark.parametrize("name", sorted(SEARCH_RULES))
def test_heuristic_and_solver_moves_are_the_engine_legal_actions(name: str) -> None:
    rules = SEARCH_RULES[name]
    rng = random.Random(name + "moves")
    for n in _player_counts(rules):
        for _ in range(4):
            state = new_game(rules, n, seed=rng.randrange(10**9))
            while not state.over:
                p = waiting_for(state)[0]
                position = core.thaw(state)
                legal = legal_actions(state, p)
                assert {to_action(m) for m in moves(position, p)} == set(legal)
                action = to_action(decide(position, p))
                assert action in legal
                state = apply(state, p, action if rng.random() < 0.7 else rng.choice(legal))


@pytest.mark.parametrize("preset", ["classic", "perevodnoy", "strict", "short"])
def test_endgame_solver_agrees_with_brute_force(preset: str) -> None:
    rules = Rules.preset(preset)
    rng = random.Random(preset + "solver")
    checked = 0

    def reached(state: State) -> bool:
        cards = sum(h.bit_count() for h in state.hands)
        return not state.stock and not state.attack and cards <= 7

    while checked < 15:
        state = _play_until(new_game(rules, 2, seed=rng.randrange(10**9)), rng, reached, 0.7)
        if state is None:
            continue
        assert Solver(10**6).value(core.thaw(state)) == _brute_for(state, 0)  # seat 0's side
        checked += 1


def _brute_for(state: State, me: int) -> int:
    """Plain minimax from ``me``'s side (no pruning, no table): +1 when the durak is not
    ``me`` (nor, with partners, on ``me``'s team), -1 when it is, 0 for a draw."""
    if state.over:
        if state.durak is None:
            return 0
        mine = (state.durak ^ me) & 1 == 0 if state.rules.partners else state.durak == me
        return -1 if mine else 1
    p = waiting_for(state)[0]
    values = [_brute_for(apply(state, p, a), me) for a in legal_actions(state, p)]
    return max(values) if p == me else min(values)


def _play_until(
    state: State, rng: random.Random, reached: Callable[[State], bool], heuristic: float
) -> State | None:
    """``state`` played on, the heuristic's move with chance ``heuristic`` and else a
    random legal one, until ``reached`` (None if the game ended first)."""
    while not state.over:
        if reached(state):
            return state
        p = waiting_for(state)[0]
        legal = legal_actions(state, p)
        move = to_action(decide(core.thaw(state), p))
        state = apply(state, p, move if rng.random() < heuristic else rng.choice(legal))
    return None


def _last_two(rules: Rules, players: int, rng: random.Random, cards: int) -> State | None:
    """A game of ``players`` played on until, between bouts, the stock is empty, exactly
    two players hold cards and they hold at most ``cards`` between them (None if it
    ended first)."""

    def reached(state: State) -> bool:
        holding = [p for p, h in enumerate(state.hands) if h and p not in state.out]
        left = sum(state.hands[p].bit_count() for p in holding)
        return not state.stock and not state.attack and len(holding) == 2 and left <= cards

    return _play_until(new_game(rules, players, seed=rng.randrange(10**9)), rng, reached, 0.8)


@pytest.mark.parametrize(
    ("preset", "players", "partners"),
    [
        ("classic", 3, False),
        ("classic", 4, False),
        ("perevodnoy", 4, False),
        ("classic", 4, True),
        ("full_deck", 6, False),
    ],
)
def test_the_solver_plays_the_last_two_of_a_bigger_table_exactly(
    preset: str, players: int, partners: bool
) -> None:
    rules = Rules.parse({**Rules.preset(preset).model_dump(), "partners": partners})
    rng = random.Random(f"{preset}{players}{partners}last-two")
    checked = 0
    while checked < 8:
        state = _last_two(rules, players, rng, 7)
        if state is None:
            continue
        me = [p for p, h in enumerate(state.hands) if h and p not in state.out][checked % 2]
        assert Solver(10**6, me=me).value(core.thaw(state)) == _brute_for(state, me)
        checked += 1


def test_hard_solves_the_last_two_of_a_four_player_game() -> None:
    """With two players left holding cards and no stock, Hard's move keeps the best
    exact result (it used to sample worlds and play them out there)."""
    from ai import HardPlayer
    from engine import view

    rng = random.Random("hard-last-two")
    checked = solved = 0
    while checked < 12:
        state = _last_two(Rules.preset("classic"), 4, rng, 6)
        if state is None:
            continue
        p = waiting_for(state)[0]
        hard = HardPlayer(seed=checked)
        action = hard.choose(view(state, p))
        legal = legal_actions(state, p)
        if len(legal) == 1:
            continue
        values = {a: _brute_for(apply(state, p, a), p) for a in legal}
        assert values[action] == max(values.values()), (action, values)
        solved += hard.last_nodes > 0
        checked += 1
    assert solved == checked  # every one of them went through the solver


def _contested(rng: random.Random) -> core.Position:
    """A four-player position where the defender has an unbeaten card and another
    player may throw in too (played there by the heuristic)."""
    while True:
        s = core.thaw(new_game(Rules.preset("classic"), 4, seed=rng.randrange(10**9)))
        while not s[core.OVER]:
            waiting = core.waiting(s)
            if len(waiting) > 1 and waiting[0] == s[core.DEFENDER] and None in s[core.DEFENSE]:
                return s
            p = core.actor(s)
            do(s, p, decide(s, p))


def _who_acted(before: core.Position, after: core.Position) -> int:
    if before[core.TAKING] != after[core.TAKING]:
        return before[core.DEFENDER]  # type: ignore[no-any-return]
    for p in range(before[core.NUM_PLAYERS]):
        if before[core.HANDS][p] != after[core.HANDS][p] or (
            (before[core.PASSED] ^ after[core.PASSED]) >> p & 1
        ):
            return p
    raise AssertionError("nobody acted")


def test_a_playout_with_an_order_lets_any_waiting_player_go_first() -> None:
    """Without ``order`` the defender always moves first; with it, as at a real table
    (and in the arena), sometimes a thrower does, and the same generator seed gives the
    same playout."""
    rng = random.Random("contested")
    for _ in range(5):
        start = _contested(rng)
        waiting = core.waiting(start)
        first = set()
        for seed in range(40):
            fixed = core.copy(start)
            playout(fixed, max_steps=1)
            assert _who_acted(start, fixed) == waiting[0]
            ordered = core.copy(start)
            playout(ordered, max_steps=1, order=random.Random(seed))
            first.add(_who_acted(start, ordered))
            again = core.copy(start)
            playout(again, max_steps=1, order=random.Random(seed))
            assert again == ordered
        assert first <= set(waiting)
        assert len(first) > 1


def _brute_model(state: State, me: int, model: int) -> int:
    """``_brute_for``, with the seats in ``model`` playing the simplest way."""
    if state.over:
        return 0 if state.durak is None else (-1 if state.durak == me else 1)
    p = waiting_for(state)[0]
    if model >> p & 1:
        return _brute_model(
            apply(state, p, to_action(simple_decide(core.thaw(state), p))), me, model
        )
    values = [_brute_model(apply(state, p, a), me, model) for a in legal_actions(state, p)]
    return max(values) if p == me else min(values)


def _duel(rng: random.Random, preset: str, cards: int) -> State | None:
    """A two-player game played on until the stock is empty and at most ``cards`` are
    in the hands and on the table (None if it ended first)."""

    def reached(state: State) -> bool:
        held = sum(h.bit_count() for h in state.hands) + 2 * len(state.attack)
        return not state.stock and held <= cards

    state = new_game(Rules.preset(preset), 2, seed=rng.randrange(10**9))
    return _play_until(state, rng, reached, 0.7)


@pytest.mark.parametrize("preset", ["classic", "perevodnoy"])
def test_the_solver_against_the_simplest_play_agrees_with_brute_force(preset: str) -> None:
    """With a seat modelled as playing the simplest way, the solver follows that play
    there, and the result against it is never worse than against every defence."""
    rng = random.Random(preset + "model")
    checked = better = 0
    while checked < 30:
        state = _duel(rng, preset, 8)
        if state is None or state.over:
            continue
        me = checked % 2
        model = 1 << (1 - me)
        value = Solver(10**6, me=me, model=model).value(core.thaw(state))
        assert value == _brute_model(state, me, model)
        exact = Solver(10**6, me=me).value(core.thaw(state))
        assert value >= exact
        better += value > exact
        checked += 1
    assert better  # the model matters somewhere


def test_hard_solves_a_duel_where_it_may_throw_in_before_the_defender() -> None:
    """Every card known, and Hard may throw in while the defender may also act: Hard's
    move comes from the exact solver (it used to fall back to one playout per move)."""
    from ai import HardPlayer
    from engine import view

    rng = random.Random("duel-thrower")
    checked = 0
    while checked < 10:
        state = _duel(rng, "classic", 7)
        if state is None:
            continue
        while not state.over:
            waiting = waiting_for(state)
            if len(waiting) > 1 and waiting[0] == state.defender:
                break
            p = waiting[0]
            state = apply(state, p, to_action(decide(core.thaw(state), p)))
        if state.over:
            continue
        thrower = waiting_for(state)[1]
        legal = legal_actions(state, thrower)
        if len(legal) == 1:
            continue
        hard = HardPlayer(seed=checked)
        action = hard.choose(view(state, thrower))
        values = {a: _brute_for(apply(state, thrower, a), thrower) for a in legal}
        assert values[action] == max(values.values()), (action, values)
        assert hard.last_nodes > 0
        checked += 1
