"""What the rules core costs: the public API against Hard's search, on one core.

    python bench/rules_core_cost.py [--games 300] [--rounds 5] [--tables classic:2 ...]

The rules exist once, in ``engine.core`` (a mutable position with State's fields).
The public API (``engine.apply``) checks legality, thaws the State, steps the core with
an event log and freezes the result; Hard's search steps one position without events.
This measures both on the same work, in CPU time (``time.process_time``, the best of
``--rounds`` rounds, garbage collector off while timing; the machine is shared, so wall
time is noise):

* rules only: the same random action sequences replayed through ``engine.apply`` and
  through the core's steps on one position (``core.play``, no log: a search's step);
* playouts: Hard's playout (``ai.policy.playout``, the Normal heuristic for every seat)
  from positions a few random steps into random games, one copy per playout as
  ``ai.hard`` does.

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
from engine import Rules, State, apply, core, legal_actions, new_game, waiting_for
from engine.actions import Action

Games = list[tuple[State, list[tuple[int, Action]]]]


def random_games(rules: Rules, players: int, games: int) -> Games:
    out = []
    for g in range(games):
        rng = random.Random(g)
        start = state = new_game(rules, players, seed=g)
        moves = []
        while not state.over:
            p = waiting_for(state)[0]
            action = rng.choice(legal_actions(state, p))
            moves.append((p, action))
            state = apply(state, p, action)
        out.append((start, moves))
    return out


def positions(rules: Rules, players: int, count: int) -> list[core.Position]:
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
            out.append(core.thaw(state))
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


def replay_apply(games: Games) -> None:
    for state, moves in games:
        for p, action in moves:
            state = apply(state, p, action)


def replay_core(games: Games) -> None:
    for state, moves in games:
        position = core.thaw(state)
        for p, action in moves:
            core.play(position, p, action)


def playouts(roots: list[core.Position]) -> None:
    for root in roots:
        policy.playout(core.copy(root))


def measure(table: str, count: int, rounds: int) -> None:
    preset, players = table.split(":")
    rules, n = Rules.preset(preset), int(players)
    games = random_games(rules, n, count)
    steps = sum(len(moves) for _, moves in games)
    t_apply = best_time(partial(replay_apply, games), rounds) / steps * 1e6
    t_core = best_time(partial(replay_core, games), rounds) / steps * 1e6
    print(
        f"{table:<13} rules only, us/action: engine.apply {t_apply:.2f}, "
        f"core step without events {t_core:.2f} ({t_apply / t_core:.2f}x)",
        flush=True,
    )
    roots = positions(rules, n, count)
    t_playout = best_time(partial(playouts, roots), rounds)
    print(f"{table:<13} playouts, ms each: {t_playout / len(roots) * 1e3:.3f}", flush=True)


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
