"""A group upgraded to a supergroup: its game, statistics and settings follow it.

Telegram tells us twice (a service message with ``migrate_to_chat_id`` in the old group,
one with ``migrate_from_chat_id`` in the new one) and refuses every later call to the old
id with ``ChatMigrated``; whichever comes first moves the records, the rest find them moved.
"""

from __future__ import annotations

import logging

from bot.app.games import Games
from bot.store.migration import places_of

log = logging.getLogger(__name__)


async def follow_migration(games: Games, old: int, new: int) -> None:
    """Move the records (atomically, once) and show the game in the new chat."""
    moved = await games.storage.migrate_chat(old, new)
    if moved is not None:
        log.info("moved the game of chat %s to %s", old, new)
    # Each place of the group moved to the same topic in the new chat.
    for place in places_of(new):
        game = moved if moved is not None else await games.storage.load_table(place)
        if game is not None and game.place == place:
            await games.ensure_timer(place)
            games.box.refresh(game)
