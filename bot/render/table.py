"""The group message of a running game, read at a glance on a phone: whose move it is
first (and a clock that stays true), trump, stock, seats, the cards on the table with
the unbeaten ones named, this bout's latest moves and one line for the previous bout."""

from __future__ import annotations

import html
import re
from collections.abc import Sequence

from telegram import InlineKeyboardButton

from bot.domain import callbacks
from bot.domain.records import ChatGame
from bot.render import faces
from bot.render.common import TEAM_NAMES, Rendered, markup, seat_names, with_clock
from bot.render.log import (
    TABLE_EVENTS,
    bout_ending,
    bouts,
    coalesce,
    latest,
    line_for,
    own_move,
)
from bot.render.results import results_message
from bot.render.turn import clock, turn_line
from engine import Card, PublicView, State, public_view
from locales import Html, Translator

_TAGS = re.compile(r"<[^<>]*>")


def pairs_text(pairs: Sequence[tuple[Card, Card | None]], tr: Translator) -> str:
    """The cards on the table: each beaten card over its beating card (``6♥️/7♥️``),
    then the unbeaten ones after a word that says so (``unbeaten: Q♣ Q♦️``)."""
    beaten = " ".join(f"{faces.card(tr, a)}/{faces.card(tr, d)}" for a, d in pairs if d)
    open_cards = [a for a, d in pairs if d is None]
    unbeaten = tr.t("table.unbeaten", cards=faces.cards(tr, open_cards)) if open_cards else ""
    return " · ".join(part for part in (beaten, unbeaten) if part)


def latest_change(game: ChatGame, tr: Translator, me: int | None = None) -> str:
    """The latest move on the table as plain text (for a toast), or "" if none; said
    to ``me`` in the second person when it was their own move."""
    if game.state is None:
        return ""
    event = latest(game.engine_state(), me)
    line = line_for(event, seat_names(game.seats, tr), tr, me) if event is not None else None
    return html.unescape(_TAGS.sub("", line)) if line is not None else ""


def moved_on_change(game: ChatGame | None, tr: Translator) -> str:
    """The ``change`` of the "moved on" toast: the latest move, or "…" when none shows."""
    return (latest_change(game, tr) if game is not None else "") or "…"


def moved_on_toast(game: ChatGame | None, tr: Translator, me: int | None) -> tuple[str, str]:
    """The "too late" toast's key and ``change`` for the reader at seat ``me``: "already
    done" with their own move when the step that moved on was theirs (even if the game
    went on from it at once: a pick-up, a discard), else the latest change."""
    if game is None or game.state is None:
        return "toast.moved_on", "…"
    own = _own_move_text(game, me, tr) if me is not None else ""
    if own:
        return "toast.moved_on_own", own
    return "toast.moved_on", latest_change(game, tr, me) or "…"


def _own_move_text(game: ChatGame, seat: int, tr: Translator) -> str:
    """``seat``'s move of the latest step, said to them, as plain text ("" if none)."""
    line = own_move(game.engine_state(), seat, seat_names(game.seats, tr), tr)
    return html.unescape(_TAGS.sub("", line)) if line is not None else ""


def own_move_toast(game: ChatGame, seat: int, tr: Translator) -> str:
    """The answer to ``seat``'s accepted tap: their move, said to them ("✓ You take"),
    as plain text; "" if the latest step holds no move of theirs."""
    plain = _own_move_text(game, seat, tr) if game.state is not None else ""
    if not plain:
        return ""
    return html.unescape(_TAGS.sub("", tr.t("toast.your_move", move=plain[:1].upper() + plain[1:])))


def table_message(
    game: ChatGame, tr: Translator, bot_username: str, now: float | None = None
) -> Rendered:
    finished = game.phase == "finished"
    if finished and game.state is None:
        return results_message(game, tr)
    state = game.engine_state()
    # Only what everyone may know: the public view and the public history.
    v = public_view(state)
    names = seat_names(game.seats, tr)
    turn = tr.t("table.over") if finished else _turn(v, names, tr)
    # The clock rides on the title: the turn line then fits one line of a phone.
    ticking = "" if finished or not turn else clock(tr, game.turn_deadline, now)
    lines: list[str] = [_title(game, tr) + ticking]
    if turn:
        lines.append(turn)
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
    lines += _bout_lines(game, state, names, tr)
    if finished:
        return with_clock(lines, "", None)
    row = [InlineKeyboardButton(tr.t("table.my_cards"), url=f"https://t.me/{bot_username}")]
    if any(seat.in_group for seat in game.seats):
        # Someone plays from the group: their hand comes as a message only they see.
        data = callbacks.encode_group(game.game_id, "my_hand")
        row.append(InlineKeyboardButton(tr.t("table.my_hand"), callback_data=data))
    return with_clock(lines, ticking, markup([row]))


def _turn(v: PublicView, names: list[Html], tr: Translator) -> Html:
    """Whose move it is; after a take, that the defender takes (it is news)."""
    taker = v.defender if v.taking and v.must_act.kind == "throw_in" else None
    return turn_line(v.must_act, names, tr, taker=taker)


def _title(game: ChatGame, tr: Translator) -> str:
    if game.phase == "finished":
        # The result comes as a new (notifying) message; this one keeps the last bouts.
        return tr.t("table.final")
    if game.rules.series_length == 1:
        return tr.t("table.title")
    return tr.t("table.title_series", game=game.games_played + 1, total=game.rules.series_length)


def _seat_lines(game: ChatGame, v: PublicView, names: list[Html], tr: Translator) -> list[str]:
    """Each seat in play with its card count and role (and team); the seats that are
    out share one line at the end (six seats must fit a phone's screen)."""
    lines: list[str] = []
    out: list[str] = []
    for i, seat in enumerate(game.seats):
        marker = "🤖 " if seat.ai is not None and seat.user_id is not None else ""
        if i in v.out:
            out.append(f"{marker}{names[i]}")
            continue
        if i == v.defender:
            role = tr.n("role.defender", v.hand_sizes[i])
        elif i == v.attacker:
            role = tr.n("role.attacker", v.hand_sizes[i])
        else:
            role = tr.n("role.player", v.hand_sizes[i])
        team = v.team(i)
        if team is not None:
            role = tr.t("table.team", role=role, team=TEAM_NAMES[team])
        lines.append(f"{marker}{names[i]} — {role}")
    if out:
        lines.append(f"{', '.join(out)} — {tr.t('role.out')}")
    return lines


def _bout_lines(game: ChatGame, state: State, names: list[Html], tr: Translator) -> list[str]:
    """This bout's latest moves, and how the previous bout ended, in one line each."""
    log = bouts(state)
    auto = set(game.auto_steps)
    lines: list[str] = []
    current = coalesce(log.current, names, tr, auto, most=TABLE_EVENTS)
    if current:
        lines.append(tr.t("table.bout", events=current))
    previous = bout_ending(log.previous, names, tr)
    if previous:
        lines.append(tr.t("table.previous", events=previous))
    return lines
