"""/rules and its buttons: the rules in brief, then in full or by section."""

from __future__ import annotations

from telegram import Update
from telegram.ext import ContextTypes

from bot.app import rules
from bot.app.players import dm_open
from bot.domain.callbacks import RulesButton
from bot.domain.flow import FlowError
from bot.domain.names import short_name
from bot.telegram.common import Services, Toast, is_private
from bot.telegram.taps import Tap


async def rules_command(
    services: Services, update: Update, context: ContextTypes.DEFAULT_TYPE
) -> None:
    """The rules in brief, with buttons for the full text and each of its sections:
    in a group, of its lobby or game; in private, of the reader's current game (the
    default when none)."""
    chat, user = update.effective_chat, update.effective_user
    if chat is None or user is None:
        return
    games = services.games
    tr = await services.reply_language(chat, user)
    private = is_private(chat)
    game = await rules.game_for_rules(games, chat.id, private=private, user_id=user.id)
    target, reader_tr = chat.id, tr
    if not private and await dm_open(games.storage, user.id):
        # The text goes to the private chat, in the reader's own language.
        target, reader_tr = user.id, await services.own_language(user)
        services.say(chat.id, tr.t("rules.sent_dm", name=short_name(user.full_name)))
    games.box.say(target, rules.brief(games, game, reader_tr))


async def rules_tap(services: Services, tap: Tap, button: RulesButton) -> Toast:
    """A /rules button: the full text (or a section) in the chat the button is in."""
    message = tap.query.message
    if message is None:
        raise FlowError("toast.stale")
    games = services.games
    if is_private(message.chat):
        tr = await tap.tapper_language()
    else:
        tr = await games.languages.group(message.chat.id)
    for text in await rules.full(games, button.chat_id, button.section, tr.lang):
        services.say(message.chat.id, text)
    return None
