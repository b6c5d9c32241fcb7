"""A fresh deal from the system's cryptographic source, ready to commit to.

The one impure helper of verifiable deals (``engine.commitment`` is the pure rest): it
reads ``secrets``, so the bot, not a seed anyone could replay or guess, decides the order.
Kept tiny so it is easy to read that the shuffle is uniform and unpredictable.

Start asks ``deal_for`` (looked up on this module at each call, so a test can fix the
deals, as it fixes game ids).
"""

from __future__ import annotations

import secrets

from bot.domain.deal import Deal
from bot.domain.records import ChatGame
from engine.cards import LOWEST_RANK, Card, deck_cards
from engine.commitment import SALT_BYTES


def new_secret_deal(deck_size: int) -> tuple[bytes, tuple[Card, ...]]:
    """A random salt (``SALT_BYTES`` bytes) and a uniformly shuffled deck of
    ``deck_size`` (24, 36 or 52) cards, both from ``secrets``; show
    ``short(commit(salt, deck))`` before dealing ``new_game(..., deck=deck)``."""
    if deck_size not in LOWEST_RANK:
        raise ValueError(f"a deck has 24, 36 or 52 cards, not {deck_size}")
    order = list(deck_cards(deck_size))
    secrets.SystemRandom().shuffle(order)  # Fisher-Yates over os.urandom: every order alike
    return secrets.token_bytes(SALT_BYTES), tuple(order)


def deal_for(game: ChatGame | None) -> Deal | None:
    """A fresh secret deal for the lobby's deck, to pass to ``flow.start`` (None without a
    lobby: Start is refused then anyway)."""
    if game is None:
        return None
    salt, deck = new_secret_deal(game.rules.deck_size)
    return Deal.of(salt, deck)
