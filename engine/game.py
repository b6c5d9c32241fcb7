"""The rules: dealing, legal actions and applying an action.

Pure functions over the immutable ``State``: no I/O, no clock, no global random.
Seat ``i``'s left neighbour is the next seat clockwise (``i + 1``) that is still in
play; players who are out are skipped everywhere.
"""

from __future__ import annotations

import random
from collections.abc import Callable
from itertools import combinations
from typing import Any, NamedTuple

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
    LOWEST_RANK,
    Card,
    cards_of,
    deck_cards,
    iter_cards,
)
from engine.errors import IllegalActionError, RulesError
from engine.events import (
    Attacked,
    Beaten,
    BoutStarted,
    Discarded,
    Drew,
    Event,
    GameOver,
    GameStarted,
    Passed,
    PickedUp,
    PlayerOut,
    Swapped,
    Took,
    Transferred,
    TrumpShown,
    by_running_out,
)
from engine.rules import HAND_SIZE, MAX_BOUT_CARDS, MAX_PLAYERS, Rules
from engine.state import State

# The hot path builds states and some events as plain tuples (a third of the cost of
# calling the class); tests/test_engine_properties.py checks their field orders.
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


# _LOWEST_TRUMP[deck_size][trump suit]: the "trump six" of a 36-card deck, and so on.
_LOWEST_TRUMP = {
    size: tuple(Card.of(low, suit) for suit in range(4)) for size, low in LOWEST_RANK.items()
}


def lowest_trump(state: State) -> Card:
    """The lowest trump of the deck (the trump six in 36 cards): the swappable one."""
    return _LOWEST_TRUMP[state.rules.deck_size][state.trump]


# --- who is in play -------------------------------------------------------------------


def _left_of(state: State, player: int, skip: int = 0) -> int:
    """The next seat clockwise after ``player`` still in play and not in the bit set
    ``skip`` (``player`` if none)."""
    return _next_in_play(state.num_players, state.out, state.hands, state.stock, player, skip)


def _next_in_play(
    n: int,
    out: tuple[int, ...],
    hands: tuple[int, ...],
    stock: tuple[Card, ...],
    player: int,
    skip: int = 0,
) -> int:
    """The next seat clockwise after ``player`` still in play (``player`` if none): not
    out, either holding cards or able to draw, and not in the bit set ``skip``."""
    for step in range(1, n):
        seat = (player + step) % n
        if seat not in out and (hands[seat] != 0 or stock) and not skip >> seat & 1:
            return seat
    return player


# _TEAMS[n][seat]: the bit set of the seats on ``seat``'s team (seat % 2) at n seats.
_TEAMS: tuple[tuple[int, ...], ...] = tuple(
    tuple(sum(1 << s for s in range(n) if s % 2 == seat % 2) for seat in range(n))
    for n in range(MAX_PLAYERS + 1)
)


def may_add_by_seat(state: State, seat: int) -> bool:
    """Whether ``seat``'s position lets them add cards to this bout: not the defender or
    a partner of theirs, not out, and any attacker (or, with ``throw_in="neighbours"``,
    only the attacker and the defender's left neighbour). Public: it ignores the cards."""
    defender = state.defender
    rules = state.rules
    if seat == defender or seat in state.out or (rules.partners and (seat ^ defender) & 1 == 0):
        return False
    return rules.throw_in == "all" or seat == state.attacker or seat == _left_of(state, defender)


def _can_throw_in(state: State, player: int) -> bool:
    """Whether ``player`` may add a card to this bout now: a matching card in hand, not
    passed since the last new rank, room on the table, and ``may_add_by_seat`` (inlined,
    cheapest tests first: this runs for every throw-in on the hot path)."""
    return (
        state.hands[player] & state.ranks != 0
        and not state.passed >> player & 1
        and len(state.attack) < state.limit
        and player != state.defender
        and player not in state.out
        and (
            state.rules.throw_in == "all"
            or player == state.attacker
            or player == _left_of(state, state.defender)
        )
        and not (state.rules.partners and (player ^ state.defender) & 1 == 0)
    )


def _bout_cap(state: State) -> int:
    if state.bout == 0:
        return state.rules.first_bout_cap(state.num_players)
    return MAX_BOUT_CARDS


def waiting_for(state: State) -> tuple[int, ...]:
    """The players who can act now, in priority order: uses hidden cards, so it is for
    drivers that hold the whole state (a server, the arena), never for display (see
    ``engine.must_act`` and ``PlayerView.waiting_for``).

    The defender (while cards are unbeaten and they have not taken) comes first, then
    every attacker who may still throw in, the attacker first and the rest clockwise.
    Empty once the game is over. A trump swap is never waited for.
    """
    if state.over:
        return ()
    if not state.attack:
        return (state.attacker,)
    defender = state.defender
    waiting = [defender] if not state.taking and None in state.defense else []
    if len(state.attack) < state.limit:
        # _can_throw_in for each seat, inlined (the hot path: this saves 2% of a game).
        attacker, hands, ranks, passed = state.attacker, state.hands, state.ranks, state.passed
        out = state.out
        everyone = state.rules.throw_in == "all"
        table = _OPPONENTS if state.rules.partners else _OTHERS
        for seat in table[state.num_players][attacker][defender]:
            if (
                hands[seat] & ranks
                and not passed >> seat & 1
                and seat not in out
                and (everyone or seat == attacker or seat == _left_of(state, defender))
            ):
                waiting.append(seat)
    return tuple(waiting)


# _OTHERS[n][first][defender]: the seats of an n-player table but ``defender``,
# clockwise from ``first``; _OPPONENTS: without any of the defender's team (partners).
# Precomputed so the hot path tests neither the defender's seat nor the partners flag.
_OTHERS: tuple[tuple[tuple[tuple[int, ...], ...], ...], ...] = tuple(
    tuple(
        tuple(tuple(s for s in ((first + k) % n for k in range(n)) if s != d) for d in range(n))
        for first in range(n)
    )
    for n in range(MAX_PLAYERS + 1)
)
_OPPONENTS: tuple[tuple[tuple[tuple[int, ...], ...], ...], ...] = tuple(
    tuple(
        tuple(
            tuple(s for s in ((first + k) % n for k in range(n)) if (s ^ d) & 1) for d in range(n)
        )
        for first in range(n)
    )
    for n in range(MAX_PLAYERS + 1)
)


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
            if state.rules.variant == "perevodnoy" and _transfer_target(state) is not None:
                same_rank = hand & CARD_RANK_MASK[state.attack[0]]
                actions.extend(TRANSFER[card] for card in iter_cards(same_rank))
    elif _can_throw_in(state, player):
        matching = hand & state.ranks
        while matching:
            low_bit = matching & -matching
            actions.append(ATTACK_ONE[low_bit.bit_length() - 1])
            matching ^= low_bit
        actions.append(PASS)
    if state.stock:  # the swap needs a face-up trump card still in the stock
        low = _LOWEST_TRUMP[state.rules.deck_size][state.trump]  # lowest_trump, inlined
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


def _transfer_target(state: State) -> int | None:
    """Who would defend after a transfer now, if a transfer is allowed at all."""
    defense = state.defense
    if defense.count(None) != len(defense) or not state.rules.transfer:
        return None  # a card is beaten already, or no transfers in this variant
    if state.ranks != CARD_RANK_MASK[state.attack[0]]:
        return None  # attack cards of more than one rank
    # The next player, skipping the defender's partners: the transferrer's side attacks
    # the new defender, so that must be an opponent of theirs.
    defender = state.defender
    skip = _TEAMS[state.num_players][defender] if state.rules.partners else 0
    target = _left_of(state, defender, skip)
    if target == defender:
        return None
    after = len(state.attack) + 1
    if after > state.hands[target].bit_count() or after > _bout_cap(state):
        return None
    return target


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
    return kind[1](state, player, action)


def is_legal(state: State, player: int, action: Action) -> bool:
    """``action in legal_actions(state, player)``, decided without listing them all."""
    kind = _KINDS.get(type(action))
    return (
        kind is not None
        and not state.over
        and 0 <= player < state.num_players
        and kind[0](state, player, action)
    )


# Each action type's legality check (for a game not over and a valid seat) and effect;
# one dictionary lookup replaces a chain of isinstance tests on the hot path.


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
    return single and mask & state.ranks != 0 and _can_throw_in(state, player)


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
    return bool(state.attack) and player != state.defender and _can_throw_in(state, player)


def _transfer_legal(state: State, player: int, action: Transfer) -> bool:
    return (
        player == state.defender
        and bool(state.attack)
        and not state.taking
        and (state.hands[player] & CARD_RANK_MASK[state.attack[0]]) >> action.card & 1 == 1
        and _transfer_target(state) is not None
    )


def _swap_legal(state: State, player: int, action: Swap) -> bool:
    low = lowest_trump(state)
    return (
        state.rules.trump_swap
        and bool(state.stock)
        and action.card == low
        and state.hands[player] >> low & 1 == 1
        and state.trump_card != low
    )


def _why_illegal(state: State, player: int, action: object, legal: list[Action]) -> str:
    head = f"player {player} cannot {action}"
    if state.over:
        return f"{head}: the game is over"
    if not legal:
        return f"{head}: it is not their move now"
    return f"{head}; legal now: {', '.join(str(a) for a in legal)}"


def _remove(state: State, player: int, mask: int) -> tuple[tuple[int, ...], tuple[int, ...]]:
    """Hands and known cards with ``mask`` gone from ``player``'s."""
    hands = list(state.hands)
    hands[player] &= ~mask
    known = state.known
    if known[player] & mask:  # rarely: most played cards were not known to be held
        known_list = list(known)
        known_list[player] &= ~mask
        known = tuple(known_list)
    return tuple(hands), known


def _attack(state: State, player: int, action: Attack) -> State:
    cards, mask = action.cards, action.mask
    # _remove, inlined (the hot path: most steps are attacks and beats).
    held = list(state.hands)
    held[player] &= ~mask
    hands = tuple(held)
    known = state.known
    if known[player] & mask:
        known_list = list(known)
        known_list[player] &= ~mask
        known = tuple(known_list)
    ranks = state.ranks | CARD_RANK_MASK[cards[0]]
    passed = state.passed if ranks == state.ranks else 0
    events = (_new_tuple(Attacked, (player, cards, "attacked")),)
    attack = state.attack + cards
    defense = state.defense + (None,) * len(cards)
    if not state.taking:  # an unbeaten card now lies on the table: the bout goes on
        return _table_step(state, events, hands, known, attack, defense, ranks, passed)
    return _step(
        state,
        events,
        hands=hands,
        known=known,
        attack=attack,
        defense=defense,
        ranks=ranks,
        passed=passed,
    )


def _beat(state: State, player: int, action: Beat) -> State:
    attack_card, card = action.attack, action.card
    # _remove, inlined (the hot path: most steps are attacks and beats).
    bit = 1 << card
    held = list(state.hands)
    held[player] &= ~bit
    hands = tuple(held)
    known = state.known
    if known[player] & bit:
        known_list = list(known)
        known_list[player] &= ~bit
        known = tuple(known_list)
    covers = list(state.defense)
    covers[state.attack.index(attack_card)] = card
    defense = tuple(covers)
    ranks = state.ranks | CARD_RANK_MASK[card]
    passed = state.passed if ranks == state.ranks else 0
    events = (_new_tuple(Beaten, (player, attack_card, card, "beaten")),)
    if None in defense:  # cards still unbeaten: the bout goes on
        return _table_step(state, events, hands, known, state.attack, defense, ranks, passed)
    return _step(
        state, events, hands=hands, known=known, defense=defense, ranks=ranks, passed=passed
    )


def _table_step(
    state: State,
    events: tuple[Event, ...],
    hands: tuple[int, ...],
    known: tuple[int, ...],
    attack: tuple[Card, ...],
    defense: tuple[Card | None, ...],
    ranks: int,
    passed: int,
) -> State:
    """A step that only moves a card from a hand to the table while an unbeaten card
    stays there, so the bout cannot end: the hottest path, built directly."""
    (
        rules, n, dealer, trump, trump_card, stock, _, _, discard, _, _, _, leader, attacker,
        defender, limit, _, taking, bout, out, over, durak, step, _, history,
    ) = state  # fmt: skip
    new: State = _new_tuple(
        State,
        (
            rules, n, dealer, trump, trump_card, stock, hands, known, discard,
            attack, defense, ranks, leader, attacker, defender, limit,
            passed, taking, bout, out, over, durak, step + 1, events, (history, events),
        ),
    )  # fmt: skip
    return new


def _transfer(state: State, player: int, action: Transfer) -> State:
    card = action.card
    target = _transfer_target(state)
    assert target is not None  # legal_actions offered the transfer
    hands, known = _remove(state, player, 1 << card)
    return _step(
        state,
        (Transferred(player, card, target),),
        hands=hands,
        known=known,
        attack=(*state.attack, card),
        defense=(*state.defense, None),
        attacker=player,
        defender=target,
        limit=min(_bout_cap(state), hands[target].bit_count()),
        passed=0,
    )


def _swap(state: State, player: int, action: Swap) -> State:
    low, face_up = action.card, state.trump_card
    hands = list(state.hands)
    hands[player] = hands[player] & ~(1 << low) | 1 << face_up
    known = list(state.known)
    known[player] = known[player] & ~(1 << low) | 1 << face_up
    # Giving the low trump away may leave this player nothing to throw in: _step checks.
    return _step(
        state,
        (Swapped(player, low, face_up),),
        hands=tuple(hands),
        known=tuple(known),
        stock=(*state.stock[:-1], low),
        trump_card=low,
    )


def _take(state: State, player: int, action: Take) -> State:
    return _step(state, (_new_tuple(Took, (player, "took")),), taking=True)


def _pass(state: State, player: int, action: Pass) -> State:
    passed = state.passed | 1 << player
    return _step(state, (_new_tuple(Passed, (player, "passed")),), passed=passed)


_KINDS: dict[type, tuple[Callable[[State, int, Any], bool], Callable[[State, int, Any], State]]] = {
    Attack: (_attack_legal, _attack),
    Beat: (_beat_legal, _beat),
    Take: (_take_legal, _take),
    Pass: (_pass_legal, _pass),
    Transfer: (_transfer_legal, _transfer),
    Swap: (_swap_legal, _swap),
}


def _step(
    state: State,
    events: tuple[Event, ...],
    *,
    trump_card: Card | None = None,
    stock: tuple[Card, ...] | None = None,
    hands: tuple[int, ...] | None = None,
    known: tuple[int, ...] | None = None,
    attack: tuple[Card, ...] | None = None,
    defense: tuple[Card | None, ...] | None = None,
    ranks: int | None = None,
    attacker: int | None = None,
    defender: int | None = None,
    limit: int | None = None,
    passed: int | None = None,
    taking: bool | None = None,
) -> State:
    """One step: the given fields change (the rest stay), then the bout ends if nobody
    can or will add anything more. This is the engine's hot path: the new fields stay
    local until we know which state to build, and states are built positionally."""
    (
        rules, n, dealer, trump, old_trump_card, old_stock, old_hands, old_known, discard,
        old_attack, old_defense, old_ranks, leader, old_attacker, old_defender, old_limit,
        old_passed, old_taking, bout, out, over, durak, step, _, history,
    ) = state  # fmt: skip
    if trump_card is None:
        trump_card = old_trump_card
    if stock is None:
        stock = old_stock
    if hands is None:
        hands = old_hands
    if known is None:
        known = old_known
    if attack is None:
        attack = old_attack
    if defense is None:
        defense = old_defense
    if ranks is None:
        ranks = old_ranks
    if attacker is None:
        attacker = old_attacker
    if defender is None:
        defender = old_defender
    if limit is None:
        limit = old_limit
    if passed is None:
        passed = old_passed
    if taking is None:
        taking = old_taking
    if (
        attack
        and (taking or None not in defense)
        and (
            (not taking and hands[defender] == 0)
            or not _anyone_can_throw_in(
                state, stock, hands, attacker, defender, len(attack), limit, ranks, passed
            )
        )
    ):
        return _end_bout(
            state, events, trump_card, stock, hands, known, attack, defense, defender, taking
        )
    new: State = _new_tuple(
        State,
        (
            rules, n, dealer, trump, trump_card, stock, hands, known, discard,
            attack, defense, ranks, leader, attacker, defender, limit,
            passed, taking, bout, out, over, durak, step + 1, events, (history, events),
        ),
    )  # fmt: skip
    return new


def _anyone_can_throw_in(
    state: State,
    stock: tuple[Card, ...],
    hands: tuple[int, ...],
    attacker: int,
    defender: int,
    table_size: int,
    limit: int,
    ranks: int,
    passed: int,
) -> bool:
    """Whether some attacker may still add a card (the state's other fields are current)."""
    if table_size >= limit:
        return False
    out, rules = state.out, state.rules
    table = _OPPONENTS if rules.partners else _OTHERS
    for player in table[state.num_players][attacker][defender]:
        if (
            hands[player] & ranks
            and not passed >> player & 1
            and player not in out
            and (
                rules.throw_in == "all"
                or player == attacker
                or player == _next_in_play(state.num_players, out, hands, stock, defender)
            )
        ):
            return True
    return False


def _end_bout(
    state: State,
    events: tuple[Event, ...],
    trump_card: Card,
    stock: tuple[Card, ...],
    old_hands: tuple[int, ...],
    known: tuple[int, ...],
    attack: tuple[Card, ...],
    defense: tuple[Card | None, ...],
    defender: int,
    taking: bool,
) -> State:
    """The step after ``state`` that closes its bout (``events`` and the fields given
    are that step's): pick up or discard, refill, find who is out, start the next bout."""
    n = state.num_players
    if None in defense:  # taken with cards unbeaten
        table = attack + tuple([c for c in defense if c is not None])
    else:
        table = attack + defense  # type: ignore[operator]  # no None left
    table_mask = 0
    for card in table:
        table_mask |= 1 << card
    hands = list(old_hands)
    discard = state.discard
    out = state.out
    log: list[Event] = list(events)
    if taking:
        hands[defender] |= table_mask
        known = (*known[:defender], known[defender] | table_mask, *known[defender + 1 :])
        log.append(_new_tuple(PickedUp, (defender, table, "picked_up")))
    else:
        discard |= table_mask
        log.append(_new_tuple(Discarded, (table, "discarded")))

    # Refill: the leader first, then the others clockwise, the defender last.
    order = _DRAW_ORDERS[n][state.leader][defender]
    if stock:
        for player in order:
            need = HAND_SIZE - hands[player].bit_count()
            if need <= 0:
                continue
            drawn, stock = stock[:need], stock[need:]
            hand = hands[player]
            for card in drawn:
                hand |= 1 << card
            hands[player] = hand
            if stock:
                log.append(_new_tuple(Drew, (player, len(drawn), None, "drew")))
                continue
            # The stock is empty now: everyone sees who took the face-up trump card.
            known = (*known[:player], known[player] | 1 << trump_card, *known[player + 1 :])
            log.append(Drew(player, len(drawn), trump_card))
            break

    if not stock:
        newly_out = [p for p in order if hands[p] == 0 and p not in out]
        if newly_out:
            if len(newly_out) > 1:
                newly_out = by_running_out(newly_out, events, state.history)
            out = (*out, *newly_out)
            log.extend(PlayerOut(p) for p in newly_out)

    # The partners flag is read only where it matters: once the stock is empty, or
    # when someone is out (the classic game's usual bout pays nothing for it).
    if not stock and (len(out) >= n - 1 or (state.rules.partners and _side_out(n, out))):
        over = True
        remaining = [p for p in range(n) if p not in out]
        durak = remaining[0] if remaining else None
        losing_team = durak % 2 if state.rules.partners and durak is not None else None
        log.append(GameOver(durak, (*out, *remaining), losing_team))
        attacker = new_defender = state.attacker
        limit = 0
    else:
        over = False
        durak = None
        # Taking (or having no cards left) loses the turn to lead.
        if taking or hands[defender] == 0:
            attacker = (defender + 1) % n if not out else _next_holding(n, out, defender)
        else:
            attacker = defender
        if not out:  # partners' seats alternate, so the left neighbour is an opponent
            new_defender = (attacker + 1) % n
        else:
            skip = _TEAMS[n][attacker] if state.rules.partners else 0
            new_defender = _next_holding(n, out, attacker, skip)
        limit = hands[new_defender].bit_count()
        if limit > MAX_BOUT_CARDS:
            limit = MAX_BOUT_CARDS
        log.append(_new_tuple(BoutStarted, (attacker, new_defender, limit, "bout_started")))
    final = tuple(log)
    new: State = _new_tuple(
        State,
        (
            state.rules,
            n,
            state.dealer,
            state.trump,
            trump_card,
            stock,
            tuple(hands),
            known,
            discard,
            (),  # attack
            (),  # defense
            0,  # ranks
            attacker,  # leader
            attacker,
            new_defender,
            limit,
            0,  # passed
            False,  # taking
            state.bout + 1,
            out,
            over,
            durak,
            state.step + 1,
            final,
            (state.history, final),
        ),
    )
    return new


def _draw_order(n: int, leader: int, defender: int) -> tuple[int, ...]:
    """The leader first, then the others clockwise, the defender last."""
    return (*_OTHERS[n][leader][defender], defender)


# _DRAW_ORDERS[n][leader][defender]
_DRAW_ORDERS: tuple[tuple[tuple[tuple[int, ...], ...], ...], ...] = tuple(
    tuple(tuple(_draw_order(n, leader, d) for d in range(n)) for leader in range(n))
    for n in range(MAX_PLAYERS + 1)
)


def _next_holding(n: int, out: tuple[int, ...], player: int, skip: int = 0) -> int:
    """The next seat clockwise after ``player`` that is not out and not in the bit set
    ``skip`` (between bouts everyone not out holds cards)."""
    for step in range(1, n):
        seat = (player + step) % n
        if seat not in out and not skip >> seat & 1:
            return seat
    return player


def _side_out(n: int, out: tuple[int, ...]) -> bool:
    """Whether one side of a partners game (or both) has no cards left (stock empty)."""
    return all(p in out for p in range(0, n, 2)) or all(p in out for p in range(1, n, 2))


def result(state: State) -> GameResult | None:
    """The outcome once the game is over, else None."""
    if not state.over:
        return None
    remaining = tuple(p for p in range(state.num_players) if p not in state.out)
    losing_team = None
    if state.rules.partners and state.durak is not None:
        losing_team = state.durak % 2
    return GameResult(state.durak, (*state.out, *remaining), losing_team)
