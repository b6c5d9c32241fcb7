"""Card faces: red suits as emoji (♥️ ♦️), black suits as text (♠ ♣), so the colours
stay apart in a message and on a button on every Telegram client; hands grouped by
suit, trumps last, each suit ascending."""

from __future__ import annotations

from collections.abc import Iterable

from engine import Card, Suit
from locales import Translator

EMOJI = "\ufe0f"
"""Variation selector 16: asks for the (coloured) emoji form of ♥ and ♦."""
RED = frozenset({Suit.HEARTS, Suit.DIAMONDS})
# Colours alternate so neighbouring groups never share one.
SUIT_ORDER = (Suit.SPADES, Suit.HEARTS, Suit.CLUBS, Suit.DIAMONDS)


def suit_face(suit: Suit) -> str:
    return suit.symbol + EMOJI if suit in RED else suit.symbol


def card(tr: Translator, c: Card) -> str:
    """``9♥️``, ``D♠`` (German queen): the localised rank and the coloured suit."""
    return tr.rank(c.rank) + suit_face(c.suit)


def cards(tr: Translator, cs: Iterable[Card]) -> str:
    return " ".join(card(tr, c) for c in cs)


def suit_groups(hand: Iterable[Card], trump: int) -> list[list[Card]]:
    """The cards by suit (non-empty groups only), the trump suit last, ascending."""
    order = [s for s in SUIT_ORDER if s != trump] + [Suit(trump)]
    groups: dict[Suit, list[Card]] = {s: [] for s in order}
    for c in hand:
        groups[c.suit].append(c)
    return [sorted(groups[s], key=lambda c: c.rank) for s in order if groups[s]]


def hand_order(hand: Iterable[Card], trump: int) -> list[Card]:
    return [c for group in suit_groups(hand, trump) for c in group]


def grouped(tr: Translator, hand: Iterable[Card], trump: int) -> str:
    """``6♠ 9♠ · 7♥️ A♥️ · 8♦️``: one group per suit, trumps last."""
    return " · ".join(cards(tr, g) for g in suit_groups(hand, trump))
