"""Group service messages: a group upgraded to a supergroup (see ``bot.app.migration``),
a forum topic renamed."""

from __future__ import annotations

from telegram import Update
from telegram.ext import ContextTypes

from bot.app import lobbies
from bot.app.migration import follow_migration
from bot.telegram.common import Services, place_of


async def migrated(services: Services, update: Update, context: ContextTypes.DEFAULT_TYPE) -> None:
    """Telegram says it in both chats; whichever comes first moves the game."""
    message = update.effective_message
    if message is None:
        return
    if message.migrate_to_chat_id:
        await follow_migration(services.games, message.chat.id, message.migrate_to_chat_id)
    elif message.migrate_from_chat_id:
        await follow_migration(services.games, message.migrate_from_chat_id, message.chat.id)


async def topic_edited(
    services: Services, update: Update, context: ContextTypes.DEFAULT_TYPE
) -> None:
    """A forum topic was renamed: its game's private messages take the new name."""
    message, place = update.effective_message, place_of(update)
    edited = message.forum_topic_edited if message is not None else None
    if edited is None or not edited.name or place is None or place.topic_id is None:
        return
    await lobbies.rename_topic(services.games, place, edited.name)
