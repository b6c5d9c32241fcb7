"""CPU cost of the Hard player's review of a finished game (``ai.review``).

    python bench/review_cost.py [--games 5] [--seed 1] [--tables "2p classic" ...]

For each table a few games are played as the arena plays them (``ai.arena``'s seeds,
line-up and a seeded random one of the players who may act going first); seat 0 is
a Normal player, the human-like one, and is reviewed with the default
``ReviewBudget``. Prints the CPU time (``time.process_time``: one core's work,
whatever else shares the machine) per game review and per judged decision
(p50/p99/max), and how many decisions the reviews reported.
"""

from __future__ import annotations

import argparse
import math
import random
import time
from dataclasses import dataclass, field

from ai import Budget, player
from ai.arena import MAX_ACTIONS, percentile
from ai.review import GameRecord, ReviewBudget, decision_points, judge_points
from engine import Action, Rules, apply, new_game, view, waiting_for

TABLES: dict[str, tuple[Rules, tuple[str, ...]]] = {
    "2p classic": (Rules.preset("classic"), ("normal", "hard")),
    "2p perevodnoy": (Rules.preset("perevodnoy"), ("normal", "easy")),
    "4p classic": (Rules.preset("classic"), ("normal", "hard", "easy", "normal")),
    "4p partners": (Rules(partners=True), ("normal", "easy", "hard", "easy")),
}


def play_recorded(rules: Rules, levels: tuple[str, ...], deal_seed: int) -> GameRecord:
    """One game as ``ai.arena.play_game`` plays it (no rotation), with its record."""
    n = len(levels)
    budget = Budget(time_cap=math.inf)  # a loaded machine must not change the game
    players = [
        player(level, seed=deal_seed * 64 + s, budget=budget) for s, level in enumerate(levels)
    ]
    state = new_game(rules, n, seed=deal_seed, dealer=deal_seed % n)
    order = random.Random(f"order:{deal_seed}:0")
    actions: list[tuple[int, Action]] = []
    while not state.over and len(actions) < MAX_ACTIONS:
        waiting = waiting_for(state)
        p = waiting[0] if len(waiting) == 1 else order.choice(waiting)
        action = players[p].choose(view(state, p))
        actions.append((p, action))
        state = apply(state, p, action)
    return GameRecord(rules, n, tuple(actions), seed=deal_seed, dealer=deal_seed % n)


@dataclass
class Costs:
    games: list[float] = field(default_factory=list)
    decisions: list[float] = field(default_factory=list)
    reported: int = 0
    exact: int = 0


def review_cost(record: GameRecord, budget: ReviewBudget, seed: int, costs: Costs) -> None:
    """Review seat 0 of ``record``, timing each decision's judgement."""
    points = decision_points(record, 0)
    total = 0.0
    verdicts = judge_points(points, budget, seed)
    while True:
        start = time.process_time()
        try:
            _, verdict = next(verdicts)
        except StopIteration:
            break
        spent = time.process_time() - start
        total += spent
        costs.decisions.append(spent)
        costs.reported += verdict.reportable(budget.min_cost)
        costs.exact += verdict.exact
    costs.games.append(total)


def line(name: str, costs: Costs) -> str:
    games, decisions = sorted(costs.games), sorted(costs.decisions)

    def spread(values: list[float], unit: float, fmt: str) -> str:
        return "/".join(format(percentile(values, q) * unit, fmt) for q in (0.5, 0.99, 1.0))

    return (
        f"{name:<14} games={len(games):>3} decisions={len(decisions):>4} "
        f"per game review p50/p99/max={spread(games, 1, '.2f')} s  "
        f"per decision p50/p99/max={spread(decisions, 1000, '.0f')} ms  "
        f"reportable={costs.reported} exact={costs.exact}"
    )


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("--games", type=int, default=5, help="games per table")
    parser.add_argument("--seed", type=int, default=1)
    parser.add_argument("--tables", nargs="*", default=list(TABLES), choices=list(TABLES))
    args = parser.parse_args()
    budget = ReviewBudget()
    print(f"budget: {budget}")
    everything = Costs()
    for name in args.tables:
        rules, levels = TABLES[name]
        costs = Costs()
        for game in range(args.games):
            record = play_recorded(rules, levels, args.seed * 1_000_003 + game)
            review_cost(record, budget, args.seed, costs)
        print(line(name, costs), flush=True)
        everything.games += costs.games
        everything.decisions += costs.decisions
        everything.reported += costs.reported
        everything.exact += costs.exact
    print(line("all", everything))


if __name__ == "__main__":
    main()
