"""A game's end: the finishing order, stats, the series score, and the next lobby."""

from __future__ import annotations

from bot.flow.common import Effects, FlowError, Moment, Outcome
from bot.records import ChatGame, Seat
from bot.storage import StatDelta
from engine import GameResult, State, result


def finish(game: ChatGame, state: State, effects: Effects, *, early: bool) -> None:
    outcome = result(state)
    order = list(outcome.order) if outcome is not None else list(state.out)
    durak = outcome.durak if outcome is not None else None
    if game.forced_durak is not None:
        # The first to leave is this game's durak, whatever the cards say.
        durak = game.forced_durak
        order = [s for s in order if s != durak]
        rest = [s for s in range(len(game.seats)) if s not in order and s != durak]
        order = [*order, *rest, durak]
    game.phase = "finished"
    game.final_order = order
    game.final_durak = durak
    game.ended_early = early
    game.turn_deadline = game.ai_due = None
    if game.series is not None:
        game.series = game.series.record(GameResult(durak, tuple(order)))
    # A drawn game has no first out (a void round wins nobody anything), and a game
    # ended early by leavers has no real one.
    first_out = order[0] if order and durak is not None and not early else None
    for i, seat in enumerate(game.seats):
        if seat.user_id is None:
            continue
        effects.stats.append(
            StatDelta(seat.user_id, seat.name, durak=int(i == durak), first=int(i == first_out))
        )


def series_over(game: ChatGame) -> bool:
    return game.series is None or game.series.finished


def next_game(game: ChatGame | None, moment: Moment, game_id: str, new_game_id: str) -> Outcome:
    """A new lobby after a finished game: same seats and rules, series carried on."""
    if game is None or game.game_id != game_id:
        raise FlowError("toast.stale")
    if game.phase != "finished":
        raise FlowError("toast.game_running")
    seats = [
        Seat(user_id=s.user_id, name=s.name, lang=s.lang, ai=None if s.user_id else s.ai)
        for s in game.seats
        if not s.left
    ]
    over = series_over(game) or len(seats) != len(game.seats)
    lobby = game.model_copy(
        update={
            "game_id": new_game_id,
            "phase": "lobby",
            "seats": seats,
            "state": None,
            "series": None if over else game.series,
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
    return lobby, Effects()
