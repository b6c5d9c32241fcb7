"""Group service messages: a group upgraded to a supergroup (see ``bot.app.migration``)."""

from __future__ import annotations

from telegram import Update
from telegram.ext import ContextTypes

from bot.app.migration import follow_migration
from bot.telegram.common import Services


async def migrated(services: Services, update: Update, context: ContextTypes.DEFAULT_TYPE) -> None:
    """Telegram says it in both chats; whichever comes first moves the game."""
    message = update.effective_message
    if message is None:
        return
    if message.migrate_to_chat_id:
        await follow_migration(services.games, message.chat.id, message.migrate_to_chat_id)
    elif message.migrate_from_chat_id:
        await follow_migration(services.games, message.migrate_from_chat_id, message.chat.id)
