"""A game's end: the finishing order, stats, the rating's view, the series score, and the
next lobby."""

from __future__ import annotations

from dataclasses import replace

from bot.domain.flow.common import LOBBY_LIFETIME, Effects, FlowError, Moment, Outcome, Person
from bot.domain.rating import Computer, FinishedGame, Human, Participant, game_from_state
from bot.domain.records import ChatGame, Seat, StatDelta
from engine import GameResult, State, result


def finish(
    game: ChatGame, state: State, effects: Effects, *, early: bool, now: float | None = None
) -> None:
    outcome = result(state) or GameResult(None, tuple(state.out))
    if game.forced_durak is not None:
        # The first to leave is this game's durak (with their team), whatever the cards say.
        durak = game.forced_durak
        order = [s for s in outcome.order if s != durak]
        rest = [s for s in range(len(game.seats)) if s not in order and s != durak]
        team = durak % 2 if game.rules.partners else None
        outcome = GameResult(durak, (*order, *rest, durak), team)
    game.phase = "finished"
    game.finished_at = now
    effects.ended = True
    game.final_order = list(outcome.order)
    game.final_durak = outcome.durak
    game.final_losing_team = outcome.losing_team
    game.ended_early = early
    game.turn_deadline = game.ai_due = game.reminder_due = None
    if game.series is not None:
        game.series = game.series.record(outcome)
    losers = outcome.losers
    # A drawn game has no first out (a void round wins nobody anything), and a game
    # ended early by leavers has no real one.
    first_out = outcome.order[0] if outcome.order and not outcome.draw and not early else None
    if first_out in losers:
        first_out = None
    for i, seat in enumerate(game.seats):
        if seat.user_id is None:
            continue
        effects.stats.append(
            StatDelta(seat.user_id, seat.name, durak=int(i in losers), first=int(i == first_out))
        )


def rated_game(game: ChatGame) -> FinishedGame | None:
    """How a finished game ended as the rating sees it (``bot.domain.rating``), read from
    what ``finish`` left in the record: the engine's history (who went out together),
    its durak, the seats (a human who left or was handed to the computer is still the
    human at that seat), who left, and partners' teams. None when there is nothing to
    rate: no game was played out, or no human took part.

    The durak is the engine's, not the bot's (a leaver, ``forced_durak``): the model ranks
    leavers last on their own, below the durak the cards made. Only a game ended early,
    without one, takes the leaver as its durak, so that who went out still ranks first."""
    if game.phase != "finished" or game.state is None:
        return None
    seats: list[Participant] = [
        Human(seat.user_id) if seat.user_id is not None else Computer(seat.ai or "normal")
        for seat in game.seats
    ]
    if not any(isinstance(seat, Human) for seat in seats):
        return None
    left = [i for i, seat in enumerate(game.seats) if seat.left]
    rated = game_from_state(game.engine_state(), seats, left)
    if rated.durak is None and game.forced_durak is not None:
        rated = replace(rated, durak=game.forced_durak)
    return rated


def series_over(game: ChatGame) -> bool:
    return game.series is None or game.series.finished


def next_game(game: ChatGame | None, moment: Moment, game_id: str, new_game_id: str) -> Outcome:
    """A new lobby after a finished game: same seats and rules, series carried on."""
    if game is None or game.game_id != game_id:
        raise FlowError("toast.stale")
    if game.phase != "finished":
        raise FlowError("toast.game_running")
    seats = [
        Seat(
            user_id=s.user_id,
            name=s.name,
            lang=s.lang,
            ai=None if s.user_id else s.ai,
            joined_at=moment.now,
        )
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
            "final_losing_team": None,
            "lobby_expires_at": moment.now + LOBBY_LIFETIME,
            "creator_seen_at": moment.now,
            "forced_durak": None,
            "ended_early": False,
            "auto_steps": [],
            "reminder_due": None,
            "reminded_step": -1,
            "started_at": None,
            "finished_at": None,
            "deal": None,
        }
    )
    return lobby, Effects()


def fresh_lobby(
    game: ChatGame | None, moment: Moment, game_id: str, opener: Person, new_game_id: str
) -> Outcome:
    """ "New lobby" after a game: the presser opens it with the same rules, seats empty."""
    if game is None or game.game_id != game_id:
        raise FlowError("toast.stale")
    if game.phase != "finished":
        raise FlowError("toast.game_running")
    lobby = ChatGame(
        game_id=new_game_id,
        chat_id=game.chat_id,
        topic_id=game.topic_id,
        chat_title=game.chat_title,
        topic_name=game.topic_name,
        creator_id=opener.user_id,
        rules=game.rules,
        pace=game.pace,
        ai_first=game.ai_first,
        seats=[
            Seat(user_id=opener.user_id, name=opener.name, lang=opener.lang, joined_at=moment.now)
        ],
        lobby_expires_at=moment.now + LOBBY_LIFETIME,
        creator_seen_at=moment.now,
    )
    return lobby, Effects()


def place_gone(game: ChatGame | None, moment: Moment, game_id: str) -> Outcome:
    """The game's place refuses the bot's messages (its topic closed or deleted, the
    right to post there lost): a lobby or a running game ends as if cancelled, with no
    durak and nothing counted, and its timers go with the phase. Each player's hand
    message says so (``Effects.place_gone``: nothing more is owed in the place itself)."""
    if game is None or game.game_id != game_id:
        raise FlowError("toast.stale")
    if game.phase not in ("lobby", "playing"):
        raise FlowError("toast.stale")
    game.phase = "cancelled"
    game.lobby_expires_at = None
    game.lobby_screen = "main"
    game.turn_deadline = None
    game.ai_due = None
    game.reminder_due = None
    game.wait_window = None
    told = {s.user_id for s in game.seats if s.user_id is not None and s.hand_message_id}
    return game, Effects(notify=told, place_gone=True)
