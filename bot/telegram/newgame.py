"""/newgame: a lobby in the group (in private, a pointer to the groups)."""

from __future__ import annotations

from telegram import Update
from telegram.ext import ContextTypes

from bot.app import lobbies
from bot.domain.flow import FlowError
from bot.telegram.common import Services, is_private, person, place_of, topic_name
from locales import negotiate


async def newgame(services: Services, update: Update, context: ContextTypes.DEFAULT_TYPE) -> None:
    chat, user, place = update.effective_chat, update.effective_user, place_of(update)
    if chat is None or user is None or place is None:
        return
    tr = await services.reply_language(chat, user)
    if is_private(chat):
        services.say(place, tr.t("newgame.private"))
        return
    creator = person(user, negotiate(user.language_code))
    try:
        title = chat.title or ""
        await lobbies.open_lobby(services.games, place, title, creator, topic_name(update))
    except FlowError as err:
        services.say(place, tr.t(err.key), reply_to=err.kwargs.get("reply_to"))
