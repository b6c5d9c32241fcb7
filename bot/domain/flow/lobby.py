"""The lobby: seats, options, cancelling, and dealing the game at Start.

A lobby never blocks a group for long: it closes ``LOBBY_LIFETIME`` after it opened
(joins do not extend it); once its creator has been away ``CREATOR_AWAY`` any member
may cancel it; a creator who leaves hands the lobby to the next person seated; and a
joiner the bot cannot reach in private can be removed by the creator or an admin, and
is dropped at Start once ``DM_DEADLINE`` has passed since they joined.
"""

from __future__ import annotations

from collections.abc import Collection

from bot.domain.deal import Deal
from bot.domain.flow.common import (
    LOBBY_LIFETIME,
    Announcement,
    Effects,
    FlowError,
    Moment,
    Outcome,
    Person,
    game_seed,
)
from bot.domain.flow.dealing import deal_game
from bot.domain.flow.turns import schedule
from bot.domain.lobby_options import LOBBY_OPTIONS, OPTIONS_BY_OP
from bot.domain.place import Place
from bot.domain.records import AiLevel, ChatGame, LobbyDefaults, LobbyScreen, Seat
from engine import Rules, Series, dealer_by_lot
from engine.rules import MAX_PLAYERS, MIN_PLAYERS

CREATOR_AWAY = 300.0
"""Seconds without a tap from the creator after which any member may cancel the lobby."""
DM_DEADLINE = 180.0
"""Seconds a joiner has to open the private chat before Start drops them."""


def new_lobby(
    game: ChatGame | None,
    moment: Moment,
    place: Place,
    title: str,
    creator: Person,
    game_id: str,
    show_how_to: bool = True,
    defaults: LobbyDefaults | None = None,
    turn_timeout: float | None = None,
    topic_name: str = "",
) -> Outcome:
    """Open a lobby, unless one is open or a game runs. It starts from the group's
    ``defaults`` (/settings), or if it has none from the last game's options. A lobby past
    its lifetime no longer counts as open. ``turn_timeout``: the group's (None: the bot's).
    ``topic_name``: the forum topic's name ("": not known here; the last game's in this
    place stays)."""
    if game is not None and game.phase == "playing":
        raise FlowError("newgame.running", reply_to=game.table_message_id)
    if game is not None and game.phase == "lobby" and not expired(game, moment):
        raise FlowError("newgame.lobby_open", reply_to=game.lobby_message_id)
    lobby = ChatGame(
        game_id=game_id,
        chat_id=place.chat_id,
        topic_id=place.topic_id,
        chat_title=title,
        topic_name=topic_name or (game.topic_name if game is not None else ""),
        creator_id=creator.user_id,
        rules=_opening_rules(game, defaults),
        pace=defaults.pace if defaults is not None else game.pace if game is not None else "normal",
        turn_timeout=turn_timeout,
        ai_first=defaults.ai if defaults is not None else game.ai_first if game else "easy",
        seats=[_seat(creator, moment)],
        lobby_expires_at=moment.now + LOBBY_LIFETIME,
        creator_seen_at=moment.now,
        show_how_to=show_how_to,
    )
    return lobby, Effects()


def _opening_rules(game: ChatGame | None, defaults: LobbyDefaults | None) -> Rules:
    if defaults is not None:
        return defaults.rules
    return game.rules if game is not None else Rules()


def _seat(person: Person, moment: Moment) -> Seat:
    return Seat(user_id=person.user_id, name=person.name, lang=person.lang, joined_at=moment.now)


def expired(game: ChatGame, moment: Moment) -> bool:
    return game.lobby_expires_at is not None and moment.now >= game.lobby_expires_at


def creator_away(game: ChatGame, now: float) -> bool:
    return now - game.creator_seen_at >= CREATOR_AWAY


def open_lobby(game: ChatGame | None, moment: Moment, game_id: str, by: int) -> ChatGame:
    """``game`` if it is the open lobby ``game_id`` (a toast otherwise); a tap by its
    creator shows they are still there."""
    if game is None or game.game_id != game_id:
        raise FlowError("toast.stale")
    if game.phase != "lobby" or expired(game, moment):
        raise FlowError("toast.lobby_closed")
    if by == game.creator_id:
        game.creator_seen_at = moment.now
    return game


def _seats_changed(game: ChatGame, effects: Effects | None = None) -> Outcome:
    """Other seats or options: a series so far no longer applies."""
    game.series = None
    return game, effects or Effects()


def join(
    game: ChatGame | None,
    moment: Moment,
    game_id: str,
    person: Person,
    group_hands: bool | None = None,
) -> Outcome:
    """Seat ``person``; ``group_hands``: for a joiner without a private chat, whether the
    bot may show hands in the group (it is an admin there), else None."""
    game = open_lobby(game, moment, game_id, person.user_id)
    if group_hands is not None:
        game.group_hands = group_hands
    if game.seat_of(person.user_id) is not None:
        raise FlowError("lobby.already_joined")
    if len(game.seats) >= MAX_PLAYERS:
        raise FlowError("toast.table_full")
    game.seats.append(_seat(person, moment))
    return _seats_changed(game)


def leave_lobby(game: ChatGame | None, moment: Moment, game_id: str, user_id: int) -> Outcome:
    game = open_lobby(game, moment, game_id, user_id)
    seat = game.seat_of(user_id)
    if seat is None:
        raise FlowError("lobby.not_joined")
    del game.seats[seat]
    if user_id == game.creator_id:
        # The lobby passes to the next person seated, so it never waits for someone gone.
        heir = next((s.user_id for s in game.seats if s.user_id is not None), None)
        if heir is not None:
            game.creator_id = heir
            game.creator_seen_at = moment.now
    return _seats_changed(game)


def add_ai(
    game: ChatGame | None, moment: Moment, game_id: str, by: int, level: AiLevel, name: str
) -> Outcome:
    game = open_lobby(game, moment, game_id, by)
    if len(game.seats) >= MAX_PLAYERS:
        raise FlowError("toast.table_full")
    game.seats.append(Seat(name=name, ai=level, joined_at=moment.now))
    return _seats_changed(game)


def remove_ai(game: ChatGame | None, moment: Moment, game_id: str, by: int) -> Outcome:
    game = open_lobby(game, moment, game_id, by)
    for i in range(len(game.seats) - 1, -1, -1):
        if game.seats[i].user_id is None:
            del game.seats[i]
            return _seats_changed(game)
    raise FlowError("toast.no_ai")


def drop_unreachable(
    game: ChatGame | None, moment: Moment, game_id: str, by: int, unreachable: Collection[int]
) -> Outcome:
    """Remove every joiner the bot cannot reach in private (``unreachable`` user ids)."""
    game = open_lobby(game, moment, game_id, by)
    effects = Effects()
    if not _drop(game, set(unreachable), effects):
        raise FlowError("toast.all_reachable")
    return _seats_changed(game, effects)


def _drop(game: ChatGame, users: set[int], effects: Effects) -> bool:
    dropped = [s for s in game.seats if s.user_id is not None and s.user_id in users]
    for seat in dropped:
        game.seats.remove(seat)
        effects.announce.append(Announcement("group.player_dropped", {"name": seat.shown_name}))
    return bool(dropped)


def change_option(game: ChatGame | None, moment: Moment, game_id: str, by: int, op: str) -> Outcome:
    """Move the lobby option of group operation ``op`` to its next value."""
    game = open_lobby(game, moment, game_id, by)
    option = OPTIONS_BY_OP.get(op)
    if option is None:
        raise FlowError("toast.invalid")
    changed = option.following(game)
    if not option.allows(changed):
        raise FlowError(option.refused)
    return _option_changed(option.on, changed)


def choose_option(
    game: ChatGame | None, moment: Moment, game_id: str, by: int, op: str, choice: int
) -> Outcome:
    """Set the lobby option of group operation ``op`` to its value number ``choice``
    (a button of the options screen); choosing the current value changes nothing."""
    game = open_lobby(game, moment, game_id, by)
    option = OPTIONS_BY_OP.get(op)
    if option is None or not 0 <= choice < len(option.values):
        raise FlowError("toast.invalid")
    value = option.values[choice]
    if option.current(game) == value:
        return game, Effects()
    changed = option.set_to(game, value)
    if not option.allows(changed):
        raise FlowError(option.refused)
    return _option_changed(option.on, changed)


def _option_changed(on: str, game: ChatGame) -> Outcome:
    if on == "table":
        return game, Effects()  # how the table runs, not the game: the series goes on
    return _seats_changed(game)


def show_screen(
    game: ChatGame | None, moment: Moment, game_id: str, by: int, screen: LobbyScreen
) -> Outcome:
    """Switch the lobby message's keyboard: its buttons, the options, or "cancel it?"."""
    game = open_lobby(game, moment, game_id, by)
    game.lobby_screen = screen
    return game, Effects()


def may_manage(game: ChatGame, user_id: int, is_admin: bool) -> bool:
    return is_admin or game.creator_id == user_id


def first_dealer(game_id: str, players: int) -> int:
    """The first dealer of a series, drawn by lot (seeded by the game, so reproducible)."""
    return dealer_by_lot(players, game_seed(game_id, 0))


def _check_seats_and_options(game: ChatGame) -> None:
    """Start is refused for too few or too many seats, or an option this table forbids."""
    if len(game.seats) < MIN_PLAYERS:
        raise FlowError("toast.need_two")
    if len(game.seats) > game.rules.max_players:
        raise FlowError(
            "toast.too_many_for_deck", deck=game.rules.deck_size, count=game.rules.max_players
        )
    for option in LOBBY_OPTIONS:
        if not option.allows(game):
            raise FlowError(option.refused)


def start(
    game: ChatGame | None,
    moment: Moment,
    game_id: str,
    by: int,
    unreachable: Collection[int],
    deal: Deal | None = None,
    turn_timeout: float | None = None,
    group_hands: bool = False,
) -> Outcome:
    """Deal the first (or next) game of the series. ``unreachable``: user ids the bot
    cannot write to in private; with ``group_hands`` (the bot is an admin of the group)
    they play from the group, else past their deadline they are dropped and Start waits.
    ``deal``: the app's secret deal for the lobby's deck (``flow.dealing.deal_game``).
    ``turn_timeout``: the group's turn timeout as it is now (None: the bot's)."""
    game = open_lobby(game, moment, game_id, by)
    effects = Effects()
    in_group, unreachable = (set(unreachable), set()) if group_hands else (set(), unreachable)
    late = {
        s.user_id
        for s in game.seats
        if s.user_id in unreachable and moment.now - s.joined_at >= DM_DEADLINE
    }
    if _drop(game, {u for u in late if u is not None}, effects):
        game.series = None
    if any(s.user_id in unreachable for s in game.seats):
        raise FlowError("toast.waiting_dm")
    _check_seats_and_options(game)
    series = game.series
    if series is None:
        players = len(game.seats)
        series = Series.start(game.rules, players, dealer=first_dealer(game_id, players))
    # The series deals: the last durak deals; the first game and any game after a
    # draw start with the lowest trump.
    state = deal_game(game, series, deal, effects)
    game.series = series
    game.phase = "playing"
    game.set_engine_state(state)
    game.lobby_expires_at = None
    game.lobby_screen = "main"
    # The lobby message becomes the table: one message per game, edited in place.
    game.table_message_id = game.lobby_message_id
    game.forced_durak = None
    game.final_order = []
    game.final_durak = None
    game.final_losing_team = None
    game.ended_early = False
    game.started_at = moment.now
    game.turn_timeout = turn_timeout
    for seat in game.seats:
        _seat_dealt_in(seat, moment.now, seat.user_id in in_group)
    schedule(game, state, moment)
    return game, effects


def _seat_dealt_in(seat: Seat, now: float, in_group: bool) -> None:
    """A seat as a new game starts: no timeouts, no hand shown yet; ``in_group``: a
    human who plays from the group (no private chat)."""
    seat.timeouts = 0
    seat.last_active = now
    seat.hand_message_id = None
    seat.in_group = seat.human and in_group
    seat.group_hand_id = None


def note_group_hands(game: ChatGame | None, moment: Moment, game_id: str, allowed: bool) -> Outcome:
    """Whether players without a private chat may play from the group (the bot's admin
    rights as seen now): the lobby says so."""
    if game is None or game.game_id != game_id or game.phase != "lobby":
        raise FlowError("toast.stale")
    game.group_hands = allowed
    return game, Effects()


def cancel(game: ChatGame | None, moment: Moment, game_id: str, by: int) -> Outcome:
    game = open_lobby(game, moment, game_id, by)
    game.phase = "cancelled"
    game.lobby_expires_at = None
    game.lobby_screen = "main"
    return game, Effects()


def rename_topic(game: ChatGame | None, moment: Moment, name: str) -> Outcome:
    """The forum topic of the game was renamed: private messages name it anew."""
    if game is None or game.topic_id is None or not name or game.topic_name == name:
        raise FlowError("toast.stale")
    game.topic_name = name
    return game, Effects()
