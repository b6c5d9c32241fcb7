"""The rules' one implementation: what each action does to a game position.

A *position* is a mutable list of ``State``'s fields in ``State``'s order (so a
copy of the tuple is the conversion, see ``thaw``, and ``advance`` builds the next
``State`` from one) with ``hands`` as a list and one more field, ``EMPTIED``. The
readers here (``waiting``, ``actor``, ``can_throw_in``, ``transfer_target``...)
index fields by number, so they read a ``State`` and a position alike.

The step functions (``attack``, ``beat``, ``take``, ``pass_``, ``transfer``,
``swap``) change a position in place and check nothing: ``engine.game.apply``
checks legality first, and Hard's search only plays moves it generated as legal.
With a ``log`` they keep the public record too: the step's events go to ``log`` and
``known`` (the cards everyone knows a player holds) follows. With ``log`` None (a
search) they skip that record: ``known``, ``events``, ``history`` and ``step`` are
left as they were, and nothing in a search reads them.

Seat ``i``'s left neighbour is the next seat clockwise (``i + 1``) still in play;
players who are out are skipped everywhere.
"""

from __future__ import annotations

from collections.abc import Callable, Sequence
from typing import Any

from engine.actions import Action, Attack, Beat, Pass, Swap, Take, Transfer
from engine.cards import CARD_RANK_MASK, LOWEST_RANK, Card
from engine.events import (
    Attacked,
    Beaten,
    BoutStarted,
    Discarded,
    Drew,
    Event,
    GameOver,
    Passed,
    PickedUp,
    PlayerOut,
    Swapped,
    Took,
    Transferred,
    by_running_out,
)
from engine.rules import HAND_SIZE, MAX_BOUT_CARDS, MAX_PLAYERS
from engine.state import State

Position = list[Any]
"""A game position being played: ``State``'s fields in order, then ``EMPTIED``."""
Log = list[Event] | None
Step = Callable[[Position, int, Any, Log], None]

# Field numbers: State's field order (tests/test_engine_core.py holds them to it).
(
    RULES, NUM_PLAYERS, DEALER, TRUMP, TRUMP_CARD, STOCK, HANDS, KNOWN, DISCARD,
    ATTACK, DEFENSE, RANKS, LEADER, ATTACKER, DEFENDER, LIMIT, PASSED, TAKING, BOUT,
    OUT, OVER, DURAK, STEP, EVENTS, HISTORY, EMPTIED,
) = range(26)  # fmt: skip
"""``EMPTIED`` (positions only): who played their last card this bout, in that order."""

# Events are built as plain tuples in field order on the hot path (a third of the
# cost of calling the class); tests/test_engine_properties.py checks the orders.
_new_tuple = tuple.__new__


# --- conversions ----------------------------------------------------------------------


def thaw(state: State) -> Position:
    """A position to play on, from a state (which stays unchanged)."""
    hands = state.hands
    # [*state, ...] is the cheapest copy of a tuple subclass into a list (list() is not).
    s: Position = [*state, _emptied(state) if state.attack and 0 in hands else ()]
    s[HANDS] = list(hands)
    return s


def advance(state: State, player: int, action: Action, step: Step) -> State:
    """The state after ``player`` plays ``action`` (legal: not checked here) through
    ``step`` (its type's entry of ``STEPS``), with that step's events and history:
    thaw, step with a log, freeze, in one call."""
    hands = state.hands  # thaw, inlined (the public API's hot path)
    s: Position = [*state, _emptied(state) if state.attack and 0 in hands else ()]
    s[HANDS] = list(hands)
    log: list[Event] = []
    step(s, player, action, log)
    del s[EMPTIED]
    s[HANDS] = tuple(s[HANDS])
    events = tuple(log)
    s[EVENTS] = events
    s[STEP] += 1
    s[HISTORY] = (state.history, events)
    new: State = _new_tuple(State, s)
    return new


def copy(s: Position) -> Position:
    """An independent copy of a position (its other fields are immutable)."""
    c = s[:]
    c[HANDS] = s[HANDS][:]
    return c


def _emptied(state: State) -> tuple[int, ...]:
    """Who has played their last card in the bout under way, in that order (read from
    the history: everyone still in play held cards when the bout began)."""
    hands, out = state.hands, state.out
    empty = [p for p in range(state.num_players) if hands[p] == 0 and p not in out]
    return tuple(by_running_out(empty, (), state.history)) if empty else ()


# --- who is in play -------------------------------------------------------------------

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
# _DRAW_ORDERS[n][leader][defender]: the leader first, then the others clockwise, the
# defender last.
_DRAW_ORDERS: tuple[tuple[tuple[tuple[int, ...], ...], ...], ...] = tuple(
    tuple(tuple((*_OTHERS[n][leader][d], d) for d in range(n)) for leader in range(n))
    for n in range(MAX_PLAYERS + 1)
)
# TEAMS[n][seat]: the bit set of the seats on ``seat``'s team (seat % 2) at n seats.
TEAMS: tuple[tuple[int, ...], ...] = tuple(
    tuple(sum(1 << s for s in range(n) if s % 2 == seat % 2) for seat in range(n))
    for n in range(MAX_PLAYERS + 1)
)
# LOWEST_TRUMP[deck_size][trump suit]: the "trump six" of a 36-card deck, and so on.
LOWEST_TRUMP = {
    size: tuple(Card.of(low, suit) for suit in range(4)) for size, low in LOWEST_RANK.items()
}


def lowest_trump(s: Sequence[Any]) -> Card:
    """The lowest trump of the deck (the trump six in 36 cards): the swappable one."""
    low: Card = LOWEST_TRUMP[s[RULES].deck_size][s[TRUMP]]
    return low


def left_of(s: Sequence[Any], player: int, skip: int = 0) -> int:
    """The next seat clockwise after ``player`` still in play (``player`` if none): not
    out, either holding cards or able to draw, and not in the bit set ``skip``."""
    n: int = s[NUM_PLAYERS]
    out, hands, stock = s[OUT], s[HANDS], s[STOCK]
    for step in range(1, n):
        seat = (player + step) % n
        if seat not in out and (hands[seat] != 0 or stock) and not skip >> seat & 1:
            return seat
    return player


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


def may_add_by_seat(s: Sequence[Any], seat: int) -> bool:
    """Whether ``seat``'s position lets them add cards to this bout: not the defender or
    a partner of theirs, not out, and any attacker (or, with ``throw_in="neighbours"``,
    only the attacker and the defender's left neighbour). Public: it ignores the cards."""
    defender = s[DEFENDER]
    rules = s[RULES]
    if seat == defender or seat in s[OUT] or (rules.partners and (seat ^ defender) & 1 == 0):
        return False
    return rules.throw_in == "all" or seat == s[ATTACKER] or seat == left_of(s, defender)


def can_throw_in(s: Sequence[Any], player: int) -> bool:
    """Whether ``player`` may add a card to this bout now: a matching card in hand, not
    passed since the last new rank, room on the table, and ``may_add_by_seat`` (inlined,
    cheapest tests first: this runs for every throw-in on the hot path)."""
    defender = s[DEFENDER]
    rules = s[RULES]
    return (
        s[HANDS][player] & s[RANKS] != 0
        and not s[PASSED] >> player & 1
        and len(s[ATTACK]) < s[LIMIT]
        and player != defender
        and player not in s[OUT]
        and (rules.throw_in == "all" or player == s[ATTACKER] or player == left_of(s, defender))
        and not (rules.partners and (player ^ defender) & 1 == 0)
    )


def anyone_can_throw_in(s: Sequence[Any]) -> bool:
    """Whether some attacker may still add a card (``can_throw_in`` for any seat)."""
    return len(s[ATTACK]) < s[LIMIT] and _first_thrower(s) >= 0


def _first_thrower(s: Sequence[Any]) -> int:
    """The first seat that may add a card, the attacker first and the rest clockwise
    (-1: none), when there is room on the table (the callers check that):
    ``can_throw_in`` for each seat, its tests inlined, since the end of every bout and
    every search step ask it."""
    attacker, defender, hands, ranks, passed, out = (
        s[ATTACKER], s[DEFENDER], s[HANDS], s[RANKS], s[PASSED], s[OUT],
    )  # fmt: skip
    rules = s[RULES]
    everyone = rules.throw_in == "all"
    table = _OPPONENTS if rules.partners else _OTHERS
    for seat in table[s[NUM_PLAYERS]][attacker][defender]:
        if (
            hands[seat] & ranks
            and not passed >> seat & 1
            and seat not in out
            and (everyone or seat == attacker or seat == left_of(s, defender))
        ):
            return seat  # type: ignore[no-any-return]
    return -1


def waiting(s: Sequence[Any]) -> tuple[int, ...]:
    """The players who can act now, in priority order: uses hidden cards, so it is for
    drivers that hold the whole state (a server, the arena), never for display (see
    ``engine.must_act`` and ``PlayerView.waiting_for``).

    The defender (while cards are unbeaten and they have not taken) comes first, then
    every attacker who may still throw in, the attacker first and the rest clockwise.
    Empty once the game is over. A trump swap is never waited for.
    """
    if s[OVER]:
        return ()
    if not s[ATTACK]:
        return (s[ATTACKER],)
    defender = s[DEFENDER]
    found = [defender] if not s[TAKING] and None in s[DEFENSE] else []
    if len(s[ATTACK]) < s[LIMIT]:
        # can_throw_in for each seat, inlined (the hot path: a driver asks every step).
        attacker, hands, ranks, passed, out = s[ATTACKER], s[HANDS], s[RANKS], s[PASSED], s[OUT]
        rules = s[RULES]
        everyone = rules.throw_in == "all"
        table = _OPPONENTS if rules.partners else _OTHERS
        for seat in table[s[NUM_PLAYERS]][attacker][defender]:
            if (
                hands[seat] & ranks
                and not passed >> seat & 1
                and seat not in out
                and (everyone or seat == attacker or seat == left_of(s, defender))
            ):
                found.append(seat)
    return tuple(found)


def actor(s: Sequence[Any]) -> int:
    """The first player ``waiting`` lists (without building it); -1 once the game is over."""
    if s[OVER]:
        return -1
    if not s[ATTACK]:
        return s[ATTACKER]  # type: ignore[no-any-return]
    if not s[TAKING] and None in s[DEFENSE]:
        return s[DEFENDER]  # type: ignore[no-any-return]
    if len(s[ATTACK]) < s[LIMIT]:
        return _first_thrower(s)
    return -1  # unreachable: the bout would have ended


def bout_cap(s: Sequence[Any]) -> int:
    """The most attack cards this bout may hold, before the defender's hand size."""
    if s[BOUT] == 0:
        return s[RULES].first_bout_cap(s[NUM_PLAYERS])  # type: ignore[no-any-return]
    return MAX_BOUT_CARDS


def transfer_target(s: Sequence[Any]) -> int | None:
    """Who would defend after a transfer now, if a transfer is allowed at all."""
    defense = s[DEFENSE]
    rules = s[RULES]
    if defense.count(None) != len(defense) or not rules.transfer:
        return None  # a card is beaten already, or no transfers in this variant
    if s[RANKS] != CARD_RANK_MASK[s[ATTACK][0]]:
        return None  # attack cards of more than one rank
    # The next player, skipping the defender's partners: the transferrer's side attacks
    # the new defender, so that must be an opponent of theirs.
    defender = s[DEFENDER]
    skip = TEAMS[s[NUM_PLAYERS]][defender] if rules.partners else 0
    target = left_of(s, defender, skip)
    if target == defender:
        return None
    after = len(s[ATTACK]) + 1
    if after > s[HANDS][target].bit_count() or after > bout_cap(s):
        return None
    return target


def can_swap(s: Sequence[Any], player: int) -> bool:
    """Whether ``player`` may swap their lowest trump for the face-up trump card: it
    still lies under the stock and is not itself the lowest trump."""
    if not s[STOCK] or not s[RULES].trump_swap:
        return False
    low = lowest_trump(s)
    held: int = s[HANDS][player]
    return held >> low & 1 == 1 and s[TRUMP_CARD] != low


# --- the steps ------------------------------------------------------------------------

_UNBEATEN = tuple((None,) * k for k in range(MAX_BOUT_CARDS + 1))


def attack(s: Position, player: int, action: Attack, log: Log) -> None:
    """Lead or throw in ``action.cards``."""
    cards, mask = action.cards, action.mask
    hands = s[HANDS]
    hand = hands[player] = hands[player] & ~mask
    if not hand:
        s[EMPTIED] += (player,)
    ranks = s[RANKS] | CARD_RANK_MASK[cards[0]]
    if ranks != s[RANKS]:
        s[RANKS] = ranks
        s[PASSED] = 0  # a new rank: who passed may add again
    s[ATTACK] += cards
    s[DEFENSE] += _UNBEATEN[len(cards)]
    if log is not None:
        known = s[KNOWN]
        if known[player] & mask:  # rarely: most played cards were not known to be held
            s[KNOWN] = _with_mask(known, player, known[player] & ~mask)
        log.append(_new_tuple(Attacked, (player, cards, "attacked")))
    if s[TAKING]:  # otherwise an unbeaten card now lies on the table: the bout goes on
        _end_if_done(s, log)


def beat(s: Position, player: int, action: Beat, log: Log) -> None:
    """Cover ``action.attack`` with ``action.card``."""
    attack_card, card = action.attack, action.card
    bit = 1 << card
    hands = s[HANDS]
    hand = hands[player] = hands[player] & ~bit
    if not hand:
        s[EMPTIED] += (player,)
    covers = list(s[DEFENSE])
    covers[s[ATTACK].index(attack_card)] = card
    s[DEFENSE] = defense = tuple(covers)
    ranks = s[RANKS] | CARD_RANK_MASK[card]
    if ranks != s[RANKS]:
        s[RANKS] = ranks
        s[PASSED] = 0
    if log is not None:
        known = s[KNOWN]
        if known[player] & bit:
            s[KNOWN] = _with_mask(known, player, known[player] & ~bit)
        log.append(_new_tuple(Beaten, (player, attack_card, card, "beaten")))
    if None not in defense:  # otherwise cards are still unbeaten: the bout goes on
        _end_if_done(s, log)


def take(s: Position, player: int, action: Take | None, log: Log) -> None:
    s[TAKING] = True
    if log is not None:
        log.append(_new_tuple(Took, (player, "took")))
    _end_if_done(s, log)


def pass_(s: Position, player: int, action: Pass | None, log: Log) -> None:
    s[PASSED] |= 1 << player
    if log is not None:
        log.append(_new_tuple(Passed, (player, "passed")))
    _end_if_done(s, log)


def transfer(s: Position, player: int, action: Transfer, log: Log) -> None:
    """Pass the attack on with ``action.card`` (of the attack's rank) to ``transfer_target``."""
    card = action.card
    target = transfer_target(s)
    assert target is not None  # only ever called for a legal transfer
    bit = 1 << card
    hands = s[HANDS]
    hand = hands[player] = hands[player] & ~bit
    if not hand:
        s[EMPTIED] += (player,)
    s[ATTACK] += (card,)
    s[DEFENSE] += (None,)
    s[ATTACKER] = player
    s[DEFENDER] = target
    s[LIMIT] = min(bout_cap(s), hands[target].bit_count())
    s[PASSED] = 0  # a new defender: earlier passes no longer bind
    if log is not None:
        known = s[KNOWN]
        if known[player] & bit:
            s[KNOWN] = _with_mask(known, player, known[player] & ~bit)
        log.append(Transferred(player, card, target))
    # An unbeaten card lies on the table: the bout goes on.


def swap(s: Position, player: int, action: Swap | None, log: Log) -> None:
    """Swap the lowest trump in hand for the face-up trump card under the stock."""
    low, face_up = lowest_trump(s), s[TRUMP_CARD]
    hands = s[HANDS]
    hands[player] = hands[player] & ~(1 << low) | 1 << face_up
    s[STOCK] = (*s[STOCK][:-1], low)
    s[TRUMP_CARD] = low
    if log is not None:
        known = s[KNOWN]
        s[KNOWN] = _with_mask(known, player, known[player] & ~(1 << low) | 1 << face_up)
        log.append(Swapped(player, low, face_up))
    # Giving the low trump away may leave this player nothing to throw in.
    _end_if_done(s, log)


def play(s: Position, player: int, action: Action) -> None:
    """Play a (legal) engine action on ``s`` without events: a search's step."""
    STEPS[type(action)](s, player, action, None)


def _with_mask(masks: tuple[int, ...], player: int, mask: int) -> tuple[int, ...]:
    return (*masks[:player], mask, *masks[player + 1 :])


def _end_if_done(s: Position, log: Log) -> None:
    """End the bout if nobody can or will add anything more."""
    taking = s[TAKING]
    if (
        s[ATTACK]
        and (taking or None not in s[DEFENSE])
        and ((not taking and s[HANDS][s[DEFENDER]] == 0) or not anyone_can_throw_in(s))
    ):
        _end_bout(s, log)


def _end_bout(s: Position, log: Log) -> None:
    """Pick up or discard, refill, find who is out, start the next bout."""
    n = s[NUM_PLAYERS]
    attack_cards, defense = s[ATTACK], s[DEFENSE]
    if None in defense:  # taken with cards unbeaten
        table = attack_cards + tuple([c for c in defense if c is not None])
    else:
        table = attack_cards + defense
    table_mask = 0
    for card in table:
        table_mask |= 1 << card
    hands = s[HANDS]
    defender = s[DEFENDER]
    taking = s[TAKING]
    if taking:
        hands[defender] |= table_mask
        if log is not None:
            known = s[KNOWN]
            s[KNOWN] = _with_mask(known, defender, known[defender] | table_mask)
            log.append(_new_tuple(PickedUp, (defender, table, "picked_up")))
    else:
        s[DISCARD] |= table_mask
        if log is not None:
            log.append(_new_tuple(Discarded, (table, "discarded")))

    # Refill: the leader first, then the others clockwise, the defender last.
    stock = s[STOCK]
    if stock:
        for player in _DRAW_ORDERS[n][s[LEADER]][defender]:
            need = HAND_SIZE - hands[player].bit_count()
            if need <= 0:
                continue
            drawn, stock = stock[:need], stock[need:]
            hand = hands[player]
            for card in drawn:
                hand |= 1 << card
            hands[player] = hand
            if stock:
                if log is not None:
                    log.append(_new_tuple(Drew, (player, len(drawn), None, "drew")))
                continue
            # The stock is empty now: everyone sees who took the face-up trump card.
            if log is not None:
                trump_card = s[TRUMP_CARD]
                known = s[KNOWN]
                s[KNOWN] = _with_mask(known, player, known[player] | 1 << trump_card)
                log.append(Drew(player, len(drawn), trump_card))
            break
        s[STOCK] = stock

    out = s[OUT]
    if not stock and s[EMPTIED]:
        # Who has no cards now ran out during this bout (everyone held cards when it
        # began): they finish in the order they played their last card.
        newly_out = tuple(p for p in s[EMPTIED] if hands[p] == 0)
        if newly_out:
            out = s[OUT] = out + newly_out
            if log is not None:
                log.extend(PlayerOut(p) for p in newly_out)
    s[EMPTIED] = ()
    s[ATTACK] = s[DEFENSE] = ()
    s[RANKS] = s[PASSED] = 0
    s[TAKING] = False
    s[BOUT] += 1

    # The partners flag is read only where it matters: once the stock is empty, or
    # when someone is out (the classic game's usual bout pays nothing for it).
    partners = not stock and s[RULES].partners
    if not stock and (len(out) >= n - 1 or (partners and _side_out(n, out))):
        s[OVER] = True
        remaining = [p for p in range(n) if p not in out]
        durak = s[DURAK] = remaining[0] if remaining else None
        s[LEADER] = s[DEFENDER] = s[ATTACKER]
        s[LIMIT] = 0
        if log is not None:
            losing_team = durak % 2 if partners and durak is not None else None
            log.append(GameOver(durak, (*out, *remaining), losing_team))
        return
    # Taking (or having no cards left) loses the turn to lead.
    if taking or hands[defender] == 0:
        attacker = (defender + 1) % n if not out else _next_holding(n, out, defender)
    else:
        attacker = defender
    if not out:  # partners' seats alternate, so the left neighbour is an opponent
        new_defender = (attacker + 1) % n
    else:
        skip = TEAMS[n][attacker] if s[RULES].partners else 0
        new_defender = _next_holding(n, out, attacker, skip)
    limit = hands[new_defender].bit_count()
    if limit > MAX_BOUT_CARDS:
        limit = MAX_BOUT_CARDS
    s[LEADER] = s[ATTACKER] = attacker
    s[DEFENDER] = new_defender
    s[LIMIT] = limit
    if log is not None:
        log.append(_new_tuple(BoutStarted, (attacker, new_defender, limit, "bout_started")))


STEPS: dict[type, Step] = {
    Attack: attack,
    Beat: beat,
    Take: take,
    Pass: pass_,
    Transfer: transfer,
    Swap: swap,
}
"""Each action type's step function."""
