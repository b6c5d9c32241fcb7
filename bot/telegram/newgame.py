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
    if await lobbies.admins_only(services.games, chat.id) and not await services.members.is_admin(
        chat.id, user.id, context.bot
    ):
        services.say(place, tr.t("settings.only_admins_start"))
        return
    creator = person(user, negotiate(user.language_code))
    command = update.effective_message.message_id if update.effective_message else None
    try:
        title, topic = chat.title or "", topic_name(update)
        await lobbies.open_lobby(services.games, place, title, creator, command, topic)
    except FlowError as err:
        services.say(place, tr.t(err.key), reply_to=err.kwargs.get("reply_to"))
