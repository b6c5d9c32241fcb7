"""What a computer player remembers from the public history.

The view already lists the discard pile and every card everyone knows a player holds
(picked up, shown, swapped in, the face-up trump card drawn). On top of that the
memory infers what opponents probably *lack*: a defender who took while a card lay
unbeaten most likely had nothing that beats it. That inference is dropped when the
player draws new cards.

The memory follows ``view.history`` incrementally between calls and rebuilds itself
when it meets a history it has not seen the start of (a new game, or a player created
mid-game).
"""

from __future__ import annotations

from engine.cards import BEATERS
from engine.events import (
    Attacked,
    Beaten,
    Discarded,
    Drew,
    Event,
    GameStarted,
    PickedUp,
    Took,
    Transferred,
)
from engine.view import PlayerView


class Memory:
    def __init__(self) -> None:
        self.seen = 0
        self.first: Event | None = None
        self.trump = 0
        self.lacks: list[int] = []
        self.took_count: list[int] = []
        self._attack: list[int] = []
        self._covered = 0

    def update(self, view: PlayerView) -> None:
        history = view.history
        if not history or len(history) < self.seen or self.first != history[0]:
            self._reset(view)
        for event in history[self.seen :]:
            self._event(event)
        self.seen = len(history)

    def _reset(self, view: PlayerView) -> None:
        self.seen = 0
        self.first = view.history[0] if view.history else None
        self.trump = view.trump
        self.lacks = [0] * view.num_players
        self.took_count = [0] * view.num_players
        self._attack = []
        self._covered = 0

    def _event(self, event: Event) -> None:
        if isinstance(event, Attacked):
            self._attack.extend(event.cards)
        elif isinstance(event, Transferred):
            self._attack.append(event.card)
        elif isinstance(event, Beaten):
            self._covered |= 1 << event.attack
        elif isinstance(event, Took):
            unbeaten = [a for a in self._attack if not self._covered >> a & 1]
            if unbeaten:
                beaters = BEATERS[self.trump]
                common = -1
                for a in unbeaten:
                    common &= beaters[a]
                # Nothing beats every open card; with one open card, nothing beats it.
                self.lacks[event.player] |= common
            self.took_count[event.player] += 1
        elif isinstance(event, PickedUp | Discarded):
            self._attack = []
            self._covered = 0
        elif isinstance(event, Drew):
            self.lacks[event.player] = 0
        elif isinstance(event, GameStarted):
            self.trump = event.trump_card // 13
