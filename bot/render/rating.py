"""Ratings as people read them: the change under a finished hand, /top's leaderboard and
the rating lines of /stats. Numbers and months in the reader's language (Babel's CLDR
data: "1,512" in English, "1.512" in German, "1 512" in Russian; "December 2026")."""

from __future__ import annotations

from dataclasses import dataclass
from datetime import date

from babel.dates import format_skeleton
from babel.numbers import format_decimal
from telegram import InlineKeyboardButton, InlineKeyboardMarkup, WebAppInfo

from bot.domain import callbacks
from bot.domain.names import short_name
from bot.domain.rating import RatingRecord, ResultLine
from bot.domain.records import LeaderboardLine
from bot.render.common import Rendered, markup
from locales import Html, Translator

MINUS = "\u2212"
"""A real minus sign: a hyphen reads as a dash beside an arrow."""


def number(value: int, tr: Translator) -> str:
    """``value`` with the language's digit grouping."""
    return str(format_decimal(value, locale=tr.lang))


def signed(delta: int, tr: Translator) -> str:
    """A change as people write it: +15, −8, ±0."""
    if delta == 0:
        return "±0"
    return ("+" if delta > 0 else MINUS) + number(abs(delta), tr)


def season_name(season: str, tr: Translator) -> str:
    """A monthly season's id ("2026-12") as its month ("December 2026"); any other
    season id as it is."""
    year, _, month = season.partition("-")
    if not (year.isdigit() and month.isdigit() and 1 <= int(month) <= 12):
        return season
    return str(format_skeleton("yMMMM", date(int(year), int(month), 1), locale=tr.lang))


def provisional(games: int, min_games: int, tr: Translator) -> Html:
    """ " · provisional until 5 games" while a rating rests on too few games, else ""."""
    return Html("" if games >= min_games else " · " + tr.n("rating.provisional", min_games))


def rating_change(line: ResultLine, tr: Translator, min_games: int) -> Html:
    """The line under a finished hand: "📈 Rating 1,512 → 1,527 (+15)"."""
    text = tr.t(
        "rating.change",
        old=number(line.old, tr),
        new=number(line.new, tr),
        delta=signed(line.delta, tr),
    )
    return Html(text + provisional(line.games, min_games, tr))


@dataclass(frozen=True)
class Board:
    """One season's leaderboard, as /top shows it."""

    season: str
    lines: list[LeaderboardLine]
    min_games: int
    limit: int
    overall: bool
    """Over all groups (else one group's)."""


def top_message(board: Board, tr: Translator, *, overall_button: bool = False) -> Rendered:
    """/top: rank, name, rating, games and wins; under a short list, how to get on it.
    ``overall_button``: a button for the board over all groups (a group's /top)."""
    title = "rating.top_title_overall" if board.overall else "rating.top_title"
    out: list[str] = [tr.t(title, season=season_name(board.season, tr))]
    for line in board.lines:
        out.append(
            tr.t(
                "rating.top_row",
                place=line.place,
                name=short_name(line.name),
                rating=number(line.rating, tr),
                games=tr.n("rating.games", line.games),
                wins=tr.n("rating.wins", line.wins),
            )
        )
    if not board.lines:
        out.append(tr.t("rating.top_empty"))
    if len(board.lines) < board.limit:
        out.append("\n" + tr.n("rating.top_minimum", board.min_games))
    rows = []
    if overall_button:
        data = callbacks.encode_top(overall=True)
        rows.append([InlineKeyboardButton(tr.t("rating.button_overall"), callback_data=data)])
    return Rendered("\n".join(out), markup(rows))


def rating_off(tr: Translator) -> Rendered:
    return Rendered(tr.t("rating.top_off"))


def group_rating_line(
    name: str, record: RatingRecord, season: str, tr: Translator, min_games: int
) -> Html:
    """/stats in a group: the asker's rating in this group this month."""
    month, shown = season_name(season, tr), short_name(name)
    if record.games == 0:
        return tr.t("stats.rating_none", name=shown, season=month)
    text = tr.n(
        "stats.rating", record.games, name=shown, season=month, rating=number(record.display, tr)
    )
    return Html(text + provisional(record.games, min_games, tr))


def own_rating_line(record: RatingRecord, season: str, tr: Translator, min_games: int) -> Html:
    """/stats in private: the user's rating over all groups this month."""
    month = season_name(season, tr)
    if record.games == 0:
        return tr.t("stats.rating_mine_none", season=month)
    text = tr.n("stats.rating_mine", record.games, season=month, rating=number(record.display, tr))
    return Html(text + provisional(record.games, min_games, tr))


def with_chart_button(rendered: Rendered, url: str, tr: Translator) -> Rendered:
    """A private reply with a button that opens the rating chart in the Mini App
    (``web_app`` buttons work in private chats only)."""
    rows = [list(row) for row in rendered.markup.inline_keyboard] if rendered.markup else []
    button = InlineKeyboardButton(tr.t("rating.button_chart"), web_app=WebAppInfo(url))
    return Rendered(rendered.text, InlineKeyboardMarkup([*rows, [button]]))
