"""/rules and its buttons: the rules in brief, then in full or by section."""

from __future__ import annotations

from telegram import Update
from telegram.ext import ContextTypes

from bot.app import rules
from bot.app.players import dm_open
from bot.domain.callbacks import RulesButton
from bot.domain.flow import FlowError
from bot.domain.names import short_name
from bot.telegram.common import Services, Toast, is_private, place_of
from bot.telegram.taps import Tap


async def rules_command(
    services: Services, update: Update, context: ContextTypes.DEFAULT_TYPE
) -> None:
    """The rules in brief, with buttons for the full text and each of its sections:
    in a group, of its lobby or game; in private, of the reader's current game (the
    default when none)."""
    chat, user, place = update.effective_chat, update.effective_user, place_of(update)
    if chat is None or user is None or place is None:
        return
    games = services.games
    tr = await services.reply_language(chat, user)
    private = is_private(chat)
    game = await rules.game_for_rules(games, place, private=private, user_id=user.id)
    if not private and await dm_open(games.storage, user.id):
        # The text goes to the private chat, in the reader's own language.
        services.say(place, tr.t("rules.sent_dm", name=short_name(user.full_name)))
        games.box.tell(user.id, rules.brief(games, game, await services.own_language(user)))
        return
    games.box.say(place, rules.brief(games, game, tr))


async def rules_tap(services: Services, tap: Tap, button: RulesButton) -> Toast:
    """A /rules button: the full text (or a section) in the chat the button is in."""
    message, place = tap.query.message, tap.place
    if message is None or place is None:
        raise FlowError("toast.stale")
    games = services.games
    if is_private(message.chat):
        tr = await tap.tapper_language()
    else:
        tr = await games.languages.group(message.chat.id)
    for text in await rules.full(games, button.place, button.section, tr.lang):
        services.say(place, text)
    return None
