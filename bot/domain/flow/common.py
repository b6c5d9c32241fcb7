"""What every flow operation shares: when it runs, the refusal, the person acting,
and the effects it asks for.

Every operation has the shape ``op(game, moment, ...) -> (ChatGame, Effects)``: the
chat's record (None if there is none), when it runs with the bot's timing, then its
own arguments. A refused operation raises ``FlowError``.
"""

from __future__ import annotations

import hashlib
from dataclasses import dataclass, field, replace
from typing import Any, Final

from bot.domain.records import ChatGame, Pace, StatDelta

LOBBY_LIFETIME = 2 * 3600.0
"""Seconds a lobby stays open (storage should expire its key then: ``lobby_expires_at``)."""


@dataclass(frozen=True)
class Timing:
    """The bot's pace, from its settings."""

    turn_timeout: float
    """Seconds a human has for a move before the bot moves for them."""
    ai_delay: float
    """Seconds before a computer seat moves, so people can follow."""
    notify_quiet: float
    """A player idle longer than this gets a new (notifying) hand message."""
    throw_in_window: float = 7.0
    """Seconds attackers have to add cards once the defender is done: the short window,
    longer while one of them moved lately (``flow.turns.wait_window``)."""
    remind_before: float = 15.0
    """Seconds before a player's own turn times out that they get a notifying reminder."""


PACE_FACTORS: Final[dict[Pace, float]] = {"relaxed": 2.0, "normal": 1.0, "fast": 0.5}
"""How a table's pace scales the human clocks (the turn timeout, the throw-in window and
the reminder before a timeout): relaxed doubles them, fast halves them. The computer's
delay stays: it is there so people can follow, whatever the pace."""


def table_timing(game: ChatGame, timing: Timing) -> Timing:
    """The timing a game runs on: the bot's settings, with the group's turn timeout
    (``ChatGame.turn_timeout``, from /settings) if it chose one, scaled by the table's pace.
    The one place a pace becomes seconds; everything that waits on people at a table asks
    here."""
    if game.turn_timeout is not None:
        timing = replace(timing, turn_timeout=game.turn_timeout)
    factor = PACE_FACTORS[game.pace]
    if factor == 1.0:
        return timing
    return replace(
        timing,
        turn_timeout=timing.turn_timeout * factor,
        throw_in_window=timing.throw_in_window * factor,
        remind_before=timing.remind_before * factor,
    )


@dataclass(frozen=True)
class Moment:
    """When an operation runs: the wall clock and the timing it schedules with."""

    now: float
    timing: Timing


class FlowError(Exception):
    """A refused operation; ``key`` names the catalogue text of the toast."""

    def __init__(self, key: str, **kwargs: Any) -> None:
        super().__init__(key)
        self.key = key
        self.kwargs = kwargs


@dataclass(frozen=True)
class Person:
    user_id: int
    name: str
    lang: str = "en"


@dataclass
class Announcement:
    key: str
    kwargs: dict[str, Any] = field(default_factory=dict)


@dataclass
class Effects:
    """What the sender should do after a change was stored."""

    notify: set[int] = field(default_factory=set)
    """Users who newly must act: their hand is re-sent as a new (notifying) message."""
    calm: set[int] = field(default_factory=set)
    """Users whose hand may be refreshed a little later, so the edit can merge with the
    next one: others than the mover whose moves stay the same (the mover's own hand is
    refreshed at once: it shows the effect of their tap)."""
    announce: list[Announcement] = field(default_factory=list)
    stats: list[StatDelta] = field(default_factory=list)
    ended: bool = False
    """The game just ended: the result goes to the group as a new message."""
    place_gone: bool = False
    """The game's place refuses the bot's messages (a topic closed or deleted, the right to
    post lost): nothing more is owed there, neither its group message nor a note."""
    in_app: set[int] = field(default_factory=set)
    """Users following the game in the Mini App (its listener fills this in): their hand
    message shows only the app's buttons."""


Outcome = tuple[ChatGame, Effects]
"""What every flow operation returns: the changed record and what to show."""


def game_seed(game_id: str, salt: int | str) -> int:
    digest = hashlib.sha256(f"{game_id}:{salt}".encode()).digest()
    return int.from_bytes(digest[:8], "big")
