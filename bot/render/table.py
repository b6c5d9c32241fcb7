"""The group message of a running game: trump, stock, seats, the cards on the table,
whose turn it is and the last moves."""

from __future__ import annotations

import html
import re
from collections.abc import Sequence

from telegram import InlineKeyboardButton

from bot.records import ChatGame
from bot.render.common import TEAM_NAMES, Rendered, markup, seat_name
from bot.render.results import results_message
from engine import Card, public_view
from engine.events import (
    Attacked,
    Beaten,
    Discarded,
    Passed,
    PickedUp,
    PlayerOut,
    Swapped,
    Took,
    Transferred,
)
from locales import Html, Translator

_TAGS = re.compile(r"<[^<>]*>")


def pairs_text(pairs: Sequence[tuple[Card, Card | None]], tr: Translator) -> str:
    """The cards on the table: each attack card over its beating card (or …)."""
    return "  ".join(f"{tr.card(a)}/{tr.card(d) if d is not None else '…'}" for a, d in pairs)


def _event_line(event: object, names: list[Html], tr: Translator) -> Html | None:
    if isinstance(event, Attacked):
        return tr.t("event.attacked", name=names[event.player], cards=tr.cards(event.cards))
    if isinstance(event, Beaten):
        return tr.t(
            "event.beaten",
            name=names[event.player],
            attack=tr.card(event.attack),
            card=tr.card(event.card),
        )
    if isinstance(event, Transferred):
        return tr.t(
            "event.transferred",
            name=names[event.player],
            card=tr.card(event.card),
            target=names[event.to],
        )
    if isinstance(event, Took):
        return tr.t("event.took", name=names[event.player])
    if isinstance(event, Passed):
        return tr.t("event.passed", name=names[event.player])
    if isinstance(event, PickedUp):
        return tr.n("event.picked_up", len(event.cards), name=names[event.player])
    if isinstance(event, Discarded):
        return tr.n("event.discarded", len(event.cards))
    if isinstance(event, Swapped):
        return tr.t(
            "event.swapped",
            name=names[event.player],
            gave=tr.card(event.gave),
            got=tr.card(event.got),
        )
    if isinstance(event, PlayerOut):
        return tr.t("event.out", name=names[event.player])
    return None


def latest_change(game: ChatGame, tr: Translator) -> str:
    """The latest move on the table as plain text (for a toast), or "" if none."""
    if game.state is None:
        return ""
    v = public_view(game.engine_state())
    names = [seat_name(s, tr) for s in game.seats]
    for event in reversed(v.history):
        line = _event_line(event, names, tr)
        if line is not None:
            return html.unescape(_TAGS.sub("", line))
    return ""


def table_message(game: ChatGame, tr: Translator, bot_username: str) -> Rendered:
    if game.phase == "finished":
        return results_message(game, tr)
    # Only what everyone may know: the public view has no hand at all.
    v = public_view(game.engine_state())
    names = [seat_name(s, tr) for s in game.seats]
    lines: list[str] = [
        tr.t("table.title")
        if game.rules.series_length == 1
        else tr.t("table.title_series", game=game.games_played + 1, total=game.rules.series_length)
    ]
    lines.append(
        tr.t(
            "table.status",
            trump=tr.card(v.trump_card),
            stock=v.stock_count,
            discard=v.discard_count,
        )
    )
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
    lines.append(
        tr.t("table.cards", pairs=pairs_text(v.table, tr)) if v.table else tr.t("table.empty")
    )
    turn = v.must_act
    if turn.player is not None:
        key = "table.turn_defend" if turn.kind == "defend" else "table.turn_lead"
        lines.append(tr.t(key, name=names[turn.player]))
    elif turn.kind == "throw_in":
        lines.append(tr.t("table.turn_throw_in"))
    last = [ln for e in v.last_events if (ln := _event_line(e, names, tr)) is not None]
    if last:
        lines.append(tr.t("table.last", action=Html("; ".join(last[-3:]))))
    link = InlineKeyboardButton(tr.t("table.my_cards"), url=f"https://t.me/{bot_username}")
    return Rendered("\n".join(lines), markup([[link]]))
