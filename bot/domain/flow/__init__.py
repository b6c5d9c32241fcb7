"""The game service, pure: lobby, moves, timeouts, leaving, computer turns, series.

No Telegram here and no Redis. Every operation has the shape
``op(game, moment, *args) -> (ChatGame, Effects)``: it takes the chat's record (a
fresh copy it may change, or None) and when it runs, and returns the changed record
and what to show, so the storage layer can apply it in one transaction and the sender
can show it. A refused operation raises ``FlowError`` with a catalogue key for the
toast.

``lobby`` seats people and deals, ``turns`` runs the game, ``results`` ends it.
"""

from bot.domain.flow.common import (
    LOBBY_LIFETIME,
    PACE_FACTORS,
    Announcement,
    Effects,
    FlowError,
    Moment,
    Outcome,
    Person,
    Timing,
    game_seed,
    table_timing,
)
from bot.domain.flow.lobby import (
    CREATOR_AWAY,
    DM_DEADLINE,
    add_ai,
    cancel,
    change_option,
    choose_option,
    creator_away,
    drop_unreachable,
    first_dealer,
    join,
    leave_lobby,
    may_manage,
    new_lobby,
    note_group_hands,
    open_lobby,
    remove_ai,
    show_screen,
    start,
)
from bot.domain.flow.results import finish, fresh_lobby, next_game, series_over
from bot.domain.flow.turns import (
    TIMEOUTS_BEFORE_HANDOVER,
    ai_move,
    ai_turn,
    leave_game,
    next_due,
    on_timeout,
    play,
    remind,
    reminded_user,
    schedule,
    take_back_seat,
    timeout_action,
    wait_window,
    waiting,
)

__all__ = [
    "CREATOR_AWAY",
    "DM_DEADLINE",
    "LOBBY_LIFETIME",
    "PACE_FACTORS",
    "TIMEOUTS_BEFORE_HANDOVER",
    "Announcement",
    "Effects",
    "FlowError",
    "Moment",
    "Outcome",
    "Person",
    "Timing",
    "add_ai",
    "ai_move",
    "ai_turn",
    "cancel",
    "change_option",
    "choose_option",
    "creator_away",
    "drop_unreachable",
    "finish",
    "first_dealer",
    "fresh_lobby",
    "game_seed",
    "join",
    "leave_game",
    "leave_lobby",
    "may_manage",
    "new_lobby",
    "next_due",
    "next_game",
    "note_group_hands",
    "on_timeout",
    "open_lobby",
    "play",
    "remind",
    "reminded_user",
    "remove_ai",
    "schedule",
    "series_over",
    "show_screen",
    "start",
    "table_timing",
    "take_back_seat",
    "timeout_action",
    "wait_window",
    "waiting",
]
