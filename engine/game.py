"""The rules: dealing, legal actions and applying an action.

Pure functions over the immutable ``State``: no I/O, no clock, no global random.
Seat ``i``'s left neighbour is the next seat clockwise (``i + 1``) that is still in
play; players who are out are skipped everywhere.
"""

from __future__ import annotations

import random
from itertools import combinations
from typing import NamedTuple

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
    LOWEST_RANK,
    Card,
    cards_of,
    deck_cards,
    iter_cards,
    mask_of,
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
)
from engine.rules import FIRST_BOUT_MAX_CARDS, HAND_SIZE, MAX_BOUT_CARDS, Rules
from engine.state import State

# _step and _end_bout build states positionally (the hot path): keep them in step with State.
assert State._fields == (
    "rules", "num_players", "dealer", "trump", "trump_card", "stock", "hands", "known",
    "discard", "attack", "defense", "ranks", "leader", "attacker", "defender", "limit",
    "passed", "taking", "bout", "out", "over", "durak", "step", "events", "history",
)  # fmt: skip
_new_tuple = tuple.__new__


class GameResult(NamedTuple):
    durak: int | None
    """The loser, or None for a draw."""
    order: tuple[int, ...]
    """Finishing order: who went out first comes first; the durak (if any) last."""

    @property
    def draw(self) -> bool:
        return self.durak is None


# --- setting up -----------------------------------------------------------------------


def new_game(
    rules: Rules,
    num_players: int,
    *,
    seed: int | None = None,
    deck: list[Card] | tuple[Card, ...] | None = None,
    dealer: int = 0,
    first_game: bool = True,
) -> State:
    """Deal a new game.

    ``seed`` shuffles reproducibly; ``deck`` is an explicit order: its first card goes
    to the dealer's left neighbour, the next to the player after them, clockwise for 6
    rounds; the next card is the trump card; the rest is the stock, drawn in list
    order, the trump card after them. ``first_game=False`` (later games of a series)
    lets the dealer's left neighbour attack instead of the lowest trump.
    """
    rules.check_players(num_players)
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
        holder = _lowest_trump_holder(hands, trump, rules.deck_size)
        if holder is not None:
            player, card = holder
            attacker = player
            known[player] |= 1 << card
            events.append(TrumpShown(player, card))
    defender = (attacker + 1) % n
    cap = FIRST_BOUT_MAX_CARDS if rules.first_bout_limit else MAX_BOUT_CARDS
    limit = min(cap, hands[defender].bit_count())
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


def _lowest_trump_holder(hands: list[int], trump: int, deck_size: int) -> tuple[int, Card] | None:
    for rank in range(LOWEST_RANK[deck_size], 15):
        card = Card.of(rank, trump)
        for player, hand in enumerate(hands):
            if hand >> card & 1:
                return player, card
    return None


# Index of the lowest rank within a suit (the "trump six" is trump * 13 + this).
_LOWEST_INDEX = {size: low - 2 for size, low in LOWEST_RANK.items()}
_LOWEST_TRUMP = {
    (size, suit): Card.of(low, suit) for size, low in LOWEST_RANK.items() for suit in range(4)
}


def lowest_trump(state: State) -> Card:
    """The lowest trump of the deck (the trump six in 36 cards): the swappable one."""
    return _LOWEST_TRUMP[state.rules.deck_size, state.trump]


# --- who is in play -------------------------------------------------------------------


def _in_play(state: State, player: int) -> bool:
    """Still part of the game: not out, and either holding cards or able to draw."""
    return player not in state.out and (state.hands[player] != 0 or bool(state.stock))


def _left_of(state: State, player: int) -> int:
    """The next seat clockwise after ``player`` still in play (``player`` if none)."""
    n = state.num_players
    for step in range(1, n):
        seat = (player + step) % n
        if _in_play(state, seat):
            return seat
    return player


def _may_throw_in(state: State, player: int) -> bool:
    """Whether ``player``'s seat may add cards to this bout (ignoring hand and limit)."""
    if player == state.defender or player in state.out:
        return False
    if state.rules.throw_in == "all":
        return True
    return player == state.attacker or player == _left_of(state, state.defender)


def _can_throw_in(state: State, player: int) -> bool:
    return (
        not state.passed >> player & 1
        and len(state.attack) < state.limit
        and state.hands[player] & state.ranks != 0
        and _may_throw_in(state, player)
    )


def _bout_cap(state: State) -> int:
    if state.bout == 0 and state.rules.first_bout_limit:
        return FIRST_BOUT_MAX_CARDS
    return MAX_BOUT_CARDS


def waiting_for(state: State) -> tuple[int, ...]:
    """The players the game is waiting on, in priority order.

    The defender (while cards are unbeaten and they have not taken) comes first, then
    every attacker who may still throw in, the attacker first and the rest clockwise.
    Empty once the game is over. A trump swap is never waited for.
    """
    if state.over:
        return ()
    if not state.attack:
        return (state.attacker,)
    waiting: list[int] = []
    if not state.taking and None in state.defense:
        waiting.append(state.defender)
    if len(state.attack) < state.limit:
        n, attacker = state.num_players, state.attacker
        hands, ranks = state.hands, state.ranks
        for step in range(n):
            seat = (attacker + step) % n
            if hands[seat] & ranks and _can_throw_in(state, seat):
                waiting.append(seat)
    return tuple(waiting)


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
            _defence_options(state, hand, actions)
    elif _can_throw_in(state, player):
        matching = hand & state.ranks
        while matching:
            low_bit = matching & -matching
            actions.append(ATTACK_ONE[low_bit.bit_length() - 1])
            matching ^= low_bit
        actions.append(PASS)
    # Cheapest test first: most hands do not hold the lowest trump.
    low = state.trump * 13 + _LOWEST_INDEX[state.rules.deck_size]
    if hand >> low & 1 and state.stock and state.rules.trump_swap and state.trump_card != low:
        actions.append(SWAP[low])
    return actions


def _lead_options(state: State, hand: int, actions: list[Action]) -> None:
    seen_ranks = 0
    repeated_ranks = 0
    while hand:
        low = hand & -hand
        card = low.bit_length() - 1
        actions.append(ATTACK_ONE[card])
        rank_mask = CARD_RANK_MASK[card]
        if seen_ranks & rank_mask:
            repeated_ranks |= rank_mask
        seen_ranks |= rank_mask
        hand ^= low
    if repeated_ranks and state.rules.multi_card_lead and state.limit >= 2:
        hand = state.hands[state.attacker]
        while repeated_ranks:
            low = repeated_ranks & -repeated_ranks
            rank_mask = CARD_RANK_MASK[low.bit_length() - 1]
            actions.extend(_multi_leads(hand & rank_mask, state.limit))
            repeated_ranks &= ~rank_mask


_MULTI_LEADS: dict[tuple[int, int], tuple[Attack, ...]] = {}


def _multi_leads(same_rank: int, limit: int) -> tuple[Attack, ...]:
    """Every lead of 2+ cards from ``same_rank`` (cards of one rank), at most ``limit``."""
    key = (same_rank, limit)
    found = _MULTI_LEADS.get(key)
    if found is None:
        cards = cards_of(same_rank)
        found = _MULTI_LEADS[key] = tuple(
            attack_of(combo)
            for size in range(2, min(len(cards), limit) + 1)
            for combo in combinations(cards, size)
        )
    return found


def _defence_options(state: State, hand: int, actions: list[Action]) -> None:
    beaters = BEATERS[state.trump]
    for attack_card, cover in zip(state.attack, state.defense, strict=True):
        if cover is None:
            beat_row = BEAT[attack_card]
            options = hand & beaters[attack_card]
            while options:
                low_bit = options & -options
                actions.append(beat_row[low_bit.bit_length() - 1])
                options ^= low_bit
    actions.append(TAKE)
    target = _transfer_target(state) if state.rules.transfer else None
    if target is not None:
        for card in iter_cards(hand & CARD_RANK_MASK[state.attack[0]]):
            actions.append(TRANSFER[card])


def _transfer_target(state: State) -> int | None:
    """Who would defend after a transfer now, if a transfer is allowed at all."""
    if not state.rules.transfer or any(c is not None for c in state.defense):
        return None
    if state.ranks != CARD_RANK_MASK[state.attack[0]]:
        return None  # attack cards of more than one rank
    target = _left_of(state, state.defender)
    if target == state.defender:
        return None
    after = len(state.attack) + 1
    if after > state.hands[target].bit_count() or after > _bout_cap(state):
        return None
    return target


# --- applying an action ---------------------------------------------------------------


def apply(state: State, player: int, action: Action) -> State:
    """The state after ``player`` takes ``action``; ``IllegalActionError`` if not legal."""
    if not is_legal(state, player, action):
        raise IllegalActionError(_why_illegal(state, player, action, legal_actions(state, player)))
    if isinstance(action, Attack):
        return _attack(state, player, action.cards)
    if isinstance(action, Beat):
        return _beat(state, player, action.attack, action.card)
    if isinstance(action, Take):
        return _step(state, (Took(player),), taking=True)
    if isinstance(action, Pass):
        return _step(state, (Passed(player),), passed=state.passed | 1 << player)
    if isinstance(action, Transfer):
        return _transfer(state, player, action.card)
    return _swap(state, player, action)


def is_legal(state: State, player: int, action: Action) -> bool:
    """``action in legal_actions(state, player)``, decided without listing them all."""
    if state.over or not 0 <= player < state.num_players:
        return False
    hand = state.hands[player]
    if isinstance(action, Attack):
        cards = action.cards
        if len(cards) == 1:
            mask = 1 << cards[0]
        else:
            mask = mask_of(cards)
            if len(set(cards)) != len(cards):
                return False
        if hand & mask != mask:
            return False
        if not state.attack:
            return (
                player == state.attacker
                and all(c.rank == cards[0].rank for c in cards)
                and (len(cards) == 1 or (state.rules.multi_card_lead and len(cards) <= state.limit))
            )
        return (
            len(cards) == 1
            and player != state.defender
            and mask & state.ranks != 0
            and _can_throw_in(state, player)
        )
    if isinstance(action, Beat):
        if player != state.defender or state.taking or not hand >> action.card & 1:
            return False
        try:
            index = state.attack.index(action.attack)
        except ValueError:
            return False
        return (
            state.defense[index] is None
            and BEATERS[state.trump][action.attack] >> action.card & 1 == 1
        )
    if isinstance(action, Take):
        return player == state.defender and not state.taking and None in state.defense
    if isinstance(action, Pass):
        return bool(state.attack) and player != state.defender and _can_throw_in(state, player)
    if isinstance(action, Transfer):
        return (
            player == state.defender
            and bool(state.attack)
            and not state.taking
            and (hand & CARD_RANK_MASK[state.attack[0]]) >> action.card & 1 == 1
            and _transfer_target(state) is not None
        )
    if isinstance(action, Swap):
        low = lowest_trump(state)
        return (
            state.rules.trump_swap
            and bool(state.stock)
            and action.card == low
            and hand >> low & 1 == 1
            and state.trump_card != low
        )
    return False


def _why_illegal(state: State, player: int, action: object, legal: list[Action]) -> str:
    head = f"player {player} cannot {action}"
    if state.over:
        return f"{head}: the game is over"
    if not legal:
        return f"{head}: it is not their move now"
    return f"{head}; legal now: {', '.join(str(a) for a in legal)}"


def _remove(state: State, player: int, mask: int) -> tuple[tuple[int, ...], tuple[int, ...]]:
    hands, known, keep = state.hands, state.known, ~mask
    return (
        (*hands[:player], hands[player] & keep, *hands[player + 1 :]),
        (*known[:player], known[player] & keep, *known[player + 1 :]),
    )


def _attack(state: State, player: int, cards: tuple[Card, ...]) -> State:
    mask = mask_of(cards)
    hands, known = _remove(state, player, mask)
    ranks = state.ranks | CARD_RANK_MASK[cards[0]]
    passed = state.passed if ranks == state.ranks else 0
    return _step(
        state,
        (Attacked(player, cards),),
        hands=hands,
        known=known,
        attack=state.attack + cards,
        defense=state.defense + (None,) * len(cards),
        ranks=ranks,
        passed=passed,
    )


def _beat(state: State, player: int, attack_card: Card, card: Card) -> State:
    hands, known = _remove(state, player, 1 << card)
    index = state.attack.index(attack_card)
    defense = (*state.defense[:index], card, *state.defense[index + 1 :])
    ranks = state.ranks | CARD_RANK_MASK[card]
    passed = state.passed if ranks == state.ranks else 0
    return _step(
        state,
        (Beaten(player, attack_card, card),),
        hands=hands,
        known=known,
        defense=defense,
        ranks=ranks,
        passed=passed,
    )


def _transfer(state: State, player: int, card: Card) -> State:
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
    can or will add anything more. Built positionally: this is the engine's hot path."""
    new: State = _new_tuple(
        State,
        (
            state.rules,
            state.num_players,
            state.dealer,
            state.trump,
            state.trump_card if trump_card is None else trump_card,
            state.stock if stock is None else stock,
            state.hands if hands is None else hands,
            state.known if known is None else known,
            state.discard,
            state.attack if attack is None else attack,
            state.defense if defense is None else defense,
            state.ranks if ranks is None else ranks,
            state.leader,
            state.attacker if attacker is None else attacker,
            state.defender if defender is None else defender,
            state.limit if limit is None else limit,
            state.passed if passed is None else passed,
            state.taking if taking is None else taking,
            state.bout,
            state.out,
            state.over,
            state.durak,
            state.step + 1,
            events,
            (state.history, events),
        ),
    )
    if new.attack and (new.taking or None not in new.defense):
        defender_done = not new.taking and new.hands[new.defender] == 0
        if defender_done or not _anyone_can_throw_in(new):
            return _end_bout(new)
    return new


def _anyone_can_throw_in(state: State) -> bool:
    if len(state.attack) >= state.limit:
        return False
    ranks, passed, defender = state.ranks, state.passed, state.defender
    for player, hand in enumerate(state.hands):
        if (
            hand & ranks
            and player != defender
            and not passed >> player & 1
            and _may_throw_in(state, player)
        ):
            return True
    return False


def _end_bout(state: State) -> State:
    """Close the bout ``state`` is in: pick up or discard, refill, find who is out."""
    assert state.history is not None
    n = state.num_players
    defender = state.defender
    table = state.attack + tuple([c for c in state.defense if c is not None])
    table_mask = 0
    for card in table:
        table_mask |= 1 << card
    hands = list(state.hands)
    known = state.known
    discard = state.discard
    out = state.out
    log: list[Event] = list(state.events)
    if state.taking:
        hands[defender] |= table_mask
        known = (*known[:defender], known[defender] | table_mask, *known[defender + 1 :])
        log.append(PickedUp(defender, table))
    else:
        discard |= table_mask
        log.append(Discarded(table))

    # Refill: the leader first, then the others clockwise, the defender last.
    stock = state.stock
    order = _draw_order(n, state.leader, defender)
    if stock:
        for player in order:
            need = HAND_SIZE - hands[player].bit_count()
            if need <= 0:
                continue
            drawn, stock = stock[:need], stock[need:]
            for card in drawn:
                hands[player] |= 1 << card
            if stock:
                log.append(Drew(player, len(drawn)))
                continue
            # The stock is empty now: everyone sees who took the face-up trump card.
            trump_card = state.trump_card
            known = (*known[:player], known[player] | 1 << trump_card, *known[player + 1 :])
            log.append(Drew(player, len(drawn), trump_card))
            break

    if not stock:
        newly_out = [p for p in order if hands[p] == 0 and p not in out]
        if newly_out:
            out = (*out, *newly_out)
            log.extend(PlayerOut(p) for p in newly_out)

    over = False
    durak: int | None = None
    if not stock and len(out) >= n - 1:
        over = True
        remaining = [p for p in range(n) if p not in out]
        durak = remaining[0] if remaining else None
        log.append(GameOver(durak, out if durak is None else (*out, durak)))
        attacker = new_defender = state.attacker
        limit = 0
    else:
        if state.taking or hands[defender] == 0:
            attacker = _next_holding(n, out, defender)
        else:
            attacker = defender
        new_defender = _next_holding(n, out, attacker)
        limit = min(MAX_BOUT_CARDS, hands[new_defender].bit_count())
        log.append(BoutStarted(attacker, new_defender, limit))
    final = tuple(log)
    new: State = _new_tuple(
        State,
        (
            state.rules,
            n,
            state.dealer,
            state.trump,
            state.trump_card,
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
            state.step,
            final,
            (state.history[0], final),
        ),
    )
    return new


_DRAW_ORDERS: dict[tuple[int, int, int], tuple[int, ...]] = {}


def _draw_order(n: int, leader: int, defender: int) -> tuple[int, ...]:
    """The leader first, then the others clockwise, the defender last."""
    key = (n, leader, defender)
    found = _DRAW_ORDERS.get(key)
    if found is None:
        seats = [(leader + k) % n for k in range(n) if (leader + k) % n != defender]
        found = _DRAW_ORDERS[key] = (*seats, defender)
    return found


def _next_holding(n: int, out: tuple[int, ...], player: int) -> int:
    """The next seat clockwise after ``player`` that is not out (between bouts everyone
    not out holds cards)."""
    for step in range(1, n):
        seat = (player + step) % n
        if seat not in out:
            return seat
    return player


def result(state: State) -> GameResult | None:
    """The outcome once the game is over, else None."""
    if not state.over:
        return None
    order = state.out if state.durak is None else (*state.out, state.durak)
    return GameResult(state.durak, order)
