"""/stats: the group's table of players, or in private the user's own record; each with
the asker's rating this month (the group's, or over all groups in private)."""

from __future__ import annotations

from telegram import Update
from telegram.ext import ContextTypes

from bot import render
from bot.render import rating as rating_text
from bot.render.common import Rendered
from bot.telegram.common import Services, is_private, place_of
from bot.telegram.top import chart_url


async def stats(services: Services, update: Update, context: ContextTypes.DEFAULT_TYPE) -> None:
    chat, user, place = update.effective_chat, update.effective_user, place_of(update)
    if chat is None or user is None or place is None:
        return
    tr = await services.reply_language(chat, user)
    storage, ratings = services.games.storage, services.games.screens.ratings
    if is_private(chat):
        content = render.user_stats(await storage.user_stats(user.id), tr)
        season, record = await ratings.own(user.id, None)
        line = rating_text.own_rating_line(record, season, tr, ratings.min_games)
        content = Rendered(content.text + "\n" + line)
        url = chart_url(services)
        if url is not None:
            content = rating_text.with_chart_button(content, url, tr)
    else:
        content = render.group_stats(await storage.chat_stats(chat.id), tr)  # the group's
        if await ratings.rated_here(chat.id):
            season, record = await ratings.own(user.id, chat.id)
            name = user.full_name or user.first_name or str(user.id)
            line = rating_text.group_rating_line(name, record, season, tr, ratings.min_games)
            content = Rendered(content.text + "\n\n" + line, content.markup)
    services.games.box.say(place, content)
