"""The lobby: seats, options, cancelling, and dealing the game at Start."""

from __future__ import annotations

from typing import Any

from bot.flow.common import Effects, FlowError, Person, game_seed
from bot.flow.turns import schedule
from bot.records import AiLevel, ChatGame, Seat
from engine import Rules, new_game

MAX_SEATS = 6


def new_lobby(
    chat_id: int, title: str, creator: Person, game_id: str, rules: Rules | None = None
) -> ChatGame:
    return ChatGame(
        game_id=game_id,
        chat_id=chat_id,
        chat_title=title,
        creator_id=creator.user_id,
        rules=rules or Rules(),
        seats=[Seat(user_id=creator.user_id, name=creator.name, lang=creator.lang)],
    )


def open_lobby(game: ChatGame | None, game_id: str) -> ChatGame:
    """``game`` if it is the open lobby ``game_id``; a toast otherwise."""
    if game is None or game.game_id != game_id:
        raise FlowError("toast.stale")
    if game.phase != "lobby":
        raise FlowError("toast.lobby_closed")
    return game


def _seats_changed(game: ChatGame) -> None:
    game.series_played = 0
    game.series_durak = []


def join(game: ChatGame | None, game_id: str, person: Person) -> ChatGame:
    game = open_lobby(game, game_id)
    if game.seat_of(person.user_id) is not None:
        raise FlowError("toast.already_joined")
    if len(game.seats) >= MAX_SEATS:
        raise FlowError("toast.table_full")
    game.seats.append(Seat(user_id=person.user_id, name=person.name, lang=person.lang))
    _seats_changed(game)
    return game


def leave_lobby(game: ChatGame | None, game_id: str, user_id: int) -> ChatGame:
    game = open_lobby(game, game_id)
    seat = game.seat_of(user_id)
    if seat is None:
        raise FlowError("toast.not_joined")
    del game.seats[seat]
    _seats_changed(game)
    return game


def add_ai(game: ChatGame | None, game_id: str, level: AiLevel, name: str) -> ChatGame:
    game = open_lobby(game, game_id)
    if len(game.seats) >= MAX_SEATS:
        raise FlowError("toast.table_full")
    game.seats.append(Seat(name=name, ai=level))
    _seats_changed(game)
    return game


def remove_ai(game: ChatGame | None, game_id: str) -> ChatGame:
    game = open_lobby(game, game_id)
    for i in range(len(game.seats) - 1, -1, -1):
        if game.seats[i].user_id is None:
            del game.seats[i]
            _seats_changed(game)
            return game
    raise FlowError("toast.no_ai")


_CYCLES: dict[str, tuple[str, tuple[Any, ...]]] = {
    "deck": ("deck_size", (24, 36, 52)),
    "throw_in": ("throw_in", ("all", "neighbours")),
    "transfer": ("variant", ("podkidnoy", "perevodnoy")),
    "series": ("series_length", (1, 3, 5, 10)),
}


def cycle_option(game: ChatGame | None, game_id: str, option: str) -> ChatGame:
    """Move one rule option to its next value."""
    game = open_lobby(game, game_id)
    name, values = _CYCLES[option]
    current = getattr(game.rules, name)
    following = values[(values.index(current) + 1) % len(values)]
    game.rules = Rules.parse({**game.rules.model_dump(), name: following})
    _seats_changed(game)
    return game


def may_manage(game: ChatGame, user_id: int, is_admin: bool) -> bool:
    return is_admin or game.creator_id == user_id


def start(
    game: ChatGame | None,
    game_id: str,
    now: float,
    unreachable: list[str],
    ai_delay: float,
    turn_timeout: float,
) -> tuple[ChatGame, Effects]:
    """Deal the first (or next) game of the series."""
    game = open_lobby(game, game_id)
    if len(game.seats) < 2:
        raise FlowError("toast.need_two")
    if len(game.seats) > game.rules.max_players:
        raise FlowError(
            "toast.too_many_for_deck", deck=game.rules.deck_size, count=game.rules.max_players
        )
    if unreachable:
        raise FlowError("toast.waiting_dm")
    first = game.series_played == 0
    if first:
        game.series_durak = [0] * len(game.seats)
        game.dealer = 0
    state = new_game(
        game.rules,
        len(game.seats),
        seed=game_seed(game.game_id, game.series_played),
        dealer=game.dealer,
        first_game=first,
    )
    game.phase = "playing"
    game.state = state.to_dict()
    # The lobby message becomes the table: one message per game, edited in place.
    game.table_message_id = game.lobby_message_id
    game.forced_durak = None
    game.final_order = []
    game.final_durak = None
    game.ended_early = False
    game.started_at = now
    for seat in game.seats:
        seat.timeouts = 0
        seat.last_active = now
        seat.hand_message_id = None
    effects = Effects(started=True)
    schedule(game, state, now, ai_delay, turn_timeout)
    return game, effects


def cancel(game: ChatGame | None, game_id: str) -> ChatGame:
    game = open_lobby(game, game_id)
    game.phase = "cancelled"
    return game
