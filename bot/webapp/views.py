"""What one authenticated user is shown of a game: their seat's state, or where the
game went (see ``state``, which makes the JSON)."""

from __future__ import annotations

from dataclasses import dataclass

from bot.domain.place import Place
from bot.domain.records import ChatGame
from bot.webapp.hub import Viewer, dumps
from bot.webapp.initdata import WebAppUser
from bot.webapp.state import JsonDict, game_state, moved_on
from engine import State
from locales import translator


@dataclass
class Seated:
    """An authenticated request about a game its user sits in."""

    user: WebAppUser
    place: Place
    game: ChatGame
    seat: int
    lang: str


def gone(game_id: str) -> JsonDict:
    """The user no longer sits in the game."""
    return {"game": game_id, "phase": "gone"}


def seat_state(game: ChatGame, seat: int, lang: str, now: float) -> JsonDict:
    return {**game_state(game, seat, translator(lang)), "now": now}


def snapshot(who: Seated, now: float, game: ChatGame | None = None) -> JsonDict:
    """What ``who`` sees of ``game`` (the one they asked about unless given)."""
    game = game or who.game
    if game.game_id != who.game.game_id:
        return moved_on(who.game.game_id, game, who.user.user_id)
    seat = game.seat_of(who.user.user_id)
    if seat is None:
        return gone(who.game.game_id)
    return seat_state(game, seat, who.lang, now)


def viewer_state(game: ChatGame, state: State | None, viewer: Viewer) -> str:
    """The hub's ``state_of``: an event stream's next state, as JSON text."""
    if game.game_id != viewer.game_id:
        return dumps(moved_on(viewer.game_id, game, viewer.user_id))
    seat = game.seat_of(viewer.user_id)
    if seat is None:
        return dumps(gone(viewer.game_id))
    return dumps(game_state(game, seat, translator(viewer.lang), state))
