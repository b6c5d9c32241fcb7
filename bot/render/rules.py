"""The short /rules message: the rules in brief, then a button for all of them and
one for each full section."""

from __future__ import annotations

from telegram import InlineKeyboardButton

from bot.domain import callbacks
from bot.domain.flow.common import Timing, table_timing
from bot.domain.records import ChatGame
from bot.render.common import Rendered, markup
from bot.render.labels import pack
from engine import Rules
from locales import Translator, rules_short
from locales.rules_text import SECTIONS, TablePace


def table_pace(game: ChatGame | None, timing: Timing) -> TablePace:
    """The pace /rules tells of: the game's (scaled as the flow runs it), or the
    bot's own when there is no game."""
    if game is None:
        return TablePace("normal", timing.turn_timeout, timing.throw_in_window)
    paced = table_timing(game, timing)
    return TablePace(game.pace, paced.turn_timeout, paced.throw_in_window)


def rules_message(game: ChatGame | None, timing: Timing, tr: Translator) -> Rendered:
    """The rules of ``game`` (the default game when None) in brief, in ``tr``'s language.
    The buttons name the game's place, so the full texts follow that game's rules."""
    rules = game.rules if game is not None else Rules()
    place = game.place if game is not None else None
    full = InlineKeyboardButton(
        tr.t("rules.full_button"), callback_data=callbacks.encode_rules(place)
    )
    sections = [
        InlineKeyboardButton(
            tr.t(f"rules.button.{section}"), callback_data=callbacks.encode_rules(place, section)
        )
        for section in SECTIONS
    ]
    text = rules_short(rules, tr.lang, table_pace(game, timing))
    return Rendered(text, markup([[full], *pack(sections, 3)]))
