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
    Passed,
    PickedUp,
    PlayerOut,
    Swapped,
    Took,
    Transferred,
)
from locales import Html, Translator

MAX_EVENTS = 14
"""A bout's line is cut (oldest first) beyond this many events."""
TABLE_EVENTS = 2
"""The group table shows this bout's latest few moves (the cards are on the table)."""
MEANWHILE_EVENTS = 3
"""A hand's "Meanwhile" line: at most this many moves since the player's own."""
MEANWHILE_STEPS = 60
"""How far back a hand looks for its player's last move."""
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


def own_line(event: Event, names: Sequence[str], tr: Translator) -> Html | None:
    """``event`` as said to the player who made it ("you beat 6♥️ with 7♥️")."""
    if isinstance(event, Attacked):
        return tr.t("you.attacked", cards=faces.cards(tr, event.cards))
    if isinstance(event, Beaten):
        attack, card = faces.card(tr, event.attack), faces.card(tr, event.card)
        return tr.t("you.beaten", attack=attack, card=card)
    if isinstance(event, Transferred):
        card = faces.card(tr, event.card)
        return tr.t("you.transferred", card=card, target=names[event.to])
    if isinstance(event, Took):
        return tr.t("you.took")
    if isinstance(event, Passed):
        return tr.t("you.passed")
    if isinstance(event, Swapped):
        gave, got = faces.card(tr, event.gave), faces.card(tr, event.got)
        return tr.t("you.swapped", gave=gave, got=got)
    if isinstance(event, PickedUp):
        return tr.t("you.picked_up", cards=faces.cards(tr, event.cards))
    if isinstance(event, PlayerOut):
        return tr.t("you.out")
    return None


MOVES = (Attacked, Beaten, Transferred, Took, Passed, Swapped)
"""The events a player's own tap makes."""


def mover(event: Event) -> int | None:
    """Who made ``event`` by a move of theirs (None: the game did it)."""
    return event.player if isinstance(event, MOVES) else None


def line_for(event: Event, names: Sequence[str], tr: Translator, me: int | None) -> Html | None:
    """``event`` for a reader: in the second person when it is ``me``'s own move."""
    if me is not None and getattr(event, "player", None) == me:
        return own_line(event, names, tr)
    return event_line(event, names, tr)


def seen_steps(state: State, viewer: int | None, most: int) -> list[tuple[int, list[Event]]]:
    """(step, its events) of the last ``most`` steps, newest first, as ``viewer`` may see
    them: nobody's pass but the viewer's own (``engine.view``)."""
    out: list[tuple[int, list[Event]]] = []
    node, step = state.history, state.step
    while node is not None and len(out) < most:
        node, events = node
        kept = [e for e in events if not isinstance(e, Passed) or e.player == viewer]
        out.append((step, kept))
        step -= 1
    return out


def meanwhile(
    state: State, me: int, names: Sequence[str], tr: Translator, auto_steps: Collection[int]
) -> Html | None:
    """What happened since ``me``'s own last move (moves the bot made for them are
    told too, marked ⏱): the latest few, newest last; None if nothing."""
    parts: list[str] = []
    for step, events in seen_steps(state, me, MEANWHILE_STEPS):
        if any(mover(e) == me for e in events) and step not in auto_steps:
            break
        lines = []
        for event in _without_redundant_takes(events):
            line = line_for(event, names, tr, me)
            if line is not None:
                lines.append(AUTO + line if step in auto_steps else line)
        parts = lines + parts
    if not parts:
        return None
    if len(parts) > MEANWHILE_EVENTS:
        parts = ["…", *parts[-MEANWHILE_EVENTS:]]
    return Html(" · ".join(parts))


def _without_redundant_takes(events: Sequence[Event]) -> list[Event]:
    """A take followed by its pick-up in the same step says it once: the pick-up."""
    picked = {e.player for e in events if isinstance(e, PickedUp)}
    return [e for e in events if not (isinstance(e, Took) and e.player in picked)]


TOLD = (*MOVES, PickedUp, Discarded, PlayerOut)
"""The events a log tells (a pass only to its passer)."""


def latest(state: State, viewer: int | None) -> Event | None:
    """The latest event a reader would be told of (the viewer's own passes included)."""
    for _, events in seen_steps(state, viewer, MEANWHILE_STEPS):
        for event in reversed(events):
            if isinstance(event, TOLD):
                return event
    return None


def own_move(state: State, me: int, names: Sequence[str], tr: Translator) -> Html | None:
    """``me``'s move of the latest step, in the second person (a tap's answer)."""
    for event in state.events:
        if mover(event) == me:
            return own_line(event, names, tr)
    return None


def bout_ending(
    events: Sequence[tuple[int, Event]], names: Sequence[str], tr: Translator
) -> Html | None:
    """The previous bout in one line: how it ended (beaten off, or who picked up
    which cards; who ran out shows in the seats)."""
    parts = [
        line
        for _, event in events
        if isinstance(event, (Discarded, PickedUp))
        and (line := event_line(event, names, tr)) is not None
    ]
    return Html(" · ".join(parts)) if parts else None


def coalesce(
    events: Sequence[tuple[int, Event]],
    names: Sequence[str],
    tr: Translator,
    auto_steps: Collection[int] = (),
    most: int = MAX_EVENTS,
) -> Html | None:
    """One line: the events in order, ``;``-separated, automatic ones marked; only the
    latest ``most`` of them, after "…"."""
    parts: list[str] = []
    for auto, event in _joined_attacks(events, auto_steps):
        line = event_line(event, names, tr)
        if line is not None:
            parts.append(AUTO + line if auto else line)
    if not parts:
        return None
    if len(parts) > most:
        parts = ["…", *parts[-most:]]
    return Html("; ".join(parts))


def _joined_attacks(
    events: Sequence[tuple[int, Event]], auto_steps: Collection[int]
) -> list[tuple[bool, Event]]:
    """(made by the bot, event), one player's attacks in a row said once ("Ann attacks
    with 8♥️ 8♣"): passes in between are nobody's business, so they do not split."""
    out: list[tuple[bool, Event]] = []
    for step, event in events:
        if isinstance(event, Passed):
            continue
        auto = step in auto_steps
        if out and isinstance(event, Attacked):
            last_auto, last = out[-1]
            if isinstance(last, Attacked) and last.player == event.player and last_auto == auto:
                out[-1] = (auto, Attacked(event.player, (*last.cards, *event.cards)))
                continue
        out.append((auto, event))
    return out
