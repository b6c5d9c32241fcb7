"""What a computer player remembers from the public history.

The view already lists the discard pile and every card everyone knows a player holds
(picked up, shown, swapped in, the face-up trump card drawn). On top of that the
memory infers what opponents probably *lack*: a defender who took while a card lay
unbeaten most likely had nothing that beats it. That inference is dropped when the
player draws new cards.

For the Hard player's world sampling the memory also keeps ``hints``: softer and
longer-lived inferences about what each player lacks, read from how they beat and
lead (reasonable players beat with their cheapest card and lead their lowest one), and
kept across draws for the cards held before the draw (a hint is stored with the number
of cards drawn since, which it does not cover). ``simple`` says whether a player's
moves so far all fit the simplest rule-of-thumb play (the Easy level: one card per
lead, beating the first open card with the cheapest beater, throwing in only low plain
cards, never transferring), so that search can simulate them that way.

The memory follows ``view.history`` incrementally between calls and rebuilds itself
when it meets a history it has not seen the start of (a new game, or a player created
mid-game).
"""

from __future__ import annotations

from ai.policy import SIMPLE_THROW_MAX_RANK
from engine.cards import BEATERS, SUIT_MASK, mask_of
from engine.events import (
    Attacked,
    Beaten,
    Discarded,
    Drew,
    Event,
    GameStarted,
    PickedUp,
    Swapped,
    Took,
    Transferred,
)
from engine.rules import HAND_SIZE
from engine.view import PlayerView


class Memory:
    def __init__(self) -> None:
        self.seen = 0
        self.first: Event | None = None
        self.trump = 0
        self.lacks: list[int] = []
        self.took_count: list[int] = []
        self.hints: list[list[list[int]]] = []
        """Per player, ``[drawn, mask]`` entries: the player most likely held none of
        ``mask`` when told, and drew ``drawn`` cards since (that may be some of it)."""
        self.simple: list[bool] = []
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
        self.hints = [[] for _ in range(view.num_players)]
        self.simple = [True] * view.num_players
        self._attack = []
        self._covered = 0

    def _hint(self, p: int, mask: int) -> None:
        """``p`` most likely holds none of ``mask`` now."""
        if mask:
            for entry in self.hints[p]:
                if entry[0] == 0:
                    entry[1] |= mask
                    return
            self.hints[p].append([0, mask])

    def hint_masks(self, p: int, slots: int) -> list[int]:
        """What each of ``p``'s ``slots`` unknown cards most likely is not, most
        constrained first: a hint made before ``p`` drew ``d`` cards covers all but ``d``
        of them."""
        out = [0] * slots
        for d, m in self.hints[p] if self.hints else ():
            for j in range(slots - d):
                out[j] |= m
        return out

    def _played(self, p: int, cards: list[int]) -> None:
        """``p`` played ``cards``: one it most likely lacked must be one it drew since;
        without such a draw, it does not play the simplest way."""
        for c in cards:
            for entry in self.hints[p]:
                if entry[1] >> c & 1:
                    if entry[0] == 0:
                        self.simple[p] = False
                    else:
                        entry[0] -= 1

    def _got(self, p: int, cards: int) -> None:
        for entry in self.hints[p]:
            entry[1] &= ~cards

    def _event(self, event: Event) -> None:
        if isinstance(event, Attacked):
            cards = [int(c) for c in event.cards]
            self._played(event.player, cards)
            self._attacked(event.player, cards)
            self._attack.extend(event.cards)
        elif isinstance(event, Transferred):
            self._attack.append(event.card)
            self._played(event.player, [int(event.card)])
            self.simple[event.player] = False
        elif isinstance(event, Beaten):
            self._played(event.player, [int(event.card)])
            self._beaten(event.player, int(event.attack), int(event.card))
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
                self._hint(event.player, common)
            self.took_count[event.player] += 1
        elif isinstance(event, PickedUp):
            self._got(event.player, mask_of(event.cards))
            self._attack = []
            self._covered = 0
        elif isinstance(event, Swapped):
            self._got(event.player, 1 << event.got)
        elif isinstance(event, Discarded):
            self._attack = []
            self._covered = 0
        elif isinstance(event, Drew):
            p = event.player
            self.lacks[p] = 0
            # A hint about a hand mostly renewed since is dropped.
            self.hints[p] = [
                [d + event.count, m] for d, m in self.hints[p] if d + event.count < HAND_SIZE
            ]
        elif isinstance(event, GameStarted):
            self.trump = event.trump_card // 13

    def _attacked(self, p: int, cards: list[int]) -> None:
        trump = self.trump
        if self._attack:  # a throw-in: the simplest play throws only low plain cards
            if any(c // 13 == trump or c % 13 + 2 > SIMPLE_THROW_MAX_RANK for c in cards):
                self.simple[p] = False
            return
        if len(cards) > 1:
            self.simple[p] = False
            return
        if not self.simple[p]:
            return
        # The simplest play leads the lowest card: plain cards by rank, then trumps.
        c = cards[0]
        plain = ~SUIT_MASK[trump] & ((1 << 52) - 1)
        if c // 13 == trump:
            self._hint(p, plain | (SUIT_MASK[trump] & ((1 << c) - 1)))
        else:
            lower = 0
            for s in range(4):
                if s != trump:
                    lower |= ((1 << (c % 13)) - 1) << (13 * s)
            self._hint(p, lower)

    def _beaten(self, p: int, a: int, c: int) -> None:
        trump = self.trump
        if self.simple[p]:
            first = next((x for x in self._attack if not self._covered >> x & 1), -1)
            if first != a:
                self.simple[p] = False
        # Beating with the cheapest card: a same-suit card when there is one, else the
        # lowest trump, so none of the cheaper beaters is held.
        if a // 13 == c // 13:
            between = ((1 << c) - 1) & ~((1 << (a + 1)) - 1)
            self._hint(p, between)
        elif c // 13 == trump:
            suit_top = (a // 13) * 13 + 13
            higher = ((1 << suit_top) - 1) & ~((1 << (a + 1)) - 1)
            lower_trumps = SUIT_MASK[trump] & ((1 << c) - 1)
            self._hint(p, higher | lower_trumps)
