"""The /settings menu of a group: each setting's name, then its values as buttons with the
current one marked (as the lobby's options screen marks its values)."""

from __future__ import annotations

from telegram import InlineKeyboardButton

from bot.domain import callbacks
from bot.domain.records import ChatSettings
from bot.render.common import Rendered, markup
from bot.render.labels import pack, row_fits
from bot.render.lobby import CHOSEN
from locales import Translator


def settings_menu(settings: ChatSettings, tr: Translator) -> Rendered:
    """The group's settings as they are now, and the buttons that change them."""
    rating = tr.t("settings.rating_is_on" if settings.rating else "settings.rating_is_off")
    text = "\n\n".join((tr.t("settings.title"), rating, tr.t("settings.admins_only")))
    return Rendered(text, markup(_rating_rows(settings, tr)))


def _rating_rows(settings: ChatSettings, tr: Translator) -> list[list[InlineKeyboardButton]]:
    name = InlineKeyboardButton(
        tr.t("settings.button_rating"), callback_data=callbacks.encode_settings("rating")
    )
    values = [
        InlineKeyboardButton(
            (CHOSEN if value == settings.rating else "") + tr.t(key),
            callback_data=callbacks.encode_settings("rating", value),
        )
        for value, key in ((True, "option.on"), (False, "option.off"))
    ]
    row = [name, *values]
    # A long name or value: the name heads the values' row.
    return [row] if row_fits([b.text for b in row]) else [[name], *pack(values)]


def settings_private(tr: Translator) -> Rendered:
    """/settings in a private chat: there is nothing to set there."""
    return Rendered(tr.t("settings.private"))
