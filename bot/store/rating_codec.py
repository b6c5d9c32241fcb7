"""How the rating's entries are stored: the game still to rate, and its plan (JSON).

Each decoder raises ``ValueError`` for anything it cannot read: a misread entry would
skew ratings for good, so the caller drops it (logged) rather than guess.
"""

from __future__ import annotations

import json
from dataclasses import dataclass
from datetime import UTC, datetime
from typing import Any

from bot.domain.rating import (
    COMPUTER_LEVELS,
    Computer,
    FinishedGame,
    Human,
    Participant,
    RatingRecord,
    RatingUpdate,
    SeasonLength,
    season_of_date,
)


def season_at(timestamp: float, length: SeasonLength = "month") -> str:
    """The season a moment (epoch seconds) falls in, by the calendar in UTC."""
    return season_of_date(datetime.fromtimestamp(timestamp, tz=UTC), length)


@dataclass(frozen=True)
class PendingRating:
    """A finished game still to rate, as written with the game's end."""

    game: FinishedGame
    names: dict[int, str]
    """Each human's name at the table, for the leaderboards."""
    finished_at: float
    season: str


@dataclass(frozen=True)
class PlannedPlayer:
    name: str
    group: RatingUpdate
    """The player's rating in the group's season, before and after the game."""
    overall: RatingUpdate
    """The same over all groups (the overall season)."""


@dataclass(frozen=True)
class RatingPlan:
    """Every human's rating before and after one game, in both scopes: computed once,
    stored once, and what every settling worker applies."""

    season: str
    finished_at: float
    players: dict[int, PlannedPlayer]


# --- encoding --------------------------------------------------------------------------


def _seat_to_dict(seat: Participant) -> dict[str, Any]:
    return {"user": seat.user_id} if isinstance(seat, Human) else {"computer": seat.level}


def pending_to_json(pending: PendingRating) -> str:
    game = pending.game
    return json.dumps(
        {
            "game": {
                "seats": [_seat_to_dict(seat) for seat in game.seats],
                "finished": [list(group) for group in game.finished],
                "durak": game.durak,
                "left": list(game.left),
                "teams": None if game.teams is None else list(game.teams),
            },
            "names": {str(uid): name for uid, name in pending.names.items()},
            "finished_at": pending.finished_at,
            "season": pending.season,
        },
        ensure_ascii=False,
    )


def _update_to_dict(update: RatingUpdate) -> dict[str, Any]:
    return {"old": update.old.to_dict(), "new": update.new.to_dict()}


def plan_to_json(plan: RatingPlan) -> str:
    players = {
        str(uid): {
            "name": player.name,
            "group": _update_to_dict(player.group),
            "overall": _update_to_dict(player.overall),
        }
        for uid, player in plan.players.items()
    }
    data = {"season": plan.season, "finished_at": plan.finished_at, "players": players}
    return json.dumps(data, ensure_ascii=False)


def record_to_json(record: RatingRecord) -> str:
    return json.dumps(record.to_dict())


# --- decoding --------------------------------------------------------------------------


def _object(raw: bytes | str) -> dict[str, Any]:
    data = json.loads(raw)
    if not isinstance(data, dict):
        raise ValueError("a rating entry must be a JSON object")
    return data


def _seat_from_dict(data: Any) -> Participant:
    if isinstance(data, dict) and isinstance(data.get("user"), int):
        return Human(data["user"])
    level = data.get("computer") if isinstance(data, dict) else None
    for known in COMPUTER_LEVELS:
        if level == known:
            return Computer(known)
    raise ValueError(f"not a seat of a rated game: {data!r}")


def _seats(value: Any) -> tuple[int, ...]:
    if not isinstance(value, list) or not all(type(s) is int for s in value):
        raise ValueError(f"not a list of seats: {value!r}")
    return tuple(value)


def _optional_seat(value: Any) -> int | None:
    if value is None or type(value) is int:
        return value
    raise ValueError(f"not a seat: {value!r}")


def _number(value: Any) -> float:
    if isinstance(value, bool) or not isinstance(value, int | float):
        raise ValueError(f"not a number: {value!r}")
    return float(value)


def _text(value: Any) -> str:
    if not isinstance(value, str):
        raise ValueError(f"not a text: {value!r}")
    return value


def pending_from_json(raw: bytes | str) -> PendingRating:
    try:
        return _pending(_object(raw))
    except (KeyError, TypeError, AttributeError) as err:
        raise ValueError(f"unreadable pending rating: {err!r}") from err


def _pending(data: dict[str, Any]) -> PendingRating:
    game = data.get("game")
    names = data.get("names")
    if not isinstance(game, dict) or not isinstance(names, dict):
        raise ValueError("a pending rating needs its game and names")
    finished = game.get("finished")
    if not isinstance(finished, list):
        raise ValueError("a pending rating needs who finished when")
    teams = game.get("teams")
    rated = FinishedGame(
        seats=tuple(_seat_from_dict(seat) for seat in game.get("seats") or []),
        finished=tuple(_seats(group) for group in finished),
        durak=_optional_seat(game.get("durak")),
        left=_seats(game.get("left", [])),
        teams=None if teams is None else _seats(teams),
    )
    return PendingRating(
        game=rated,
        names={int(uid): _text(name) for uid, name in names.items()},
        finished_at=_number(data.get("finished_at")),
        season=_text(data.get("season")),
    )


def _update_from_dict(data: Any) -> RatingUpdate:
    if not isinstance(data, dict):
        raise ValueError(f"not a rating update: {data!r}")
    return RatingUpdate(RatingRecord.from_dict(data["old"]), RatingRecord.from_dict(data["new"]))


def plan_from_json(raw: bytes | str) -> RatingPlan:
    try:
        return _plan(_object(raw))
    except (KeyError, TypeError, AttributeError) as err:
        raise ValueError(f"unreadable rating plan: {err!r}") from err


def _plan(data: dict[str, Any]) -> RatingPlan:
    players = data.get("players")
    if not isinstance(players, dict):
        raise ValueError("a rating plan needs its players")
    return RatingPlan(
        season=_text(data.get("season")),
        finished_at=_number(data.get("finished_at")),
        players={
            int(uid): PlannedPlayer(
                name=_text(player.get("name")),
                group=_update_from_dict(player.get("group")),
                overall=_update_from_dict(player.get("overall")),
            )
            for uid, player in players.items()
        },
    )


def record_from_json(raw: bytes | str | None) -> RatingRecord:
    """A stored rating record; a newcomer's when there is none."""
    return RatingRecord() if raw is None else RatingRecord.from_dict(_object(raw))
