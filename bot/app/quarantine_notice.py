"""Tell a group when its game's record could not be read and was moved aside."""

from __future__ import annotations

import asyncio
import logging

from redis.exceptions import RedisError

from bot.app.games import Games
from bot.app.lost import announce_lost
from bot.domain.place import Place

log = logging.getLogger(__name__)


class QuarantineNotice:
    """The storage's ``on_quarantine``: made before the storage (which is given it), and
    bound by its owner to the games once they exist (``bind``). The storage calls back
    synchronously; the notice (once per game, across workers, through ``announce_lost``)
    is sent from a task so the reader is not held up."""

    def __init__(self) -> None:
        self._games: Games | None = None
        self._tasks: set[asyncio.Task[None]] = set()

    def bind(self, games: Games) -> None:
        """From now on the group is told (before, a quarantine is only logged)."""
        self._games = games

    def __call__(self, place: Place, game_id: str) -> None:
        games = self._games
        if games is None:
            log.warning("chat %s: an unreadable game before the bot started", place)
            return
        task = asyncio.get_running_loop().create_task(self._notify(games, place, game_id))
        self._tasks.add(task)
        task.add_done_callback(self._tasks.discard)

    async def _notify(self, games: Games, place: Place, game_id: str) -> None:
        try:
            await announce_lost(games, place, game_id)
        except RedisError as err:  # the record is safe in quarantine; only the notice waits
            log.warning("chat %s: could not announce the unreadable game: %s", place, err)
