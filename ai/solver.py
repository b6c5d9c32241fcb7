"""Exact two-player solver: alpha-beta over ``engine.core`` positions with a
transposition table.

Once the stock is empty and only two players still hold cards (a two-player game, or
the last two of a bigger table) every card is known: the opponent holds exactly the
cards the player cannot see. The rest of the game is a perfect information game with
three outcomes; this solver plays it exactly. It also solves one guessed world with
cards left in the stock (Hard's late-game search).

Values are from one player's side (``me``, seat 0 unless told): +1 its opponent is
the durak (with partners: the opponent's team loses), 0 a draw, -1 it is.
The search stops with ``SolverBudget`` after ``max_nodes`` nodes, so its cost (and so
its answer) depends only on the position, never on the clock.

Games can go round in circles (with transfers, cards travel back and forth between
two players with no discard), so the search keeps the positions on its current path:
a position met again on the path counts as a draw (at a real table the players'
progress mode, ``ai.cycles``, breaks the cycle and nobody can force the outcome), and
values that relied on such a repetition are not stored in the table. The path is
also capped at ``MAX_DEPTH`` plies (``SolverBudget`` beyond), so the recursion stays
far below Python's limit whatever the position.
"""

from __future__ import annotations

import math
import time
from itertools import combinations

from ai.policy import (
    BEAT,
    LEAD,
    LEAD_MULTI,
    PASS,
    SWAP,
    TAKE,
    THROW,
    TRANSFER,
    VALUE,
    Move,
    decide,
    do,
    simple_decide,
)
from engine import core
from engine.cards import BEATERS, CARD_RANK_MASK, RANK_MASK
from engine.core import (
    ATTACK,
    ATTACKER,
    BOUT,
    DEFENDER,
    DEFENSE,
    DURAK,
    HANDS,
    LIMIT,
    OVER,
    PASSED,
    RANKS,
    RULES,
    STOCK,
    TAKING,
    TRUMP,
    TRUMP_CARD,
    Position,
)

MAX_DEPTH = 240
"""Plies on one search path; the longest cycle-free two-player endgames seen are
well under 150 (36 cards, each played at most once per bout, plus passes)."""


class SolverBudget(Exception):
    """The node budget (or the depth cap) ran out before the position was solved."""


def same_side(partners: bool, p: int, q: int) -> bool:
    """Whether seats ``p`` and ``q`` win or lose together: the same seat, or partners
    (seat % 2) in a partners game."""
    return p == q or (partners and (p ^ q) & 1 == 0)


def _bits(mask: int) -> list[int]:
    out = []
    while mask:
        low = mask & -mask
        out.append(low.bit_length() - 1)
        mask ^= low
    return out


def moves(s: Position, p: int) -> list[Move]:
    """Every move of the acting player ``p`` (the engine's legal actions, swap included)."""
    hand = s[HANDS][p]
    out: list[Move] = []
    trump = s[TRUMP]
    attack, defense = s[ATTACK], s[DEFENSE]
    if not attack:
        cards = _bits(hand)
        cards.sort(key=lambda c: VALUE[trump][c])
        out.extend((LEAD, c, -1) for c in cards)
        limit = s[LIMIT]
        if s[RULES].multi_card_lead and limit >= 2:
            for rank in range(2, 15):
                same = _bits(hand & RANK_MASK[rank])
                for size in range(2, min(len(same), limit) + 1):
                    for combo in combinations(same, size):
                        mask = 0
                        for c in combo:
                            mask |= 1 << c
                        out.append((LEAD_MULTI, mask, -1))
    elif p == s[DEFENDER] and not s[TAKING] and None in defense:
        beaters = BEATERS[trump]
        for a, d in zip(attack, defense, strict=True):
            if d is None:
                out.extend((BEAT, a, c) for c in _bits(hand & beaters[a]))
        out.append((TAKE, -1, -1))
        if core.transfer_target(s) is not None:
            out.extend((TRANSFER, c, -1) for c in _bits(hand & CARD_RANK_MASK[attack[0]]))
    else:
        out.extend((THROW, c, -1) for c in _bits(hand & s[RANKS]))
        out.append((PASS, -1, -1))
    if core.can_swap(s, p):
        out.append((SWAP, core.lowest_trump(s), -1))
    return out


class Solver:
    """Alpha-beta with a transposition table, for positions where only two players
    still hold cards, ``me`` (the maximising seat) and its opponent."""

    def __init__(
        self, max_nodes: int, deadline: float = math.inf, me: int = 0, model: int = 0
    ) -> None:
        self.max_nodes = max_nodes
        self.me = me
        self.model = model
        """Seats (a bit mask) taken to play the simplest way (``simple_decide``): at
        their turns the search follows that one move instead of every move, so it
        answers what wins against that play, and a far smaller tree."""
        self.deadline = deadline
        """``time.perf_counter()`` value past which the search gives up (a safety cap
        for an overloaded machine; the node budget is what normally bounds it)."""
        self.nodes = 0
        self.table: dict[tuple[object, ...], tuple[int, int]] = {}
        self.path: set[tuple[object, ...]] = set()
        self.depth = 0
        self.repeats = 0
        """Repetitions met so far; a node whose subtree met one is not stored."""

    def value(self, s: Position) -> int:
        """The exact value (for ``me``) of ``s``; ``SolverBudget`` if too big."""
        return self._search(s, -1, 1)

    def best_moves(
        self, s: Position, candidates: list[Move], p: int | None = None
    ) -> list[tuple[Move, int]]:
        """Exact values (for the player making them) of each candidate move of ``p``
        (the acting player unless told: a thrower may act before the defender)."""
        if p is None:
            p = core.actor(s)
        sign = 1 if p == self.me else -1
        out = []
        for m in candidates:
            child = core.copy(s)
            do(child, p, m)
            out.append((m, sign * self._search(child, -1, 1)))
        return out

    def _outcome(self, s: Position) -> int:
        durak = s[DURAK]
        if durak is None:
            return 0
        return -1 if same_side(s[RULES].partners, durak, self.me) else 1

    def _key(self, s: Position) -> tuple[object, ...]:
        return (
            tuple(s[HANDS]),
            s[ATTACK],
            s[DEFENSE],
            s[ATTACKER],
            s[TAKING],
            s[PASSED],
            s[LIMIT],
            len(s[STOCK]),
            s[TRUMP_CARD],
            s[BOUT] == 0,
        )

    def _search(self, sim: Position, alpha: int, beta: int) -> int:
        if sim[OVER]:
            return self._outcome(sim)
        self.nodes += 1
        if self.nodes > self.max_nodes or self.depth >= MAX_DEPTH:
            raise SolverBudget
        if not self.nodes & 1023 and time.perf_counter() > self.deadline:
            raise SolverBudget
        key = self._key(sim)
        if key in self.path:
            self.repeats += 1
            return 0
        self.path.add(key)
        self.depth += 1
        try:
            return self._expand(sim, key, alpha, beta)
        finally:
            self.path.discard(key)
            self.depth -= 1

    def _expand(self, sim: Position, key: tuple[object, ...], alpha: int, beta: int) -> int:
        repeats = self.repeats
        entry = self.table.get(key)
        if entry is not None:
            lo, hi = entry
            if lo == hi or lo >= beta:
                return lo
            if hi <= alpha:
                return hi
            alpha = max(alpha, lo)
            beta = min(beta, hi)
        a0, b0 = alpha, beta
        p = core.actor(sim)
        if self.model >> p & 1:
            ms = [simple_decide(sim, p)]
        else:
            ms = moves(sim, p)
            first = decide(sim, p)
            if first in ms:
                ms.remove(first)
                ms.insert(0, first)
        if p == self.me:
            best = -2
            for m in ms:
                child = core.copy(sim)
                do(child, p, m)
                v = self._search(child, alpha, beta)
                if v > best:
                    best = v
                    if v > alpha:
                        alpha = v
                    if alpha >= beta:
                        break
        else:
            best = 2
            for m in ms:
                child = core.copy(sim)
                do(child, p, m)
                v = self._search(child, alpha, beta)
                if v < best:
                    best = v
                    if v < beta:
                        beta = v
                    if alpha >= beta:
                        break
        if self.repeats != repeats:
            return best  # it relied on a repetition on this path: valid here only
        lo, hi = entry if entry is not None else (-1, 1)
        if best <= a0:
            hi = min(hi, best)
        elif best >= b0:
            lo = max(lo, best)
        else:
            lo = hi = best
        self.table[key] = (lo, hi)
        return best
