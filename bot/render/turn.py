"""Whose move it is, said the same way in the group and in a hand: from
``engine.must_act`` (public: it never names who could throw in), with the time left."""

from __future__ import annotations

from collections.abc import Sequence

from bot.render.common import seconds_left
from engine import MustAct
from locales import Html, Translator


def clock(tr: Translator, deadline: float | None, now: float | None) -> str:
    left = seconds_left(deadline, now)
    return "" if left is None else " " + tr.t("turn.time_left", seconds=left)


def turn_line(turn: MustAct, names: Sequence[str], tr: Translator, me: int | None = None) -> Html:
    """``➡️ Bea to beat or take``; ``➡️ Attackers may throw in`` during a throw-in window."""
    if turn.kind == "lead" and turn.player is not None:
        if turn.player == me:
            return tr.t("hand.prompt_lead")
        return tr.t("table.turn_lead", name=names[turn.player])
    if turn.kind == "defend" and turn.player is not None:
        if turn.player == me:
            return tr.t("hand.prompt_defend")
        return tr.t("table.turn_defend", name=names[turn.player])
    if turn.kind == "throw_in":
        return tr.t("table.turn_throw_in")
    return Html("")
