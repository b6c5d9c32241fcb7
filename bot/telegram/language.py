"""/language and its picker: a group's language (its admins choose), or one's own."""

from __future__ import annotations

from telegram import Update
from telegram.ext import ContextTypes

from bot import render
from bot.domain.callbacks import LanguageButton
from bot.domain.flow import FlowError
from bot.telegram.common import Services, Toast, is_private, place_of
from bot.telegram.taps import Tap
from locales import SUPPORTED, language_name


async def language_command(
    services: Services, update: Update, context: ContextTypes.DEFAULT_TYPE
) -> None:
    chat, user, place = update.effective_chat, update.effective_user, place_of(update)
    if chat is None or place is None:
        return
    tr = await services.reply_language(chat, user)
    names = [language_name(lang) for lang in SUPPORTED]
    services.games.box.say(place, render.language_picker(tr, SUPPORTED, names))


async def language_tap(services: Services, tap: Tap, button: LanguageButton) -> Toast:
    message, place = tap.query.message, tap.place
    if message is None or place is None or button.lang not in SUPPORTED:
        raise FlowError("toast.invalid")
    chat, user = message.chat, tap.query.from_user
    games = services.games
    if is_private(chat):
        confirmation = await games.languages.choose_for_person(user.id, button.lang)
    else:
        # A group's language is everyone's: only its admins change it, and only here.
        if not await services.members.is_admin(chat.id, user.id, tap.bot):
            raise FlowError("toast.only_admin_language")
        game, confirmation = await games.languages.choose_for_group(place, button.lang)
        if game is not None and game.phase in ("lobby", "playing", "finished"):
            games.box.refresh(game)
    games.box.say(place, confirmation)
    return None
