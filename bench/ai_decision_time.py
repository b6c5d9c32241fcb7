"""Hard's decision time (CPU) and decisions on a fixed set of positions.

    python bench/ai_decision_time.py [--games 6 4 3 3] [--seed 7] [--save out.json]
    python bench/ai_decision_time.py --compare out.json   # same decisions as a saved run?

Positions: for each table (2 players classic, 2 players perevodnoy, 4 players classic,
6 players 52 cards) a few games are played by Normal players at every seat; at each
of seat 0's turns with a real choice, a Hard player (one per game, so its memory
follows the game) also decides, and its CPU time (``time.process_time``: what one
core spends, whatever else shares the machine) and choice are recorded. Normal's
move is the one played, so the positions do not depend on Hard's code: two versions
of Hard see exactly the same positions and their decisions can be compared one by one.

Hard's wall-clock safety cap is lifted (``time_cap``) so that a busy machine cannot
cut a search short and change a decision.
"""

from __future__ import annotations

import argparse
import json
import math
import time
from dataclasses import replace

from ai import Budget, HardPlayer, NormalPlayer
from engine import Rules, apply, new_game, view, waiting_for

TABLES: tuple[tuple[str, str, int], ...] = (
    ("2p classic", "classic", 2),
    ("2p perevodnoy", "perevodnoy", 2),
    ("4p classic", "classic", 4),
    ("6p full_deck", "full_deck", 6),
)


def table_decisions(
    preset: str, players: int, games: int, seed: int
) -> tuple[list[float], list[str]]:
    """CPU seconds and chosen actions of Hard at seat 0, over ``games`` games."""
    rules = Rules.preset(preset)
    budget = replace(Budget(), time_cap=math.inf)
    times: list[float] = []
    choices: list[str] = []
    for game in range(games):
        deal = seed * 1_000 + game
        state = new_game(rules, players, seed=deal, dealer=game % players)
        normals = [NormalPlayer(deal * 8 + s) for s in range(players)]
        hard = HardPlayer(deal * 8, budget)
        while not state.over:
            p = waiting_for(state)[0]
            v = view(state, p)
            if p == 0 and len(v.legal_actions) > 1:
                start = time.process_time()
                choice = hard.choose(v)
                times.append(time.process_time() - start)
                choices.append(str(choice))
            state = apply(state, p, normals[p].choose(v))
    return times, choices


def percentile(values: list[float], q: float) -> float:
    ordered = sorted(values)
    return ordered[min(len(ordered) - 1, int(q * len(ordered)))]


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument(
        "--games", type=int, nargs=len(TABLES), default=[6, 6, 4, 3], help="games per table"
    )
    parser.add_argument("--seed", type=int, default=7)
    parser.add_argument("--save", help="write the decisions and times to this JSON file")
    parser.add_argument("--compare", help="count decisions that differ from this saved run")
    args = parser.parse_args()
    saved = None
    if args.compare:
        with open(args.compare) as f:
            saved = json.load(f)
    out: dict[str, dict[str, object]] = {}
    print(f"seed={args.seed}  CPU ms per Hard decision (process_time)")
    heads = ("decisions", "p50", "p90", "p99", "max", "total s")
    print(f"{'table':<14} " + " ".join(f"{h:>{max(7, len(h))}}" for h in heads))
    for (name, preset, players), games in zip(TABLES, args.games, strict=True):
        if games == 0:
            continue
        times, choices = table_decisions(preset, players, games, args.seed)
        ms = [t * 1000 for t in times]
        line = (
            f"{name:<14} {len(ms):>9} {percentile(ms, 0.5):>7.1f} {percentile(ms, 0.9):>7.1f}"
            f" {percentile(ms, 0.99):>7.1f} {max(ms):>7.1f} {sum(times):>8.2f}"
        )
        if saved is not None and name in saved:
            before = saved[name]["choices"]
            differ = sum(a != b for a, b in zip(before, choices, strict=False))
            differ += abs(len(before) - len(choices))
            line += f"  differ from saved: {differ}"
        print(line, flush=True)
        out[name] = {"games": games, "times": times, "choices": choices}
    if args.save:
        with open(args.save, "w") as f:
            json.dump({"seed": args.seed, **out}, f)


if __name__ == "__main__":
    main()
