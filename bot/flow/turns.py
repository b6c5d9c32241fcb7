"""The running game: moves (human and computer), timeouts, leaving, taking a seat back,
and when the next timer is due."""

from __future__ import annotations

from bot.flow.common import Announcement, Effects, FlowError
from bot.flow.results import finish
from bot.records import ChatGame
from engine import (
    Action,
    Attack,
    IllegalActionError,
    Pass,
    PlayerView,
    State,
    Take,
    apply,
    legal_actions,
    must_act,
    view,
    waiting_for,
)

TIMEOUTS_BEFORE_HANDOVER = 3
AUTO_STEPS_KEPT = 40
"""Automatic moves remembered for the log's ⏱ marks (the log shows two bouts at most)."""
THROW_IN_WINDOW = 7.0


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
    """Who can act now (hidden cards decide it): for timers, never for display."""
    return waiting_for(state)


def _playing(game: ChatGame | None, game_id: str) -> tuple[ChatGame, State]:
    if game is None or game.game_id != game_id or game.phase != "playing":
        raise FlowError("toast.stale")
    return game, game.engine_state()


def play(
    game: ChatGame | None,
    game_id: str,
    user_id: int,
    step: int,
    action: Action,
    now: float,
    *,
    ai_delay: float,
    turn_timeout: float,
    notify_quiet: float,
    throw_in_window: float = THROW_IN_WINDOW,
) -> tuple[ChatGame, Effects]:
    """A human's move from a hand button."""
    game, state, seat = _seat_in_game(game, game_id, user_id)
    if game.seats[seat].computer:
        raise FlowError("toast.not_in_game")
    if step != state.step:
        raise FlowError("toast.stale")
    try:
        after = apply(state, seat, action)
    except IllegalActionError:
        raise FlowError("toast.illegal") from None
    game.seats[seat].timeouts = 0
    game.seats[seat].last_active = now
    effects = Effects()
    _advance(
        game, state, after, now, effects, ai_delay, turn_timeout, notify_quiet, throw_in_window
    )
    if not after.over and not legal_actions(after, seat):
        effects.calm.add(user_id)
    return game, effects


def ai_move(
    game: ChatGame | None,
    game_id: str,
    seat: int,
    step: int,
    action: Action,
    now: float,
    *,
    ai_delay: float,
    turn_timeout: float,
    notify_quiet: float,
    throw_in_window: float = THROW_IN_WINDOW,
) -> tuple[ChatGame, Effects]:
    game, state = _playing(game, game_id)
    if step != state.step or not game.seats[seat].computer:
        raise FlowError("toast.stale")
    after = apply(state, seat, action)
    effects = Effects()
    _advance(
        game, state, after, now, effects, ai_delay, turn_timeout, notify_quiet, throw_in_window
    )
    return game, effects


def ai_turn(game: ChatGame, now: float) -> tuple[int, PlayerView] | None:
    """The computer seat that should move now and its view, if one is due."""
    if game.phase != "playing" or game.ai_due is None or game.ai_due > now + 1e-6:
        return None
    state = game.engine_state()
    for seat in waiting(state):
        if game.seats[seat].computer:
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
    game: ChatGame | None,
    now: float,
    *,
    ai_delay: float,
    turn_timeout: float,
    notify_quiet: float,
    throw_in_window: float = THROW_IN_WINDOW,
) -> tuple[ChatGame | None, Effects]:
    """Move for every human the game waited on past the deadline (a throw-in window
    closing passes for the attackers who let it pass)."""
    if game is None or game.phase != "playing" or game.turn_deadline is None:
        return None, Effects()
    if game.turn_deadline > now + 1e-6:
        return None, Effects()
    state = game.engine_state()
    start_state = state
    effects = Effects()
    must = required(state)
    for seat in waiting(state):
        info = game.seats[seat]
        if not info.human:
            continue
        action = timeout_action(view(state, seat))
        if action is None:
            continue
        try:
            state = apply(state, seat, action)
        except IllegalActionError:
            continue
        game.auto_steps = [*game.auto_steps, state.step][-AUTO_STEPS_KEPT:]
        if seat in must:
            info.timeouts += 1
            if info.timeouts >= TIMEOUTS_BEFORE_HANDOVER:
                info.ai = "normal"
                effects.announce.append(Announcement("group.handed_to_ai", {"name": info.name}))
        if state.over:
            break
    if state is start_state:
        schedule(game, state, now, ai_delay, turn_timeout, throw_in_window)
        return game, effects
    _advance(
        game, start_state, state, now, effects, ai_delay, turn_timeout, notify_quiet,
        throw_in_window,
    )  # fmt: skip
    return game, effects


def _seat_in_game(game: ChatGame | None, game_id: str, user_id: int) -> tuple[ChatGame, State, int]:
    """The running game and ``user_id``'s seat in it; a toast if they have none."""
    game, state = _playing(game, game_id)
    seat = game.seat_of(user_id)
    if seat is None:
        raise FlowError("toast.not_in_game")
    return game, state, seat


def take_back_seat(
    game: ChatGame | None,
    game_id: str,
    user_id: int,
    now: float,
    *,
    ai_delay: float,
    turn_timeout: float,
) -> tuple[ChatGame, Effects]:
    """A player whose seat went to the computer after missed moves plays it again."""
    game, state, seat = _seat_in_game(game, game_id, user_id)
    info = game.seats[seat]
    if info.left or info.ai is None:
        raise FlowError("toast.stale")  # they left for good, or already play it
    info.ai = None
    info.timeouts = 0
    info.last_active = now
    effects = Effects()
    effects.announce.append(Announcement("group.player_back", {"name": info.name}))
    schedule(game, state, now, ai_delay, turn_timeout)
    return game, effects


def leave_game(
    game: ChatGame | None,
    game_id: str,
    user_id: int,
    now: float,
    *,
    ai_delay: float,
    turn_timeout: float,
) -> tuple[ChatGame, Effects]:
    """The leaver is this game's durak; a computer plays the seat out."""
    game, state, seat = _seat_in_game(game, game_id, user_id)
    info = game.seats[seat]
    info.left = True
    info.ai = "normal"
    if game.forced_durak is None:
        game.forced_durak = seat
    effects = Effects()
    effects.announce.append(Announcement("group.player_left", {"name": info.name}))
    active_humans = [s for s in game.seats if s.human]
    had_computers = any(s.user_id is None for s in game.seats)
    if not active_humans or (len(active_humans) == 1 and not had_computers):
        finish(game, state, effects, early=True, now=now)
        return game, effects
    schedule(game, state, now, ai_delay, turn_timeout)
    return game, effects


def _advance(
    game: ChatGame,
    before: State,
    after: State,
    now: float,
    effects: Effects,
    ai_delay: float,
    turn_timeout: float,
    notify_quiet: float,
    throw_in_window: float = THROW_IN_WINDOW,
) -> None:
    game.state = after.to_dict()
    if after.over:
        finish(game, after, effects, early=False, now=now)
        return
    newly = required(after) - required(before)
    for seat in newly:
        info = game.seats[seat]
        if info.human and info.user_id is not None and now - info.last_active > notify_quiet:
            effects.notify.add(info.user_id)
    schedule(game, after, now, ai_delay, turn_timeout, throw_in_window)


def schedule(
    game: ChatGame,
    state: State,
    now: float,
    ai_delay: float,
    turn_timeout: float,
    throw_in_window: float = THROW_IN_WINDOW,
) -> None:
    """Set the turn deadline (a human is waited on) and when a computer seat moves.

    Once the defender is done (every card beaten, or taking) only throw-ins are left:
    the attackers who could add a card get a short window, not a whole turn, so one
    inattentive player never stalls the table (and the pause reveals little)."""
    if state.over or game.phase != "playing":
        game.turn_deadline = game.ai_due = None
        return
    seats = waiting(state)
    if state.step != game.last_seen_step:
        game.last_seen_step = state.step
        human = any(game.seats[s].human for s in seats)
        window = turn_timeout
        if must_act(state).kind == "throw_in":
            window = min(throw_in_window, turn_timeout)
        game.turn_deadline = now + window if human else None
    if any(game.seats[s].computer for s in seats):
        if game.ai_due is None or game.ai_due <= now:
            game.ai_due = now + ai_delay
    else:
        game.ai_due = None


def next_due(game: ChatGame) -> float | None:
    dues = [d for d in (game.turn_deadline, game.ai_due) if d is not None]
    return min(dues) if dues else None
