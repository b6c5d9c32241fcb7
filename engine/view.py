"""What the table may know (``public_view``) and what one player may know (``view``):
the only inputs a group message, a computer player or a DM ever get.

A pass is the passer's own business. Only an attacker holding a card of a table rank is
asked to throw in (the others cannot, and the game does not wait on them), so a pass
would tell everyone that the passer held such a card. At a real table, "nothing to
add" sounds the same either way. So a ``Passed`` event and the ``passed`` mark appear
only in the passer's own view, and ``must_act`` keeps naming every seat that may add.
Only the step moves on: the table sees that the game went on, as it sees a pause.
"""

from __future__ import annotations

from collections.abc import Iterable
from dataclasses import dataclass
from typing import Any

from engine.actions import Action
from engine.cards import Card, cards_of, sort_key
from engine.events import Event, Passed
from engine.game import legal_actions
from engine.rules import Rules
from engine.state import State
from engine.turn import MustAct, must_act


@dataclass(frozen=True, slots=True)
class PublicView:
    """Everything everyone at the table may know: no card of any hand that was not
    shown (there is no hand field at all)."""

    num_players: int
    rules: Rules
    trump: int
    trump_card: Card
    trump_card_in_stock: bool
    """Whether the face-up trump card still lies under the stock (it is drawn last)."""
    stock_count: int
    discard: tuple[Card, ...]
    """Cards in the discard pile: every one was face up on the table, so it is public."""
    hand_sizes: tuple[int, ...]
    known_cards: tuple[tuple[Card, ...], ...]
    """Per player, the cards everyone knows they hold (picked up, shown, swapped in)."""
    table: tuple[tuple[Card, Card | None], ...]
    leader: int
    attacker: int
    defender: int
    limit: int
    taking: bool
    passed: tuple[int, ...]
    """The viewer, if they passed since the last new rank landed (never anyone else: see
    the module's note); always empty in the table's view."""
    bout: int
    dealer: int
    out: tuple[int, ...]
    """Who ran out of cards, in that order."""
    over: bool
    durak: int | None
    """None while playing and for a draw (see ``engine.GameResult``)."""
    losing_team: int | None
    """Partners games that are over: the team (seat % 2) that lost; else None."""
    step: int
    must_act: MustAct
    """Who the game waits on (public: never who could throw in)."""
    waiting_for: tuple[int, ...]
    """``must_act.seats``: the defender or leader, then the attackers whose seat lets
    them add cards; it does not reveal who holds a card they could add."""
    last_events: tuple[Event, ...]
    history: tuple[Event, ...]

    @property
    def discard_count(self) -> int:
        return len(self.discard)

    def team(self, seat: int) -> int | None:
        """``seat``'s team (seat % 2) in a partners game, else None."""
        return seat % 2 if self.rules.partners else None

    @property
    def losers(self) -> tuple[int, ...]:
        """Every durak of a finished game (each member of a losing team); empty while
        playing and for a draw."""
        if self.losing_team is not None:
            return tuple(range(self.losing_team, self.num_players, 2))
        return () if self.durak is None else (self.durak,)


@dataclass(frozen=True, slots=True)
class PlayerView(PublicView):
    """Everything ``player`` may know about the game, and nothing else: the public
    view plus their own hand and moves."""

    player: int
    hand: tuple[Card, ...]
    """Own cards, display order (non-trumps by rank, trumps last)."""
    legal_actions: tuple[Action, ...]

    @property
    def my_turn(self) -> bool:
        return bool(self.legal_actions)


def _seen(events: Iterable[Event], viewer: int | None) -> tuple[Event, ...]:
    """``events`` without the passes of anyone but ``viewer``."""
    return tuple(e for e in events if type(e) is not Passed or e.player == viewer)


def _public_fields(state: State, viewer: int | None) -> dict[str, Any]:
    turn = must_act(state)
    losing_team = None
    if state.over and state.rules.partners and state.durak is not None:
        losing_team = state.durak % 2
    return {
        "num_players": state.num_players,
        "rules": state.rules,
        "trump": state.trump,
        "trump_card": state.trump_card,
        "trump_card_in_stock": bool(state.stock),
        "stock_count": len(state.stock),
        "discard": cards_of(state.discard),
        "hand_sizes": tuple(h.bit_count() for h in state.hands),
        "known_cards": tuple(
            cards_of(k & h) for k, h in zip(state.known, state.hands, strict=True)
        ),
        "table": state.table,
        "leader": state.leader,
        "attacker": state.attacker,
        "defender": state.defender,
        "limit": state.limit,
        "taking": state.taking,
        "passed": (viewer,) if viewer is not None and state.passed >> viewer & 1 else (),
        "bout": state.bout,
        "dealer": state.dealer,
        "out": state.out,
        "over": state.over,
        "durak": state.durak,
        "losing_team": losing_team,
        "step": state.step,
        "must_act": turn,
        "waiting_for": turn.seats,
        "last_events": _seen(state.events, viewer),
        "history": _seen(state.all_events(), viewer),
    }


def public_view(state: State) -> PublicView:
    """What everyone at the table may see: the only input of a group message."""
    return PublicView(**_public_fields(state, None))


def view(state: State, player: int) -> PlayerView:
    """Build ``player``'s view of ``state``."""
    hand = sorted(cards_of(state.hands[player]), key=lambda c: sort_key(c, state.trump))
    return PlayerView(
        **_public_fields(state, player),
        player=player,
        hand=tuple(hand),
        legal_actions=tuple(legal_actions(state, player)),
    )
