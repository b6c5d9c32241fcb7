"""What one player may know: the only input a computer player or a DM ever gets."""

from __future__ import annotations

from dataclasses import dataclass

from engine.actions import Action
from engine.cards import Card, cards_of, sort_key
from engine.events import Event
from engine.game import legal_actions, waiting_for
from engine.rules import Rules
from engine.state import State


@dataclass(frozen=True, slots=True)
class PlayerView:
    """Everything ``player`` may know about the game, and nothing else."""

    player: int
    num_players: int
    rules: Rules
    hand: tuple[Card, ...]
    """Own cards, display order (non-trumps by rank, trumps last)."""
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
    bout: int
    dealer: int
    out: tuple[int, ...]
    over: bool
    durak: int | None
    step: int
    waiting_for: tuple[int, ...]
    legal_actions: tuple[Action, ...]
    last_events: tuple[Event, ...]
    history: tuple[Event, ...]

    @property
    def discard_count(self) -> int:
        return len(self.discard)

    @property
    def my_turn(self) -> bool:
        return bool(self.legal_actions)


def view(state: State, player: int) -> PlayerView:
    """Build ``player``'s view of ``state``."""
    hand = sorted(cards_of(state.hands[player]), key=lambda c: sort_key(c, state.trump))
    return PlayerView(
        player=player,
        num_players=state.num_players,
        rules=state.rules,
        hand=tuple(hand),
        trump=state.trump,
        trump_card=state.trump_card,
        trump_card_in_stock=bool(state.stock),
        stock_count=len(state.stock),
        discard=cards_of(state.discard),
        hand_sizes=tuple(h.bit_count() for h in state.hands),
        known_cards=tuple(cards_of(k & h) for k, h in zip(state.known, state.hands, strict=True)),
        table=state.table,
        leader=state.leader,
        attacker=state.attacker,
        defender=state.defender,
        limit=state.limit,
        taking=state.taking,
        passed=tuple(p for p in range(state.num_players) if state.passed >> p & 1),
        bout=state.bout,
        dealer=state.dealer,
        out=state.out,
        over=state.over,
        durak=state.durak,
        step=state.step,
        waiting_for=waiting_for(state),
        legal_actions=tuple(legal_actions(state, player)),
        last_events=state.events,
        history=tuple(state.all_events()),
    )
