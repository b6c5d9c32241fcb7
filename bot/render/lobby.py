"""The lobby message: options, seats and the buttons to change them.

A group message has one keyboard for everyone, so it shows only buttons that can do
something for someone: no Join or "+ AI" at a full table, "Remove players I can't
reach" only when someone is. The lobby has three keyboards (``ChatGame.lobby_screen``):
its buttons; the options, each value a button with the current one marked; and the
question whether to cancel it.
"""

from __future__ import annotations

from collections.abc import Callable, Collection
from typing import Any

from telegram import InlineKeyboardButton

from bot.domain import callbacks
from bot.domain.callbacks import GroupOp
from bot.domain.lobby_options import LOBBY_OPTIONS, LobbyOption
from bot.domain.records import AI_LEVELS, ChatGame
from bot.render.common import Rendered, deep_link, markup, seat_names
from bot.render.labels import pack, row_fits
from engine.rules import MAX_PLAYERS
from locales import Html, Translator, how_to_play

CHOSEN = "✓ "
"""Marks the current value on the options screen."""
Button = Callable[..., InlineKeyboardButton]
"""Makes a group button of the lobby: ``(label, op, choice=None)``."""


def option_label(option: LobbyOption, game: ChatGame, tr: Translator) -> Html:
    """The option's button text with its current value, e.g. "Deck: 36"."""
    value = option.current(game)
    keys = option.value_keys
    shown: Html | int | str = tr.t(keys[value]) if keys is not None else value
    return tr.t(option.label, **{option.arg: shown})


def value_text(option: LobbyOption, value: Any, tr: Translator) -> str:
    """One value as the options screen shows it: "36", "neighbours", "on"."""
    keys = option.value_keys
    return str(tr.t(keys[value])) if keys is not None else str(value)


def rules_summary(game: ChatGame, tr: Translator) -> Html:
    shown = [o for o in LOBBY_OPTIONS if o.offered(game)]
    return Html(" · ".join(option_label(o, game, tr) for o in shown))


def seat_limit(game: ChatGame) -> int:
    """How many the table seats: the deck's real maximum (24 cards seat four)."""
    return min(MAX_PLAYERS, game.rules.max_players)


def lobby_message(
    game: ChatGame, tr: Translator, bot_username: str, unreachable: Collection[int]
) -> Rendered:
    """The lobby; ``unreachable``: user ids the bot cannot write to in private yet."""
    lines: list[str] = [tr.t("lobby.title"), rules_summary(game, tr)]
    if game.games_played:
        lines.append(
            tr.t(
                "lobby.series_progress",
                game=game.games_played + 1,
                total=game.rules.series_length,
            )
        )
    lines.append(tr.t("lobby.players", count=len(game.seats), max=seat_limit(game)))
    for i, name in enumerate(seat_names(game.seats, tr), 1):
        lines.append(f"{i}. {name}")
    waiting = [s for s in game.seats if s.user_id is not None and s.user_id in unreachable]
    if waiting:
        names = ", ".join(s.shown_name for s in waiting)
        if game.group_hands:
            lines.append(tr.t("lobby.plays_in_group", names=names))
        else:
            lines.append(tr.t("lobby.waiting_dm", names=names))
        if game.group_hands is False:
            lines.append(tr.t("lobby.bot_not_admin"))
    lines.append(tr.t("lobby.hint"))
    if game.show_how_to:
        lines += ["", how_to_play(tr.lang)]
    if game.lobby_screen == "options":
        lines += ["", tr.t("lobby.options_screen")]
    elif game.lobby_screen == "cancel":
        lines += ["", tr.t("lobby.cancel_question")]
    gid = game.game_id

    def b(label: str, op: GroupOp, choice: int | None = None) -> InlineKeyboardButton:
        data = callbacks.encode_group(gid, op, choice)
        return InlineKeyboardButton(label, callback_data=data)

    rows: list[list[InlineKeyboardButton]] = []
    if waiting:
        # First: without it the game cannot start.
        url = deep_link(bot_username, callbacks.encode_group_link(game.place))
        rows.append([InlineKeyboardButton(tr.t("lobby.open_dm"), url=url)])
    rows += _seat_rows(game, tr, b)
    if game.lobby_screen == "options":
        rows += _options_rows(game, tr, b)
    else:
        # Someone the creator may remove: the creator themselves is told to open the chat.
        # Nobody is stranded where they can play from the group.
        stranded = not game.group_hands and any(s.user_id != game.creator_id for s in waiting)
        rows += _main_rows(game, tr, b, stranded)
    return Rendered("\n".join(lines), markup(rows))


def _full(game: ChatGame) -> bool:
    return len(game.seats) >= seat_limit(game)


def _seat_rows(game: ChatGame, tr: Translator, b: Button) -> list[list[InlineKeyboardButton]]:
    """Join (while a seat is free) and Leave: on every screen, so nobody waits to sit."""
    seats = [b(tr.t("lobby.leave"), "leave")]
    if not _full(game):
        seats.insert(0, b(tr.t("lobby.join"), "join"))
    return pack(seats)


def _main_rows(
    game: ChatGame, tr: Translator, b: Button, stranded: bool
) -> list[list[InlineKeyboardButton]]:
    # The group's chosen level first (/settings), the others in order.
    levels = sorted(AI_LEVELS, key=lambda level: level != game.ai_first)
    computers = [] if _full(game) else [b(tr.t(f"lobby.ai_{lvl}"), f"ai_{lvl}") for lvl in levels]
    last_computer = next(
        (i for i in range(len(game.seats) - 1, -1, -1) if game.seats[i].user_id is None), None
    )
    if last_computer is not None:
        # Names the seat it removes: the last computer seated.
        name = seat_names(game.seats, tr)[last_computer]
        computers.append(b(tr.t("lobby.remove_ai", name=name), "remove_ai"))
    rows = pack(computers, 4)
    extras = [b(tr.t("lobby.options_button"), "options")]
    if not game.show_how_to:
        extras.append(b(tr.t("lobby.how_to"), "how_to"))
    rows += pack(extras)
    if game.lobby_screen == "cancel":
        rows += pack(
            [b(tr.t("lobby.cancel_yes"), "cancel_yes"), b(tr.t("lobby.cancel_no"), "cancel_no")]
        )
    else:
        rows += pack([b(tr.t("lobby.start"), "start"), b(tr.t("lobby.cancel"), "cancel")])
    if stranded:
        rows += pack([b(tr.t("lobby.drop_unreachable"), "drop_unreachable")])
    return rows


def _options_rows(game: ChatGame, tr: Translator, b: Button) -> list[list[InlineKeyboardButton]]:
    """One row per option offered: its name (the name opens nothing new: it answers
    how to change it), then each value, the current one marked."""
    rows: list[list[InlineKeyboardButton]] = []
    for option in LOBBY_OPTIONS:
        if not option.offered(game):
            continue
        current = option.current(game)
        values = [
            b((CHOSEN if value == current else "") + value_text(option, value, tr), option.op, i)
            for i, value in enumerate(option.values)
        ]
        name = b(tr.t(option.name), "options")
        group = [name, *values]
        if row_fits([button.text for button in group]):
            rows.append(group)
        else:  # a long name or value: the name heads the values' rows
            rows += [[name], *pack(values)]
    rows.append([b(tr.t("lobby.options_back"), "options_back")])
    return rows


def cancelled(tr: Translator) -> Rendered:
    return Rendered(tr.t("lobby.cancelled"))
