"""The running game: moves (human and computer), timeouts, leaving, taking a seat back,
and when the next timer is due."""

from __future__ import annotations

from bot.domain.flow.common import (
    Announcement,
    Effects,
    FlowError,
    Moment,
    Outcome,
    Timing,
    table_timing,
)
from bot.domain.flow.results import finish
from bot.domain.records import ChatGame
from engine import (
    Action,
    Attack,
    IllegalActionError,
    MustAct,
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
ACTIVE_THROW_IN_FACTOR = 2.0
"""A throw-in window is this many times as long while someone who may still add a card
acted lately (``acted_lately``): 14 s at the normal pace, the short one 7 s."""
LATELY_WINDOWS = 4.0
""""Lately": within this many (short) throw-in windows, 28 s at the normal pace."""
AUTO_STEPS_KEPT = 40
"""Automatic moves remembered for the log's ⏱ marks (the log shows two bouts at most)."""


def waiting(state: State) -> tuple[int, ...]:
    """Seats the game may wait on now, for scheduling: it uses the hidden hands (who
    holds a card to throw in), so it drives timers and never reaches a message."""
    return waiting_for(state)


def _must_move(state: State) -> set[int]:
    """The seat the game cannot go on without (the leader or the defender), if any."""
    player = must_act(state).player
    return set() if player is None else {player}


def _playing(game: ChatGame | None, game_id: str) -> tuple[ChatGame, State]:
    if game is None or game.game_id != game_id or game.phase != "playing":
        raise FlowError("toast.stale")
    return game, game.engine_state()


def play(
    game: ChatGame | None, moment: Moment, game_id: str, user_id: int, step: int, action: Action
) -> Outcome:
    """A human's move from a hand button made at ``step``."""
    game, state, seat = _seat_in_game(game, game_id, user_id)
    if game.seats[seat].computer:
        raise FlowError("toast.not_in_game")
    # A tap from an older keyboard still counts while its move is legal now: the
    # step only tells a tap that no longer fits (the table moved on) from a wrong one.
    if step > state.step:
        raise FlowError("toast.stale")  # no keyboard of ours shows a step to come
    if step < state.step and action not in legal_actions(state, seat):
        raise FlowError("toast.moved_on")
    try:
        after = apply(state, seat, action)
    except IllegalActionError:
        raise FlowError("toast.illegal") from None
    game.seats[seat].timeouts = 0
    game.seats[seat].last_active = moment.now
    effects = Effects()
    _advance(game, state, after, moment, effects)
    # The tapper's own hand shows their move at once (it is what they look at); the
    # others' hands whose moves stay the same may wait and merge with the next change.
    if not after.over:
        effects.calm.update(_unchanged_hands(game, state, after, skip=seat) - effects.notify)
    return game, effects


def _unchanged_hands(game: ChatGame, before: State, after: State, skip: int) -> set[int]:
    """Humans (but ``skip``) the game does not wait on, whose legal moves stay the same:
    their hand's edit, if any, only tells them what happened and may wait."""
    waited = set(waiting(after))
    return {
        info.user_id
        for s, info in enumerate(game.seats)
        if s != skip
        and s not in waited
        and info.human
        and info.user_id is not None
        and legal_actions(before, s) == legal_actions(after, s)
    }


def ai_move(
    game: ChatGame | None, moment: Moment, game_id: str, seat: int, step: int, action: Action
) -> Outcome:
    """A computer seat's move, chosen from ``step``'s view."""
    game, state = _playing(game, game_id)
    if step != state.step or not game.seats[seat].computer:
        raise FlowError("toast.stale")
    after = apply(state, seat, action)
    effects = Effects()
    _advance(game, state, after, moment, effects)
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


def on_timeout(game: ChatGame | None, moment: Moment) -> Outcome:
    """Move for every human the game waited on past the deadline (a throw-in window
    closing passes for the attackers who let it go by)."""
    if game is None or game.phase != "playing" or game.turn_deadline is None:
        raise FlowError("toast.stale")
    if game.turn_deadline > moment.now + 1e-6:
        raise FlowError("toast.stale")  # a move came first and set a new deadline
    state = game.engine_state()
    start_state = state
    effects = Effects()
    must = _must_move(state)
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
                note = Announcement("group.handed_to_ai", {"name": info.shown_name})
                effects.announce.append(note)
        if state.over:
            break
    if state is start_state:
        schedule(game, state, moment)
        return game, effects
    _advance(game, start_state, state, moment, effects)
    return game, effects


def _seat_in_game(game: ChatGame | None, game_id: str, user_id: int) -> tuple[ChatGame, State, int]:
    """The running game and ``user_id``'s seat in it; a toast if they have none."""
    game, state = _playing(game, game_id)
    seat = game.seat_of(user_id)
    if seat is None:
        raise FlowError("toast.not_in_game")
    return game, state, seat


def take_back_seat(game: ChatGame | None, moment: Moment, game_id: str, user_id: int) -> Outcome:
    """A player whose seat went to the computer after missed moves plays it again."""
    game, state, seat = _seat_in_game(game, game_id, user_id)
    info = game.seats[seat]
    if info.left or info.ai is None:
        raise FlowError("toast.stale")  # they left for good, or already play it
    info.ai = None
    info.timeouts = 0
    info.last_active = moment.now
    effects = Effects()
    effects.announce.append(Announcement("group.player_back", {"name": info.shown_name}))
    schedule(game, state, moment)
    return game, effects


def leave_game(game: ChatGame | None, moment: Moment, game_id: str, user_id: int) -> Outcome:
    """The leaver is this game's durak; a computer plays the seat out."""
    game, state, seat = _seat_in_game(game, game_id, user_id)
    info = game.seats[seat]
    info.left = True
    info.ai = "normal"
    if game.forced_durak is None:
        game.forced_durak = seat
    effects = Effects()
    effects.announce.append(Announcement("group.player_left", {"name": info.shown_name}))
    active_humans = [s for s in game.seats if s.human]
    had_computers = any(s.user_id is None for s in game.seats)
    if not active_humans or (len(active_humans) == 1 and not had_computers):
        finish(game, state, effects, early=True, now=moment.now)
        return game, effects
    schedule(game, state, moment)
    return game, effects


def _advance(game: ChatGame, before: State, after: State, moment: Moment, effects: Effects) -> None:
    game.set_engine_state(after)
    if after.over:
        finish(game, after, effects, early=False, now=moment.now)
        return
    newly = _must_move(after) - _must_move(before)
    for seat in newly:
        info = game.seats[seat]
        quiet = moment.now - info.last_active > moment.timing.notify_quiet
        if info.human and info.user_id is not None and quiet:
            effects.notify.add(info.user_id)
    schedule(game, after, moment)


def wait_window(table: Timing, turn: MustAct, lately: bool = False) -> float:
    """How long a human is waited on for ``turn``, at the table's timing
    (``table_timing``): a whole turn, or a throw-in window. The one place of the throw-in
    policy:

    - the window opens anew whenever anyone acts (every move is a new step), and a
      player's "Done" (a pass) ends it for them;
    - it is the long one (``ACTIVE_THROW_IN_FACTOR``) while someone who may still add a
      card acted ``lately`` (``acted_lately``), so people who take a few seconds to decide
      do not find it closed under them; else the short one (THROW_IN_WINDOW), so a player
      who went away holds a bout no longer than it;
    - it counts from when the hand showing it landed (``bot.app.turn_gate``)."""
    if turn.kind == "throw_in":
        factor = ACTIVE_THROW_IN_FACTOR if lately else 1.0
        return min(table.throw_in_window * factor, table.turn_timeout)
    return table.turn_timeout


def acted_lately(game: ChatGame, table: Timing, seats: tuple[int, ...], now: float) -> bool:
    """Whether a human among ``seats`` moved within ``LATELY_WINDOWS`` throw-in windows."""
    lately = LATELY_WINDOWS * table.throw_in_window
    return any(game.seats[s].human and now - game.seats[s].last_active <= lately for s in seats)


def schedule(game: ChatGame, state: State, moment: Moment) -> None:
    """Set the turn deadline (a human is waited on) and when a computer seat moves.

    Once the defender is done (every card beaten, or taking) only throw-ins are left:
    the attackers who could add a card get a window, not a whole turn, so one
    inattentive player never stalls the table (and a long pause reveals nothing); how
    long is ``wait_window``'s policy."""
    if state.over or game.phase != "playing":
        game.turn_deadline = game.ai_due = game.reminder_due = None
        return
    seats = waiting(state)
    if state.step != game.last_seen_step:
        game.last_seen_step = state.step
        human = any(game.seats[s].human for s in seats)
        timing = table_timing(game, moment.timing)
        turn = must_act(state)
        window = wait_window(timing, turn, acted_lately(game, timing, seats, moment.now))
        game.turn_deadline = moment.now + window if human else None
        game.wait_window = window if human else None
        # A reminder only for a player's own turn, and only when the turn is long
        # enough that it comes well after the move was asked for.
        own = turn.player is not None and game.seats[turn.player].human
        long_enough = window >= 3 * timing.remind_before
        due = game.turn_deadline
        game.reminder_due = due - timing.remind_before if own and long_enough and due else None
    if any(game.seats[s].computer for s in seats):
        if game.ai_due is None or game.ai_due <= moment.now:
            game.ai_due = moment.now + moment.timing.ai_delay
    else:
        game.ai_due = None


def remind(game: ChatGame | None, moment: Moment) -> Outcome:
    """The player the game waits on gets their hand again as a new (notifying)
    message that says the bot is about to move for them."""
    if game is None or game.phase != "playing" or game.reminder_due is None:
        raise FlowError("toast.stale")
    if game.reminder_due > moment.now + 1e-6:
        raise FlowError("toast.stale")
    game.reminder_due = None
    effects = Effects()
    state = game.engine_state()
    player = must_act(state).player
    info = game.seats[player] if player is not None else None
    if info is not None and info.human and info.user_id is not None:
        game.reminded_step = state.step
        effects.notify.add(info.user_id)
    return game, effects


def reminded_user(game: ChatGame) -> int | None:
    """The player reminded at the current step (``remind``), while it is still their
    move: their reminder comes as a notifying full hand even while they follow the game
    in the Mini App, whose open mark may outlive the app itself."""
    if game.phase != "playing" or game.state is None:
        return None
    state = game.engine_state()
    player = must_act(state).player
    if game.reminded_step != state.step or player is None:
        return None
    return game.seats[player].user_id


def next_due(game: ChatGame) -> float | None:
    dues = [d for d in (game.turn_deadline, game.ai_due, game.reminder_due) if d is not None]
    return min(dues) if dues else None
