"""Pure rendering: (chat game / view, translator) → HTML text + inline keyboard.

Nothing here talks to Telegram or Redis. One module per message: ``lobby``, ``table``
(the running game in the group), ``results``, ``hand`` (a player's private message),
``stats``, ``language``; ``common`` holds what they share.
"""

from bot.render.common import MAX_TEXT, Rendered, deep_link, seat_names
from bot.render.hand import finished_hand, hand_closed, hand_gone, hand_message
from bot.render.language import language_picker
from bot.render.lobby import cancelled, lobby_message, option_label, rules_summary
from bot.render.results import results_message
from bot.render.rules import rules_message, table_pace
from bot.render.stats import group_stats, user_stats
from bot.render.table import moved_on_change, moved_on_toast, own_move_toast, table_message

__all__ = [
    "MAX_TEXT",
    "Rendered",
    "cancelled",
    "deep_link",
    "finished_hand",
    "group_stats",
    "hand_closed",
    "hand_gone",
    "hand_message",
    "language_picker",
    "lobby_message",
    "moved_on_change",
    "moved_on_toast",
    "option_label",
    "own_move_toast",
    "results_message",
    "rules_message",
    "rules_summary",
    "seat_names",
    "table_message",
    "table_pace",
    "user_stats",
]
