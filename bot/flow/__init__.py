"""The game service, pure: lobby, moves, timeouts, leaving, computer turns, series.

No Telegram here and no Redis: every operation takes a ``ChatGame`` (a fresh copy the
caller may change) and returns what changed, so the storage layer can apply it in one
transaction and the sender can show it. A refused operation raises ``FlowError`` with
a catalogue key for the toast.

``lobby`` seats people and deals, ``turns`` runs the game, ``results`` ends it.
"""

from bot.flow.common import Announcement, Effects, FlowError, Person, game_seed
from bot.flow.lobby import (
    MAX_SEATS,
    add_ai,
    cancel,
    cycle_option,
    join,
    leave_lobby,
    may_manage,
    new_lobby,
    open_lobby,
    remove_ai,
    start,
)
from bot.flow.results import finish, fresh_lobby, next_game, series_over
from bot.flow.turns import (
    TIMEOUTS_BEFORE_HANDOVER,
    ai_move,
    ai_turn,
    leave_game,
    next_due,
    on_timeout,
    play,
    required,
    schedule,
    take_back_seat,
    timeout_action,
    waiting,
)

__all__ = [
    "MAX_SEATS",
    "TIMEOUTS_BEFORE_HANDOVER",
    "Announcement",
    "Effects",
    "FlowError",
    "Person",
    "add_ai",
    "ai_move",
    "ai_turn",
    "cancel",
    "cycle_option",
    "finish",
    "fresh_lobby",
    "game_seed",
    "join",
    "leave_game",
    "leave_lobby",
    "may_manage",
    "new_lobby",
    "next_due",
    "next_game",
    "on_timeout",
    "open_lobby",
    "play",
    "remove_ai",
    "required",
    "schedule",
    "series_over",
    "start",
    "take_back_seat",
    "timeout_action",
    "waiting",
]
