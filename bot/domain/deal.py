"""A game's verifiable deal as the record keeps it: the secret salt and the deck order.

The app makes one with ``bot.app.deals.new_secret_deal`` before Start; the flow deals from
its deck and announces its code; the result reveals both (``engine.commitment``). Until
the game is over the salt is a secret: it is in the record and nowhere else (no view, no
render of a running game, no Mini App state, no computer player, no log line).
"""

from __future__ import annotations

from collections.abc import Sequence

from pydantic import BaseModel, ConfigDict, Field, field_validator

from engine.cards import Card
from engine.commitment import (
    SALT_BYTES,
    commit,
    deck_problem,
    deck_text,
    format_reveal,
    grouped,
    parse_deck_text,
    short,
)


class Deal(BaseModel):
    """The salt (lowercase hex) and the deck order (``engine.commitment.deck_text``) of
    the current game. Immutable: a game keeps its deal from Start to its result."""

    model_config = ConfigDict(extra="forbid", frozen=True)

    salt: str = Field(repr=False)
    """Hidden from ``repr``, so a logged record never shows it."""
    deck: str

    @field_validator("salt")
    @classmethod
    def _salt_is_hex(cls, salt: str) -> str:
        if len(salt) < 2 * SALT_BYTES or len(salt) % 2 or salt.lower() != salt:
            raise ValueError("the salt is lowercase hex of at least 16 bytes")
        bytes.fromhex(salt)
        return salt

    @field_validator("deck")
    @classmethod
    def _deck_is_whole(cls, deck: str) -> str:
        problem = deck_problem(parse_deck_text(deck))
        if problem is not None:
            raise ValueError(problem)
        return deck

    @classmethod
    def of(cls, salt: bytes, deck: Sequence[Card]) -> Deal:
        return cls(salt=salt.hex(), deck=deck_text(deck))

    @property
    def cards(self) -> tuple[Card, ...]:
        """The deck in deal order, as ``engine.new_game(deck=...)`` takes it."""
        return parse_deck_text(self.deck)

    @property
    def size(self) -> int:
        return len(self.deck) // 2

    @property
    def code(self) -> str:
        """The code shown before the deal, in groups of 4 (``3f2a 9c1d …``)."""
        return grouped(short(commit(bytes.fromhex(self.salt), self.cards)))

    def reveal(self, players: int) -> str:
        """The reveal token of the result (``🔐 deal v1 p3 <salt> <deck> <code>``)."""
        return format_reveal(bytes.fromhex(self.salt), self.cards, players)
