"""Ratings shown to people ("Play again tomorrow"): a finished game's change for each
player, the season's leaderboards, a player's own rating and history.

The store rates a game right after its end is committed (``Storage.settle_game_stats``);
a finished hand may be rendered before that is done (a job already running when the game
ended, or another worker taking over the output of one that died). So the finished hand
settles the game itself first: settling is idempotent, costs three reads when it is done
already, and the hand then shows the change in its one and only edit.
"""

from __future__ import annotations

import dataclasses
import logging
import time
from collections.abc import Callable

from redis.exceptions import RedisError

from bot.domain.rating import MIN_GAMES_LISTED, RatingRecord, ResultLine
from bot.domain.records import ChatGame, RatingHistoryEntry
from bot.render.rating import Board
from bot.store.storage import Storage, season_at

log = logging.getLogger(__name__)

TOP_LIMIT = 10
"""Players /top lists: a screen of a phone."""
HISTORY_LIMIT = 200
"""Rated games the chart shows at most (the store keeps as many)."""


class Ratings:
    def __init__(
        self,
        storage: Storage,
        *,
        min_games: int = MIN_GAMES_LISTED,
        limit: int = TOP_LIMIT,
        clock: Callable[[], float] = time.time,
    ) -> None:
        self.storage = storage
        self.min_games = min_games
        """Games this season before a player is listed (``Settings.rating_min_games``)."""
        self.limit = limit
        self.clock = clock

    def season(self) -> str:
        """The season running now (monthly, by the calendar in UTC)."""
        return season_at(self.clock())

    async def game_line(self, game: ChatGame, user_id: int | None) -> ResultLine | None:
        """The player's rating change in ``game`` (the group's season), or None: not
        finished, not rated (rating off, no human) or the store cannot say right now."""
        if game.phase != "finished" or user_id is None:
            return None
        try:
            await self.storage.settle_game_stats(game.place, game.game_id)
            line = (await self.storage.rating_lines(game.place, game.game_id)).get(user_id)
        except RedisError:
            # The result itself still shows; the settling sweep rates the game later.
            log.warning("chat %s: no rating line for game %s", game.chat_id, game.game_id)
            return None
        if line is None:
            return None
        return dataclasses.replace(line, provisional=line.games < self.min_games)

    async def rated_here(self, chat_id: int) -> bool:
        """Whether the group rates its games (``ChatSettings.rating``)."""
        return (await self.storage.chat_settings(chat_id)).rating

    async def board(self, chat_id: int | None) -> Board:
        """This season's leaderboard of a group, or over all groups (``chat_id`` None)."""
        season = self.season()
        lines = await self.storage.top(chat_id, season, self.min_games, self.limit)
        return Board(season, lines, self.min_games, self.limit, overall=chat_id is None)

    async def own(self, user_id: int, chat_id: int | None) -> tuple[str, RatingRecord]:
        """The season and the user's record in it: in a group, or over all groups."""
        season = self.season()
        return season, await self.storage.user_rating(user_id, chat_id, season)

    async def history(self, user_id: int, limit: int = HISTORY_LIMIT) -> list[RatingHistoryEntry]:
        """The user's rated games, oldest first (as a chart reads them)."""
        return list(reversed(await self.storage.rating_history(user_id, limit)))
