"""The public log of the table, read from the state's own history: the bout being
played and the whole previous one, so no move is lost between two group edits
(an edit comes at most every few seconds; a bout takes longer). Moves the bot made
for a player whose time ran out are marked ⏱. Passes are not shown: only a player
holding a card of a table rank can pass, so a pass would show that card (``engine.view``)."""

from __future__ import annotations

from collections.abc import Collection, Sequence
from dataclasses import dataclass

from bot.render import faces
from engine import State
from engine.events import (
    Attacked,
    Beaten,
    BoutStarted,
    Discarded,
    Event,
    PickedUp,
    PlayerOut,
    Swapped,
    Took,
    Transferred,
)
from locales import Html, Translator

MAX_EVENTS = 14
"""A bout's line is cut (oldest first) beyond this many events."""
AUTO = "⏱ "


@dataclass(frozen=True)
class Bouts:
    previous: list[tuple[int, Event]]
    current: list[tuple[int, Event]]


def bouts(state: State) -> Bouts:
    """(step, event) of the previous bout and of the current one."""
    steps: list[tuple[Event, ...]] = []
    node = state.history
    # Only the last two bouts are needed: stop walking once two starts were seen.
    starts = 0
    while node is not None and starts < 2:
        node, step_events = node
        steps.append(step_events)
        starts += sum(isinstance(e, BoutStarted) for e in step_events)
    first_step = state.step - len(steps) + 1
    flat = [(first_step + i, e) for i, events in enumerate(reversed(steps)) for e in events]
    marks = [i for i, (_, e) in enumerate(flat) if isinstance(e, BoutStarted)]
    if not marks:
        return Bouts([], flat)
    last = marks[-1]
    before = marks[-2] + 1 if len(marks) > 1 else 0
    return Bouts(flat[before:last] if len(marks) > 1 else [], flat[last + 1 :])


def event_line(event: Event, names: Sequence[str], tr: Translator) -> Html | None:
    if isinstance(event, Attacked):
        return tr.t("event.attacked", name=names[event.player], cards=faces.cards(tr, event.cards))
    if isinstance(event, Beaten):
        return tr.t(
            "event.beaten",
            name=names[event.player],
            attack=faces.card(tr, event.attack),
            card=faces.card(tr, event.card),
        )
    if isinstance(event, Transferred):
        return tr.t(
            "event.transferred",
            name=names[event.player],
            card=faces.card(tr, event.card),
            target=names[event.to],
        )
    if isinstance(event, Took):
        return tr.t("event.took", name=names[event.player])
    if isinstance(event, PickedUp):
        return tr.t(
            "event.picked_up_cards", name=names[event.player], cards=faces.cards(tr, event.cards)
        )
    if isinstance(event, Discarded):
        return tr.n("event.discarded", len(event.cards))
    if isinstance(event, Swapped):
        return tr.t(
            "event.swapped",
            name=names[event.player],
            gave=faces.card(tr, event.gave),
            got=faces.card(tr, event.got),
        )
    if isinstance(event, PlayerOut):
        return tr.t("event.out", name=names[event.player])
    return None


def coalesce(
    events: Sequence[tuple[int, Event]],
    names: Sequence[str],
    tr: Translator,
    auto_steps: Collection[int] = (),
) -> Html | None:
    """One line: the events in order, ``;``-separated, automatic ones marked."""
    parts: list[str] = []
    for step, event in events:
        line = event_line(event, names, tr)
        if line is not None:
            parts.append(AUTO + line if step in auto_steps else line)
    if not parts:
        return None
    if len(parts) > MAX_EVENTS:
        parts = ["…", *parts[-MAX_EVENTS:]]
    return Html("; ".join(parts))
