"""Which game a request is about, and the asker's seat and language in it."""

from __future__ import annotations

from aiohttp import web

from bot.app.games import Games
from bot.domain.place import Place
from bot.domain.records import ChatGame
from bot.webapp.hub import Hub, dumps
from bot.webapp.initdata import WebAppUser
from bot.webapp.responses import json_error
from bot.webapp.state import moved_on
from bot.webapp.views import Seated


async def find_game(
    games: Games, hub: Hub, user: WebAppUser, game_id: str
) -> tuple[Place | None, ChatGame | None]:
    """The place the game id is in, and that place's game (maybe a later one)."""
    place = await hub.place_of(game_id) if game_id else None
    game = await games.storage.peek_table(place) if place is not None else None
    if place is not None and (game is None or game.seat_of(user.user_id) is None):
        # Maybe remembered from before the group moved: ask the index once more.
        now_in = await hub.place_of(game_id, fresh=True)
        if now_in is not None and now_in != place:
            place, game = now_in, await games.storage.load_table(now_in)
    return place, game


async def seated(
    games: Games, hub: Hub, user: WebAppUser, game_id: str, *, moved_status: int = 409
) -> Seated | web.Response:
    """The game and the user's seat; a response when there is none to give."""
    place, game = await find_game(games, hub, user, game_id)
    if place is None or game is None:
        return json_error(404, "no such game")
    seat = game.seat_of(user.user_id)
    if game.game_id != game_id:
        if seat is None:
            return json_error(403, "not seated")
        moved = moved_on(game_id, game, user.user_id)
        if moved_status == 200:
            return web.json_response(moved, dumps=dumps)
        return json_error(moved_status, "game over", moved)
    if seat is None:
        return json_error(403, "not seated")
    tr = await games.languages.person(user.user_id, user.language_code, game.seats[seat].lang)
    return Seated(user, place, game, seat, tr.lang)
