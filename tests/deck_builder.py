"""Build explicit deck orders for scenario tests from readable hands."""

from __future__ import annotations

from engine import Card, State, legal_actions, new_game, parse_action
from engine.cards import deck_cards
from engine.game import apply
from engine.rules import HAND_SIZE, Rules


def cards(text: str) -> tuple[Card, ...]:
    return tuple(Card.parse(word) for word in text.split())


def build_deck(
    hands: list[str],
    trump_card: str | None,
    stock: str = "",
    *,
    dealer: int = 0,
    deck_size: int = 36,
) -> list[Card]:
    """A deck order that deals ``hands[i]`` (6 cards each) to seat ``i``.

    ``trump_card`` is the face-up card (None when the deal uses the whole deck);
    ``stock`` lists the first cards to be drawn; every card not named anywhere is
    appended to the stock after them, and the trump card is drawn last.
    """
    n = len(hands)
    seat_cards = [cards(h) for h in hands]
    assert all(len(h) == HAND_SIZE for h in seat_cards), "each hand needs 6 cards"
    order: list[Card] = []
    for round_ in range(HAND_SIZE):
        for offset in range(n):
            seat = (dealer + 1 + offset) % n
            order.append(seat_cards[seat][round_])
    named = list(order)
    rest_first = cards(stock)
    if trump_card is not None:
        trump = Card.parse(trump_card)
        named += [trump, *rest_first]
        remaining = [c for c in deck_cards(deck_size) if c not in named]
        order += [trump, *rest_first, *remaining]
    else:
        assert not rest_first
    assert sorted(order) == sorted(deck_cards(deck_size)), "cards repeated or missing"
    return order


def game(
    hands: list[str],
    trump_card: str | None,
    stock: str = "",
    *,
    rules: Rules | None = None,
    dealer: int = 0,
    first_game: bool = True,
) -> State:
    rules = rules or Rules()
    deck = build_deck(hands, trump_card, stock, dealer=dealer, deck_size=rules.deck_size)
    return new_game(rules, len(hands), deck=deck, dealer=dealer, first_game=first_game)


def play(state: State, *moves: str) -> State:
    """Apply moves written as ``"<seat>: <action text>"``."""
    for move in moves:
        seat, text = move.split(":", 1)
        state = apply(state, int(seat), parse_action(text))
    return state


def legal(state: State, player: int) -> set[str]:
    return {str(a) for a in legal_actions(state, player)}


def position(
    hands: list[str],
    trump_card: str,
    *,
    stock: str = "",
    attacker: int = 0,
    defender: int | None = None,
    out: tuple[int, ...] = (),
    bout: int = 1,
    rules: Rules | None = None,
) -> State:
    """A mid-game position at the start of a bout (hands may hold any number of cards).

    ``stock`` lists the cards still to draw, in order, *before* the face-up trump
    card; with an empty ``stock`` and ``trump_card`` not in any hand the stock is
    empty and the trump card was drawn earlier by nobody in particular (it is in
    the discard pile). Every card not placed is in the discard pile.
    """
    from engine.cards import mask_of
    from engine.rules import MAX_BOUT_CARDS

    rules = rules or Rules()
    base = new_game(rules, len(hands), seed=0)
    hand_masks = tuple(mask_of(cards(h)) for h in hands)
    trump = Card.parse(trump_card)
    stock_cards = tuple(cards(stock))
    stock_tuple = (*stock_cards, trump) if stock_cards else ()
    placed = 0
    for m in hand_masks:
        assert placed & m == 0, "a card is in two hands"
        placed |= m
    placed |= mask_of(stock_tuple)
    everything = mask_of(deck_cards(rules.deck_size))
    assert placed & ~everything == 0, "a card is not in this deck"
    if defender is None:
        defender = (attacker + 1) % len(hands)
    return base._replace(
        trump=trump // 13,
        trump_card=trump,
        stock=stock_tuple,
        hands=hand_masks,
        known=(0,) * len(hands),
        discard=everything & ~placed,
        leader=attacker,
        attacker=attacker,
        defender=defender,
        limit=min(MAX_BOUT_CARDS, hand_masks[defender].bit_count()),
        bout=bout,
        out=out,
        events=(),
        history=None,
    )
