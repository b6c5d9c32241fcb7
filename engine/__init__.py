"""Durak rules engine: pure, reproducible, fast.

State in, action in, new state (with its events) out. See README's "Engine API".
"""

from engine.actions import Action, Attack, Beat, Pass, Swap, Take, Transfer, parse_action
from engine.cards import Card, Suit
from engine.errors import DurakError, IllegalActionError, ParseError, RulesError
from engine.events import Event
from engine.game import (
    GameResult,
    apply,
    dealer_by_lot,
    legal_actions,
    new_game,
    result,
    team_of,
    waiting_for,
)
from engine.rules import PRESETS, FirstBoutLimit, Rules
from engine.series import Series
from engine.state import State
from engine.turn import MustAct, must_act
from engine.view import PlayerView, PublicView, public_view, view

__all__ = [
    "PRESETS",
    "Action",
    "Attack",
    "Beat",
    "Card",
    "DurakError",
    "Event",
    "FirstBoutLimit",
    "GameResult",
    "IllegalActionError",
    "MustAct",
    "ParseError",
    "Pass",
    "PlayerView",
    "PublicView",
    "Rules",
    "RulesError",
    "Series",
    "State",
    "Suit",
    "Swap",
    "Take",
    "Transfer",
    "apply",
    "dealer_by_lot",
    "legal_actions",
    "must_act",
    "new_game",
    "parse_action",
    "public_view",
    "result",
    "team_of",
    "view",
    "waiting_for",
]
