"""Computer players: Easy, Normal and Hard.

``player(level, seed=0)`` returns an object whose ``choose(view)`` returns one of the
legal actions in ``view`` (an ``engine.PlayerView``). One object per seat per game: it
may remember the public history between calls, and it also works when created in the
middle of a game. Players never see the full game state: this package reads only
views, and the search of the Hard level builds hypothetical states from a view and
guessed cards through ``engine.worlds``.
"""

from __future__ import annotations

from typing import Literal, Protocol

from ai.hard import Budget, HardPlayer
from ai.levels import EasyPlayer, NoMoveError, NormalPlayer
from engine.actions import Action
from engine.view import PlayerView

Level = Literal["easy", "normal", "hard"]
LEVELS: tuple[Level, ...] = ("easy", "normal", "hard")


class Player(Protocol):
    level: str

    def choose(self, view: PlayerView) -> Action: ...


def player(level: str, seed: int = 0, budget: Budget | None = None) -> Player:
    """A computer player of ``level`` ("easy", "normal" or "hard"), seeded.

    ``budget`` (Hard only) sets the work per decision; see ``ai.hard.Budget``.
    """
    if level == "easy":
        return EasyPlayer(seed)
    if level == "normal":
        return NormalPlayer(seed)
    if level == "hard":
        return HardPlayer(seed, budget)
    raise ValueError(f"unknown level {level!r}; choose one of {', '.join(LEVELS)}")


__all__ = [
    "LEVELS",
    "Budget",
    "EasyPlayer",
    "HardPlayer",
    "Level",
    "NoMoveError",
    "NormalPlayer",
    "Player",
    "player",
]
