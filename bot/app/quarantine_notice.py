"""Tell a group when its game's record could not be read and was moved aside."""

from __future__ import annotations

import asyncio
import logging

from redis.exceptions import RedisError

from bot.app.games import Games
from bot.app.lost import announce_lost

log = logging.getLogger(__name__)


def install_quarantine_notice(games: Games) -> None:
    """The storage calls back synchronously; the notice (once per game, across workers,
    through ``announce_lost``) is sent from a task so the reader is not held up."""
    tasks: set[asyncio.Task[None]] = set()

    async def notify(chat_id: int, game_id: str) -> None:
        try:
            await announce_lost(games, chat_id, game_id)
        except RedisError as err:  # the record is safe in quarantine; only the notice waits
            log.warning("chat %s: could not announce the unreadable game: %s", chat_id, err)

    def on_quarantine(chat_id: int, game_id: str) -> None:
        task = asyncio.get_running_loop().create_task(notify(chat_id, game_id))
        tasks.add(task)
        task.add_done_callback(tasks.discard)

    games.storage.on_quarantine = on_quarantine
