"""The arena: a real table's protocol (random order among players who may act), every
lobby preset, reproducible runs, decision-time percentiles."""

from __future__ import annotations

import json
import re
import subprocess
import sys
from pathlib import Path

import pytest

from ai import LEVELS
from ai.arena import Match, Tally, main, play_deals, play_game
from ai.hard import Budget
from engine import Rules

LOBBY_PRESETS = ("classic", "perevodnoy", "short", "full_deck", "neighbours")


def _rates(out: str) -> list[str]:
    return [line for line in out.splitlines() if "%" in line and line.split()[0] in LEVELS]


def test_same_seed_same_results_and_the_order_matters(capsys: pytest.CaptureFixture[str]) -> None:
    args = ["normal", "easy", "normal", "--games", "12", "--seed", "7"]
    assert main(args) == 0
    first = capsys.readouterr().out
    assert main(args) == 0
    again = capsys.readouterr().out
    assert _rates(first) == _rates(again)
    assert "order=random" in first
    counts = []
    for order in ("random", "first"):
        tally = Tally()
        match = Match(("normal", "normal", "easy"), Rules(), 3, Budget(), order)
        for deal in range(4):
            play_game(match, deal, 0, tally)
        counts.append(sum(len(t) for t in tally.times.values()))
    assert counts[0] != counts[1]  # another protocol, other games


@pytest.mark.parametrize("preset", LOBBY_PRESETS)
def test_every_lobby_preset_runs(preset: str, capsys: pytest.CaptureFixture[str]) -> None:
    assert main(["normal", "easy", "easy", "--games", "3", "--rules", preset]) == 0
    out = capsys.readouterr().out
    assert f"rules={preset}" in out and "games=3" in out
    assert re.search(r"^normal cpu\s+\d+(\s+\d+\.\d+){4}$", out, re.M)  # p50 p90 p99 max


def test_an_unknown_preset_is_refused(capsys: pytest.CaptureFixture[str]) -> None:
    with pytest.raises(SystemExit):
        main(["normal", "easy", "--rules", "nope"])
    assert "invalid choice" in capsys.readouterr().err


def test_partners_report_teams(capsys: pytest.CaptureFixture[str]) -> None:
    assert main(["normal", "easy", "normal", "easy", "--partners", "--games", "8"]) == 0
    out = capsys.readouterr().out
    assert "partners" in out.splitlines()[0]
    teams = re.findall(r"^team ([AB]) \((\w+) \+ (\w+)\) loses (\d+) of (\d+)", out, re.M)
    assert [t[:3] for t in teams] == [("A", "normal", "normal"), ("B", "easy", "easy")]
    assert int(teams[0][3]) + int(teams[1][3]) == int(teams[0][4])


def test_partners_need_four_or_six_seats(capsys: pytest.CaptureFixture[str]) -> None:
    with pytest.raises(SystemExit):
        main(["normal", "easy", "normal", "--partners"])
    assert "partners play 2 against 2" in capsys.readouterr().err


def test_a_saved_tally_merges_like_the_games_themselves() -> None:
    """Chunks saved apart (bench/ai_strength.py) add up to the same counts, and their
    decision times to the same percentiles within the histogram's 1%."""
    match = Match(("normal", "easy", "normal", "easy"), Rules(partners=True), 5, Budget())
    whole, parts = play_deals(match, range(4)), Tally()
    for deals in (range(0, 1), range(1, 4)):
        saved = json.loads(json.dumps(play_deals(match, deals).to_json()))
        parts.merge(Tally.from_json(saved))
    assert (parts.games, parts.draws, parts.unfinished) == (
        whole.games,
        whole.draws,
        whole.unfinished,
    )
    assert parts.duraks == whole.duraks and parts.team_losses == whole.team_losses
    assert parts.seats == whole.seats and sum(whole.team_losses.values()) > 0
    for level in ("normal", "easy"):
        assert len(parts.cpu[level]) == len(whole.cpu[level])
        # The times differ from run to run; through the histogram each one is kept
        # within half a bucket.
        restored = Tally.from_json(json.loads(json.dumps(whole.to_json())))
        exact = sorted(whole.cpu[level])
        for a, b in zip(exact, sorted(restored.cpu[level]), strict=True):
            assert abs(a - b) <= 0.006 * a + 1e-7


def test_the_strength_bench_plays_missing_chunks_and_reports(tmp_path: Path) -> None:
    bench = Path(__file__).resolve().parent.parent / "bench" / "ai_strength.py"
    run = [sys.executable, str(bench), "--out", str(tmp_path)]
    only = ["--only", "normal-easy-classic", "--deals-per-chunk", "3"]
    first = subprocess.run(
        [*run, "run", *only, "--max-chunks", "2"], capture_output=True, text=True
    )
    assert first.returncode == 0, first.stderr
    assert "2 chunks played" in first.stdout
    again = subprocess.run(
        [*run, "run", *only, "--max-chunks", "1"], capture_output=True, text=True
    )
    assert "deals 6-9" in again.stdout  # the saved chunks are not played again
    report = subprocess.run([*run, "report"], capture_output=True, text=True, check=True).stdout
    row = next(line for line in report.splitlines() if line.startswith("| normal-easy-classic"))
    assert "| 18 (2000) |" in row and "(so far)" in row  # 9 deals x 2 seatings
    assert "| hard-normal-classic | 0 (2000) |" in report


def test_the_strength_bench_carries_chunks_only_once_some_replay_alike(tmp_path: Path) -> None:
    """A change that spares a match may take the old code's chunks of it, after a
    replay under the current code gives the same games; a chunk that replays otherwise
    stops it."""
    bench = Path(__file__).resolve().parent.parent / "bench" / "ai_strength.py"
    run = [sys.executable, str(bench), "--out", str(tmp_path)]
    only = ["--only", "normal-easy-classic"]
    played = subprocess.run(
        [*run, "run", *only, "--deals-per-chunk", "2", "--max-chunks", "3"],
        capture_output=True,
        text=True,
    )
    assert played.returncode == 0, played.stderr
    (code,) = [p.name for p in tmp_path.iterdir()]
    (tmp_path / code).rename(tmp_path / "old")  # as if another code had played them
    mine = tmp_path / code / "normal-easy-classic"

    carry = [*run, "carry", "old", *only, "--check", "1"]
    carried = subprocess.run(carry, capture_output=True, text=True)
    assert carried.returncode == 0, carried.stderr
    assert "1 chunks replayed alike, 2 carried" in carried.stdout
    assert len(list(mine.glob("*.json"))) == 3
    report = subprocess.run([*run, "report"], capture_output=True, text=True).stdout
    assert "| 12 (2000) |" in report  # 6 deals x 2 seatings, as the old code played them
    assert "normal-easy-classic: 2 of 3 chunks carried from old" in report

    for chunk in mine.glob("*.json"):
        chunk.unlink()
    first = tmp_path / "old" / "normal-easy-classic" / "deals-00000-00002.json"
    record = json.loads(first.read_text())
    record["tally"]["draws"] += 1  # the old code played that chunk otherwise
    first.write_text(json.dumps(record))
    refused = subprocess.run(carry, capture_output=True, text=True)
    assert refused.returncode == 1
    assert "deals 0-2: played differently now, nothing carried" in refused.stdout
    assert list(mine.glob("*.json")) == []
