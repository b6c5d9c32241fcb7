"""Transient hand keyboards: picking which card to beat, confirming Leave.

A mode belongs to one player's hand at one step of one game; any change of the game
ends it (the next render finds it stale and forgets it). It lives in this process
only: losing it on a restart just shows the normal keyboard again.
"""

from __future__ import annotations

from collections import OrderedDict
from dataclasses import dataclass
from typing import Literal

from bot.domain.place import Place
from bot.domain.records import ChatGame

MAX_MODES = 10_000
"""Modes kept at most; the oldest is forgotten first (it only costs a normal keyboard)."""

HandMode = tuple[Literal["pick", "leave"], int]
"""("pick", card) or ("leave", 0)."""


@dataclass(frozen=True)
class _Entry:
    game_id: str
    step: int
    mode: HandMode


class HandModes:
    """The current mode of each (place, user) hand."""

    def __init__(self, limit: int = MAX_MODES) -> None:
        self._modes: OrderedDict[tuple[Place, int], _Entry] = OrderedDict()
        self._limit = limit

    def set(self, place: Place, user_id: int, game_id: str, step: int, mode: HandMode) -> None:
        self._modes[(place, user_id)] = _Entry(game_id, step, mode)
        self._modes.move_to_end((place, user_id))
        while len(self._modes) > self._limit:
            self._modes.popitem(last=False)

    def clear(self, place: Place, user_id: int) -> None:
        self._modes.pop((place, user_id), None)

    def current(self, game: ChatGame, user_id: int) -> HandMode | None:
        """The mode of ``user_id``'s hand in ``game`` if it still applies to its step."""
        entry = self._modes.get((game.place, user_id))
        if entry is None:
            return None
        step = game.state.get("step") if game.state is not None else None
        if entry.game_id != game.game_id or entry.step != step:
            self.clear(game.place, user_id)
            return None
        return entry.mode

    def __len__(self) -> int:
        return len(self._modes)
