"""Public events: what everyone at the table sees happen.

Every event is public knowledge (no hidden card ever appears in one), so the whole
history can go into every player's view, into the group message and into AI memory.
"""

from __future__ import annotations

from dataclasses import dataclass
from typing import ClassVar

from engine.cards import Card


@dataclass(frozen=True, slots=True)
class GameStarted:
    dealer: int
    trump_card: Card
    attacker: int
    defender: int
    kind: ClassVar[str] = "game_started"


@dataclass(frozen=True, slots=True)
class TrumpShown:
    """A card shown to everyone: the lowest trump that decides the first attacker,
    or the dealer's last card when the deal uses the whole deck."""

    player: int
    card: Card
    kind: ClassVar[str] = "trump_shown"


@dataclass(frozen=True, slots=True)
class Attacked:
    player: int
    cards: tuple[Card, ...]
    kind: ClassVar[str] = "attacked"


@dataclass(frozen=True, slots=True)
class Beaten:
    player: int
    attack: Card
    card: Card
    kind: ClassVar[str] = "beaten"


@dataclass(frozen=True, slots=True)
class Transferred:
    player: int
    card: Card
    to: int
    kind: ClassVar[str] = "transferred"


@dataclass(frozen=True, slots=True)
class Took:
    """The defender declared that they take (throw-ins may still follow)."""

    player: int
    kind: ClassVar[str] = "took"


@dataclass(frozen=True, slots=True)
class Passed:
    player: int
    kind: ClassVar[str] = "passed"


@dataclass(frozen=True, slots=True)
class PickedUp:
    player: int
    cards: tuple[Card, ...]
    kind: ClassVar[str] = "picked_up"


@dataclass(frozen=True, slots=True)
class Discarded:
    cards: tuple[Card, ...]
    kind: ClassVar[str] = "discarded"


@dataclass(frozen=True, slots=True)
class Drew:
    """``count`` cards from the stock; ``trump_card`` is set when the face-up trump
    card was among them (everyone sees who takes it)."""

    player: int
    count: int
    trump_card: Card | None = None
    kind: ClassVar[str] = "drew"


@dataclass(frozen=True, slots=True)
class Swapped:
    player: int
    gave: Card
    got: Card
    kind: ClassVar[str] = "swapped"


@dataclass(frozen=True, slots=True)
class BoutStarted:
    attacker: int
    defender: int
    limit: int
    kind: ClassVar[str] = "bout_started"


@dataclass(frozen=True, slots=True)
class PlayerOut:
    player: int
    kind: ClassVar[str] = "player_out"


@dataclass(frozen=True, slots=True)
class GameOver:
    durak: int | None
    order: tuple[int, ...]
    kind: ClassVar[str] = "game_over"


Event = (
    GameStarted
    | TrumpShown
    | Attacked
    | Beaten
    | Transferred
    | Took
    | Passed
    | PickedUp
    | Discarded
    | Drew
    | Swapped
    | BoutStarted
    | PlayerOut
    | GameOver
)

EVENT_TYPES: dict[str, type[Event]] = {
    cls.kind: cls
    for cls in (
        GameStarted, TrumpShown, Attacked, Beaten, Transferred, Took, Passed,
        PickedUp, Discarded, Drew, Swapped, BoutStarted, PlayerOut, GameOver,
    )
}  # fmt: skip
