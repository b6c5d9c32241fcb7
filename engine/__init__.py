"""Durak rules engine: pure, reproducible, fast.

State in, action in, new state (with its events) out. See README's "Engine API".
"""

from engine.actions import Action, Attack, Beat, Pass, Swap, Take, Transfer, parse_action
from engine.cards import Card, Suit
from engine.errors import DurakError, IllegalActionError, ParseError, RulesError
from engine.events import Event
from engine.game import GameResult, apply, legal_actions, new_game, result, waiting_for
from engine.rules import PRESETS, Rules
from engine.series import Series
from engine.state import State
from engine.view import PlayerView, view

__all__ = [
    "PRESETS",
    "Action",
    "Attack",
    "Beat",
    "Card",
    "DurakError",
    "Event",
    "GameResult",
    "IllegalActionError",
    "ParseError",
    "Pass",
    "PlayerView",
    "Rules",
    "RulesError",
    "Series",
    "State",
    "Suit",
    "Swap",
    "Take",
    "Transfer",
    "apply",
    "legal_actions",
    "new_game",
    "parse_action",
    "result",
    "view",
    "waiting_for",
]
