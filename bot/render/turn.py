"""Whose move it is, said the same way in the group and in a hand: from
``engine.must_act`` (public: it never names who could throw in), with the time left."""

from __future__ import annotations

import math
from collections.abc import Sequence

from bot.render.common import seconds_left
from engine import MustAct
from locales import Html, Translator

EXACT_UP_TO = 20
"""Seconds left at most this many are said exactly ("⏱ up to 15 s")."""
TENS_UP_TO = 50
"""Up to this many, rounded up to ten seconds; beyond it, to whole minutes."""


def clock(tr: Translator, deadline: float | None, now: float | None) -> str:
    """The time left as an upper bound that stays true while the text is read: a
    message's clock never ticks (an edit for a clock alone would cost a message), so it
    says "⏱ up to 2 min" rather than a number of seconds that is soon wrong."""
    left = seconds_left(deadline, now)
    if left is None:
        return ""
    if left > TENS_UP_TO:
        return " " + tr.n("clock.minutes", math.ceil(left / 60))
    shown = left if left <= EXACT_UP_TO else math.ceil(left / 10) * 10
    return " " + tr.t("clock.seconds", seconds=shown)


def exact_clock(tr: Translator, deadline: float | None, now: float | None) -> str:
    """The seconds left, for a message that is new when sent (the reminder)."""
    left = seconds_left(deadline, now)
    return "" if left is None else " " + tr.t("turn.time_left", seconds=left)


def turn_line(
    turn: MustAct,
    names: Sequence[str],
    tr: Translator,
    me: int | None = None,
    *,
    taker: int | None = None,
) -> Html:
    """``➡️ Bea to beat or take``; during a throw-in window ``➡️ Attackers may throw in``,
    or ``➡️ Bea takes · attackers may throw in`` when ``taker`` (the defender) takes."""
    if turn.kind == "lead" and turn.player is not None:
        if turn.player == me:
            return tr.t("hand.prompt_lead")
        return tr.t("table.turn_lead", name=names[turn.player])
    if turn.kind == "defend" and turn.player is not None:
        if turn.player == me:
            return tr.t("hand.prompt_defend")
        return tr.t("table.turn_defend", name=names[turn.player])
    if turn.kind == "throw_in" and taker is not None:
        if taker == me:
            return tr.t("hand.you_take")
        return tr.t("table.turn_taking", name=names[taker])
    if turn.kind == "throw_in":
        return tr.t("table.turn_throw_in")
    if turn.kind == "over":
        return tr.t("table.over")
    return Html("")
