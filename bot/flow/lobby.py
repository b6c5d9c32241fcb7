"""The lobby: seats, options, cancelling, and dealing the game at Start."""

from __future__ import annotations

from bot.flow.common import Effects, FlowError, Moment, Outcome, Person, game_seed
from bot.flow.turns import schedule
from bot.lobby_options import LOBBY_OPTIONS, OPTIONS_BY_OP
from bot.records import AiLevel, ChatGame, Seat
from engine import Rules, Series, dealer_by_lot
from engine.rules import MAX_PLAYERS, MIN_PLAYERS


def new_lobby(
    game: ChatGame | None,
    moment: Moment,
    chat_id: int,
    title: str,
    creator: Person,
    game_id: str,
) -> Outcome:
    """Open a lobby, unless one is open or a game runs; the last game's options stay."""
    if game is not None and game.phase in ("lobby", "playing"):
        key = "newgame.lobby_open" if game.phase == "lobby" else "newgame.running"
        raise FlowError(key, reply_to=game.lobby_message_id or game.table_message_id)
    lobby = ChatGame(
        game_id=game_id,
        chat_id=chat_id,
        chat_title=title,
        creator_id=creator.user_id,
        rules=game.rules if game is not None else Rules(),
        seats=[Seat(user_id=creator.user_id, name=creator.name, lang=creator.lang)],
    )
    return lobby, Effects()


def open_lobby(game: ChatGame | None, game_id: str) -> ChatGame:
    """``game`` if it is the open lobby ``game_id``; a toast otherwise."""
    if game is None or game.game_id != game_id:
        raise FlowError("toast.stale")
    if game.phase != "lobby":
        raise FlowError("toast.lobby_closed")
    return game


def _seats_changed(game: ChatGame) -> Outcome:
    """Other seats or options: a series so far no longer applies."""
    game.series = None
    return game, Effects()


def join(game: ChatGame | None, moment: Moment, game_id: str, person: Person) -> Outcome:
    game = open_lobby(game, game_id)
    if game.seat_of(person.user_id) is not None:
        raise FlowError("toast.already_joined")
    if len(game.seats) >= MAX_PLAYERS:
        raise FlowError("toast.table_full")
    game.seats.append(Seat(user_id=person.user_id, name=person.name, lang=person.lang))
    return _seats_changed(game)


def leave_lobby(game: ChatGame | None, moment: Moment, game_id: str, user_id: int) -> Outcome:
    game = open_lobby(game, game_id)
    seat = game.seat_of(user_id)
    if seat is None:
        raise FlowError("toast.not_joined")
    del game.seats[seat]
    return _seats_changed(game)


def add_ai(
    game: ChatGame | None, moment: Moment, game_id: str, level: AiLevel, name: str
) -> Outcome:
    game = open_lobby(game, game_id)
    if len(game.seats) >= MAX_PLAYERS:
        raise FlowError("toast.table_full")
    game.seats.append(Seat(name=name, ai=level))
    return _seats_changed(game)


def remove_ai(game: ChatGame | None, moment: Moment, game_id: str) -> Outcome:
    game = open_lobby(game, game_id)
    for i in range(len(game.seats) - 1, -1, -1):
        if game.seats[i].user_id is None:
            del game.seats[i]
            return _seats_changed(game)
    raise FlowError("toast.no_ai")


def change_option(game: ChatGame | None, moment: Moment, game_id: str, op: str) -> Outcome:
    """Move the lobby option of group operation ``op`` to its next value."""
    game = open_lobby(game, game_id)
    option = OPTIONS_BY_OP.get(op)
    if option is None:
        raise FlowError("toast.invalid")
    rules = option.following(game.rules)
    if not option.allows(rules, len(game.seats)):
        raise FlowError(option.refused)
    game.rules = rules
    return _seats_changed(game)


def may_manage(game: ChatGame, user_id: int, is_admin: bool) -> bool:
    return is_admin or game.creator_id == user_id


def first_dealer(game_id: str, players: int) -> int:
    """The first dealer of a series, drawn by lot (seeded by the game, so reproducible)."""
    return dealer_by_lot(players, game_seed(game_id, 0))


def start(game: ChatGame | None, moment: Moment, game_id: str, unreachable: list[str]) -> Outcome:
    """Deal the first (or next) game of the series."""
    game = open_lobby(game, game_id)
    if len(game.seats) < MIN_PLAYERS:
        raise FlowError("toast.need_two")
    if len(game.seats) > game.rules.max_players:
        raise FlowError(
            "toast.too_many_for_deck", deck=game.rules.deck_size, count=game.rules.max_players
        )
    for option in LOBBY_OPTIONS:
        if not option.allows(game.rules, len(game.seats)):
            raise FlowError(option.refused)
    if unreachable:
        raise FlowError("toast.waiting_dm")
    series = game.series
    if series is None:
        players = len(game.seats)
        series = Series.start(game.rules, players, dealer=first_dealer(game_id, players))
    # The series deals: the last durak deals; the first game and any game after a
    # draw start with the lowest trump.
    state = series.next_game(seed=game_seed(game.game_id, series.games_played))
    game.series = series
    game.phase = "playing"
    game.state = state.to_dict()
    # The lobby message becomes the table: one message per game, edited in place.
    game.table_message_id = game.lobby_message_id
    game.forced_durak = None
    game.final_order = []
    game.final_durak = None
    game.final_losing_team = None
    game.ended_early = False
    game.started_at = moment.now
    for seat in game.seats:
        seat.timeouts = 0
        seat.last_active = moment.now
        seat.hand_message_id = None
    schedule(game, state, moment)
    return game, Effects()


def cancel(game: ChatGame | None, moment: Moment, game_id: str) -> Outcome:
    game = open_lobby(game, game_id)
    game.phase = "cancelled"
    return game, Effects()
