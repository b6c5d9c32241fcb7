"""The public rules API: dealing, legal actions and applying an action.

Pure functions over the immutable ``State``: no I/O, no clock, no global random.
What an action does is ``engine.core``'s (the one implementation of the rules, which
Hard's search plays on too); ``apply`` checks legality, then steps a thawed copy.
"""

from __future__ import annotations

import random
from collections.abc import Callable
from itertools import combinations
from typing import Any, NamedTuple

from engine import core
from engine.actions import (
    ATTACK_ONE,
    BEAT,
    PASS,
    SWAP,
    TAKE,
    TRANSFER,
    Action,
    Attack,
    Beat,
    Pass,
    Swap,
    Take,
    Transfer,
    attack_of,
)
from engine.cards import (
    BEATERS,
    CARD_RANK_MASK,
    CARDS,
    Card,
    cards_of,
    deck_cards,
    iter_cards,
)
from engine.errors import IllegalActionError, RulesError
from engine.events import BoutStarted, Event, GameStarted, TrumpShown
from engine.rules import HAND_SIZE, MAX_BOUT_CARDS, Rules
from engine.state import State

_new_tuple = tuple.__new__


class GameResult(NamedTuple):
    durak: int | None
    """The loser, or None for a draw. In a partners game: the losing team's first seat
    still holding cards (read ``losers`` or ``losing_team`` there)."""
    order: tuple[int, ...]
    """Finishing order: who ran out of cards first comes first (within one bout, in
    the order they played their last card); then whoever still holds cards (the
    durak, or in a partners game the losing team's players still holding cards)."""
    losing_team: int | None = None
    """Partners games: the team (seat % 2) that lost; None for a draw and without partners."""

    @property
    def draw(self) -> bool:
        return self.durak is None

    @property
    def losers(self) -> tuple[int, ...]:
        """Every durak of the game: the durak, or each member of the losing team
        (also those who had run out of cards); empty for a draw."""
        if self.losing_team is not None:
            return tuple(p for p in sorted(self.order) if p % 2 == self.losing_team)
        return () if self.durak is None else (self.durak,)


def team_of(rules: Rules, seat: int) -> int | None:
    """A seat's team in a partners game (seat % 2: partners sit opposite in 4,
    alternate in 6); None without partners."""
    return seat % 2 if rules.partners else None


# --- setting up -----------------------------------------------------------------------


def new_game(
    rules: Rules,
    num_players: int,
    *,
    seed: int | None = None,
    deck: list[Card] | tuple[Card, ...] | None = None,
    dealer: int | None = 0,
    first_game: bool = True,
) -> State:
    """Deal a new game.

    ``seed`` shuffles reproducibly; ``deck`` is an explicit order: its first card goes
    to the dealer's left neighbour, the next to the player after them, clockwise for 6
    rounds; the next card is the trump card; the rest is the stock, drawn in list
    order, the trump card after them. ``dealer=None`` draws the dealer by lot from
    ``seed`` (``dealer_by_lot``), as the first game of a table does.

    ``first_game=True``: whoever holds the lowest trump attacks first (the first game,
    and any game after a drawn one, when there is no durak to deal). ``False`` (a
    later game of a series, dealt by the last durak): the dealer's left neighbour.
    """
    rules.check_players(num_players)
    if dealer is None:
        dealer = dealer_by_lot(num_players, seed)
    if not 0 <= dealer < num_players:
        raise RulesError(f"dealer must be a seat from 0 to {num_players - 1}, not {dealer}")
    full = deck_cards(rules.deck_size)
    if deck is None:
        order = list(full)
        random.Random(seed).shuffle(order)
    else:
        order = [Card(c) if not isinstance(c, Card) else c for c in deck]
        if sorted(order) != list(full):
            raise RulesError(f"the deck must hold each of the {rules.deck_size} cards exactly once")
    n = num_players
    dealt = HAND_SIZE * n
    hands = [0] * n
    for i, card in enumerate(order[:dealt]):
        hands[(dealer + 1 + i) % n] |= 1 << card
    known = [0] * n
    events: list[Event] = []
    if len(order) > dealt:
        trump_card = order[dealt]
        stock = (*order[dealt + 1 :], trump_card)
    else:
        # The deal used the whole deck: the dealer shows their last card, keeps it.
        trump_card = order[dealt - 1]
        stock = ()
        known[dealer] |= 1 << trump_card
        events.append(TrumpShown(dealer, trump_card))
    trump = trump_card // 13
    attacker = (dealer + 1) % n
    if first_game:
        holder = _lowest_trump_holder(hands, trump)
        if holder is not None:
            player, card = holder
            attacker = player
            known[player] |= 1 << card
            events.append(TrumpShown(player, card))
    defender = (attacker + 1) % n  # an opponent: partners' seats alternate
    limit = min(rules.first_bout_cap(n), hands[defender].bit_count())
    events.insert(0, GameStarted(dealer, trump_card, attacker, defender))
    events.append(BoutStarted(attacker, defender, limit))
    step_events = tuple(events)
    return State(
        rules=rules,
        num_players=n,
        dealer=dealer,
        trump=trump,
        trump_card=trump_card,
        stock=stock,
        hands=tuple(hands),
        known=tuple(known),
        discard=0,
        attack=(),
        defense=(),
        ranks=0,
        leader=attacker,
        attacker=attacker,
        defender=defender,
        limit=limit,
        passed=0,
        taking=False,
        bout=0,
        out=(),
        over=False,
        durak=None,
        step=0,
        events=step_events,
        history=(None, step_events),
    )


def dealer_by_lot(num_players: int, seed: int | None) -> int:
    """The first dealer drawn by lot, reproducibly from ``seed`` (German seed: "Im
    ersten Spiel wird der Geber ausgelost"); independent of the deck's shuffle."""
    return random.Random(f"dealer:{seed}").randrange(num_players)


def _lowest_trump_holder(hands: list[int], trump: int) -> tuple[int, Card] | None:
    """Who holds the lowest trump dealt, and that card (None if no trump was dealt)."""
    best: tuple[int, int] | None = None
    for player, hand in enumerate(hands):
        trumps = hand >> trump * 13 & _SUIT_CHUNK
        if trumps:
            index = (trumps & -trumps).bit_length() - 1
            if best is None or index < best[1]:
                best = (player, index)
    return None if best is None else (best[0], CARDS[trump * 13 + best[1]])


def lowest_trump(state: State) -> Card:
    """The lowest trump of the deck (the trump six in 36 cards): the swappable one."""
    return core.lowest_trump(state)


def may_add_by_seat(state: State, seat: int) -> bool:
    """Whether ``seat``'s position lets them add cards to this bout (public: it ignores
    the cards; see ``engine.core.may_add_by_seat``)."""
    return core.may_add_by_seat(state, seat)


waiting_for = core.waiting
"""Who can act now, in priority order (hidden cards decide it: never for display)."""


# --- legal actions --------------------------------------------------------------------


def legal_actions(state: State, player: int) -> list[Action]:
    """Every action ``player`` may take now; empty when they cannot act."""
    if not 0 <= player < state.num_players:
        raise IllegalActionError(f"no seat {player} in a {state.num_players}-player game")
    if state.over:
        return []
    actions: list[Action] = []
    hand = state.hands[player]
    if not state.attack:
        if player == state.attacker:
            _lead_options(state, hand, actions)
    elif player == state.defender:
        if not state.taking and None in state.defense:
            beaters = BEATERS[state.trump]
            attack = state.attack
            for index, cover in enumerate(state.defense):
                if cover is None:
                    attack_card = attack[index]
                    beat_row = BEAT[attack_card]
                    options = hand & beaters[attack_card]
                    while options:
                        low_bit = options & -options
                        actions.append(beat_row[low_bit.bit_length() - 1])
                        options ^= low_bit
            actions.append(TAKE)
            if state.rules.variant == "perevodnoy" and core.transfer_target(state) is not None:
                same_rank = hand & CARD_RANK_MASK[state.attack[0]]
                actions.extend(TRANSFER[card] for card in iter_cards(same_rank))
    elif core.can_throw_in(state, player):
        matching = hand & state.ranks
        while matching:
            low_bit = matching & -matching
            actions.append(ATTACK_ONE[low_bit.bit_length() - 1])
            matching ^= low_bit
        actions.append(PASS)
    if state.stock:  # the swap needs a face-up trump card still in the stock
        low = core.LOWEST_TRUMP[state.rules.deck_size][state.trump]  # lowest_trump, inlined
        if hand >> low & 1 and state.rules.trump_swap and state.trump_card != low:
            actions.append(SWAP[low])
    return actions


def _lead_options(state: State, hand: int, actions: list[Action]) -> None:
    # A hand is four 13-bit suit chunks; each chunk's single-card leads are cached.
    suit0, suit1 = hand & _SUIT_CHUNK, hand >> 13 & _SUIT_CHUNK
    suit2, suit3 = hand >> 26 & _SUIT_CHUNK, hand >> 39
    if suit0:
        actions += _LEADS[0].get(suit0) or _single_leads(0, suit0)
    if suit1:
        actions += _LEADS[1].get(suit1) or _single_leads(1, suit1)
    if suit2:
        actions += _LEADS[2].get(suit2) or _single_leads(2, suit2)
    if suit3:
        actions += _LEADS[3].get(suit3) or _single_leads(3, suit3)
    # Ranks held in two or more suits (bit i: rank index i).
    repeated = suit0 & suit1 | (suit0 | suit1) & suit2 | (suit0 | suit1 | suit2) & suit3
    limit = state.limit
    if repeated and limit >= 2 and state.rules.multi_card_lead:
        known_leads = _MULTI_LEADS[limit]
        while repeated:
            low = repeated & -repeated
            same_rank = hand & _RANK_COLUMN << (low.bit_length() - 1)
            actions += known_leads.get(same_rank) or _multi_leads(same_rank, limit)
            repeated ^= low


_SUIT_CHUNK = (1 << 13) - 1
_RANK_COLUMN = 1 | 1 << 13 | 1 << 26 | 1 << 39  # the four cards of rank index 0
_LEADS: tuple[dict[int, tuple[Attack, ...]], ...] = ({}, {}, {}, {})
"""Per suit: the single-card leads of each set of that suit's cards (at most 2**13)."""


def _single_leads(suit: int, chunk: int) -> tuple[Attack, ...]:
    found = _LEADS[suit][chunk] = tuple(ATTACK_ONE[suit * 13 + c] for c in iter_cards(chunk))
    return found


# _MULTI_LEADS[limit][same_rank]: the leads of 2+ cards of one rank, found so far.
_MULTI_LEADS: tuple[dict[int, tuple[Attack, ...]], ...] = tuple(
    {} for _ in range(MAX_BOUT_CARDS + 1)
)


def _multi_leads(same_rank: int, limit: int) -> tuple[Attack, ...]:
    """Every lead of 2+ cards from ``same_rank`` (cards of one rank), at most ``limit``."""
    cards = cards_of(same_rank)
    found = _MULTI_LEADS[limit][same_rank] = tuple(
        attack_of(combo)
        for size in range(2, min(len(cards), limit) + 1)
        for combo in combinations(cards, size)
    )
    return found


# --- applying an action ---------------------------------------------------------------


def apply(state: State, player: int, action: Action) -> State:
    """The state after ``player`` takes ``action``; ``IllegalActionError`` if not legal."""
    kind = _KINDS.get(type(action))
    if (
        kind is None
        or state.over
        or not 0 <= player < state.num_players
        or not kind[0](state, player, action)
    ):
        raise IllegalActionError(_why_illegal(state, player, action, legal_actions(state, player)))
    return core.advance(state, player, action, kind[1])  # the one rules core


def is_legal(state: State, player: int, action: Action) -> bool:
    """``action in legal_actions(state, player)``, decided without listing them all."""
    legal = _LEGAL.get(type(action))
    return (
        legal is not None
        and not state.over
        and 0 <= player < state.num_players
        and legal(state, player, action)
    )


def _attack_legal(state: State, player: int, action: Attack) -> bool:
    cards, mask = action.cards, action.mask
    single = len(cards) == 1
    if state.hands[player] & mask != mask or (not single and mask.bit_count() != len(cards)):
        return False  # a card not held, or one card twice
    if not state.attack:
        return (
            player == state.attacker
            and mask & ~CARD_RANK_MASK[cards[0]] == 0  # one rank
            and (single or (state.rules.multi_card_lead and len(cards) <= state.limit))
        )
    return single and mask & state.ranks != 0 and core.can_throw_in(state, player)


def _beat_legal(state: State, player: int, action: Beat) -> bool:
    if player != state.defender or state.taking or not state.hands[player] >> action.card & 1:
        return False
    try:
        index = state.attack.index(action.attack)
    except ValueError:
        return False
    return (
        state.defense[index] is None and BEATERS[state.trump][action.attack] >> action.card & 1 == 1
    )


def _take_legal(state: State, player: int, action: Take) -> bool:
    return player == state.defender and not state.taking and None in state.defense


def _pass_legal(state: State, player: int, action: Pass) -> bool:
    return bool(state.attack) and player != state.defender and core.can_throw_in(state, player)


def _transfer_legal(state: State, player: int, action: Transfer) -> bool:
    return (
        player == state.defender
        and bool(state.attack)
        and not state.taking
        and (state.hands[player] & CARD_RANK_MASK[state.attack[0]]) >> action.card & 1 == 1
        and core.transfer_target(state) is not None
    )


def _swap_legal(state: State, player: int, action: Swap) -> bool:
    return action.card == core.lowest_trump(state) and core.can_swap(state, player)


def _why_illegal(state: State, player: int, action: object, legal: list[Action]) -> str:
    head = f"player {player} cannot {action}"
    if state.over:
        return f"{head}: the game is over"
    if not legal:
        return f"{head}: it is not their move now"
    return f"{head}; legal now: {', '.join(str(a) for a in legal)}"


# Each action type's legality check (for a game not over and a valid seat): one
# dictionary lookup replaces a chain of isinstance tests on the hot path.
_LEGAL: dict[type, Callable[[State, int, Any], bool]] = {
    Attack: _attack_legal,
    Beat: _beat_legal,
    Take: _take_legal,
    Pass: _pass_legal,
    Transfer: _transfer_legal,
    Swap: _swap_legal,
}
_KINDS = {kind: (legal, core.STEPS[kind]) for kind, legal in _LEGAL.items()}
"""Each action type's legality check and step, found with one lookup."""


def result(state: State) -> GameResult | None:
    """The outcome once the game is over, else None."""
    if not state.over:
        return None
    remaining = tuple(p for p in range(state.num_players) if p not in state.out)
    losing_team = None
    if state.rules.partners and state.durak is not None:
        losing_team = state.durak % 2
    return GameResult(state.durak, (*state.out, *remaining), losing_team)
