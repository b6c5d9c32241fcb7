"""/stats: the group's table of players, or in private the user's own record."""

from __future__ import annotations

from telegram import Update
from telegram.ext import ContextTypes

from bot import render
from bot.telegram.common import Services, is_private, place_of


async def stats(services: Services, update: Update, context: ContextTypes.DEFAULT_TYPE) -> None:
    chat, user, place = update.effective_chat, update.effective_user, place_of(update)
    if chat is None or user is None or place is None:
        return
    tr = await services.reply_language(chat, user)
    storage = services.games.storage
    if is_private(chat):
        content = render.user_stats(await storage.user_stats(user.id), tr)
    else:
        content = render.group_stats(await storage.chat_stats(chat.id), tr)  # the group's
    services.games.box.say(place, content)
