"""Cards, suits, ranks and the precomputed bit masks the rules are built on.

A card is an ``int`` subclass (``suit * 13 + rank - 2``) so hands can be stored as
bit masks: membership, "which of my cards beat this one" and "which of my cards
match a rank on the table" are single ``&`` operations. That keeps the engine
fast enough for search-based computer players.
"""

from __future__ import annotations

from collections.abc import Iterable, Iterator
from enum import IntEnum
from typing import Final

from engine.errors import ParseError


class Suit(IntEnum):
    SPADES = 0
    HEARTS = 1
    DIAMONDS = 2
    CLUBS = 3

    @property
    def symbol(self) -> str:
        return SUIT_SYMBOLS[self]


SUIT_SYMBOLS: Final = ("♠", "♥", "♦", "♣")
_SUIT_ALIASES: Final = {
    "♠": 0, "s": 0, "♤": 0,
    "♥": 1, "h": 1, "♡": 1,
    "♦": 2, "d": 2, "♢": 2,
    "♣": 3, "c": 3, "♧": 3,
}  # fmt: skip
RANK_NAMES: Final = {11: "J", 12: "Q", 13: "K", 14: "A"}
_RANK_ALIASES: Final = {"J": 11, "Q": 12, "K": 13, "A": 14, "T": 10}

# Lowest rank of each supported deck size (the rank of the "trump six").
LOWEST_RANK: Final = {24: 9, 36: 6, 52: 2}


class Card(int):
    """One playing card; prints as rank + suit symbol (``10♥``, ``Q♣``)."""

    __slots__ = ()

    @property
    def rank(self) -> int:
        """2..14 (J=11, Q=12, K=13, A=14)."""
        return self % 13 + 2

    @property
    def suit(self) -> Suit:
        return Suit(self // 13)

    @property
    def bit(self) -> int:
        return 1 << self

    def __str__(self) -> str:
        return _TEXTS[self]

    def __repr__(self) -> str:
        return f"Card({self!s})"

    @staticmethod
    def of(rank: int, suit: int) -> Card:
        if not 2 <= rank <= 14 or not 0 <= suit <= 3:
            raise ValueError(f"no card with rank {rank} and suit {suit}")
        return CARDS[suit * 13 + rank - 2]

    @staticmethod
    def parse(text: str) -> Card:
        """Parse ``10♥``, ``Q♣``, ``6s`` or ``Th``; raise ``ValueError`` on anything else."""
        known = _BY_TEXT.get(text)
        if known is not None:  # as printed (see _TEXTS)
            return known
        raw = text.strip()
        if len(raw) < 2:
            raise ParseError(f"not a card: {text!r}")
        rank_part, suit_part = raw[:-1].upper(), raw[-1].lower()
        suit = _SUIT_ALIASES.get(suit_part)
        rank = int(rank_part) if rank_part.isdigit() else _RANK_ALIASES.get(rank_part, 0)
        if suit is None or not 2 <= rank <= 14:
            raise ParseError(f"not a card: {text!r} (expected rank + suit, e.g. 10♥ or Q♣)")
        return CARDS[suit * 13 + rank - 2]


def rank_name(rank: int) -> str:
    return RANK_NAMES.get(rank, str(rank))


CARDS: Final = tuple(Card(i) for i in range(52))
# Printed and parsed by the hundred for every stored game: looked up, not computed.
_TEXTS: Final = tuple(rank_name(i % 13 + 2) + SUIT_SYMBOLS[i // 13] for i in range(52))
_BY_TEXT: Final = {text: CARDS[i] for i, text in enumerate(_TEXTS)}

# RANK_MASK[rank]: the four cards of that rank.
RANK_MASK: Final = tuple(
    sum(1 << (s * 13 + r - 2) for s in range(4)) if r >= 2 else 0 for r in range(15)
)
# CARD_RANK_MASK[card]: the four cards sharing this card's rank.
CARD_RANK_MASK: Final = tuple(RANK_MASK[c.rank] for c in CARDS)
SUIT_MASK: Final = tuple(sum(1 << (s * 13 + i) for i in range(13)) for s in range(4))


def _beaters(trump: int, card: Card) -> int:
    suit, rank = card // 13, card.rank
    higher_same_suit = sum(1 << (suit * 13 + r - 2) for r in range(rank + 1, 15))
    return higher_same_suit if suit == trump else higher_same_suit | SUIT_MASK[trump]


# BEATERS[trump][card]: every card that beats ``card`` when ``trump`` is the trump suit.
BEATERS: Final = tuple(tuple(_beaters(t, c) for c in CARDS) for t in range(4))


def deck_cards(deck_size: int) -> tuple[Card, ...]:
    """The cards of a 24, 36 or 52 card deck, ordered by suit then rank."""
    return _DECKS[deck_size]


_DECKS: Final = {
    size: tuple(c for c in CARDS if c.rank >= low) for size, low in LOWEST_RANK.items()
}


def mask_of(cards: Iterable[int]) -> int:
    mask = 0
    for c in cards:
        mask |= 1 << c
    return mask


def cards_of(mask: int) -> tuple[Card, ...]:
    """The cards in a bit mask, lowest index first (suit, then rank)."""
    out = []
    while mask:
        low = mask & -mask
        out.append(CARDS[low.bit_length() - 1])
        mask ^= low
    return tuple(out)


def iter_cards(mask: int) -> Iterator[Card]:
    while mask:
        low = mask & -mask
        yield CARDS[low.bit_length() - 1]
        mask ^= low


def beats(card: Card, attack: Card, trump: int) -> bool:
    """Whether ``card`` beats ``attack`` with ``trump`` as the trump suit."""
    return bool(BEATERS[trump][attack] >> card & 1)


def sort_key(card: Card, trump: int) -> tuple[int, int, int]:
    """Display order: non-trumps by rank, trumps last."""
    return (card // 13 == trump, card.rank, card // 13)
