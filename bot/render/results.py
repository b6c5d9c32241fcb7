"""A game's end: the new (notifying) group message with the durak, places, bouts and
duration, Rematch and New lobby; and each player's own one-line result in private."""

from __future__ import annotations

from telegram import InlineKeyboardButton

from bot.domain import callbacks
from bot.domain.flow import series_over
from bot.domain.records import ChatGame
from bot.render.common import TEAM_NAMES, Rendered, markup, place_title, seat_names
from bot.render.deal import reveal_lines
from bot.render.labels import pack
from locales import Html, Translator


def losers(game: ChatGame) -> list[int]:
    """The durak, or in a partners game every member of the losing team."""
    if game.final_durak is None:
        return []
    team = game.final_losing_team
    if team is not None:
        return list(range(team, len(game.seats), 2))
    return [game.final_durak]


def _bouts(game: ChatGame) -> int:
    return game.engine_state().bout if game.state is not None else 0


def _minutes(game: ChatGame) -> int:
    if game.started_at is None or game.finished_at is None:
        return 0
    return max(1, round((game.finished_at - game.started_at) / 60))


def results_message(game: ChatGame, tr: Translator, *, reveal: bool = True) -> Rendered:
    """The group's result message; ``reveal``: with the deal's reveal (``render.deal``),
    which only the group's message carries."""
    names = seat_names(game.seats, tr)
    lost = losers(game)
    lines: list[str] = [tr.t("result.title")]
    team = game.final_losing_team
    if not lost:
        lines.append(tr.t("result.draw"))
    elif team is not None:
        shown = Html(", ".join(names[s] for s in lost))
        lines.append(tr.t("result.team_lost", team=TEAM_NAMES[team], names=shown))
    else:
        lines.append(tr.t("result.durak", name=names[lost[0]]))
    order = [s for s in game.final_order if s not in lost]
    for place, seat in enumerate(order, 1):
        lines.append(f"{place}. {names[seat]}")
    lines.append(tr.n("result.summary", _bouts(game), minutes=_minutes(game)))
    series = game.series
    if game.rules.series_length > 1 and series is not None:
        lines.append(
            tr.t("result.series", game=series.games_played, total=series.rules.series_length)
        )
        for seat in series.standings():
            lines.append(tr.n("result.series_line", series.durak_counts[seat], name=names[seat]))
        if series.finished:
            winners = [names[s] for s in series.winners()]
            lines.append(tr.t("result.series_winner", names=Html(", ".join(winners))))
    if reveal:
        lines += reveal_lines(game, tr)
    again = "result.next_game" if not series_over(game) else "result.rematch"
    buttons = [
        InlineKeyboardButton(
            tr.t(again), callback_data=callbacks.encode_group(game.game_id, "new")
        ),
        InlineKeyboardButton(
            tr.t("result.new_lobby"), callback_data=callbacks.encode_group(game.game_id, "lobby")
        ),
    ]
    return Rendered("\n".join(lines), markup(pack(buttons)))


def hand_result(game: ChatGame, seat: int, tr: Translator) -> Rendered:
    """One line in the player's private chat instead of the hand."""
    group = place_title(game, tr)
    lost = losers(game)
    if not lost:
        return Rendered(tr.t("hand.result_draw", group=group))
    if seat in lost:
        return Rendered(tr.t("hand.result_durak", group=group))
    order = [s for s in game.final_order if s not in lost]
    place = order.index(seat) + 1 if seat in order else len(order)
    names = seat_names(game.seats, tr)
    durak = Html(", ".join(names[s] for s in lost))
    return Rendered(
        tr.t("hand.result_place", group=group, place=place, count=len(game.seats), durak=durak)
    )
