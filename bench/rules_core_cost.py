"""What one rules implementation would cost: the engine against Hard's simulator.

    python bench/rules_core_cost.py [--games 300] [--rounds 5] [--tables classic:2 ...]

Issue 10 asks for one rules core shared by the public (immutable) engine and Hard's
search (today ``ai/sim.py``, mutable). This measures the two candidate directions on
the same work, in CPU time (``time.process_time``, the best of ``--rounds`` rounds,
garbage collector off while timing; the machine is shared, so wall time is noise):

* rules only: the same random action sequences replayed through ``engine.apply``
  (legality checked), through the engine's effect functions alone (what a search
  on engine states would call), and through ``Sim``;
* playouts (option "a": Hard's search on the engine itself): Hard's playout on a
  ``Sim`` (one copy per playout, as ``ai.hard`` does) against the same heuristic
  ported to engine states (the shared ``ai.policy`` card-sense functions, a fast
  "who acts next" and a dispatch straight to the engine's effect functions), from
  the same positions; both must agree on every playout's durak.

Run it under ``valgrind --tool=callgrind`` (with ``--rounds 1``) to count
instructions instead.
"""

from __future__ import annotations

import argparse
import gc
import random
import time
from collections.abc import Callable
from functools import partial

from ai import policy
from ai.policy import NORMAL, Move, Style
from ai.sim import Sim
from engine import Rules, State, apply, legal_actions, new_game, waiting_for
from engine import game as rules_core
from engine.actions import ATTACK_ONE, BEAT, PASS, SWAP, TAKE, TRANSFER, Action, attack_of
from engine.cards import CARD_RANK_MASK, CARDS, SUIT_MASK

# --- option (a): the playout heuristic on engine states --------------------------------


def state_actor(st: State) -> int:
    """The first player ``waiting_for`` lists, without building the tuple."""
    if st.over:
        return -1
    if not st.attack:
        return st.attacker
    if not st.taking and None in st.defense:
        return st.defender
    rules = st.rules
    everyone = rules.throw_in == "all"
    attacker, defender, hands, ranks = st.attacker, st.defender, st.hands, st.ranks
    seats = rules_core._OPPONENTS if rules.partners else rules_core._OTHERS
    for seat in seats[st.num_players][attacker][defender]:
        if (
            hands[seat] & ranks
            and not st.passed >> seat & 1
            and seat not in st.out
            and (everyone or seat == attacker or seat == rules_core._left_of(st, defender))
        ):
            return seat
    return -1


def state_decide(st: State, p: int, style: Style = NORMAL) -> Move:
    """``ai.policy.decide`` read from an engine state."""
    trump, hand, stock_left, rules = st.trump, st.hands[p], len(st.stock), st.rules
    low = rules_core._LOWEST_TRUMP[rules.deck_size][trump]
    if stock_left and rules.trump_swap and hand >> low & 1 and st.trump_card != low:
        return (policy.SWAP, low, -1)
    if not st.attack:
        cards = policy.lead_cards(hand, trump, st.limit, rules.multi_card_lead, stock_left, style)
        if len(cards) == 1:
            return (policy.LEAD, cards[0], -1)
        mask = 0
        for c in cards:
            mask |= 1 << c
        return (policy.LEAD_MULTI, mask, -1)
    if p == st.defender and not st.taking and None in st.defense:
        unbeaten: list[int] = [a for a, d in zip(st.attack, st.defense, strict=True) if d is None]
        plan = policy.defence_plan(hand, unbeaten, trump)
        if style.transfer and rules.transfer:
            same = hand & CARD_RANK_MASK[st.attack[0]]
            if same and (plan is None or any(c // 13 == trump for _, c in plan)):
                plain = same & ~SUIT_MASK[trump]
                pick = plain or (same if plan is None else 0)
                if pick and rules_core._transfer_target(st) is not None:
                    return (policy.TRANSFER, (pick & -pick).bit_length() - 1, -1)
        if plan is None or policy.too_costly(plan, trump, stock_left, style):
            return (policy.TAKE, -1, -1)
        a, c = plan[0]
        return (policy.BEAT, a, c)
    c = policy.throw_in_card(hand, st.ranks, trump, stock_left, style, 0, st.taking)
    return (policy.PASS, -1, -1) if c < 0 else (policy.THROW, c, -1)


def _multi_lead(st: State, p: int, mask: int, _: int) -> State:
    cards = []
    while mask:
        low = mask & -mask
        cards.append(CARDS[low.bit_length() - 1])
        mask ^= low
    return rules_core._attack(st, p, attack_of(tuple(cards)))


_EFFECT: dict[int, Callable[[State, int, int, int], State]] = {
    policy.LEAD: lambda st, p, a, b: rules_core._attack(st, p, ATTACK_ONE[a]),
    policy.THROW: lambda st, p, a, b: rules_core._attack(st, p, ATTACK_ONE[a]),
    policy.BEAT: lambda st, p, a, b: rules_core._beat(st, p, BEAT[a][b]),
    policy.PASS: lambda st, p, a, b: rules_core._pass(st, p, PASS),
    policy.TAKE: lambda st, p, a, b: rules_core._take(st, p, TAKE),
    policy.TRANSFER: lambda st, p, a, b: rules_core._transfer(st, p, TRANSFER[a]),
    policy.SWAP: lambda st, p, a, b: rules_core._swap(st, p, SWAP[a]),
    policy.LEAD_MULTI: _multi_lead,
}


def state_playout(st: State, max_steps: int = 1500) -> int | None:
    """``ai.policy.playout`` (Normal heuristic for everyone) on engine states."""
    effect = _EFFECT
    for _ in range(max_steps):
        if st.over:
            return st.durak
        p = state_actor(st)
        kind, a, b = state_decide(st, p)
        st = effect[kind](st, p, a, b)
    return st.durak


# --- workloads -------------------------------------------------------------------------


def random_games(rules: Rules, players: int, games: int) -> list[tuple[State, list[Action]]]:
    out = []
    for g in range(games):
        rng = random.Random(g)
        start = state = new_game(rules, players, seed=g)
        actions = []
        while not state.over:
            p = waiting_for(state)[0]
            action = rng.choice(legal_actions(state, p))
            actions.append(action)
            state = apply(state, p, action)
        out.append((start, actions))
    return out


def positions(rules: Rules, players: int, count: int) -> list[State]:
    """Positions a few random steps into random games (the search's usual roots)."""
    rng = random.Random(1)
    out = []
    for g in range(count):
        state = new_game(rules, players, seed=100 + g)
        for _ in range(rng.randrange(30)):
            if state.over:
                break
            p = waiting_for(state)[0]
            state = apply(state, p, rng.choice(legal_actions(state, p)))
        if not state.over:
            out.append(state)
    return out


def best_time(work: Callable[[], object], rounds: int) -> float:
    best = float("inf")
    for _ in range(rounds):
        gc.collect()
        gc.disable()
        start = time.process_time()
        work()
        best = min(best, time.process_time() - start)
        gc.enable()
    return best


Games = list[tuple[State, list[Action]]]


def replay_apply(games: Games) -> None:
    for state, actions in games:
        for action in actions:
            state = apply(state, state_actor(state), action)


def replay_effect(games: Games) -> None:
    kinds = rules_core._KINDS
    for state, actions in games:
        for action in actions:
            state = kinds[type(action)][1](state, state_actor(state), action)


def replay_sim(games: Games) -> None:
    for state, actions in games:
        sim = Sim.from_state(state)
        for action in actions:
            sim.apply(sim.actor(), action)


def sim_playouts(sims: list[Sim]) -> None:
    for sim in sims:
        policy.playout(sim.copy())


def state_playouts(roots: list[State]) -> None:
    for state in roots:
        state_playout(state)


def measure(table: str, count: int, rounds: int) -> None:
    preset, players = table.split(":")
    rules, n = Rules.preset(preset), int(players)
    games = random_games(rules, n, count)
    steps = sum(len(actions) for _, actions in games)
    per = {
        name: best_time(partial(work, games), rounds) / steps * 1e6
        for name, work in (("apply", replay_apply), ("effect", replay_effect), ("sim", replay_sim))
    }
    print(
        f"{table:<13} rules only, us/action: engine apply {per['apply']:.2f}, "
        f"engine effect {per['effect']:.2f}, Sim {per['sim']:.2f} "
        f"(effect/Sim {per['effect'] / per['sim']:.2f}x)",
        flush=True,
    )
    roots = positions(rules, n, count)
    sims = [Sim.from_state(s) for s in roots]
    agree = sum(
        policy.playout(sim.copy()) == state_playout(st) for sim, st in zip(sims, roots, strict=True)
    )
    t_sim = best_time(partial(sim_playouts, sims), rounds)
    t_state = best_time(partial(state_playouts, roots), rounds)
    print(
        f"{table:<13} playouts, ms each: Sim {t_sim / len(roots) * 1e3:.3f}, "
        f"engine states {t_state / len(roots) * 1e3:.3f} "
        f"({t_state / t_sim:.2f}x); same durak in {agree}/{len(roots)}",
        flush=True,
    )


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--games", type=int, default=300)
    parser.add_argument("--rounds", type=int, default=5)
    parser.add_argument(
        "--tables",
        nargs="+",
        default=["classic:2", "perevodnoy:2", "classic:4", "full_deck:6"],
        help="preset:players",
    )
    args = parser.parse_args()
    print("CPU time, best of", args.rounds, "rounds")
    for table in args.tables:
        measure(table, args.games, args.rounds)


if __name__ == "__main__":
    main()
