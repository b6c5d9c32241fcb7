"""/settings: a group's settings menu (for now: whether its games are rated). Everyone
may look; only the group's admins (its creator included) change a setting."""

from __future__ import annotations

from telegram import Message, Update
from telegram.ext import ContextTypes

from bot.domain.callbacks import SettingsButton
from bot.domain.flow import FlowError
from bot.render.settings import settings_menu, settings_private
from bot.telegram.common import Services, Toast, is_private, place_of
from bot.telegram.taps import Tap


async def settings_command(
    services: Services, update: Update, context: ContextTypes.DEFAULT_TYPE
) -> None:
    chat, user, place = update.effective_chat, update.effective_user, place_of(update)
    if chat is None or place is None:
        return
    tr = await services.reply_language(chat, user)
    if is_private(chat):
        services.games.box.say(place, settings_private(tr))
        return
    settings = await services.games.storage.chat_settings(chat.id)
    services.games.box.say(place, settings_menu(settings, tr))


async def settings_tap(services: Services, tap: Tap, button: SettingsButton) -> Toast:
    """A value's button: an admin sets it, and the menu shows it; anyone else is told
    who may. The setting's name only says how to choose."""
    message = tap.query.message
    if not isinstance(message, Message) or tap.place is None or is_private(message.chat):
        raise FlowError("toast.invalid")
    if button.value is None:
        return "settings.toast_how"
    chat_id = message.chat.id
    if not await services.members.is_admin(chat_id, tap.query.from_user.id, tap.bot):
        raise FlowError("settings.toast_only_admin")
    games = services.games
    settings = await games.storage.chat_settings(chat_id)
    if settings.rating != button.value:
        settings = settings.model_copy(update={"rating": button.value})
        await games.storage.save_chat_settings(chat_id, settings)
    menu = settings_menu(settings, await games.languages.group(chat_id))
    # Only when it shows something else: a tap on the marked value costs no edit.
    if menu.markup != message.reply_markup:
        games.box.edit(chat_id, message.message_id, menu)
    return "settings.toast_rating_on" if button.value else "settings.toast_rating_off"
