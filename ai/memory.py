"""What a computer player remembers from the public history.

The view already lists the discard pile and every card everyone knows a player holds
(picked up, shown, swapped in, the face-up trump card drawn). On top of that the
memory infers what opponents probably *lack*: a defender who took while a card lay
unbeaten most likely had nothing that beats it. That inference is dropped when the
player draws new cards.

For the Hard player's world sampling the memory also keeps ``hints``: softer and
longer-lived inferences about what each player lacks, read from how they beat, lead,
take, throw in and stop adding (reasonable players beat with their cheapest card, lead
their lowest one while the stock lasts, throw in their lowest plain card of a table
rank and add every low one), and kept across draws for the cards held before the draw
(a hint is stored with the number of cards drawn since, which it does not cover). The
hints fit the Normal heuristic as well as the simplest play: a sampled world that
breaks one is wrong about a Normal seat too (the bolder reading of a take once made a
quarter of them wrong). ``simple`` says whether a player's moves so far all fit the
simplest rule-of-thumb play (the Easy level: one card per lead, beating the first open
card with the cheapest beater, throwing in only low plain cards, never transferring),
so that search can simulate them that way.

The memory follows ``view.history`` incrementally between calls and rebuilds itself
when it meets a history it has not seen the start of (a new game, or a player created
mid-game), or another viewer's (each sees only their own passes).
"""

from __future__ import annotations

from ai.policy import NORMAL, SIMPLE_THROW_MAX_RANK
from ai.solver import same_side
from engine.cards import BEATERS, CARD_RANK_MASK, RANK_MASK, SUIT_MASK, mask_of
from engine.events import (
    Attacked,
    Beaten,
    BoutStarted,
    Discarded,
    Drew,
    Event,
    GameStarted,
    PickedUp,
    PlayerOut,
    Swapped,
    Took,
    Transferred,
)
from engine.rules import HAND_SIZE
from engine.view import PlayerView


def _plain_below(rank: int, trump: int) -> int:
    """The plain cards (any suit but ``trump``) ranked below ``rank``."""
    below = (1 << rank - 2) - 1
    return sum(below << 13 * suit for suit in range(4) if suit != trump)


LOW_PLAIN: tuple[int, ...] = tuple(_plain_below(SIMPLE_THROW_MAX_RANK + 1, t) for t in range(4))
"""Per trump suit: the plain cards of a table rank that both the simplest play and the
Normal heuristic always throw in when there is room (rank 10 or lower)."""


class Memory:
    def __init__(self) -> None:
        self.seen = 0
        self.first: Event | None = None
        self.viewer = -1
        self.trump = 0
        self.lacks: list[int] = []
        self.took_count: list[int] = []
        self.hints: list[list[list[int]]] = []
        """Per player, ``[drawn, mask]`` entries: the player most likely held none of
        ``mask`` when told, and drew ``drawn`` cards since (that may be some of it)."""
        self.simple: list[bool] = []
        self._attack: list[int] = []
        self._covered = 0
        self._ranks = 0
        """The cards of the ranks on the table this bout."""
        self._bout: tuple[int, int, int] | None = None
        """This bout's attacker, defender and card limit (None after a transfer: the
        new limit depends on a hand size the memory does not follow)."""
        self._out = 0
        self._throw_in_all = True
        self._partners = False
        self._stock = 0
        """Cards in the stock (the deck after the deal, less what was drawn)."""

    def update(self, view: PlayerView) -> None:
        history = view.history
        if (
            not history
            or len(history) < self.seen
            or self.first != history[0]
            or view.player != self.viewer
        ):
            self._reset(view)
        for event in history[self.seen :]:
            self._event(event)
        self.seen = len(history)

    def _reset(self, view: PlayerView) -> None:
        self.seen = 0
        self.first = view.history[0] if view.history else None
        self.viewer = view.player
        self.trump = view.trump
        self.lacks = [0] * view.num_players
        self.took_count = [0] * view.num_players
        self.hints = [[] for _ in range(view.num_players)]
        self.simple = [True] * view.num_players
        self._clear_table()
        self._bout = None
        self._out = 0
        self._throw_in_all = view.rules.throw_in == "all"
        self._partners = view.rules.partners
        self._stock = view.rules.deck_size - HAND_SIZE * view.num_players

    def _clear_table(self) -> None:
        self._attack = []
        self._covered = 0
        self._ranks = 0

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
            self._ranks |= CARD_RANK_MASK[cards[0]]
        elif isinstance(event, Transferred):
            self._attack.append(event.card)
            self._ranks |= CARD_RANK_MASK[event.card]
            self._bout = None
            self._played(event.player, [int(event.card)])
            self.simple[event.player] = False
        elif isinstance(event, Beaten):
            self._played(event.player, [int(event.card)])
            self._beaten(event.player, int(event.attack), int(event.card))
            self._covered |= 1 << event.attack
            self._ranks |= CARD_RANK_MASK[event.card]
        elif isinstance(event, Took):
            unbeaten = [a for a in self._attack if not self._covered >> a & 1]
            if unbeaten:
                beaters = BEATERS[self.trump]
                common = -1
                for a in unbeaten:
                    common &= beaters[a]
                # Nothing beats every open card; with one open card, nothing beats it.
                self.lacks[event.player] |= common
                self._hint(event.player, self._took_hint(unbeaten, common))
            self.took_count[event.player] += 1
        elif isinstance(event, PickedUp):
            self._bout_over()
            self._got(event.player, mask_of(event.cards))
            self._clear_table()
        elif isinstance(event, Swapped):
            self._got(event.player, 1 << event.got)
        elif isinstance(event, Discarded):
            self._bout_over()
            self._clear_table()
        elif isinstance(event, Drew):
            p = event.player
            self._stock -= event.count
            self.lacks[p] = 0
            # A hint about a hand mostly renewed since is dropped.
            self.hints[p] = [
                [d + event.count, m] for d, m in self.hints[p] if d + event.count < HAND_SIZE
            ]
        elif isinstance(event, GameStarted):
            self.trump = event.trump_card // 13
        elif isinstance(event, BoutStarted):
            self._bout = (event.attacker, event.defender, event.limit)
        elif isinstance(event, PlayerOut):
            self._out |= 1 << event.player

    def _took_hint(self, unbeaten: list[int], common: int) -> int:
        """What a player who took most likely lacks, for world sampling: the Normal
        heuristic takes rather than spend a high trump while the stock lasts, and
        rather than split a greedy defence of several open cards, so only a lone open
        card tells, and then not about the high trumps early on. (``lacks`` keeps the
        bolder reading: Normal's own throw-ins were tuned on it.)"""
        if len(unbeaten) > 1:
            return 0
        if self._stock > NORMAL.late_stock:
            trump = self.trump
            high = RANK_MASK[NORMAL.take_high_trump] | RANK_MASK[14]
            return common & ~(high & SUIT_MASK[trump])
        return common

    def _bout_over(self) -> None:
        """Attackers who could still have added a card and did not: reasonable play
        (the simplest and the Normal heuristic alike) adds its low plain cards of a
        table rank, so they hold none of those. Whether they passed or were never asked
        (holding no card of a table rank) is not used: at a real table nobody could
        tell those apart."""
        if self._bout is None:
            return
        attacker, defender, limit = self._bout
        if len(self._attack) >= limit:
            return  # no room: nobody could add
        low = self._ranks & LOW_PLAIN[self.trump]
        if not low:
            return
        for p in range(len(self.hints)):
            if (
                same_side(self._partners, p, defender)
                or self._out >> p & 1
                or (p != attacker and not self._throw_in_all)
            ):
                continue  # could not add (with neighbours-only throw-ins: unsure)
            self._hint(p, low)

    def _attacked(self, p: int, cards: list[int]) -> None:
        trump = self.trump
        if self._attack:  # a throw-in: the simplest play throws only low plain cards
            if any(c // 13 == trump or c % 13 + 2 > SIMPLE_THROW_MAX_RANK for c in cards):
                self.simple[p] = False
            c = cards[0]
            if c // 13 != trump:
                # Reasonable play throws in its lowest plain card of a table rank.
                self._hint(p, self._ranks & _plain_below(c % 13 + 2, trump))
            return
        if len(cards) > 1:
            self.simple[p] = False
            return
        if self._stock <= NORMAL.late_stock:
            return  # late on, the Normal heuristic leads what the defender cannot beat
        # The simplest play, and the Normal heuristic while the stock lasts, lead the
        # lowest card: plain cards by rank, then trumps.
        c = cards[0]
        plain = ~SUIT_MASK[trump] & ((1 << 52) - 1)
        if c // 13 == trump:
            self._hint(p, plain | (SUIT_MASK[trump] & ((1 << c) - 1)))
        else:
            self._hint(p, _plain_below(c % 13 + 2, trump))

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
