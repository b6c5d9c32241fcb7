"""Card-sense heuristics on bit masks, shared by the Normal player and Hard's playouts.

Every function takes plain masks and numbers, so the same code decides for the
Normal level (fed from a ``PlayerView``) and inside Hard's search (fed from a game
position of ``engine.core``, the rules' one implementation). Card value: the rank,
plus 13 for trumps (every trump outranks every plain card).
"""

from __future__ import annotations

from dataclasses import dataclass
from random import Random

from engine import core
from engine.actions import ATTACK_ONE, Action, attack_of
from engine.actions import BEAT as BEAT_ACTION
from engine.actions import PASS as PASS_ACTION
from engine.actions import SWAP as SWAP_ACTION
from engine.actions import TAKE as TAKE_ACTION
from engine.actions import TRANSFER as TRANSFER_ACTION
from engine.cards import BEATERS, CARD_RANK_MASK, CARDS, RANK_MASK, SUIT_MASK
from engine.core import (
    ATTACK,
    BOUT,
    DEFENDER,
    DEFENSE,
    DISCARD,
    DURAK,
    HANDS,
    LIMIT,
    LOWEST_TRUMP,
    NUM_PLAYERS,
    OUT,
    OVER,
    RANKS,
    RULES,
    STOCK,
    TAKING,
    TRUMP,
    TRUMP_CARD,
    Position,
)

# VALUE[trump][card]
VALUE: tuple[tuple[int, ...], ...] = tuple(
    tuple(c % 13 + 2 + (13 if c // 13 == t else 0) for c in range(52)) for t in range(4)
)


@dataclass(frozen=True, slots=True)
class Style:
    """Tunable thresholds of the heuristic."""

    throw_max_rank: int = 13
    """While the stock lasts, throw in plain cards up to this rank."""
    throw_max_rank_late: int = 14
    """...and up to this rank once the stock is nearly gone (``late_stock`` or less)."""
    late_stock: int = 4
    take_trumps: int = 2
    """Take instead of beating when that needs this many trumps while the stock lasts."""
    take_high_trump: int = 13
    """...or a trump of this rank or higher while more than ``late_stock`` cards remain."""
    throw_taking_rank: int = 10
    """While the stock lasts, give a taking defender plain cards up to this rank."""
    transfer: bool = True
    multi_lead: bool = True
    lead_unbeatable: bool = True
    pair_gap: int = 2
    """Lead a pair (or more) instead of the lowest single card when its rank is at most
    this much higher."""
    """Late in the game, lead a plain card the defender cannot beat when there is one."""


NORMAL = Style()


def lowest(mask: int, trump: int) -> int:
    """The lowest-value card of ``mask`` (plain cards by rank first), or -1."""
    if not mask:
        return -1
    plain = mask & ~SUIT_MASK[trump]
    if plain:
        for rank in range(2, 15):
            m = plain & RANK_MASK[rank]
            if m:
                return (m & -m).bit_length() - 1
    m = mask & SUIT_MASK[trump]
    return (m & -m).bit_length() - 1


def highest_plain_rank(mask: int, trump: int) -> int:
    plain = mask & ~SUIT_MASK[trump]
    for rank in range(14, 1, -1):
        if plain & RANK_MASK[rank]:
            return rank
    return 0


def cheapest_beater(hand: int, attack: int, trump: int) -> int:
    """The cheapest card of ``hand`` that beats ``attack``: same suit first, then the
    lowest trump; -1 when none."""
    b = hand & BEATERS[trump][attack]
    if not b:
        return -1
    plain = b & ~SUIT_MASK[trump]
    if plain:
        return (plain & -plain).bit_length() - 1
    return (b & -b).bit_length() - 1


def defence_plan(hand: int, unbeaten: list[int], trump: int) -> list[tuple[int, int]] | None:
    """A cheap way to cover every unbeaten card (greedy: trumps first, then the
    highest plain cards), or None when the greedy finds none."""
    order = sorted(unbeaten, key=lambda c: -VALUE[trump][c])
    plan: list[tuple[int, int]] = []
    for a in order:
        c = cheapest_beater(hand, a, trump)
        if c < 0:
            return None
        hand &= ~(1 << c)
        plan.append((a, c))
    return plan


def full_defence(hand: int, unbeaten: list[int], trump: int) -> list[tuple[int, int]] | None:
    """An exact search for a way to cover every unbeaten card (few cards: cheap)."""
    if not unbeaten:
        return []
    a = unbeaten[0]
    m = hand & BEATERS[trump][a]
    while m:
        low = m & -m
        m ^= low
        rest = full_defence(hand & ~low, unbeaten[1:], trump)
        if rest is not None:
            return [(a, low.bit_length() - 1), *rest]
    return None


def is_top(card: int, elsewhere: int) -> bool:
    """No higher card of ``card``'s suit is in ``elsewhere`` (cards still in play
    outside the hand)."""
    suit_top = (card // 13) * 13 + 12
    higher = ((1 << (suit_top + 1)) - 1) & ~((1 << (card + 1)) - 1)
    return not higher & elsewhere


def too_costly(plan: list[tuple[int, int]], trump: int, stock_left: int, style: Style) -> bool:
    """Whether beating as ``plan`` says wastes too much strength this early."""
    if stock_left == 0:
        return False
    trumps = [c for _, c in plan if c // 13 == trump]
    if not trumps:
        return False
    if len(trumps) >= style.take_trumps and stock_left > style.late_stock:
        return True
    top = max(c % 13 + 2 for c in trumps)
    # A high trump spent on a low plain card is a waste while many cards remain.
    return top >= style.take_high_trump and stock_left > style.late_stock


def lead_cards(
    hand: int,
    trump: int,
    limit: int,
    multi: bool,
    stock_left: int,
    style: Style,
    prefer: int = 0,
) -> list[int]:
    """What to lead: the lowest plain rank (all its plain cards when several may be
    led), else the lowest trump. Late in the game a plain card from ``prefer`` (cards
    the defender cannot beat) goes first."""
    c = -1
    if prefer and style.lead_unbeatable and stock_left <= style.late_stock:
        c = lowest(prefer & hand & ~SUIT_MASK[trump], trump)
    if c < 0:
        c = lowest(hand, trump)
    if c // 13 == trump or not (multi and style.multi_lead) or limit < 2:
        return [c]
    if style.pair_gap and (hand & CARD_RANK_MASK[c] & ~SUIT_MASK[trump]).bit_count() < 2:
        plain = hand & ~SUIT_MASK[trump]
        for rank in range(c % 13 + 3, min(15, c % 13 + 3 + style.pair_gap)):
            m = plain & RANK_MASK[rank]
            if m.bit_count() >= 2:
                c = (m & -m).bit_length() - 1
                break
    same = hand & CARD_RANK_MASK[c] & ~SUIT_MASK[trump]
    cards: list[int] = []
    while same and len(cards) < limit:
        low = same & -same
        cards.append(low.bit_length() - 1)
        same ^= low
    return cards


def throw_in_card(
    hand: int,
    ranks: int,
    trump: int,
    stock_left: int,
    style: Style,
    prefer: int = 0,
    taking: bool = False,
) -> int:
    """A card to throw in, or -1 to pass. ``prefer``: cards the defender seems unable
    to beat (thrown first, even if high, as long as they are not trumps)."""
    cand = hand & ranks
    if not cand:
        return -1
    if stock_left == 0 and cand == hand:
        return lowest(cand, trump)  # throwing everything in empties the hand
    plain = cand & ~SUIT_MASK[trump]
    good = plain & prefer
    if good and stock_left <= style.late_stock:
        return lowest(good, trump)
    c = lowest(plain, trump)
    if c < 0:
        return -1
    rank = c % 13 + 2
    if stock_left == 0:
        return c
    if stock_left > style.late_stock:
        cap = style.throw_taking_rank if taking else style.throw_max_rank
    else:
        cap = style.throw_max_rank_late
    return c if rank <= cap else -1


# Moves as small tuples: (kind, a, b); ``a``/``b`` are cards or -1, a multi-card lead
# keeps its cards in ``LEAD_MULTI``'s second slot as a mask.
SWAP, LEAD, LEAD_MULTI, BEAT, TAKE, PASS, THROW, TRANSFER = range(8)
Move = tuple[int, int, int]


def _swap_move(s: Position, hand: int) -> Move | None:
    """The trump swap, when the hand allows it (every level makes it at once)."""
    rules = s[RULES]
    if s[STOCK] and rules.trump_swap:
        low = LOWEST_TRUMP[rules.deck_size][s[TRUMP]]
        if hand >> low & 1 and s[TRUMP_CARD] != low:
            return (SWAP, low, -1)
    return None


def decide(s: Position, p: int, style: Style = NORMAL) -> Move:
    """The heuristic move of ``p`` (the acting player) in position ``s``."""
    trump = s[TRUMP]
    hand = s[HANDS][p]
    stock_left = len(s[STOCK])
    rules = s[RULES]
    if stock_left and rules.trump_swap:  # _swap_move, inlined: a playout's every step
        low = LOWEST_TRUMP[rules.deck_size][trump]
        if hand >> low & 1 and s[TRUMP_CARD] != low:
            return (SWAP, low, -1)
    attack = s[ATTACK]
    if not attack:
        cards = lead_cards(hand, trump, s[LIMIT], rules.multi_card_lead, stock_left, style)
        if len(cards) == 1:
            return (LEAD, cards[0], -1)
        mask = 0
        for c in cards:
            mask |= 1 << c
        return (LEAD_MULTI, mask, -1)
    defense = s[DEFENSE]
    if p == s[DEFENDER] and not s[TAKING] and None in defense:
        unbeaten = [a for a, d in zip(attack, defense, strict=True) if d is None]
        plan = defence_plan(hand, unbeaten, trump)
        if style.transfer and rules.transfer:
            same = hand & CARD_RANK_MASK[attack[0]]
            if same and (plan is None or any(c // 13 == trump for _, c in plan)):
                plain = same & ~SUIT_MASK[trump]
                pick = plain or (same if plan is None else 0)
                if pick and core.transfer_target(s) is not None:
                    return (TRANSFER, (pick & -pick).bit_length() - 1, -1)
        if plan is None or too_costly(plan, trump, stock_left, style):
            return (TAKE, -1, -1)
        a, c = plan[0]
        return (BEAT, a, c)
    c = throw_in_card(hand, s[RANKS], trump, stock_left, style, 0, s[TAKING])
    return (PASS, -1, -1) if c < 0 else (THROW, c, -1)


SIMPLE_THROW_MAX_RANK = 10
"""The simplest play throws in plain cards up to this rank only."""


def simplest_move(hand: int, trump: int, unbeaten: list[int] | None, ranks: int) -> Move:
    """The simplest rule-of-thumb move (the Easy level's play): lead the lowest card
    (``unbeaten`` is None: leading), beat the first open card with the cheapest beater
    or take when some open card cannot be beaten (``unbeaten``: the defender's open
    cards), throw in the lowest plain card of a table rank up to
    ``SIMPLE_THROW_MAX_RANK`` (``unbeaten`` empty: throwing in), never transfer."""
    if unbeaten is None:
        return (LEAD, lowest(hand, trump), -1)
    if unbeaten:
        beaters = BEATERS[trump]
        if any(not hand & beaters[a] for a in unbeaten):
            return (TAKE, -1, -1)
        first = unbeaten[0]
        return (BEAT, first, lowest(hand & beaters[first], trump))
    c = lowest(hand & ranks & ~SUIT_MASK[trump], trump)
    return (THROW, c, -1) if c >= 0 and c % 13 + 2 <= SIMPLE_THROW_MAX_RANK else (PASS, -1, -1)


def simple_decide(s: Position, p: int) -> Move:
    """``simplest_move`` in a search position, after the swap every level makes."""
    hand = s[HANDS][p]
    if s[STOCK] and (swap := _swap_move(s, hand)) is not None:
        return swap
    trump = s[TRUMP]
    if not s[ATTACK]:
        return simplest_move(hand, trump, None, 0)
    unbeaten: list[int] = []
    if p == s[DEFENDER] and not s[TAKING]:
        unbeaten = [a for a, d in zip(s[ATTACK], s[DEFENSE], strict=True) if d is None]
    return simplest_move(hand, trump, unbeaten, s[RANKS])


def do(s: Position, p: int, move: Move) -> None:
    """Play ``move`` for ``p`` on ``s`` (the rules core's steps, without events)."""
    kind, a, b = move
    if kind in (THROW, LEAD):
        core.attack(s, p, ATTACK_ONE[a], None)
    elif kind == BEAT:
        core.beat(s, p, BEAT_ACTION[a][b], None)
    elif kind == PASS:
        core.pass_(s, p, PASS_ACTION, None)
    elif kind == TAKE:
        core.take(s, p, TAKE_ACTION, None)
    elif kind == LEAD_MULTI:
        core.attack(s, p, to_action(move), None)  # type: ignore[arg-type]  # an Attack
    elif kind == TRANSFER:
        core.transfer(s, p, TRANSFER_ACTION[a], None)
    else:
        core.swap(s, p, SWAP_ACTION[a], None)


def to_action(move: Move) -> Action:
    """The engine action for a move."""
    kind, a, b = move
    if kind in (LEAD, THROW):
        return ATTACK_ONE[a]
    if kind == LEAD_MULTI:
        cards = []
        while a:
            low = a & -a
            cards.append(CARDS[low.bit_length() - 1])
            a ^= low
        return attack_of(tuple(cards))
    if kind == BEAT:
        return BEAT_ACTION[a][b]
    if kind == TAKE:
        return TAKE_ACTION
    if kind == PASS:
        return PASS_ACTION
    if kind == TRANSFER:
        return TRANSFER_ACTION[a]
    return SWAP_ACTION[a]


def progress_move(s: Position, p: int) -> Move:
    """Progress mode (see ``ai.cycles``) in a playout: lead the lowest card that is not
    the top of its suit in play, never throw in, beat whenever the table can be
    covered, never transfer."""
    trump = s[TRUMP]
    hand = s[HANDS][p]
    if not s[ATTACK]:
        gone = s[DISCARD] | hand
        elsewhere = ~gone & ((1 << 52) - 1)
        best = -1
        m = hand
        while m:
            low = m & -m
            m ^= low
            c = low.bit_length() - 1
            if is_top(c, elsewhere):
                continue
            if best < 0 or VALUE[trump][c] < VALUE[trump][best]:
                best = c
        return (LEAD, best if best >= 0 else lowest(hand, trump), -1)
    if p == s[DEFENDER] and not s[TAKING] and None in s[DEFENSE]:
        unbeaten = [a for a, d in zip(s[ATTACK], s[DEFENSE], strict=True) if d is None]
        plan = defence_plan(hand, unbeaten, trump) or full_defence(hand, unbeaten, trump)
        if plan:
            a, c = plan[0]
            return (BEAT, a, c)
        return (TAKE, -1, -1)
    return (PASS, -1, -1)


def play_step(s: Position, p: int, style: Style = NORMAL) -> None:
    """Make ``p`` (the acting player) play one heuristic move in ``s``."""
    do(s, p, decide(s, p, style))


def playout(
    s: Position,
    style: Style = NORMAL,
    max_steps: int = 1500,
    simple: int = 0,
    order: Random | None = None,
) -> int | None:
    """Play position ``s`` to the end with the heuristic; the durak (None for a draw).

    The players in the ``simple`` bit mask play ``simple_decide`` instead.

    Who acts when several players may (the defender and whoever may throw in): with
    ``order``, one of them at random, as at a real table where the quickest goes first
    (and as the arena plays); without it, the first one ``core.waiting`` lists. The
    order matters: a throw-in made before the defender beats changes what the defence
    costs, and a thrower asked early must commit or pass (Hard's search takes the
    random order at tables of more than two: see ``ai.hard``).

    Like the players (``ai.cycles``), the playout switches to progress mode after a
    run of ``2 * n + 2`` bouts ended by a pick-up with no discard, draw or player out
    in between, so it cannot cycle. ``max_steps`` stays as a plain safety bound: past
    it the player holding the most cards is taken for the durak."""
    limit = 2 * s[NUM_PLAYERS] + 2
    taken = 0
    bout = s[BOUT]
    key = (s[DISCARD], len(s[STOCK]), s[OUT])
    actor, waiting = core.actor, core.waiting
    rnd = order.random if order is not None else None
    for _ in range(max_steps):
        if s[OVER]:
            return s[DURAK]  # type: ignore[no-any-return]
        if rnd is not None and s[ATTACK]:
            w = waiting(s)
            p = w[0] if len(w) == 1 else w[int(rnd() * len(w))]
        else:
            p = actor(s)
        if taken >= limit:
            move = progress_move(s, p)
        elif simple >> p & 1:
            move = simple_decide(s, p)
        else:
            move = decide(s, p, style)
        do(s, p, move)
        if s[BOUT] != bout:
            bout = s[BOUT]
            now = (s[DISCARD], len(s[STOCK]), s[OUT])
            taken = 0 if now != key else taken + 1
            key = now
    if s[OVER]:
        return s[DURAK]  # type: ignore[no-any-return]
    out = s[OUT]
    sizes = [(h.bit_count(), -p) for p, h in enumerate(s[HANDS]) if p not in out]
    return -max(sizes)[1]
