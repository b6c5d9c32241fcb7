"""The rule options of a game, validated in one place, with named presets.

Defaults follow the seed documents' standard game: Podkidnoy, 36 cards, everyone but
the defender may throw in, at most 5 cards in the very first bout, trump-six swap on,
several cards of one rank may be led at once.
"""

from __future__ import annotations

from enum import StrEnum
from typing import Final, Literal

from pydantic import BaseModel, ConfigDict, field_validator

from engine.errors import RulesError

HAND_SIZE: Final = 6
MAX_BOUT_CARDS: Final = 6
FIRST_BOUT_MAX_CARDS: Final = 5
MIN_PLAYERS: Final = 2
MAX_PLAYERS: Final = 6
PARTNER_TABLES: Final = (4, 6)
"""Player counts a partners game allows: 2 against 2 or 3 against 3."""
FIRST_BOUT_LIMIT_FROM: Final = 4
"""``first_bout_limit="from_four_players"`` applies from this many players on."""

DeckSize = Literal[24, 36, 52]
ThrowIn = Literal["all", "neighbours"]
Variant = Literal["podkidnoy", "perevodnoy"]
SeriesLength = Literal[1, 3, 5, 10]


class FirstBoutLimit(StrEnum):
    """When the very first bout of a game holds at most 5 attack cards."""

    ALWAYS = "always"
    FROM_FOUR_PLAYERS = "from_four_players"
    """Only at tables of four or more (the German seed's "Fünf im ersten Angriff")."""
    OFF = "off"

    def __bool__(self) -> bool:
        # The option used to be a bool: ``if rules.first_bout_limit`` keeps meaning "not off".
        return self is not FirstBoutLimit.OFF


class Rules(BaseModel):
    """Every rule option. ``Rules()`` is the default game."""

    model_config = ConfigDict(frozen=True, extra="forbid")

    deck_size: DeckSize = 36
    """24 (9..A), 36 (6..A) or 52 (2..A) cards."""
    variant: Variant = "podkidnoy"
    """``perevodnoy`` adds transfers: the defender may pass the attack on."""
    throw_in: ThrowIn = "all"
    """Who may throw in: everyone but the defender, or only the defender's two neighbours."""
    multi_card_lead: bool = True
    """The attacker may lead several cards of one rank at once."""
    first_bout_limit: FirstBoutLimit = FirstBoutLimit.ALWAYS
    """Whether the very first bout of a game has at most 5 attack cards: ``always``,
    ``from_four_players`` or ``off``; ``True``/``False`` are read as ``always``/``off``."""
    trump_swap: bool = True
    """The holder of the lowest trump may swap it for the face-up trump card."""
    series_length: SeriesLength = 1
    """Games in a match; the fewest durak counts wins."""
    partners: bool = False
    """Two teams (seat % 2) at a table of 4 or 6: partners never attack each other, and
    the side still holding cards when the other side has none loses together."""

    @field_validator("first_bout_limit", mode="before")
    @classmethod
    def _first_bout_limit_from_bool(cls, value: object) -> object:
        # Stored games and older callers wrote this option as a bool.
        if value is True:
            return FirstBoutLimit.ALWAYS
        if value is False:
            return FirstBoutLimit.OFF
        return value

    def first_bout_cap(self, num_players: int) -> int:
        """The most attack cards the first bout of a game at ``num_players`` may hold."""
        mode = self.first_bout_limit
        if mode is FirstBoutLimit.ALWAYS or (
            mode is FirstBoutLimit.FROM_FOUR_PLAYERS and num_players >= FIRST_BOUT_LIMIT_FROM
        ):
            return FIRST_BOUT_MAX_CARDS
        return MAX_BOUT_CARDS

    @property
    def transfer(self) -> bool:
        return self.variant == "perevodnoy"

    @property
    def max_players(self) -> int:
        return min(MAX_PLAYERS, self.deck_size // HAND_SIZE)

    def check_players(self, num_players: int) -> None:
        """Raise ``RulesError`` unless ``num_players`` can play with these rules."""
        if not MIN_PLAYERS <= num_players <= MAX_PLAYERS:
            raise RulesError(
                f"Durak is played by {MIN_PLAYERS} to {MAX_PLAYERS} players, not {num_players}"
            )
        if num_players > self.max_players:
            raise RulesError(
                f"a {self.deck_size}-card deck deals {HAND_SIZE} cards to at most "
                f"{self.max_players} players, not {num_players}"
            )
        if self.partners and num_players not in PARTNER_TABLES:
            raise RulesError(
                f"partners play 2 against 2 or 3 against 3 (4 or 6 players), not {num_players}"
            )

    @classmethod
    def preset(cls, name: str) -> Rules:
        """One of ``PRESETS`` by name; ``RulesError`` for an unknown name."""
        try:
            return cls.model_validate(PRESETS[name])
        except KeyError:
            known = ", ".join(sorted(PRESETS))
            raise RulesError(f"unknown rules preset {name!r}; known presets: {known}") from None

    @classmethod
    def parse(cls, data: object) -> Rules:
        """Validate untrusted options (a dict or JSON text) with a clear ``RulesError``."""
        from pydantic import ValidationError

        try:
            if isinstance(data, str | bytes):
                return cls.model_validate_json(data)
            return cls.model_validate(data)
        except ValidationError as err:
            problems = "; ".join(
                f"{'.'.join(str(p) for p in e['loc']) or 'rules'}: {e['msg']}" for e in err.errors()
            )
            raise RulesError(f"invalid rules: {problems}") from None


PRESETS: Final[dict[str, dict[str, object]]] = {
    # The seed documents' standard game.
    "classic": {},
    "podkidnoy": {},
    # Transfer variant (Perevodnoy).
    "perevodnoy": {"variant": "perevodnoy"},
    # Five or six players, where often only the defender's neighbours throw in.
    "neighbours": {"throw_in": "neighbours"},
    # Two players with the short deck (German seed).
    "short": {"deck_size": 24},
    # 52 cards: room for six players with a stock.
    "full_deck": {"deck_size": 52},
    # A strict traditional table: one card per lead, no swap, no first-bout limit.
    "strict": {"multi_card_lead": False, "trump_swap": False, "first_bout_limit": "off"},
}

__all__ = ["PRESETS", "FirstBoutLimit", "Rules"]
