"""A failing computer level must never stall a table."""

from __future__ import annotations

import logging
from typing import Any

import pytest

import ai
from bot.app.ai_runner import AiRunner, choose
from engine import Rules, new_game, view, waiting_for


def _view_to_move() -> Any:
    state = new_game(Rules(), 2, seed=3)
    return view(state, waiting_for(state)[0])


def test_a_raising_level_falls_back_to_a_simpler_one(
    monkeypatch: pytest.MonkeyPatch, caplog: pytest.LogCaptureFixture
) -> None:
    real_player = ai.player

    def broken_hard(level: str, seed: int = 0) -> Any:
        if level == "hard":
            raise RuntimeError("playout did not finish")
        return real_player(level, seed=seed)

    monkeypatch.setattr(ai, "player", broken_hard)
    me = _view_to_move()
    with caplog.at_level(logging.ERROR):
        action = choose("hard", 1, me)
    assert action in me.legal_actions
    assert action == real_player("normal", seed=1).choose(me)
    assert "hard computer player failed" in caplog.text


def test_an_illegal_choice_is_refused_and_logged(
    monkeypatch: pytest.MonkeyPatch, caplog: pytest.LogCaptureFixture
) -> None:
    me = _view_to_move()

    class Cheater:
        level = "easy"

        def choose(self, _view: Any) -> Any:
            return "take"  # not an action at all

    monkeypatch.setattr(ai, "player", lambda level, seed=0: Cheater())
    with caplog.at_level(logging.ERROR):
        action = choose("normal", 1, me)
    assert action == me.legal_actions[0]  # every level failed: the table still moves
    assert "chose illegal" in caplog.text


async def test_runner_without_processes_thinks_in_a_thread() -> None:
    runner = AiRunner(processes=0)
    me = _view_to_move()
    try:
        assert await runner.choose("hard", 5, me) in me.legal_actions
    finally:
        runner.close()
