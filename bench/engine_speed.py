"""Engine speed: random legal games through the public API, on one core.

    python bench/engine_speed.py [--games 2000] [--players 2 4 6] [--seed 0]

Each step asks ``waiting_for`` who the game waits on, lists that player's
``legal_actions`` and ``apply``s one at random, exactly as a driver would.
Timed in CPU seconds (``time.process_time``): on a shared machine wall time
counts other jobs' work too.
"""

from __future__ import annotations

import argparse
import random
import time

from engine import Rules, apply, legal_actions, new_game, waiting_for


def play_random_game(rules: Rules, players: int, seed: int) -> int:
    rng = random.Random(seed)
    state = new_game(rules, players, seed=seed)
    actions = 0
    while not state.over:
        player = waiting_for(state)[0]
        state = apply(state, player, rng.choice(legal_actions(state, player)))
        actions += 1
    return actions


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--games", type=int, default=2000)
    parser.add_argument("--players", type=int, nargs="+", default=[2, 4, 6])
    parser.add_argument("--seed", type=int, default=0)
    parser.add_argument("--preset", default="classic")
    args = parser.parse_args()
    rules = Rules.preset(args.preset)
    print(f"preset={args.preset} deck={rules.deck_size} games per row={args.games}")
    print(f"{'players':>7} {'games/s':>9} {'actions/s':>10} {'actions/game':>13}")
    for players in args.players:
        start = time.process_time()
        total = sum(play_random_game(rules, players, args.seed + i) for i in range(args.games))
        elapsed = time.process_time() - start
        print(
            f"{players:>7} {args.games / elapsed:>9.0f} {total / elapsed:>10.0f}"
            f" {total / args.games:>13.1f}"
        )


if __name__ == "__main__":
    main()
