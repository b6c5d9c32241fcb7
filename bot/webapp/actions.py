"""The Mini App's changes: a move, a rematch, starting the lobby. Each goes through
``Games.run``, the same atomic path as the chat's buttons."""

from __future__ import annotations

from collections.abc import Callable
from typing import Any

from aiohttp import web

from bot import render
from bot.app import deals, ids
from bot.app.games import Games
from bot.domain import flow
from bot.domain.flow import FlowError
from bot.webapp.responses import json_error, json_ok
from bot.webapp.state import JsonDict, plain
from bot.webapp.views import Seated, gone, seat_state, snapshot
from engine import ParseError, parse_action
from locales import translator


class Actions:
    def __init__(self, games: Games, clock: Callable[[], float]) -> None:
        """``clock``: the time the page is told the state is from."""
        self.games = games
        self.clock = clock

    async def refused(self, who: Seated, err: FlowError) -> web.Response:
        """A refused change, worded as the chat's toast, with the state as it is now."""
        game = await self.games.storage.load_table(who.place)
        tr = translator(who.lang)
        kwargs = err.kwargs
        if err.key == "toast.moved_on":  # the flow has no translator to name the change
            kwargs = {"change": render.moved_on_change(game, tr)}
        state = snapshot(who, self.clock(), game) if game is not None else gone(who.game.game_id)
        return json_error(409, plain(tr.t(err.key, **kwargs)), state)

    async def move(self, who: Seated, data: JsonDict) -> web.Response:
        try:
            action = parse_action(str(data.get("action", "")))
        except ParseError as err:
            return json_error(400, str(err))
        game = who.game
        if game.phase != "playing" or game.state is None:
            return json_error(409, "not running", snapshot(who, self.clock()))
        step = data.get("step", game.state.get("step"))
        if not isinstance(step, int):
            return json_error(400, "step must be a number")
        user_id = who.user.user_id
        # Like a tap in the chat: a half-made choice on the hand message is dropped.
        self.games.clear_mode(who.place, user_id)
        try:
            game = await self.games.run(who.place, flow.play, game.game_id, user_id, step, action)
        except FlowError as err:
            return await self.refused(who, err)
        # The game as this move left it: no second read (the event stream has any later one).
        return json_ok(snapshot(who, self.clock(), game))

    async def rematch(self, who: Seated) -> web.Response:
        """The result's Rematch: the group's "New game"/"Next game" button, from the app."""
        return await self.change(who, flow.next_game, who.game.game_id, ids.new_game_id())

    async def start(self, who: Seated) -> web.Response:
        """Start the lobby (its creator only: group admins use the group's button)."""
        user_id = who.user.user_id
        if who.game.creator_id != user_id:
            return json_error(403, "only the creator starts from the app")
        unreachable = await self.games.unreachable(who.game)
        deal = deals.deal_for(who.game)
        # As the group's Start: who has no private chat plays from the group where the
        # bot is an admin (``lobbies.start``).
        chat_id = who.place.chat_id
        in_group = bool(unreachable) and await self.games.rights.admin(chat_id, fresh=True)
        game_id = who.game.game_id
        return await self.change(
            who, flow.start, game_id, user_id, unreachable, deal, None, in_group
        )

    async def change(self, who: Seated, operation: Any, *args: Any) -> web.Response:
        """Run a flow operation the way the group's buttons do (``Games.run``)."""
        try:
            game = await self.games.run(who.place, operation, *args)
        except FlowError as err:
            return await self.refused(who, err)
        seat = game.seat_of(who.user.user_id)
        if seat is None:
            return json_error(403, "not seated")
        return json_ok(seat_state(game, seat, who.lang, self.clock()))
