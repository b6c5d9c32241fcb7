"""The lobby message: options, seats and the buttons to change them."""

from __future__ import annotations

from telegram import InlineKeyboardButton

from bot import callbacks
from bot.callbacks import GroupOp
from bot.flow import MAX_SEATS
from bot.records import ChatGame
from bot.render.common import Rendered, deep_link, fit, markup, seat_name
from bot.render.labels import pack
from locales import Html, Translator, how_to_play


def rules_summary(game: ChatGame, tr: Translator) -> Html:
    r = game.rules
    return tr.t(
        "lobby.options",
        deck=r.deck_size,
        throw_in=tr.t(f"option.throw_in_{r.throw_in}"),
        transfer=tr.t("option.on" if r.transfer else "option.off"),
        series=r.series_length,
    )


def lobby_message(
    game: ChatGame, tr: Translator, bot_username: str, unreachable: list[str]
) -> Rendered:
    lines: list[str] = [tr.t("lobby.title"), rules_summary(game, tr)]
    if game.series_played:
        lines.append(
            tr.t(
                "lobby.series_progress",
                game=game.series_played + 1,
                total=game.rules.series_length,
            )
        )
    lines.append(tr.t("lobby.players", count=len(game.seats), max=MAX_SEATS))
    for i, seat in enumerate(game.seats, 1):
        lines.append(f"{i}. {seat_name(seat, tr)}")
    if unreachable:
        lines.append(tr.t("lobby.waiting_dm", names=", ".join(unreachable)))
    lines.append(tr.t("lobby.hint"))
    lines += ["", how_to_play(tr.lang)]
    gid = game.game_id

    def b(key: str, op: GroupOp, **kw: str | int) -> InlineKeyboardButton:
        return InlineKeyboardButton(tr.t(key, **kw), callback_data=callbacks.encode_group(gid, op))

    r = game.rules
    rows: list[list[InlineKeyboardButton]] = []
    if unreachable:
        # First: without it the game cannot start.
        url = deep_link(bot_username, f"g{game.chat_id}")
        rows.append([InlineKeyboardButton(tr.t("lobby.open_dm"), url=url)])
    rows += pack([b("lobby.join", "join"), b("lobby.leave", "leave")])
    ai = [b("lobby.ai_easy", "ai_easy"), b("lobby.ai_normal", "ai_normal")]
    ai.append(b("lobby.ai_hard", "ai_hard"))
    if any(s.user_id is None for s in game.seats):
        ai.append(b("lobby.remove_ai", "remove_ai"))
    rows += pack(ai, 4)
    # Rows as full as each language's labels allow, so no value is ever cut off.
    rows += pack(
        [
            b("lobby.deck", "deck", deck=r.deck_size),
            b("lobby.series", "series", count=r.series_length),
            b("lobby.throw_in", "throw_in", value=tr.t(f"option.throw_in_{r.throw_in}")),
            b(
                "lobby.transfer",
                "transfer",
                value=tr.t("option.on" if r.transfer else "option.off"),
            ),
        ],
        2,
    )
    rows += pack([b("lobby.start", "start"), b("lobby.cancel", "cancel")])
    return Rendered(fit("\n".join(lines)), markup(rows))


def cancelled(tr: Translator) -> Rendered:
    return Rendered(tr.t("lobby.cancelled"))
