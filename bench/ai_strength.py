"""The computer players' strength and time goals (issue 14), in chunks that add up.

    .venv/bin/python bench/ai_strength.py run --jobs 2 --minutes 90   # play missing chunks
    .venv/bin/python bench/ai_strength.py report                      # merge, check goals
    .venv/bin/python bench/ai_strength.py carry OLD --only NAMES      # matches a change spares

Every match of the goals is played as the arena plays it (mirrored deals, rotating
seats, a seeded random order among players who may act at once) in chunks of
``DEALS_PER_CHUNK`` deals. Each chunk is saved as soon as it is done under
``bench/results/ai_strength/<code>/<match>/``, where ``<code>`` is a hash of the
computer players' and the rules' sources: a chunk counts only for the code that played
it, and ``run`` plays only the chunks the current code still lacks. A full set is many
CPU-hours on a small machine, so runs on different days (or machines) add up; ``report``
merges whatever is there and says how many games each figure rests on.
"""

from __future__ import annotations

import argparse
import hashlib
import json
import os
import subprocess
import sys
import time
from collections.abc import Iterator
from concurrent.futures import FIRST_COMPLETED, Future, ProcessPoolExecutor, wait
from dataclasses import dataclass
from pathlib import Path
from typing import Any

ROOT = Path(__file__).resolve().parent.parent
sys.path.insert(0, str(ROOT))

from ai.arena import Match, Tally, percentile, play_deals, report, wilson  # noqa: E402
from ai.hard import Budget  # noqa: E402
from engine import Rules  # noqa: E402

RESULTS = ROOT / "bench" / "results" / "ai_strength"
DEALS_PER_CHUNK = 25
TIME_CAP = 5.0
"""Hard's wall-clock safety cap here: the counted budget decides, not a busy machine
(the 0.8 s default stays everywhere else)."""


@dataclass(frozen=True)
class Goal:
    name: str
    levels: tuple[str, ...]
    preset: str
    games: int
    subject: str
    """What the goal is about: a level (its durak rate) or "team B" (the line-up's 2nd,
    4th, 6th seats: how often that team loses)."""
    at_least: float | None = None
    at_most: float | None = None
    partners: bool = False

    @property
    def deals(self) -> int:
        return -(-self.games // len(self.levels))

    def match(self, seed: int) -> Match:
        rules = Rules.preset(self.preset)
        if self.partners:
            rules = Rules.parse({**rules.model_dump(), "partners": True})
        return Match(self.levels, rules, seed, Budget(time_cap=TIME_CAP))

    def text(self) -> str:
        bound = f">= {self.at_least:.0%}" if self.at_least is not None else f"<= {self.at_most:.0%}"
        what = "loses" if self.subject.startswith("team") else "durak"
        return f"{self.subject} {what} {bound}"


def _goals() -> list[Goal]:
    two, four, six = ("hard", "normal"), ("hard", *["normal"] * 3), ("hard", *["normal"] * 5)
    goals = [
        Goal("hard-normal-classic", two, "classic", 2000, "normal", at_least=0.82),
        Goal("hard-easy-classic", ("hard", "easy"), "classic", 2000, "easy", at_least=0.92),
        Goal("normal-easy-classic", ("normal", "easy"), "classic", 2000, "easy", at_least=0.62),
    ]
    for preset in ("perevodnoy", "short", "full_deck"):
        goals.append(Goal(f"hard-normal-{preset}", two, preset, 2000, "normal", at_least=0.75))
        goals.append(
            Goal(f"normal-easy-{preset}", ("normal", "easy"), preset, 2000, "easy", at_least=0.62)
        )
    goals.append(Goal("hard-3normal-classic", four, "classic", 2000, "hard", at_most=0.06))
    for preset in ("neighbours", "perevodnoy"):
        goals.append(Goal(f"hard-3normal-{preset}", four, preset, 2000, "hard", at_most=0.10))
    goals += [
        Goal("hard-5normal-classic", six, "classic", 1000, "hard", at_most=0.06),
        Goal(
            "partners-hard-vs-normal-2v2",
            ("hard", "normal") * 2,
            "classic",
            1000,
            "team B",
            at_least=0.75,
            partners=True,
        ),
        Goal(
            "partners-hard-vs-normal-3v3",
            ("hard", "normal") * 3,
            "classic",
            1000,
            "team B",
            at_least=0.70,
            partners=True,
        ),
        Goal(
            "partners-normal-vs-easy-2v2",
            ("normal", "easy") * 2,
            "classic",
            1000,
            "team B",
            at_least=0.62,
            partners=True,
        ),
    ]
    return goals


GOALS = _goals()
SEED = 1
"""Each match's seed is SEED plus its place in GOALS, so a chunk is the same games
whoever plays it."""


def code_id() -> str:
    """A hash of every source file that decides a game: the computer players' and the
    rules'."""
    digest = hashlib.sha256()
    for path in sorted([*ROOT.glob("ai/**/*.py"), *ROOT.glob("engine/**/*.py")]):
        digest.update(path.relative_to(ROOT).as_posix().encode())
        digest.update(path.read_bytes())
    return digest.hexdigest()[:12]


def _commit() -> str:
    try:
        out = subprocess.run(
            ["git", "-C", str(ROOT), "describe", "--always", "--dirty"],
            capture_output=True,
            text=True,
            check=True,
        )
    except (OSError, subprocess.CalledProcessError):
        return "unknown"
    return out.stdout.strip()


def _chunk_path(out: Path, code: str, goal: Goal, start: int, stop: int) -> Path:
    return out / code / goal.name / f"deals-{start:05d}-{stop:05d}.json"


def _chunks(goal: Goal, per_chunk: int) -> Iterator[tuple[int, int]]:
    for start in range(0, goal.deals, per_chunk):
        yield start, min(goal.deals, start + per_chunk)


def _play(index: int, start: int, stop: int) -> dict[str, Any]:
    goal = GOALS[index]
    c0, t0 = time.process_time(), time.perf_counter()
    tally = play_deals(goal.match(SEED + index), range(start, stop))
    return {
        "cpu_seconds": round(time.process_time() - c0, 1),
        "wall_seconds": round(time.perf_counter() - t0, 1),
        "tally": tally.to_json(),
    }


def _save(path: Path, record: dict[str, Any]) -> None:
    path.parent.mkdir(parents=True, exist_ok=True)
    tmp = path.with_suffix(".tmp")
    tmp.write_text(json.dumps(record, separators=(",", ":")) + "\n")
    os.replace(tmp, path)  # a chunk is either saved whole or not at all


def _record(
    i: int, a: int, b: int, code: str, commit: str, played: dict[str, Any]
) -> dict[str, Any]:
    """A chunk's saved record: the match, the deals, who played them, what ``_play`` gave."""
    goal = GOALS[i]
    return {
        "goal": goal.name,
        "levels": list(goal.levels),
        "preset": goal.preset,
        "partners": goal.partners,
        "seed": SEED + i,
        "deals": [a, b],
        "code": code,
        "commit": commit,
        "finished": time.strftime("%Y-%m-%dT%H:%M:%SZ", time.gmtime()),
        **played,
    }


def run(args: argparse.Namespace) -> int:
    code = code_id()
    commit = _commit()
    chosen = [i for i, g in enumerate(GOALS) if not args.only or g.name in args.only]
    # Round robin over the matches: every goal gets a first estimate early.
    per_goal = []
    for i in chosen:
        covered = _saved(args.out, code, GOALS[i])[1]
        chunks = _chunks(GOALS[i], args.deals_per_chunk)
        per_goal.append([(i, a, b) for a, b in chunks if covered.isdisjoint(range(a, b))])
    todo = [c for row in _round_robin(per_goal) for c in row]
    if args.max_chunks is not None:
        todo = todo[: args.max_chunks]
    deadline = time.monotonic() + 60 * args.minutes if args.minutes else float("inf")
    print(f"code {code} ({commit}): {len(todo)} chunks to play", flush=True)
    done = 0
    with ProcessPoolExecutor(args.jobs) as pool:
        running: dict[Future[dict[str, Any]], tuple[int, int, int]] = {}
        queue = iter(todo)
        while True:
            while len(running) < args.jobs and time.monotonic() < deadline:
                job = next(queue, None)
                if job is None:
                    break
                running[pool.submit(_play, *job)] = job
            if not running:
                break
            finished, _ = wait(running, return_when=FIRST_COMPLETED)
            for future in finished:
                i, a, b = running.pop(future)
                goal = GOALS[i]
                record = _record(i, a, b, code, commit, future.result())
                _save(_chunk_path(args.out, code, goal, a, b), record)
                done += 1
                print(f"{goal.name} deals {a}-{b}: {record['cpu_seconds']} CPU s", flush=True)
    print(f"{done} chunks played, {len(todo) - done} left for another run")
    return 0


def _outcomes(tally: dict[str, Any]) -> tuple[object, ...]:
    """What a chunk's games came to, and how many decisions each level made in them:
    equal for two codes that play those games alike (times aside)."""
    decisions = {level: sum(hist.values()) for level, hist in tally["cpu"].items()}
    keys = ("games", "draws", "unfinished", "duraks", "seats", "team_losses")
    return (*(tally[k] for k in keys), decisions)


def carry(args: argparse.Namespace) -> int:
    """Take another code's chunks of ``--only`` matches, which a change cannot have
    touched (say, Hard's play at bigger tables for two-player matches), once replaying
    ``--check`` of them under the current code gives the same outcomes and the same
    number of decisions per level. The replayed chunks are saved as the current code's
    own; the others are copied with ``carried_from`` (their times are the old run's)."""
    code = code_id()
    if args.source == code:
        print("that is the current code", file=sys.stderr)
        return 2
    commit = _commit()
    source = {
        i: _saved(args.out, args.source, goal)[0]
        for i, goal in enumerate(GOALS)
        if goal.name in args.only
    }
    jobs = [(i, r) for i, records in source.items() for r in records[: args.check]]
    with ProcessPoolExecutor(args.jobs) as pool:
        futures = [(i, r, pool.submit(_play, i, *r["deals"])) for i, r in jobs]
        replayed = [(i, r, f.result()) for i, r, f in futures]
    refused: set[int] = set()
    checked: dict[int, list[list[int]]] = {}
    for i, old, new in replayed:
        goal = GOALS[i]
        a, b = old["deals"]
        if _outcomes(new["tally"]) != _outcomes(old["tally"]):
            print(f"{goal.name} deals {a}-{b}: played differently now, nothing carried")
            refused.add(i)
            continue
        _save(_chunk_path(args.out, code, goal, a, b), _record(i, a, b, code, commit, new))
        checked.setdefault(i, []).append([a, b])
    for i, deals in checked.items():
        if i in refused:
            continue
        goal = GOALS[i]
        covered = _saved(args.out, code, goal)[1]
        copied = 0
        for old in source[i]:
            a, b = old["deals"]
            if covered.isdisjoint(range(a, b)):
                record = {**old, "code": code, "carried_from": args.source, "checked": deals}
                _save(_chunk_path(args.out, code, goal, a, b), record)
                copied += 1
        print(f"{goal.name}: {len(deals)} chunks replayed alike, {copied} carried")
    return 1 if refused else 0


def _round_robin(rows: list[list[tuple[int, int, int]]]) -> Iterator[list[tuple[int, int, int]]]:
    for k in range(max((len(r) for r in rows), default=0)):
        yield [r[k] for r in rows if k < len(r)]


def _saved(out: Path, code: str, goal: Goal) -> tuple[list[dict[str, Any]], set[int]]:
    """A goal's saved chunks for ``code`` and the deals they cover. A chunk that overlaps
    one read before it (saved with another chunk size) is left out: no game counts twice."""
    records: list[dict[str, Any]] = []
    covered: set[int] = set()
    for path in sorted((out / code / goal.name).glob("deals-*.json")):
        record = json.loads(path.read_text())
        deals = range(*record["deals"])
        if covered.isdisjoint(deals):
            records.append(record)
            covered.update(deals)
        else:
            print(f"{path}: overlaps another chunk, left out", file=sys.stderr)
    return records, covered


def _load(out: Path, code: str, goal: Goal) -> tuple[Tally, int, float, str]:
    """The merged tally of a goal's saved chunks, the deals they cover, CPU seconds, and
    a line on the chunks carried from another code ("" when none)."""
    tally, cpu = Tally(), 0.0
    records, covered = _saved(out, code, goal)
    for record in records:
        tally.merge(Tally.from_json(record["tally"]))
        cpu += record["cpu_seconds"]
    carried = [r for r in records if "carried_from" in r]
    note = (
        f"{goal.name}: {len(carried)} of {len(records)} chunks carried from"
        f" {carried[0]['carried_from']} (replayed alike: deals {carried[0]['checked']})"
        if carried
        else ""
    )
    return tally, len(covered), cpu, note


def _measure(goal: Goal, tally: Tally) -> tuple[int, int]:
    decided = tally.games - tally.draws
    if goal.subject.startswith("team"):
        return tally.team_losses[1], decided
    return tally.duraks[goal.subject], decided


def summary(tallies: list[Tally]) -> list[str]:
    """The goals table, from each goal's merged tally (in ``GOALS``' order)."""
    rows = [
        "| match | games (goal) | measured [95% CI] | goal | holds | Hard CPU ms p50 / p99 / max"
        " | Easy, Normal p99 ms |",
        "| --- | --- | --- | --- | --- | --- | --- |",
    ]
    for goal, tally in zip(GOALS, tallies, strict=True):
        if not tally.games:
            rows.append(f"| {goal.name} | 0 ({goal.games}) | | {goal.text()} | not run | | |")
            continue
        k, n = _measure(goal, tally)
        rate = k / max(1, n)
        lo, hi = wilson(k, n)
        ok = rate >= goal.at_least if goal.at_least is not None else rate <= (goal.at_most or 0)
        complete = tally.games >= goal.games
        holds = ("yes" if ok else "no") + ("" if complete else " (so far)")
        hard = sorted(tally.cpu.get("hard", []))
        times = (
            " / ".join(f"{1000 * percentile(hard, q):.0f}" for q in (0.5, 0.99, 1.0))
            if hard
            else "-"
        )
        light = ", ".join(
            f"{1000 * percentile(sorted(tally.cpu[lv]), 0.99):.2f}"
            for lv in ("easy", "normal")
            if tally.cpu.get(lv)
        )
        rows.append(
            f"| {goal.name} | {tally.games} ({goal.games}) | {rate:.1%} [{lo:.1%}, {hi:.1%}] "
            f"| {goal.text()} | {holds} | {times} | {light} |"
        )
    return rows


def show(args: argparse.Namespace) -> int:
    code = args.code or code_id()
    print(f"code {code}\n")
    tallies, notes = [], []
    for i, goal in enumerate(GOALS):
        tally, deals, cpu, note = _load(args.out, code, goal)
        tallies.append(tally)
        notes += [note] if note else []
        if tally.games and args.full:
            print(report(goal.match(SEED + i), tally, goal.preset, cpu))
            print(f"({deals} deals of {goal.deals}, {cpu / 3600:.2f} CPU-hours)\n")
    print("\n".join([*summary(tallies), *notes]))
    return 0


def main(argv: list[str] | None = None) -> int:
    parser = argparse.ArgumentParser(description=__doc__.split("\n")[0])
    parser.add_argument("--out", type=Path, default=RESULTS, help="where chunks are saved")
    sub = parser.add_subparsers(dest="command", required=True)
    play = sub.add_parser("run", help="play the chunks the current code lacks")
    play.add_argument("--jobs", type=int, default=1)
    play.add_argument("--minutes", type=float, default=0, help="start no chunk after this")
    play.add_argument("--only", nargs="*", help="these matches only (names as in report)")
    play.add_argument("--deals-per-chunk", type=int, default=DEALS_PER_CHUNK)
    play.add_argument("--max-chunks", type=int, default=None)
    play.set_defaults(handler=run)
    take = sub.add_parser("carry", help="take another code's chunks once some replay alike")
    take.add_argument("source", help="the code whose chunks to take")
    take.add_argument("--only", nargs="+", required=True, help="matches the change spares")
    take.add_argument("--check", type=int, default=1, help="chunks per match to replay")
    take.add_argument("--jobs", type=int, default=1)
    take.set_defaults(handler=carry)
    rep = sub.add_parser("report", help="merge the saved chunks and check the goals")
    rep.add_argument("--code", help="another code's chunks (default: the current code)")
    rep.add_argument("--full", action="store_true", help="the arena's report of each match")
    rep.set_defaults(handler=show)
    args = parser.parse_args(argv)
    return int(args.handler(args))


if __name__ == "__main__":
    sys.exit(main())
