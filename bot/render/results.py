"""A game's end: the new (notifying) group message with the durak, places, bouts and
duration, Rematch and New lobby; and each player's own one-line result in private."""

from __future__ import annotations

from telegram import InlineKeyboardButton

from bot import callbacks
from bot.flow import series_over
from bot.records import ChatGame
from bot.render.common import Rendered, fit, markup, seat_name
from bot.render.labels import pack
from locales import Html, Translator


def losers(game: ChatGame) -> list[int]:
    """The durak, or in a partners game every member of the losing team."""
    durak = game.final_durak
    if durak is None:
        return []
    if getattr(game.rules, "partners", False):
        return [s for s in range(len(game.seats)) if s % 2 == durak % 2]
    return [durak]


def _bouts(game: ChatGame) -> int:
    return game.engine_state().bout if game.state is not None else 0


def _minutes(game: ChatGame) -> int:
    if game.started_at is None or game.finished_at is None:
        return 0
    return max(1, round((game.finished_at - game.started_at) / 60))


def results_message(game: ChatGame, tr: Translator) -> Rendered:
    names = [seat_name(s, tr) for s in game.seats]
    lost = losers(game)
    lines: list[str] = [tr.t("result.title")]
    if not lost:
        lines.append(tr.t("result.draw"))
    elif len(lost) == 1:
        lines.append(tr.t("result.durak", name=names[lost[0]]))
    else:
        lines.append(tr.t("result.losing_team", names=Html(", ".join(names[s] for s in lost))))
    order = [s for s in game.final_order if s not in lost]
    for place, seat in enumerate(order, 1):
        lines.append(f"{place}. {names[seat]}")
    lines.append(tr.n("result.summary", _bouts(game), minutes=_minutes(game)))
    if game.rules.series_length > 1 and game.series_durak:
        lines.append(tr.t("result.series", game=game.series_played, total=game.rules.series_length))
        ranked = sorted(range(len(game.seats)), key=lambda s: game.series_durak[s])
        for seat in ranked:
            lines.append(tr.n("result.series_line", game.series_durak[seat], name=names[seat]))
        if series_over(game):
            best = min(game.series_durak)
            winners = [names[s] for s in ranked if game.series_durak[s] == best]
            lines.append(tr.t("result.series_winner", names=Html(", ".join(winners))))
    again = "result.next_game" if not series_over(game) else "result.rematch"
    buttons = [
        InlineKeyboardButton(
            tr.t(again), callback_data=callbacks.encode_group(game.game_id, "new")
        ),
        InlineKeyboardButton(
            tr.t("result.new_lobby"), callback_data=callbacks.encode_group(game.game_id, "lobby")
        ),
    ]
    return Rendered(fit("\n".join(lines)), markup(pack(buttons)))


def hand_result(game: ChatGame, seat: int, tr: Translator) -> Rendered:
    """One line in the player's private chat instead of the hand."""
    group = game.chat_title or str(game.chat_id)
    lost = losers(game)
    if not lost:
        return Rendered(tr.t("hand.result_draw", group=group))
    if seat in lost:
        return Rendered(tr.t("hand.result_durak", group=group))
    order = [s for s in game.final_order if s not in lost]
    place = order.index(seat) + 1 if seat in order else len(order)
    durak = Html(", ".join(seat_name(game.seats[s], tr) for s in lost))
    return Rendered(
        tr.t("hand.result_place", group=group, place=place, count=len(game.seats), durak=durak)
    )
