"""Public events: what everyone at the table sees happen.

Every event is public knowledge (no hidden card ever appears in one), so the whole
history can go into every player's view, into the group message and into AI memory.

Events are NamedTuples (built on the engine's hot path: a tuple is several times
cheaper to create than a frozen dataclass). Each one ends with a ``kind`` field that
has a fixed value per class, so events of different kinds never compare equal even
when their other fields do (``Took(0) != Passed(0)``).
"""

from __future__ import annotations

from typing import TYPE_CHECKING, Literal, NamedTuple

from engine.cards import Card

if TYPE_CHECKING:
    from engine.state import History


class GameStarted(NamedTuple):
    dealer: int
    trump_card: Card
    attacker: int
    defender: int
    kind: Literal["game_started"] = "game_started"


class TrumpShown(NamedTuple):
    """A card shown to everyone: the lowest trump that decides the first attacker,
    or the dealer's last card when the deal uses the whole deck."""

    player: int
    card: Card
    kind: Literal["trump_shown"] = "trump_shown"


class Attacked(NamedTuple):
    player: int
    cards: tuple[Card, ...]
    kind: Literal["attacked"] = "attacked"


class Beaten(NamedTuple):
    player: int
    attack: Card
    card: Card
    kind: Literal["beaten"] = "beaten"


class Transferred(NamedTuple):
    player: int
    card: Card
    to: int
    kind: Literal["transferred"] = "transferred"


class Took(NamedTuple):
    """The defender declared that they take (throw-ins may still follow)."""

    player: int
    kind: Literal["took"] = "took"


class Passed(NamedTuple):
    player: int
    kind: Literal["passed"] = "passed"


class PickedUp(NamedTuple):
    player: int
    cards: tuple[Card, ...]
    kind: Literal["picked_up"] = "picked_up"


class Discarded(NamedTuple):
    cards: tuple[Card, ...]
    kind: Literal["discarded"] = "discarded"


class Drew(NamedTuple):
    """``count`` cards from the stock; ``trump_card`` is set when the face-up trump
    card was among them (everyone sees who takes it)."""

    player: int
    count: int  # type: ignore[assignment]  # shadows tuple.count: the stored name, kept
    trump_card: Card | None = None
    kind: Literal["drew"] = "drew"


class Swapped(NamedTuple):
    player: int
    gave: Card
    got: Card
    kind: Literal["swapped"] = "swapped"


class BoutStarted(NamedTuple):
    attacker: int
    defender: int
    limit: int
    kind: Literal["bout_started"] = "bout_started"


class PlayerOut(NamedTuple):
    player: int
    kind: Literal["player_out"] = "player_out"


class GameOver(NamedTuple):
    """``durak`` None is a draw; ``order`` is the finishing order (see ``GameResult``);
    ``losing_team`` is the team (seat % 2) that lost a partners game, else None."""

    durak: int | None
    order: tuple[int, ...]
    losing_team: int | None = None
    kind: Literal["game_over"] = "game_over"


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
    cls._field_defaults["kind"]: cls
    for cls in (
        GameStarted, TrumpShown, Attacked, Beaten, Transferred, Took, Passed,
        PickedUp, Discarded, Drew, Swapped, BoutStarted, PlayerOut, GameOver,
    )
}  # fmt: skip


_PLAYS = frozenset({"attacked", "beaten", "transferred"})


def by_running_out(
    players: list[int], events: tuple[Event, ...], history: History | None
) -> list[int]:
    """``players``, who all have no cards left at this bout's end, in the order they
    played their last card (this step's ``events``, then the bout's earlier steps)."""
    backwards: dict[int, int] = {}  # player -> plays since their last one, newest first
    step_events: tuple[Event, ...] | None = events
    node = history
    while step_events is not None:
        for event in reversed(step_events):
            kind = event.kind
            if kind == "bout_started" or kind == "game_started":
                step_events = None
                break
            if kind in _PLAYS:
                player = event.player  # type: ignore[union-attr]  # every play names one
                if player in players and player not in backwards:
                    backwards[player] = len(backwards)
        else:
            if node is None:
                break
            node, step_events = node
    return sorted(players, key=lambda p: -backwards.get(p, len(players)))
