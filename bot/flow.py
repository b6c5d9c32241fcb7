"""The game service: lobby, moves, timeouts, leaving, computer turns, series.

No Telegram here and no Redis: every function takes a ``Table`` (a fresh copy the
caller may change) and returns what changed, so the storage layer can apply it in
one transaction and the sender can show it. A refused operation raises
``FlowError`` with a catalogue key for the toast.
"""

from __future__ import annotations

import hashlib
from dataclasses import dataclass, field
from typing import Any

from bot.records import AiLevel, Seat, Table
from bot.storage import StatDelta
from engine import (
    Action,
    Attack,
    IllegalActionError,
    Pass,
    PlayerView,
    Rules,
    State,
    Take,
    apply,
    legal_actions,
    new_game,
    result,
    view,
    waiting_for,
)

MAX_SEATS = 6
TIMEOUTS_BEFORE_HANDOVER = 3


class FlowError(Exception):
    """A refused operation; ``key`` names the catalogue text of the toast."""

    def __init__(self, key: str, **kwargs: Any) -> None:
        super().__init__(key)
        self.key = key
        self.kwargs = kwargs


@dataclass(frozen=True)
class Person:
    user_id: int
    name: str
    lang: str = "en"


@dataclass
class Announcement:
    key: str
    kwargs: dict[str, Any] = field(default_factory=dict)


@dataclass
class Effects:
    """What the sender should do after a change was stored."""

    notify: set[int] = field(default_factory=set)
    """Users who newly must act: their hand is re-sent as a new (notifying) message."""
    calm: set[int] = field(default_factory=set)
    """Users whose hand may be refreshed a little later: they just moved and have
    nothing to do now, so the edit can merge with the next one."""
    announce: list[Announcement] = field(default_factory=list)
    stats: list[StatDelta] = field(default_factory=list)
    started: bool = False
    ended: bool = False


def game_seed(game_id: str, salt: int) -> int:
    digest = hashlib.sha256(f"{game_id}:{salt}".encode()).digest()
    return int.from_bytes(digest[:8], "big")


# --- lobby ------------------------------------------------------------------------------


def new_lobby(
    chat_id: int, title: str, creator: Person, game_id: str, rules: Rules | None = None
) -> Table:
    return Table(
        game_id=game_id,
        chat_id=chat_id,
        chat_title=title,
        creator_id=creator.user_id,
        rules=rules or Rules(),
        seats=[Seat(user_id=creator.user_id, name=creator.name, lang=creator.lang)],
    )


def _lobby(table: Table | None, game_id: str) -> Table:
    if table is None or table.game_id != game_id:
        raise FlowError("toast.stale")
    if table.phase != "lobby":
        raise FlowError("toast.lobby_closed")
    return table


def _seats_changed(table: Table) -> None:
    table.series_played = 0
    table.series_durak = []


def join(table: Table | None, game_id: str, person: Person) -> Table:
    table = _lobby(table, game_id)
    if table.seat_of(person.user_id) is not None:
        raise FlowError("toast.already_joined")
    if len(table.seats) >= MAX_SEATS:
        raise FlowError("toast.table_full")
    table.seats.append(Seat(user_id=person.user_id, name=person.name, lang=person.lang))
    _seats_changed(table)
    return table


def leave_lobby(table: Table | None, game_id: str, user_id: int) -> Table:
    table = _lobby(table, game_id)
    seat = table.seat_of(user_id)
    if seat is None:
        raise FlowError("toast.not_joined")
    del table.seats[seat]
    _seats_changed(table)
    return table


def add_ai(table: Table | None, game_id: str, level: AiLevel, name: str) -> Table:
    table = _lobby(table, game_id)
    if len(table.seats) >= MAX_SEATS:
        raise FlowError("toast.table_full")
    table.seats.append(Seat(name=name, ai=level))
    _seats_changed(table)
    return table


def remove_ai(table: Table | None, game_id: str) -> Table:
    table = _lobby(table, game_id)
    for i in range(len(table.seats) - 1, -1, -1):
        if table.seats[i].user_id is None:
            del table.seats[i]
            _seats_changed(table)
            return table
    raise FlowError("toast.no_ai")


_CYCLES: dict[str, tuple[str, tuple[Any, ...]]] = {
    "deck": ("deck_size", (24, 36, 52)),
    "throw_in": ("throw_in", ("all", "neighbours")),
    "transfer": ("variant", ("podkidnoy", "perevodnoy")),
    "series": ("series_length", (1, 3, 5, 10)),
}


def cycle_option(table: Table | None, game_id: str, option: str) -> Table:
    """Move one rule option to its next value."""
    table = _lobby(table, game_id)
    name, values = _CYCLES[option]
    current = getattr(table.rules, name)
    following = values[(values.index(current) + 1) % len(values)]
    table.rules = Rules.parse({**table.rules.model_dump(), name: following})
    _seats_changed(table)
    return table


def may_manage(table: Table, user_id: int, is_admin: bool) -> bool:
    return is_admin or table.creator_id == user_id


def start(
    table: Table | None,
    game_id: str,
    now: float,
    unreachable: list[str],
    ai_delay: float,
    turn_timeout: float,
) -> tuple[Table, Effects]:
    """Deal the first (or next) game of the series."""
    table = _lobby(table, game_id)
    if len(table.seats) < 2:
        raise FlowError("toast.need_two")
    if len(table.seats) > table.rules.max_players:
        raise FlowError(
            "toast.too_many_for_deck", deck=table.rules.deck_size, count=table.rules.max_players
        )
    if unreachable:
        raise FlowError("toast.waiting_dm")
    first = table.series_played == 0
    if first:
        table.series_durak = [0] * len(table.seats)
        table.dealer = 0
    state = new_game(
        table.rules,
        len(table.seats),
        seed=game_seed(table.game_id, table.series_played),
        dealer=table.dealer,
        first_game=first,
    )
    table.phase = "playing"
    table.state = state.to_dict()
    # The lobby message becomes the table: one message per game, edited in place.
    table.table_message_id = table.lobby_message_id
    table.forced_durak = None
    table.final_order = []
    table.final_durak = None
    table.ended_early = False
    for seat in table.seats:
        seat.timeouts = 0
        seat.last_active = now
        seat.hand_message_id = None
    effects = Effects(started=True)
    _schedule(table, state, now, ai_delay, turn_timeout)
    return table, effects


def cancel(table: Table | None, game_id: str) -> Table:
    table = _lobby(table, game_id)
    table.phase = "cancelled"
    return table


def next_game(table: Table | None, game_id: str, new_game_id: str) -> Table:
    """A new lobby after a finished game: same seats and rules, series carried on."""
    if table is None or table.game_id != game_id:
        raise FlowError("toast.stale")
    if table.phase != "finished":
        raise FlowError("toast.game_running")
    seats = [
        Seat(user_id=s.user_id, name=s.name, lang=s.lang, ai=None if s.user_id else s.ai)
        for s in table.seats
        if not s.left
    ]
    series_over = table.series_played >= table.rules.series_length or len(seats) != len(table.seats)
    dealer = table.final_durak if table.final_durak is not None else 0
    return table.model_copy(
        update={
            "game_id": new_game_id,
            "phase": "lobby",
            "seats": seats,
            "state": None,
            "series_played": 0 if series_over else table.series_played,
            "series_durak": [] if series_over else table.series_durak,
            "dealer": 0 if series_over else dealer,
            "table_message_id": None,
            "lobby_message_id": None,
            "turn_deadline": None,
            "ai_due": None,
            "final_order": [],
            "final_durak": None,
            "forced_durak": None,
            "ended_early": False,
        }
    )


# --- playing ------------------------------------------------------------------------------


def required(state: State) -> set[int]:
    """Seats that must move for the game to go on: the leader, or the defender."""
    if state.over:
        return set()
    if not state.attack:
        return {state.attacker}
    if not state.taking and None in state.defense:
        return {state.defender}
    return set()


def waiting(state: State) -> tuple[int, ...]:
    # The engine's server-side list (it reads hands): views now carry the public one.
    return waiting_for(state)


def _playing(table: Table | None, game_id: str) -> tuple[Table, State]:
    if table is None or table.game_id != game_id or table.phase != "playing":
        raise FlowError("toast.stale")
    return table, table.engine_state()


def play(
    table: Table | None,
    game_id: str,
    user_id: int,
    step: int,
    action: Action,
    now: float,
    *,
    ai_delay: float,
    turn_timeout: float,
    notify_quiet: float,
) -> tuple[Table, Effects]:
    """A human's move from a hand button."""
    table, state, seat = _seat_in_game(table, game_id, user_id)
    if table.seats[seat].computer:
        raise FlowError("toast.not_in_game")
    if step != state.step:
        raise FlowError("toast.stale")
    try:
        after = apply(state, seat, action)
    except IllegalActionError:
        raise FlowError("toast.illegal") from None
    table.seats[seat].timeouts = 0
    table.seats[seat].last_active = now
    effects = Effects()
    _advance(table, state, after, now, effects, ai_delay, turn_timeout, notify_quiet)
    if not after.over and not legal_actions(after, seat):
        effects.calm.add(user_id)
    return table, effects


def ai_move(
    table: Table | None,
    game_id: str,
    seat: int,
    step: int,
    action: Action,
    now: float,
    *,
    ai_delay: float,
    turn_timeout: float,
    notify_quiet: float,
) -> tuple[Table, Effects]:
    table, state = _playing(table, game_id)
    if step != state.step or not table.seats[seat].computer:
        raise FlowError("toast.stale")
    after = apply(state, seat, action)
    effects = Effects()
    _advance(table, state, after, now, effects, ai_delay, turn_timeout, notify_quiet)
    return table, effects


def ai_turn(table: Table, now: float) -> tuple[int, PlayerView] | None:
    """The computer seat that should move now and its view, if one is due."""
    if table.phase != "playing" or table.ai_due is None or table.ai_due > now + 1e-6:
        return None
    state = table.engine_state()
    for seat in waiting(state):
        if table.seats[seat].computer:
            return seat, view(state, seat)
    return None


def timeout_action(v: PlayerView) -> Action | None:
    """What the bot does for a player who let the clock run out."""
    legal = v.legal_actions
    if not legal:
        return None
    if v.player == v.defender and v.table and Take() in legal:
        return Take()
    if not v.table:
        singles = {a.cards[0]: a for a in legal if isinstance(a, Attack) and len(a.cards) == 1}
        for card in v.hand:
            if card in singles:
                return singles[card]
    if Pass() in legal:
        return Pass()
    return None


def on_timeout(
    table: Table | None,
    now: float,
    *,
    ai_delay: float,
    turn_timeout: float,
    notify_quiet: float,
) -> tuple[Table | None, Effects]:
    """Move for every human the game waited on past the deadline."""
    if table is None or table.phase != "playing" or table.turn_deadline is None:
        return None, Effects()
    if table.turn_deadline > now + 1e-6:
        return None, Effects()
    state = table.engine_state()
    start_state = state
    effects = Effects()
    must = required(state)
    for seat in waiting(state):
        info = table.seats[seat]
        if not info.human:
            continue
        action = timeout_action(view(state, seat))
        if action is None:
            continue
        try:
            state = apply(state, seat, action)
        except IllegalActionError:
            continue
        if seat in must:
            info.timeouts += 1
            if info.timeouts >= TIMEOUTS_BEFORE_HANDOVER:
                info.ai = "normal"
                effects.announce.append(Announcement("group.handed_to_ai", {"name": info.name}))
        if state.over:
            break
    if state is start_state:
        _schedule(table, state, now, ai_delay, turn_timeout)
        return table, effects
    _advance(table, start_state, state, now, effects, ai_delay, turn_timeout, notify_quiet)
    return table, effects


def _seat_in_game(table: Table | None, game_id: str, user_id: int) -> tuple[Table, State, int]:
    """The running game and ``user_id``'s seat in it; a toast if they have none."""
    table, state = _playing(table, game_id)
    seat = table.seat_of(user_id)
    if seat is None:
        raise FlowError("toast.not_in_game")
    return table, state, seat


def take_back_seat(
    table: Table | None,
    game_id: str,
    user_id: int,
    now: float,
    *,
    ai_delay: float,
    turn_timeout: float,
) -> tuple[Table, Effects]:
    """A player whose seat went to the computer after missed moves plays it again."""
    table, state, seat = _seat_in_game(table, game_id, user_id)
    info = table.seats[seat]
    if info.left or info.ai is None:
        raise FlowError("toast.stale")  # they left for good, or already play it
    info.ai = None
    info.timeouts = 0
    info.last_active = now
    effects = Effects()
    effects.announce.append(Announcement("group.player_back", {"name": info.name}))
    _schedule(table, state, now, ai_delay, turn_timeout)
    return table, effects


def leave_game(
    table: Table | None,
    game_id: str,
    user_id: int,
    now: float,
    *,
    ai_delay: float,
    turn_timeout: float,
) -> tuple[Table, Effects]:
    """The leaver is this game's durak; a computer plays the seat out."""
    table, state, seat = _seat_in_game(table, game_id, user_id)
    info = table.seats[seat]
    info.left = True
    info.ai = "normal"
    if table.forced_durak is None:
        table.forced_durak = seat
    effects = Effects()
    effects.announce.append(Announcement("group.player_left", {"name": info.name}))
    active_humans = [s for s in table.seats if s.human]
    had_computers = any(s.user_id is None for s in table.seats)
    if not active_humans or (len(active_humans) == 1 and not had_computers):
        _finish(table, state, effects, early=True)
        return table, effects
    _schedule(table, state, now, ai_delay, turn_timeout)
    return table, effects


def _advance(
    table: Table,
    before: State,
    after: State,
    now: float,
    effects: Effects,
    ai_delay: float,
    turn_timeout: float,
    notify_quiet: float,
) -> None:
    table.state = after.to_dict()
    if after.over:
        _finish(table, after, effects, early=False)
        return
    newly = required(after) - required(before)
    for seat in newly:
        info = table.seats[seat]
        if info.human and info.user_id is not None and now - info.last_active > notify_quiet:
            effects.notify.add(info.user_id)
    _schedule(table, after, now, ai_delay, turn_timeout)


def _schedule(table: Table, state: State, now: float, ai_delay: float, turn_timeout: float) -> None:
    if state.over or table.phase != "playing":
        table.turn_deadline = table.ai_due = None
        return
    seats = waiting(state)
    if state.step != table.last_seen_step:
        table.last_seen_step = state.step
        human = any(table.seats[s].human for s in seats)
        table.turn_deadline = now + turn_timeout if human else None
    if any(table.seats[s].computer for s in seats):
        if table.ai_due is None or table.ai_due <= now:
            table.ai_due = now + ai_delay
    else:
        table.ai_due = None


def next_due(table: Table) -> float | None:
    dues = [d for d in (table.turn_deadline, table.ai_due) if d is not None]
    return min(dues) if dues else None


def _finish(table: Table, state: State, effects: Effects, *, early: bool) -> None:
    outcome = result(state)
    order = list(outcome.order) if outcome is not None else list(state.out)
    durak = outcome.durak if outcome is not None else None
    if table.forced_durak is not None:
        durak = table.forced_durak
        order = [s for s in order if s != durak]
        rest = [s for s in range(len(table.seats)) if s not in order and s != durak]
        order = [*order, *rest, durak]
    table.phase = "finished"
    table.final_order = order
    table.final_durak = durak
    table.ended_early = early
    table.turn_deadline = table.ai_due = None
    table.series_played += 1
    if not table.series_durak:
        table.series_durak = [0] * len(table.seats)
    if durak is not None:
        table.series_durak[durak] += 1
    first_out = state.out[0] if state.out and not early else None
    for i, seat in enumerate(table.seats):
        if seat.user_id is None:
            continue
        effects.stats.append(
            StatDelta(seat.user_id, seat.name, durak=int(i == durak), first=int(i == first_out))
        )
    effects.ended = True


def series_over(table: Table) -> bool:
    return table.series_played >= table.rules.series_length
