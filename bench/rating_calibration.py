"""Calibrate the computer players' fixed ratings (``COMPUTER_SKILL`` in bot/domain/rating.py).

    .venv/bin/python bench/rating_calibration.py                 # play what is missing, rate
    .venv/bin/python bench/rating_calibration.py --rate-only     # rate the saved games only

Computer-only games at mixed tables (2 to 4 seats, mixed levels, the classic rules), played
as the arena plays them (``ai.arena``: every deal once per rotation of the line-up, the
same seeds, a seeded random one of the players who may act), but keeping each game's
finishing order, which the arena's tally does not. Games are played in chunks of a few
deals, each saved under ``bench/results/rating_calibration/<code>/`` as soon as it is done
(``<code>``: the hash of ``ai/`` and ``engine/`` that ``bench/ai_strength.py`` uses), so an
interrupted run goes on where it stopped and a changed computer player starts afresh.

Rating: every level is one player starting from the default rating; the games are rated
with Plackett-Luce (``bot.domain.rating.rate_ranks``, the ranks of ``placings``) in a
shuffled order, each level's mu averaged over the second half of that pass (single
sequential updates wander with the last games), and that over ``--passes`` shuffles.
A level seated twice at one table moves by the mean of its seats' changes, as one player.
Plackett-Luce depends only on differences of mu, so the levels are then shifted together
so that Normal sits at the default mu. Hard costs about 50-100 ms a decision on one core:
the defaults (32 deals a line-up, 544 games) took 8 CPU minutes (15 on a busy machine).
"""

from __future__ import annotations

import argparse
import json
import math
import os
import random
import statistics
import sys
import time
from collections import defaultdict
from collections.abc import Iterator, Sequence
from dataclasses import dataclass
from pathlib import Path
from typing import Any, cast

ROOT = Path(__file__).resolve().parent.parent
sys.path.insert(0, str(ROOT))
sys.path.insert(0, str(ROOT / "bench"))

from ai_strength import code_id  # noqa: E402

from ai import player  # noqa: E402
from ai.arena import MAX_ACTIONS, Match  # noqa: E402
from ai.hard import Budget  # noqa: E402
from bot.domain.rating import (  # noqa: E402
    BETA,
    COMPUTER_LEVELS,
    DEFAULT_MU,
    DEFAULT_SIGMA,
    TAU,
    Computer,
    ComputerLevel,
    FinishedGame,
    Skill,
    display_rating,
    finish_groups,
    placings,
    rate_ranks,
)
from engine import Rules, apply, new_game, view, waiting_for  # noqa: E402

RESULTS = ROOT / "bench" / "results" / "rating_calibration"
LINE_UPS: tuple[tuple[str, ...], ...] = (
    ("hard", "normal"),
    ("hard", "easy"),
    ("normal", "easy"),
    ("easy", "normal", "hard"),
    ("hard", "normal", "easy", "normal"),
    ("easy", "hard", "normal", "easy"),
)
"""Every pair, all three together, and two four-seat tables (a level has to sit twice)."""
SEED = 500
DEALS = 32
DEALS_PER_CHUNK = 4
"""A chunk is at most 16 games: a minute or two even at a four-seat table with Hard."""


@dataclass(frozen=True)
class Played:
    """One game: the level at each seat and the seats' ranks (0 the best)."""

    levels: tuple[str, ...]
    ranks: tuple[int, ...]
    durak: int | None


def play_ranked(match: Match, deal: int, rotation: int) -> Played | None:
    """``ai.arena.play_game``'s game (same seats, seeds and order of who acts), with its
    finishing order; None if it ran into ``MAX_ACTIONS``."""
    n = len(match.levels)
    seats = tuple(match.levels[(s - rotation) % n] for s in range(n))
    deal_seed = match.seed * 1_000_003 + deal
    players = [
        player(level, seed=deal_seed * 64 + rotation * 8 + s, budget=match.budget)
        for s, level in enumerate(seats)
    ]
    state = new_game(match.rules, n, seed=deal_seed, dealer=deal % n)
    order = random.Random(f"order:{deal_seed}:{rotation}")
    for _ in range(MAX_ACTIONS):
        if state.over:
            break
        waiting = waiting_for(state)
        p = waiting[0] if len(waiting) == 1 else order.choice(waiting)
        state = apply(state, p, players[p].choose(view(state, p)))
    if not state.over:
        return None
    computers = tuple(Computer(cast(ComputerLevel, level)) for level in seats)
    game = FinishedGame(computers, finish_groups(state), state.durak)
    return Played(seats, placings(game), state.durak)


def _match(index: int) -> Match:
    return Match(LINE_UPS[index], Rules.preset("classic"), SEED + index, Budget())


def _chunk_path(out: Path, code: str, index: int, start: int, stop: int) -> Path:
    name = "-".join(LINE_UPS[index])
    return out / code / name / f"deals-{start:05d}-{stop:05d}.json"


def _chunks(deals: int) -> Iterator[tuple[int, int, int]]:
    """Round robin over the line-ups, so a run stopped early still has every table."""
    for start in range(0, deals, DEALS_PER_CHUNK):
        for index in range(len(LINE_UPS)):
            yield index, start, min(deals, start + DEALS_PER_CHUNK)


def play_chunk(index: int, start: int, stop: int) -> dict[str, Any]:
    match = _match(index)
    c0 = time.process_time()
    games = [
        play_ranked(match, deal, rotation)
        for deal in range(start, stop)
        for rotation in range(len(match.levels))
    ]
    return {
        "line_up": list(match.levels),
        "seed": match.seed,
        "deals": [start, stop],
        "cpu_seconds": round(time.process_time() - c0, 1),
        "unfinished": sum(g is None for g in games),
        "games": [
            {"levels": list(g.levels), "ranks": list(g.ranks), "durak": g.durak}
            for g in games
            if g is not None
        ],
    }


def _save(path: Path, record: dict[str, Any]) -> None:
    path.parent.mkdir(parents=True, exist_ok=True)
    tmp = path.with_suffix(".tmp")
    tmp.write_text(json.dumps(record, separators=(",", ":")) + "\n")
    os.replace(tmp, path)  # a chunk is saved whole or not at all


def play_missing(out: Path, code: str, deals: int, minutes: float) -> None:
    deadline = time.monotonic() + 60 * minutes
    for index, start, stop in _chunks(deals):
        path = _chunk_path(out, code, index, start, stop)
        if path.exists():
            continue
        if time.monotonic() > deadline:
            print("time is up: run again to play the rest", file=sys.stderr)
            return
        record = play_chunk(index, start, stop)
        _save(path, record)
        print(
            f"{'-'.join(LINE_UPS[index])} deals {start}-{stop}: "
            f"{len(record['games'])} games, {record['cpu_seconds']} CPU s",
            file=sys.stderr,
            flush=True,
        )


def load_games(out: Path, code: str, deals: int) -> list[Played]:
    games: list[Played] = []
    for index, start, stop in _chunks(deals):
        path = _chunk_path(out, code, index, start, stop)
        if path.exists():
            for g in json.loads(path.read_text())["games"]:
                games.append(Played(tuple(g["levels"]), tuple(g["ranks"]), g["durak"]))
    return games


def _update(skills: dict[str, Skill], game: Played) -> None:
    """One game, every level moving; a level at two seats moves by their mean change."""
    rated = rate_ranks([[skills[level]] for level in game.levels], game.ranks)
    changes: dict[str, list[Skill]] = defaultdict(list)
    for level, (new,) in zip(game.levels, rated, strict=True):
        changes[level].append(new)
    for level, news in changes.items():
        skills[level] = Skill(
            statistics.fmean(s.mu for s in news), statistics.fmean(s.sigma for s in news)
        )


def one_pass(games: Sequence[Played], seed: int) -> dict[str, Skill]:
    """Each level's mu averaged over the second half of one shuffled pass; its last sigma."""
    order = list(games)
    random.Random(seed).shuffle(order)
    skills: dict[str, Skill] = {
        level: Skill(DEFAULT_MU, DEFAULT_SIGMA) for level in COMPUTER_LEVELS
    }
    seen: dict[str, list[float]] = defaultdict(list)
    for i, game in enumerate(order):
        _update(skills, game)
        if i >= len(order) // 2:
            for level in COMPUTER_LEVELS:
                seen[level].append(skills[level].mu)
    return {level: Skill(statistics.fmean(seen[level]), skills[level].sigma) for level in skills}


def calibrate(games: Sequence[Played], passes: int) -> tuple[dict[str, Skill], dict[str, float]]:
    """The anchored skill per level (Normal at the default mu) and the spread (standard
    deviation) of each level's anchored mu over the passes."""
    runs = [one_pass(games, seed) for seed in range(passes)]
    anchored = [
        {level: run[level].mu - run["normal"].mu + DEFAULT_MU for level in COMPUTER_LEVELS}
        for run in runs
    ]
    skills: dict[str, Skill] = {
        level: Skill(
            statistics.fmean(a[level] for a in anchored),
            statistics.fmean(run[level].sigma for run in runs),
        )
        for level in COMPUTER_LEVELS
    }
    spread: dict[str, float] = {
        level: statistics.pstdev(a[level] for a in anchored) for level in COMPUTER_LEVELS
    }
    return skills, spread


def _two_player_check(games: Sequence[Played], skills: dict[str, Skill]) -> list[str]:
    """Observed head-to-head durak rates of the two-seat tables beside what the fitted
    ratings predict (Plackett-Luce: exp(mu/c) shares, c from both sigmas and BETA)."""
    lines = []
    for line_up in LINE_UPS:
        if len(line_up) != 2:
            continue
        a, b = line_up
        played = [g for g in games if set(g.levels) == {a, b} and len(g.levels) == 2]
        lost = sum(1 for g in played if g.durak is not None and g.levels[g.durak] == b)
        decided = sum(1 for g in played if g.durak is not None)
        c = math.sqrt(skills[a].sigma ** 2 + skills[b].sigma ** 2 + 2 * BETA**2)
        predicted = 1 / (1 + math.exp((skills[a].mu - skills[b].mu) / c))
        lines.append(
            f"{b} the durak against {a}: observed {lost}/{decided} = {lost / max(1, decided):.1%},"
            f" predicted {1 - predicted:.1%}"
        )
    return lines


def main(argv: Sequence[str] | None = None) -> int:
    parser = argparse.ArgumentParser(description=__doc__.split("\n")[0])
    parser.add_argument("--deals", type=int, default=DEALS, help="deals per line-up")
    parser.add_argument("--passes", type=int, default=32, help="shuffled rating passes")
    parser.add_argument("--minutes", type=float, default=15.0, help="stop playing after this")
    parser.add_argument("--out", type=Path, default=RESULTS, help="where chunks are saved")
    parser.add_argument("--rate-only", action="store_true", help="rate the saved games only")
    parser.add_argument("--code", default=None, help="rate the games saved for this code id")
    parser.add_argument(
        "--seats", type=int, nargs="+", default=None, help="rate only tables of these sizes"
    )
    args = parser.parse_args(argv)
    code = args.code or code_id()
    start = time.perf_counter()
    if not args.rate_only and args.code is None:
        play_missing(args.out, code, args.deals, args.minutes)
    games = load_games(args.out, code, args.deals)
    if args.seats:
        games = [g for g in games if len(g.levels) in args.seats]
    if not games:
        print("no games saved for this code yet", file=sys.stderr)
        return 1
    skills, spread = calibrate(games, args.passes)
    sizes: dict[int, int] = defaultdict(int)
    for g in games:
        sizes[len(g.levels)] += 1
    print(
        f"code={code} games={len(games)} by seats={dict(sorted(sizes.items()))} "
        f"passes={args.passes} tau={TAU:.4f} time={time.perf_counter() - start:.0f}s"
    )
    print(f"{'level':<8}{'mu':>8}{'sigma':>8}{'spread':>8}{'display':>9}")
    for level in COMPUTER_LEVELS:
        s = skills[level]
        print(f"{level:<8}{s.mu:>8.2f}{s.sigma:>8.2f}{spread[level]:>8.2f}{display_rating(s):>9}")
    print("\n".join(_two_player_check(games, skills)))
    return 0


if __name__ == "__main__":
    sys.exit(main())
