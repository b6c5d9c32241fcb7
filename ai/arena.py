"""Arena: computer players against each other, with rotating seats and mirrored deals.

    python -m ai.arena normal easy --games 2000 --jobs 2
    durak-arena hard normal normal normal --rules classic --games 400

The positional arguments are the levels at the table, one per seat (2 to 6). Every
deal is played once per rotation of that line-up around the table (twice with seats
swapped for two players), so every level gets every seat with the same cards and card
luck cancels. Prints each level's durak rate among decided games with a 95% Wilson
interval, the draws, and decision-time percentiles per level.

Who acts when several players may (the defender and the players who may throw in):
like at a real table, where whoever is quickest goes first, the arena picks one of
them at random (seeded by the deal and the seating, so a run is reproducible).
``--order first`` always picks the first one ``waiting_for`` lists instead.
"""

from __future__ import annotations

import argparse
import math
import random
import sys
import time
from collections import defaultdict
from collections.abc import Sequence
from concurrent.futures import ProcessPoolExecutor
from dataclasses import dataclass, field, replace
from typing import Any

from ai import LEVELS, Budget, player
from engine import PRESETS, Rules, RulesError, apply, new_game, view, waiting_for

MAX_ACTIONS = 5000
"""A game still running after this many actions is abandoned (a safety net only:
players break cycles by themselves, see ``ai.cycles``)."""


@dataclass
class Tally:
    games: int = 0
    draws: int = 0
    unfinished: int = 0
    duraks: dict[str, int] = field(default_factory=lambda: defaultdict(int))
    seats: dict[str, int] = field(default_factory=lambda: defaultdict(int))
    times: dict[str, list[float]] = field(default_factory=lambda: defaultdict(list))
    """Wall-clock seconds per decision, by level."""
    team_losses: dict[int, int] = field(default_factory=lambda: defaultdict(int))
    """Partners games lost, by line-up team (0: the line-up's 1st, 3rd, 5th levels)."""
    cpu: dict[str, list[float]] = field(default_factory=lambda: defaultdict(list))
    """CPU seconds per decision (this process's), by level: what one core spends,
    whatever else shares the machine."""

    def to_json(self) -> dict[str, Any]:
        """Counts, and decision times as histograms (``BUCKET`` wide): enough to merge
        runs saved apart (``from_json``) and report them as one, percentiles within 1%."""
        return {
            "games": self.games,
            "draws": self.draws,
            "unfinished": self.unfinished,
            "duraks": dict(self.duraks),
            "seats": dict(self.seats),
            "team_losses": {str(k): v for k, v in self.team_losses.items()},
            "times": {k: _histogram(v) for k, v in self.times.items()},
            "cpu": {k: _histogram(v) for k, v in self.cpu.items()},
        }

    @classmethod
    def from_json(cls, data: dict[str, Any]) -> Tally:
        tally = cls(data["games"], data["draws"], data["unfinished"])
        tally.duraks.update(data["duraks"])
        tally.seats.update(data["seats"])
        tally.team_losses.update({int(k): v for k, v in data["team_losses"].items()})
        for name, field_ in (("times", tally.times), ("cpu", tally.cpu)):
            for level, hist in data[name].items():
                field_[level].extend(_from_histogram(hist))
        return tally

    def merge(self, other: Tally) -> None:
        self.games += other.games
        self.draws += other.draws
        self.unfinished += other.unfinished
        for k, v in other.duraks.items():
            self.duraks[k] += v
        for k, v in other.seats.items():
            self.seats[k] += v
        for k, t in other.times.items():
            self.times[k].extend(t)
        for k, t in other.cpu.items():
            self.cpu[k].extend(t)
        for team, v in other.team_losses.items():
            self.team_losses[team] += v


BUCKET = 1.01
"""Saved decision times are rounded to buckets this many times wider than the last."""


def _histogram(seconds: list[float]) -> dict[str, int]:
    counts: dict[int, int] = defaultdict(int)
    for t in seconds:
        counts[round(math.log(max(t, 1e-7)) / math.log(BUCKET))] += 1
    return {str(k): v for k, v in sorted(counts.items())}


def _from_histogram(hist: dict[str, int]) -> list[float]:
    out: list[float] = []
    for bucket, count in hist.items():
        out.extend([BUCKET ** int(bucket)] * count)
    return out


@dataclass(frozen=True)
class Match:
    levels: tuple[str, ...]
    rules: Rules
    seed: int
    budget: Budget
    order: str = "random"
    """'random': a seeded random one of the players who may act; 'first': the first."""


def play_game(match: Match, deal: int, rotation: int, tally: Tally) -> None:
    """Play deal number ``deal`` with the line-up rotated by ``rotation`` seats."""
    n = len(match.levels)
    seats = [match.levels[(s - rotation) % n] for s in range(n)]
    deal_seed = match.seed * 1_000_003 + deal
    players = [
        player(level, seed=deal_seed * 64 + rotation * 8 + s, budget=match.budget)
        for s, level in enumerate(seats)
    ]
    state = new_game(match.rules, n, seed=deal_seed, dealer=deal % n)
    clock, cpu_clock = time.perf_counter, time.process_time
    order = random.Random(f"order:{deal_seed}:{rotation}") if match.order == "random" else None
    for _ in range(MAX_ACTIONS):
        if state.over:
            break
        waiting = waiting_for(state)
        p = waiting[0] if order is None or len(waiting) == 1 else order.choice(waiting)
        v = view(state, p)
        t0, c0 = clock(), cpu_clock()
        action = players[p].choose(v)
        tally.times[seats[p]].append(clock() - t0)
        tally.cpu[seats[p]].append(cpu_clock() - c0)
        state = apply(state, p, action)
    if not state.over:
        tally.unfinished += 1  # the players went round in circles
        return
    tally.games += 1
    for level in seats:
        tally.seats[level] += 1
    if state.durak is None:
        tally.draws += 1
    else:
        tally.duraks[seats[state.durak]] += 1
        if match.rules.partners:
            # Rotating an even table keeps the line-up's teams together.
            tally.team_losses[(state.durak - rotation) % n % 2] += 1


def play_deals(match: Match, deals: Sequence[int]) -> Tally:
    """Play each of ``deals`` once per rotation of the line-up."""
    tally = Tally()
    for deal in deals:
        for rotation in range(len(match.levels)):
            play_game(match, deal, rotation, tally)
    return tally


def wilson(k: int, n: int, z: float = 1.96) -> tuple[float, float]:
    if n == 0:
        return (0.0, 1.0)
    p = k / n
    denom = 1 + z * z / n
    centre = (p + z * z / (2 * n)) / denom
    half = z * math.sqrt(p * (1 - p) / n + z * z / (4 * n * n)) / denom
    return (max(0.0, centre - half), min(1.0, centre + half))


def percentile(sorted_values: list[float], q: float) -> float:
    if not sorted_values:
        return 0.0
    i = min(len(sorted_values) - 1, max(0, math.ceil(q * len(sorted_values)) - 1))
    return sorted_values[i]


def report(match: Match, tally: Tally, preset: str, elapsed: float) -> str:
    n = len(match.levels)
    decided = tally.games - tally.draws
    lines = [
        f"rules={preset}{' partners' if match.rules.partners else ''} "
        f"order={match.order} seed={match.seed} players={n} "
        f"line-up={' '.join(match.levels)} "
        f"games={tally.games} ({tally.games // n} deals x {n} seatings) "
        f"decided={decided} draws={tally.draws} ({tally.draws / max(1, tally.games):.1%}) "
        f"unfinished={tally.unfinished} time={elapsed:.0f}s",
        f"{'level':<8}{'seats':>6}{'duraks':>8}  {'durak rate':>10}  95% CI            fair share",
    ]
    for level in dict.fromkeys(match.levels):
        k = tally.duraks[level]
        lo, hi = wilson(k, decided)
        share = match.levels.count(level) / n
        lines.append(
            f"{level:<8}{match.levels.count(level):>6}{k:>8}  {k / max(1, decided):>10.1%}"
            f"  [{lo:.1%}, {hi:.1%}]  {share:.1%}"
        )
    if match.rules.partners:
        for team in (0, 1):
            k = tally.team_losses[team]
            lo, hi = wilson(k, decided)
            members = " + ".join(match.levels[team::2])
            lines.append(
                f"team {'AB'[team]} ({members}) loses {k} of {decided}: {k / max(1, decided):.1%}"
                f" [{lo:.1%}, {hi:.1%}] (fair share 50.0%)"
            )
    lines.append(f"{'decision ms':<12}{'count':>8}{'p50':>9}{'p90':>9}{'p99':>9}{'max':>9}")
    for clock, times in (("wall", tally.times), ("cpu", tally.cpu)):
        for level in dict.fromkeys(match.levels):
            ts = sorted(times[level])
            ms = [1000 * percentile(ts, q) for q in (0.5, 0.9, 0.99, 1.0)]
            lines.append(
                f"{level + ' ' + clock:<12}{len(ts):>8}" + "".join(f"{m:>9.3f}" for m in ms)
            )
    return "\n".join(lines)


def main(argv: Sequence[str] | None = None) -> int:
    parser = argparse.ArgumentParser(prog="durak-arena", description=__doc__.split("\n")[0])
    parser.add_argument("levels", nargs="+", choices=LEVELS, help="one level per seat (2-6)")
    parser.add_argument("--games", type=int, default=200, help="games (rounded up to whole deals)")
    parser.add_argument("--rules", default="classic", choices=sorted(PRESETS), help="preset")
    parser.add_argument(
        "--partners",
        action="store_true",
        help="two teams (seat %% 2: the line-up's 1st, 3rd, 5th levels against the others)",
    )
    parser.add_argument(
        "--order",
        default="random",
        choices=("random", "first"),
        help="who acts when several may: a seeded random one (default) or the first listed",
    )
    parser.add_argument("--jobs", type=int, default=1, help="parallel processes")
    parser.add_argument("--seed", type=int, default=0)
    parser.add_argument("--hard-playouts", type=int, default=None, help="Hard's playouts/decision")
    parser.add_argument("--hard-late-stock", type=int, default=None)
    parser.add_argument(
        "--hard-time-cap",
        type=float,
        default=None,
        help="Hard's wall-clock safety cap in seconds (raise it on a loaded machine so the "
        "counted budget, not the load, decides)",
    )
    parser.add_argument("--progress", action="store_true", help="report progress on stderr")
    args = parser.parse_args(argv)
    rules = Rules.preset(args.rules)
    if args.partners:
        rules = Rules.parse({**rules.model_dump(), "partners": True})
    levels = tuple(args.levels)
    try:
        rules.check_players(len(levels))
    except RulesError as err:
        parser.error(str(err))
    budget = Budget()
    if args.hard_playouts is not None:
        budget = replace(budget, playouts=args.hard_playouts)
    if args.hard_time_cap is not None:
        budget = replace(budget, time_cap=args.hard_time_cap)
    if args.hard_late_stock is not None:
        budget = replace(budget, late_stock=args.hard_late_stock)
    match = Match(levels, rules, args.seed, budget, args.order)
    n = len(levels)
    deals = max(1, -(-args.games // n))
    chunk = max(1, min(25, deals // (4 * max(1, args.jobs)) or 1))
    chunks = [list(range(i, min(deals, i + chunk))) for i in range(0, deals, chunk)]
    tally = Tally()
    start = time.perf_counter()

    def progress() -> None:
        if args.progress:
            done = tally.games + tally.unfinished
            elapsed = time.perf_counter() - start
            print(f"{done} games, {elapsed:.0f}s", file=sys.stderr, flush=True)

    if args.jobs <= 1:
        for deal_chunk in chunks:
            tally.merge(play_deals(match, deal_chunk))
            progress()
    else:
        with ProcessPoolExecutor(args.jobs) as pool:
            for part in pool.map(play_deals, [match] * len(chunks), chunks):
                tally.merge(part)
                progress()
    print(report(match, tally, args.rules, time.perf_counter() - start))
    return 0


if __name__ == "__main__":
    sys.exit(main())
