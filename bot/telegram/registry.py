"""Registers every handler with PTB, in order, and publishes the command menus.

Handler groups: -2 the guard (floods, outages, lost games), -1 what must see every
private or service message without stopping the rest, 0 the commands and buttons.
"""

from __future__ import annotations

import logging
from collections.abc import Awaitable, Callable, Coroutine, Mapping
from typing import Any

from telegram import (
    BotCommand,
    BotCommandScopeAllGroupChats,
    BotCommandScopeAllPrivateChats,
    Update,
)
from telegram.error import TelegramError
from telegram.ext import (
    Application,
    CallbackQueryHandler,
    CommandHandler,
    ContextTypes,
    MessageHandler,
    filters,
)

from bot.domain.callbacks import (
    Button,
    GroupButton,
    HandButton,
    LanguageButton,
    RulesButton,
    SettingsButton,
    TopButton,
)
from bot.telegram.common import Services
from bot.telegram.group_buttons import group_tap
from bot.telegram.guard import Guard
from bot.telegram.hand_buttons import hand_tap
from bot.telegram.help import help_command
from bot.telegram.language import language_command, language_tap
from bot.telegram.newgame import newgame
from bot.telegram.private import back_in_chat, private_message
from bot.telegram.rules import rules_command, rules_tap
from bot.telegram.service import migrated, topic_edited
from bot.telegram.settings import settings_command, settings_tap
from bot.telegram.start import start
from bot.telegram.stats import stats
from bot.telegram.taps import TapRoute, TapRouter
from bot.telegram.top import top, top_tap
from locales import SUPPORTED, translator

log = logging.getLogger(__name__)

App = Application[Any, Any, Any, Any, Any, Any]
Handler = Callable[[Services, Update, ContextTypes.DEFAULT_TYPE], Awaitable[None]]
Callback = Callable[[Update, ContextTypes.DEFAULT_TYPE], Coroutine[Any, Any, None]]

HANDLERS_KEY = "durak.handlers"
GUARD_KEY = "durak.guard"
COMMANDS: dict[str, Handler] = {
    "start": start,
    "newgame": newgame,
    "help": help_command,
    "stats": stats,
    "top": top,
    "rules": rules_command,
    "language": language_command,
    "settings": settings_command,
}
"""Every command, in the order PTB is given them."""
GROUP_COMMANDS = ("newgame", "rules", "stats", "top", "language", "settings", "help")
PRIVATE_COMMANDS = ("start", "stats", "top", "rules", "language", "settings", "help")
"""The menus, in the order Telegram shows them."""
TAP_ROUTES: Mapping[type[Button], TapRoute] = {
    GroupButton: group_tap,
    HandButton: hand_tap,
    RulesButton: rules_tap,
    LanguageButton: language_tap,
    TopButton: top_tap,
    SettingsButton: settings_tap,
}
"""Which handler a tap goes to, by the kind of button its data decodes to."""


def bound(handler: Handler, services: Services) -> Callback:
    async def callback(update: Update, context: ContextTypes.DEFAULT_TYPE) -> None:
        await handler(services, update, context)

    return callback


async def update_failed(update: object, context: ContextTypes.DEFAULT_TYPE) -> None:
    log.warning("update failed: %s", context.error, exc_info=context.error)


def install(app: App, services: Services, guard: Guard) -> TapRouter:
    """Every handler, the guard's first; the tap router (for its latency figures)."""
    guard.install(app)
    app.bot_data[GUARD_KEY] = guard
    app.add_handler(
        MessageHandler(filters.StatusUpdate.MIGRATE, bound(migrated, services)),
        group=-1,
    )
    app.add_handler(
        MessageHandler(filters.StatusUpdate.FORUM_TOPIC_EDITED, bound(topic_edited, services))
    )
    taps = TapRouter(services, TAP_ROUTES)
    app.bot_data[HANDLERS_KEY] = taps
    for name, handler in COMMANDS.items():
        app.add_handler(CommandHandler(name, bound(handler, services)))
    app.add_handler(CallbackQueryHandler(taps.on_tap))
    private_text = filters.ChatType.PRIVATE & ~filters.COMMAND
    app.add_handler(MessageHandler(private_text, bound(private_message, services)))
    # Before the others, and without stopping them: any private message or command.
    app.add_handler(
        MessageHandler(filters.ChatType.PRIVATE, bound(back_in_chat, services)),
        group=-1,
    )
    app.add_error_handler(update_failed)
    return taps


async def publish_commands(app: App) -> None:
    """The command menu for groups and private chats, in every language."""
    for lang in ("", *SUPPORTED):
        tr = translator(lang or "en")
        for scope, names in (
            (BotCommandScopeAllGroupChats(), GROUP_COMMANDS),
            (BotCommandScopeAllPrivateChats(), PRIVATE_COMMANDS),
        ):
            commands = [BotCommand(name, tr.t(f"command.{name}")) for name in names]
            try:
                await app.bot.set_my_commands(commands, scope=scope, language_code=lang or None)
            except TelegramError as err:
                log.warning("setMyCommands failed (%s, %s): %s", lang, scope.type, err)
