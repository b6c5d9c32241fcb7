"""The lobby message: options, seats and the buttons to change them."""

from __future__ import annotations

from collections.abc import Collection

from telegram import InlineKeyboardButton

from bot.domain import callbacks
from bot.domain.callbacks import GroupOp
from bot.domain.lobby_options import LOBBY_OPTIONS, LobbyOption
from bot.domain.records import AI_LEVELS, ChatGame
from bot.render.common import Rendered, deep_link, markup, seat_name
from bot.render.labels import pack
from engine.rules import MAX_PLAYERS
from locales import Html, Translator, how_to_play


def option_label(option: LobbyOption, game: ChatGame, tr: Translator) -> Html:
    """The option's button text with its current value, e.g. "Deck: 36"."""
    value = option.current(game)
    keys = option.value_keys
    shown: Html | int | str = tr.t(keys[value]) if keys is not None else value
    return tr.t(option.label, **{option.arg: shown})


def rules_summary(game: ChatGame, tr: Translator) -> Html:
    shown = [o for o in LOBBY_OPTIONS if o.offered(game)]
    return Html(" · ".join(option_label(o, game, tr) for o in shown))


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
    # The deck's real maximum: 24 cards seat four.
    seats = min(MAX_PLAYERS, game.rules.max_players)
    lines.append(tr.t("lobby.players", count=len(game.seats), max=seats))
    for i, seat in enumerate(game.seats, 1):
        lines.append(f"{i}. {seat_name(seat, tr)}")
    waiting = [
        s.shown_name for s in game.seats if s.user_id is not None and s.user_id in unreachable
    ]
    if waiting:
        lines.append(tr.t("lobby.waiting_dm", names=", ".join(waiting)))
    lines.append(tr.t("lobby.hint"))
    if game.show_how_to:
        lines += ["", how_to_play(tr.lang)]
    gid = game.game_id

    def b(label: str, op: GroupOp) -> InlineKeyboardButton:
        return InlineKeyboardButton(label, callback_data=callbacks.encode_group(gid, op))

    options = [b(option_label(o, game, tr), o.op) for o in LOBBY_OPTIONS if o.offered(game)]
    rows: list[list[InlineKeyboardButton]] = []
    if waiting:
        # First: without it the game cannot start.
        url = deep_link(bot_username, callbacks.encode_group_link(game.place))
        rows.append([InlineKeyboardButton(tr.t("lobby.open_dm"), url=url)])
    rows += pack([b(tr.t("lobby.join"), "join"), b(tr.t("lobby.leave"), "leave")])
    computers = [b(tr.t(f"lobby.ai_{level}"), f"ai_{level}") for level in AI_LEVELS]
    if any(s.user_id is None for s in game.seats):
        computers.append(b(tr.t("lobby.remove_ai"), "remove_ai"))
    rows += pack(computers, 4)
    # Rows as full as each language's labels allow, so no value is ever cut off.
    rows += pack(options, 2)
    rows += pack([b(tr.t("lobby.start"), "start"), b(tr.t("lobby.cancel"), "cancel")])
    if waiting:
        rows += pack([b(tr.t("lobby.drop_unreachable"), "drop_unreachable")])
    if not game.show_how_to:
        rows += pack([b(tr.t("lobby.how_to"), "how_to")])
    return Rendered("\n".join(lines), markup(rows))


def cancelled(tr: Translator) -> Rendered:
    return Rendered(tr.t("lobby.cancelled"))
