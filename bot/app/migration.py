"""A group upgraded to a supergroup: its game, statistics and settings follow it.

Telegram tells us twice (a service message with ``migrate_to_chat_id`` in the old group,
one with ``migrate_from_chat_id`` in the new one) and refuses every later call to the old
id with ``ChatMigrated``; whichever comes first moves the records, the rest find them moved.
"""

from __future__ import annotations

import logging

from bot.app.games import Games

log = logging.getLogger(__name__)


async def follow_migration(games: Games, old: int, new: int) -> None:
    """Move the records (atomically, once) and show the game in the new chat."""
    moved = await games.storage.migrate_chat(old, new)
    game = moved or await games.storage.load_table(new)
    if moved is not None:
        log.info("moved the game of chat %s to %s", old, new)
    if game is not None and game.chat_id == new:
        await games.ensure_timer(new)
        games.box.refresh(game)
