"""A group upgraded to a supergroup: its game, statistics and settings follow it.

Telegram tells us twice (a service message with ``migrate_to_chat_id`` in the old group,
one with ``migrate_from_chat_id`` in the new one) and refuses every later call to the old
id with ``ChatMigrated``; whichever comes first moves the records, the rest find them moved.
"""

from __future__ import annotations

import logging
from typing import Any

from telegram import Update
from telegram.ext import Application, ContextTypes, MessageHandler, filters

from bot.app.games import Games

log = logging.getLogger(__name__)


async def follow_migration(games: Games, old: int, new: int) -> None:
    """Move the records (atomically, once) and show the game in the new chat."""
    moved = await games.storage.migrate_chat(old, new)
    table = moved or await games.storage.load_table(new)
    if moved is not None:
        log.info("moved the game of chat %s to %s", old, new)
    if table is not None and table.chat_id == new:
        await games.ensure_timer(new)
        games.box.refresh(table)


def install_migration(app: Application[Any, Any, Any, Any, Any, Any], games: Games) -> None:
    async def on_service_message(update: Update, context: ContextTypes.DEFAULT_TYPE) -> None:
        message = update.effective_message
        if message is None:
            return
        if message.migrate_to_chat_id:
            await follow_migration(games, message.chat.id, message.migrate_to_chat_id)
        elif message.migrate_from_chat_id:
            await follow_migration(games, message.migrate_from_chat_id, message.chat.id)

    app.add_handler(MessageHandler(filters.StatusUpdate.MIGRATE, on_service_message), group=-1)
    games.box.on_migrated = lambda old, new: follow_migration(games, old, new)
