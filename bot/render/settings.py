"""The /settings menu of a group.

Its first screen says every setting as it is now (members read them there) and lists the
sections; each section's screen has one row per setting: its name, then its values as
buttons with the current one marked (as the lobby's options screen marks its values).
"""

from __future__ import annotations

from typing import Any

from telegram import InlineKeyboardButton

from bot.domain import callbacks
from bot.domain.group_settings import (
    SCREENS,
    SECTIONS,
    SETTINGS_BY_NAME,
    GroupSetting,
    Screen,
    in_section,
)
from bot.domain.records import ChatSettings
from bot.render.common import Rendered, markup
from bot.render.labels import pack, row_fits
from bot.render.lobby import CHOSEN
from locales import Translator

Rows = list[list[InlineKeyboardButton]]


def settings_menu(
    settings: ChatSettings, tr: Translator, bot_timeout: float, screen: Screen = "home"
) -> Rendered:
    """The group's settings as they are now, and the buttons of ``screen``;
    ``bot_timeout``: the bot's own turn timeout (a group that never chose one has it)."""
    if screen == "home":
        text = "\n\n".join(
            (
                tr.t("settings.title"),
                defaults_line(settings, tr),
                *_own_lines(settings, tr, bot_timeout),
                tr.t("settings.admins_only"),
            )
        )
        buttons = [
            InlineKeyboardButton(
                tr.t(f"settings.section_{section}"),
                callback_data=callbacks.encode_settings(callbacks.SCREEN, SCREENS.index(section)),
            )
            for section in SECTIONS
        ]
        return Rendered(text, markup(pack(buttons)))
    rows: Rows = []
    for setting in in_section(screen):
        rows += setting_rows(setting, setting.current(settings, bot_timeout), tr)
    back = callbacks.encode_settings(callbacks.SCREEN, SCREENS.index("home"))
    rows.append([InlineKeyboardButton(tr.t("settings.back"), callback_data=back)])
    about = [tr.t("settings.title"), tr.t(f"settings.about_{screen}")]
    if screen == "games" and settings.defaults is None:
        about.append(tr.t("settings.games_unset"))
    return Rendered("\n\n".join(about), markup(rows))


def setting_rows(setting: GroupSetting, current: Any, tr: Translator) -> Rows:
    """The setting's name, then each of its values (the current one marked)."""
    name = InlineKeyboardButton(
        tr.t(setting.title), callback_data=callbacks.encode_settings(setting.name)
    )
    values = [
        InlineKeyboardButton(
            (CHOSEN if value == current else "") + value_text(setting, value, tr),
            callback_data=callbacks.encode_settings(setting.name, i),
        )
        for i, value in enumerate(setting.values)
    ]
    row = [name, *values]
    # A long name or value, or many values: the name heads the values' rows.
    return [row] if row_fits([b.text for b in row]) else [[name], *pack(values)]


def value_text(setting: GroupSetting, value: Any, tr: Translator) -> str:
    """One value as its button shows it: "36", "on", "30 s", "admins"."""
    if setting.value_keys is not None:
        return str(tr.t(setting.value_keys[value]))
    if setting.unit is not None:
        return str(tr.t(setting.unit, value=value))
    return str(value)


def setting_set(setting: GroupSetting, value: Any, tr: Translator) -> str:
    """The toast to whoever set it: "✓ Deck: 52"."""
    shown = value_text(setting, value, tr)
    return str(tr.t("settings.toast_set", setting=tr.t(setting.title), value=shown))


def defaults_line(settings: ChatSettings, tr: Translator) -> str:
    """What new lobbies start from: the chosen defaults, or the last game's options."""
    if settings.defaults is None:
        return str(tr.t("settings.games_last"))
    shown = " · ".join(
        f"{tr.t(s.title)}: {value_text(s, s.current(settings, 0), tr)}" for s in in_section("games")
    )
    return str(tr.t("settings.games_are", options=shown))


def _own_lines(settings: ChatSettings, tr: Translator, bot_timeout: float) -> list[str]:
    starts = SETTINGS_BY_NAME["starts"]
    return [
        tr.t("settings.starts_is", who=value_text(starts, settings.starts, tr)),
        tr.t("settings.timeout_is", seconds=settings.turn_timeout or round(bot_timeout)),
        tr.t("settings.tidy_is_on" if settings.tidy else "settings.tidy_is_off"),
        tr.t("settings.rating_is_on" if settings.rating else "settings.rating_is_off"),
    ]


def settings_private(tr: Translator) -> Rendered:
    """/settings in a private chat: there is nothing to set there."""
    return Rendered(tr.t("settings.private"))
