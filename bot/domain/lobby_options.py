"""The lobby's options, one row each.

The callback codec takes each row's code, the handlers its permission, the flow its
field and values, the rendering its label. Adding an option is one row here plus its
texts in the catalogues (the label, its name on the options screen, ``lobby.option_<op>``,
and a text per value unless it is shown as is).
Most rows set a rule of the game (a ``Rules`` field); a row with ``on="table"`` sets a
field of the chat's game record instead (the pace: how the bot runs the table, not a
rule of Durak).
"""

from __future__ import annotations

from collections.abc import Mapping
from dataclasses import dataclass
from typing import Any, Final, Literal

from bot.domain.records import PACES, ChatGame, LobbyDefaults
from engine import Rules
from engine.rules import PARTNER_TABLES

Who = Literal["anyone", "manager", "closer"]
"""Who may use a lobby button: any member; the lobby's creator or a group admin
("manager"); or those, and any member once the creator has been away ("closer")."""


@dataclass(frozen=True)
class LobbyOption:
    op: str
    """The group operation (and the button) that moves this option to its next value."""
    code: str
    """One letter in the callback data; unique among all group operations."""
    field: str
    """The field it sets: of ``Rules``, or of the ``ChatGame`` record (``on``)."""
    values: tuple[Any, ...]
    """The values a tap cycles through, in order."""
    label: str
    """Catalogue key of the button; it takes the shown value as ``{arg}``."""
    arg: str
    value_keys: Mapping[Any, str] | None = None
    """Catalogue key of each value's text; None shows the value as it is."""
    who: Who = "manager"
    seats: tuple[int, ...] | None = None
    """Seat counts the option may be changed from its first value with; None: any."""
    refused: str = "toast.invalid"
    """The toast when the seat count does not allow it."""
    on: Literal["rules", "table"] = "rules"
    """What ``field`` belongs to: the game's ``Rules``, or the chat's game record."""

    def offered(self, game: ChatGame) -> bool:
        """Shown in the lobby: the seat count allows it, or it is on and must be
        switchable back."""
        return self._seats_allow(game) or self.current(game) != self.values[0]

    def allows(self, game: ChatGame) -> bool:
        """Whether the game may start with this option as set."""
        return self._seats_allow(game) or self.current(game) == self.values[0]

    def _seats_allow(self, game: ChatGame) -> bool:
        return self.seats is None or len(game.seats) in self.seats

    def current(self, game: ChatGame) -> Any:
        return getattr(game.rules if self.on == "rules" else game, self.field)

    @property
    def name(self) -> str:
        """Catalogue key of the option's name, as the options screen heads its row."""
        return f"lobby.option_{self.op}"

    def following(self, game: ChatGame) -> ChatGame:
        """A copy of ``game`` with this option moved to its next value."""
        current = self.current(game)
        index = self.values.index(current) if current in self.values else -1
        return self.set_to(game, self.values[(index + 1) % len(self.values)])

    def default(self, defaults: LobbyDefaults) -> Any:
        """Its value in a group's defaults for new lobbies (/settings)."""
        return getattr(defaults.rules if self.on == "rules" else defaults, self.field)

    def set_default(self, defaults: LobbyDefaults, value: Any) -> LobbyDefaults:
        """A copy of ``defaults`` with this option's value set to ``value``."""
        if self.on == "table":
            return defaults.model_copy(update={self.field: value})
        rules = Rules.parse({**defaults.rules.model_dump(), self.field: value})
        return defaults.model_copy(update={"rules": rules})

    def set_to(self, game: ChatGame, value: Any) -> ChatGame:
        """A copy of ``game`` with this option set to ``value`` (one of ``values``)."""
        if self.on == "table":
            return game.model_copy(update={self.field: value})
        rules = Rules.parse({**game.rules.model_dump(), self.field: value})
        return game.model_copy(update={"rules": rules})


_ON_OFF: Final = {False: "option.off", True: "option.on"}

LOBBY_OPTIONS: Final[tuple[LobbyOption, ...]] = (
    LobbyOption("deck", "d", "deck_size", (24, 36, 52), "lobby.deck", "deck"),
    LobbyOption(
        "throw_in",
        "t",
        "throw_in",
        ("all", "neighbours"),
        "lobby.throw_in",
        "value",
        {"all": "option.throw_in_all", "neighbours": "option.throw_in_neighbours"},
    ),
    LobbyOption(
        "transfer",
        "v",
        "variant",
        ("podkidnoy", "perevodnoy"),
        "lobby.transfer",
        "value",
        {"podkidnoy": "option.off", "perevodnoy": "option.on"},
    ),
    LobbyOption("series", "r", "series_length", (1, 3, 5, 10), "lobby.series", "count"),
    LobbyOption(
        "partners",
        "p",
        "partners",
        (False, True),
        "lobby.partners",
        "value",
        _ON_OFF,
        seats=PARTNER_TABLES,
        refused="toast.partners_seats",
    ),
    LobbyOption(
        "pace",
        "P",
        "pace",
        ("normal", "fast", "relaxed"),
        "lobby.pace",
        "value",
        {pace: f"option.pace_{pace}" for pace in PACES},
        on="table",
    ),
)
OPTIONS_BY_OP: Final = {option.op: option for option in LOBBY_OPTIONS}
