"""The arena: a real table's protocol (random order among players who may act), every
lobby preset, reproducible runs, decision-time percentiles."""

from __future__ import annotations

import re

import pytest

from ai import LEVELS
from ai.arena import Match, Tally, main, play_game
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
