"""Hypothetical full states built from one player's view: the only bridge from a
``PlayerView`` to a ``State`` (or an ``engine.core`` position) for computer players
that search.

A computer player sees only its ``PlayerView``. To search it guesses the cards it
cannot see ("determinization") and asks :func:`determinize` for a full state. That
function uses nothing but the view and the guess, and it refuses guesses that
contradict the view: wrong hand sizes, a known card missing, the face-up trump card
not at the bottom of the stock, or a card that is public, duplicated or absent.
"""

from __future__ import annotations

from engine.cards import CARD_RANK_MASK, Card, deck_cards, mask_of
from engine.core import Position, thaw
from engine.errors import DurakError
from engine.state import State
from engine.view import PlayerView


class WorldError(DurakError):
    """A guessed world that contradicts the view it was built from."""


def public_mask(view: PlayerView) -> int:
    """Cards whose place the viewer knows: own hand, discard, table, everyone's known
    cards and the face-up trump card while it lies under the stock."""
    mask = mask_of(view.hand) | mask_of(view.discard)
    for attack, cover in view.table:
        mask |= 1 << attack
        if cover is not None:
            mask |= 1 << cover
    for known in view.known_cards:
        mask |= mask_of(known)
    if view.trump_card_in_stock:
        mask |= 1 << view.trump_card
    return mask


def unseen_cards(view: PlayerView) -> tuple[Card, ...]:
    """The cards the viewer cannot place: in other hands (unknown part) or the stock."""
    public = public_mask(view)
    return tuple(c for c in deck_cards(view.rules.deck_size) if not public >> c & 1)


def hidden_slots(view: PlayerView) -> tuple[dict[int, int], int]:
    """How many unseen cards each other player holds, and how many lie in the stock
    (not counting the face-up trump card). Their total is ``len(unseen_cards(view))``."""
    slots = {
        p: view.hand_sizes[p] - len(view.known_cards[p])
        for p in range(view.num_players)
        if p != view.player
    }
    stock = view.stock_count - 1 if view.trump_card_in_stock else view.stock_count
    return slots, stock


def determinize(
    view: PlayerView,
    hidden_hands: dict[int, tuple[Card, ...]],
    stock: tuple[Card, ...],
) -> State:
    """A full state consistent with ``view``: ``hidden_hands`` gives every other
    player's whole hand (known cards included), ``stock`` the stock in draw order
    (its last card the face-up trump card while that is still in the stock).

    Raises ``WorldError`` when the guess contradicts the view.
    """
    n, me = view.num_players, view.player
    if set(hidden_hands) != {p for p in range(n) if p != me}:
        raise WorldError("hidden_hands must give the hand of every other player")
    hands = [0] * n
    hands[me] = mask_of(view.hand)
    used = hands[me] | mask_of(view.discard)
    table_mask = 0
    for attack, cover in view.table:
        table_mask |= 1 << attack
        if cover is not None:
            table_mask |= 1 << cover
    if used & table_mask:
        raise WorldError("the view itself is inconsistent")
    used |= table_mask
    for p, cards in hidden_hands.items():
        mask = mask_of(cards)
        if len(cards) != view.hand_sizes[p] or mask.bit_count() != len(cards):
            raise WorldError(f"player {p} holds {view.hand_sizes[p]} distinct cards")
        known = mask_of(view.known_cards[p])
        if mask & known != known:
            raise WorldError(f"player {p}'s hand must contain their known cards")
        if mask & used:
            raise WorldError(f"player {p}'s hand repeats a card placed elsewhere")
        hands[p] = mask
        used |= mask
    stock_mask = mask_of(stock)
    if len(stock) != view.stock_count or stock_mask.bit_count() != len(stock):
        raise WorldError(f"the stock holds {view.stock_count} distinct cards")
    if view.trump_card_in_stock != bool(stock):
        raise WorldError("the stock is empty exactly when the trump card was drawn")
    if stock and stock[-1] != view.trump_card:
        raise WorldError("the face-up trump card lies at the bottom of the stock")
    if stock_mask & used:
        raise WorldError("the stock repeats a card placed elsewhere")
    for p in range(n):
        if p != me and stock_mask & mask_of(view.known_cards[p]):
            raise WorldError("a known card cannot be in the stock")
    used |= stock_mask
    if used != mask_of(deck_cards(view.rules.deck_size)):
        raise WorldError("the guessed world does not hold exactly the deck's cards")

    ranks = 0
    attack_cards: list[Card] = []
    defense: list[Card | None] = []
    for attack, cover in view.table:
        attack_cards.append(attack)
        defense.append(cover)
        ranks |= CARD_RANK_MASK[attack]
        if cover is not None:
            ranks |= CARD_RANK_MASK[cover]
    return State(
        rules=view.rules,
        num_players=n,
        dealer=view.dealer,
        trump=view.trump,
        trump_card=view.trump_card,
        stock=tuple(stock),
        hands=tuple(hands),
        known=tuple(mask_of(k) for k in view.known_cards),
        discard=mask_of(view.discard),
        attack=tuple(attack_cards),
        defense=tuple(defense),
        ranks=ranks,
        leader=view.leader,
        attacker=view.attacker,
        defender=view.defender,
        limit=view.limit,
        passed=sum(1 << p for p in view.passed),  # own pass only: others' are hidden
        taking=view.taking,
        bout=view.bout,
        out=view.out,
        over=view.over,
        durak=view.durak,
        step=view.step,
        events=view.last_events,
        history=(None, view.history),
    )


def world_position(
    view: PlayerView,
    hidden_hands: dict[int, tuple[Card, ...]],
    stock: tuple[Card, ...],
) -> Position:
    """``determinize``'s world as a position of ``engine.core`` to search on (the
    search's one way to a hypothetical full game)."""
    return thaw(determinize(view, hidden_hands, stock))


__all__ = [
    "WorldError",
    "determinize",
    "hidden_slots",
    "public_mask",
    "unseen_cards",
    "world_position",
]
