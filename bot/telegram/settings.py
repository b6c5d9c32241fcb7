"""/settings: a group's settings menu (its defaults for new games, who may start games,
the turn timeout, tidy-up, rating). Everyone may look; only the group's admins (its
creator included) change a setting."""

from __future__ import annotations

from telegram import Message, Update
from telegram.ext import ContextTypes

from bot.app import group_settings
from bot.domain.callbacks import SCREEN, SettingsButton
from bot.domain.flow import FlowError
from bot.domain.group_settings import SCREENS, SETTINGS_BY_NAME, Screen
from bot.render.settings import setting_set, settings_menu, settings_private
from bot.telegram.common import Said, Services, Toast, is_private, place_of
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
    games = services.games
    settings = await games.storage.chat_settings(chat.id)
    games.box.say(place, settings_menu(settings, tr, games.timing.turn_timeout))


async def settings_tap(services: Services, tap: Tap, button: SettingsButton) -> Toast:
    """A screen's button shows that screen (anyone may look); a value's button: an admin
    sets it, and the menu shows it; anyone else is told who may. The setting's name only
    says how to choose."""
    message = tap.query.message
    if not isinstance(message, Message) or tap.place is None or is_private(message.chat):
        raise FlowError("toast.invalid")
    if button.value is None:
        return "settings.toast_how"
    chat_id = message.chat.id
    if button.setting == SCREEN:
        await _show(services, message, SCREENS[button.value])
        return None
    if not await services.members.is_admin(chat_id, tap.query.from_user.id, tap.bot):
        raise FlowError("settings.toast_only_admin")
    setting = SETTINGS_BY_NAME[button.setting]
    value = setting.values[button.value]
    await group_settings.change(services.games, chat_id, setting, value)
    await _show(services, message, setting.section)
    return Said(setting_set(setting, value, await tap.tapper_language()))


async def _show(services: Services, message: Message, screen: Screen) -> None:
    """The menu as the settings are now, on ``screen``: edited only when it shows
    something else (a tap on the marked value, or on the screen shown, costs no edit)."""
    games, chat_id = services.games, message.chat.id
    settings = await games.storage.chat_settings(chat_id)
    tr = await games.languages.group(chat_id)
    menu = settings_menu(settings, tr, games.timing.turn_timeout, screen)
    if menu.markup != message.reply_markup:
        games.box.edit(chat_id, message.message_id, menu)
