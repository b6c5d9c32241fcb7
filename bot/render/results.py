"""The group message at a game's end: places, the durak, the series so far."""

from __future__ import annotations

from telegram import InlineKeyboardButton

from bot import callbacks
from bot.flow import series_over
from bot.records import ChatGame
from bot.render.common import TEAM_NAMES, Rendered, markup, seat_name
from locales import Html, Translator


def results_message(game: ChatGame, tr: Translator) -> Rendered:
    names = [seat_name(s, tr) for s in game.seats]
    lines: list[str] = [tr.t("result.title")]
    order = [s for s in game.final_order if s != game.final_durak]
    for place, seat in enumerate(order, 1):
        lines.append(f"{place}. {names[seat]}")
    team = game.final_losing_team
    if game.final_durak is None:
        lines.append(tr.t("result.draw"))
    elif team is not None:
        losers = [names[s] for s in range(team, len(game.seats), 2)]
        lines.append(tr.t("result.team_lost", team=TEAM_NAMES[team], names=Html(", ".join(losers))))
    else:
        lines.append(tr.t("result.durak", name=names[game.final_durak]))
    series = game.series
    if game.rules.series_length > 1 and series is not None:
        lines.append(
            tr.t("result.series", game=series.games_played, total=series.rules.series_length)
        )
        ranked = series.standings()
        for seat in ranked:
            lines.append(tr.n("result.series_line", series.durak_counts[seat], name=names[seat]))
        if series.finished:
            winners = [names[s] for s in series.winners()]
            lines.append(tr.t("result.series_winner", names=Html(", ".join(winners))))
    key = "result.next_game" if not series_over(game) else "result.new_game"
    button = InlineKeyboardButton(
        tr.t(key), callback_data=callbacks.encode_group(game.game_id, "new")
    )
    return Rendered("\n".join(lines), markup([[button]]))
