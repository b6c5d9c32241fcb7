"""A game's end: the finishing order, stats, the series count, and the next lobby."""

from __future__ import annotations

from bot.flow.common import Effects, FlowError, Person
from bot.records import ChatGame, Seat
from bot.storage import StatDelta
from engine import State, result


def finish(
    game: ChatGame, state: State, effects: Effects, *, early: bool, now: float | None = None
) -> None:
    outcome = result(state)
    order = list(outcome.order) if outcome is not None else list(state.out)
    durak = outcome.durak if outcome is not None else None
    if game.forced_durak is not None:
        durak = game.forced_durak
        order = [s for s in order if s != durak]
        rest = [s for s in range(len(game.seats)) if s not in order and s != durak]
        order = [*order, *rest, durak]
    game.phase = "finished"
    game.finished_at = now
    game.final_order = order
    game.final_durak = durak
    game.ended_early = early
    game.turn_deadline = game.ai_due = None
    game.series_played += 1
    if not game.series_durak:
        game.series_durak = [0] * len(game.seats)
    if durak is not None:
        game.series_durak[durak] += 1
    first_out = state.out[0] if state.out and not early else None
    for i, seat in enumerate(game.seats):
        if seat.user_id is None:
            continue
        effects.stats.append(
            StatDelta(seat.user_id, seat.name, durak=int(i == durak), first=int(i == first_out))
        )
    effects.ended = True


def series_over(game: ChatGame) -> bool:
    return game.series_played >= game.rules.series_length


def next_game(game: ChatGame | None, game_id: str, new_game_id: str) -> ChatGame:
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
    over = game.series_played >= game.rules.series_length or len(seats) != len(game.seats)
    dealer = game.final_durak if game.final_durak is not None else 0
    return game.model_copy(
        update={
            "game_id": new_game_id,
            "phase": "lobby",
            "seats": seats,
            "state": None,
            "series_played": 0 if over else game.series_played,
            "series_durak": [] if over else game.series_durak,
            "dealer": 0 if over else dealer,
            "table_message_id": None,
            "lobby_message_id": None,
            "turn_deadline": None,
            "ai_due": None,
            "final_order": [],
            "final_durak": None,
            "forced_durak": None,
            "ended_early": False,
            "auto_steps": [],
            "started_at": None,
            "finished_at": None,
        }
    )


def fresh_lobby(game: ChatGame | None, game_id: str, creator: Person, new_game_id: str) -> ChatGame:
    """ "New lobby" after a game: the presser opens it, with the same rules, seats empty."""
    if game is None or game.game_id != game_id:
        raise FlowError("toast.stale")
    if game.phase != "finished":
        raise FlowError("toast.game_running")
    return ChatGame(
        game_id=new_game_id,
        chat_id=game.chat_id,
        chat_title=game.chat_title,
        creator_id=creator.user_id,
        rules=game.rules,
        seats=[Seat(user_id=creator.user_id, name=creator.name, lang=creator.lang)],
    )
