"""The group message of a running game: trump, stock, seats, the cards on the table,
whose move it is (and for how long) and every move of this bout and the previous one."""

from __future__ import annotations

import html
import re
from collections.abc import Sequence

from telegram import InlineKeyboardButton

from bot.domain.records import ChatGame
from bot.render import faces
from bot.render.common import TEAM_NAMES, Rendered, markup, seat_name, with_clock
from bot.render.log import bouts, coalesce, event_line
from bot.render.results import results_message
from bot.render.turn import clock, turn_line
from engine import Card, PublicView, State, public_view
from locales import Html, Translator

_TAGS = re.compile(r"<[^<>]*>")


def pairs_text(pairs: Sequence[tuple[Card, Card | None]], tr: Translator) -> str:
    """The cards on the table: each attack card over its beating card (or …)."""
    return "  ".join(
        f"{faces.card(tr, a)}/{faces.card(tr, d) if d is not None else '…'}" for a, d in pairs
    )


def latest_change(game: ChatGame, tr: Translator) -> str:
    """The latest move on the table as plain text (for a toast), or "" if none."""
    if game.state is None:
        return ""
    v = public_view(game.engine_state())
    names = [seat_name(s, tr) for s in game.seats]
    for event in reversed(v.history):
        line = event_line(event, names, tr)
        if line is not None:
            return html.unescape(_TAGS.sub("", line))
    return ""


def moved_on_change(game: ChatGame | None, tr: Translator) -> str:
    """The ``change`` of the "moved on" toast: the latest move, or "…" when none shows."""
    return (latest_change(game, tr) if game is not None else "") or "…"


def table_message(
    game: ChatGame, tr: Translator, bot_username: str, now: float | None = None
) -> Rendered:
    finished = game.phase == "finished"
    if finished and game.state is None:
        return results_message(game, tr)
    state = game.engine_state()
    # Only what everyone may know: the public view and the public history.
    v = public_view(state)
    names = [seat_name(s, tr) for s in game.seats]
    lines: list[str] = [_title(game, tr)]
    lines.append(
        tr.t(
            "table.status",
            trump=faces.card(tr, v.trump_card),
            stock=v.stock_count,
            discard=v.discard_count,
        )
    )
    lines += _seat_lines(game, v, names, tr)
    lines.append(
        tr.t("table.cards", pairs=pairs_text(v.table, tr)) if v.table else tr.t("table.empty")
    )
    ticking = "" if finished else clock(tr, game.turn_deadline, now)
    turn = turn_line(v.must_act, names, tr)
    if turn:
        lines.append(turn + ticking)
    lines += _bout_lines(game, state, names, tr)
    if finished:
        return with_clock(lines, "", None)
    link = InlineKeyboardButton(tr.t("table.my_cards"), url=f"https://t.me/{bot_username}")
    return with_clock(lines, ticking if turn else "", markup([[link]]))


def _title(game: ChatGame, tr: Translator) -> str:
    if game.phase == "finished":
        # The result comes as a new (notifying) message; this one keeps the last bouts.
        return tr.t("table.final")
    if game.rules.series_length == 1:
        return tr.t("table.title")
    return tr.t("table.title_series", game=game.games_played + 1, total=game.rules.series_length)


def _seat_lines(game: ChatGame, v: PublicView, names: list[Html], tr: Translator) -> list[str]:
    """Each seat with its role and card count (and team)."""
    lines: list[str] = []
    for i, seat in enumerate(game.seats):
        if i in v.out:
            role = tr.t("role.out")
        elif i == v.defender:
            role = tr.n("role.defender", v.hand_sizes[i])
        elif i == v.attacker:
            role = tr.n("role.attacker", v.hand_sizes[i])
        else:
            role = tr.n("role.player", v.hand_sizes[i])
        marker = "🤖 " if seat.ai is not None and seat.user_id is not None else ""
        team = v.team(i)
        if team is not None:
            role = tr.t("table.team", role=role, team=TEAM_NAMES[team])
        lines.append(f"{marker}{names[i]} — {role}")
    return lines


def _bout_lines(game: ChatGame, state: State, names: list[Html], tr: Translator) -> list[str]:
    """Every move of the previous bout and of this one."""
    log = bouts(state)
    auto = set(game.auto_steps)
    lines: list[str] = []
    previous = coalesce(log.previous, names, tr, auto)
    if previous:
        lines.append(tr.t("table.previous", events=previous))
    current = coalesce(log.current, names, tr, auto)
    if current:
        lines.append(tr.t("table.bout", events=current))
    return lines
