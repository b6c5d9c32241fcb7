"""/help: what the bot does, and how to play."""

from __future__ import annotations

from telegram import Update
from telegram.ext import ContextTypes

from bot.telegram.common import Services, place_of
from locales import how_to_play


async def help_command(
    services: Services, update: Update, context: ContextTypes.DEFAULT_TYPE
) -> None:
    chat, user, place = update.effective_chat, update.effective_user, place_of(update)
    if chat is None or place is None:
        return
    tr = await services.reply_language(chat, user)
    commands = tr.t("help.text") + "\n" + tr.t("help.top") + "\n" + tr.t("help.settings")
    services.say(place, commands + "\n\n" + how_to_play(tr.lang))
