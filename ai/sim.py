"""A compact, mutable game simulator for search (playouts and the endgame solver).

It mirrors ``engine.game`` rule for rule on bit masks and plain lists, without
legality checks, events or history, so a playout costs a few microseconds per
action. It is only ever built from a hypothetical full state produced by
``engine.worlds`` (a view plus guessed hidden cards), never from the real game, and
``tests/test_ai_sim.py`` checks it against the engine on random games.

Turn protocol (the same one the arena uses): the player who acts next is the first
of ``waiting_for`` (the defender while cards are unbeaten, then the attackers who may
still throw in, the attacker first and the rest clockwise).
"""

from __future__ import annotations

from typing import TYPE_CHECKING

from engine.actions import Action, Attack, Beat, Pass, Swap, Take, Transfer
from engine.cards import CARD_RANK_MASK, LOWEST_RANK, mask_of
from engine.events import by_running_out
from engine.rules import HAND_SIZE, MAX_BOUT_CARDS

if TYPE_CHECKING:
    from engine import State

NONE = -1


class Sim:
    """One full game position, mutable; ``copy`` before branching."""

    __slots__ = (
        "attack",
        "attacker",
        "bout",
        "defender",
        "defense",
        "discard",
        "durak",
        "emptied",
        "first_cap",
        "hands",
        "leader",
        "limit",
        "low",
        "multi",
        "n",
        "out",
        "out_mask",
        "over",
        "partners",
        "passed",
        "ranks",
        "sp",
        "stock",
        "swap_ok",
        "taking",
        "teams",
        "throw_all",
        "transfer_ok",
        "trump",
        "trump_card",
    )

    n: int
    trump: int
    trump_card: int
    low: int
    transfer_ok: bool
    throw_all: bool
    multi: bool
    first_cap: int
    partners: bool
    teams: tuple[int, ...]
    """Per seat: the bit set of that seat and its partners (only itself without partners)."""
    swap_ok: bool
    stock: list[int]
    sp: int
    hands: list[int]
    discard: int
    attack: list[int]
    defense: list[int]
    ranks: int
    leader: int
    attacker: int
    defender: int
    limit: int
    passed: int
    taking: bool
    bout: int
    out: list[int]
    out_mask: int
    over: bool
    durak: int | None
    emptied: list[int]
    """Players who played their last card this bout, in that order."""

    @classmethod
    def from_state(cls, state: State) -> Sim:
        s = cls()
        rules = state.rules
        s.n = state.num_players
        s.trump = state.trump
        s.trump_card = int(state.trump_card)
        s.low = state.trump * 13 + LOWEST_RANK[rules.deck_size] - 2
        s.transfer_ok = rules.transfer
        s.throw_all = rules.throw_in == "all"
        s.multi = rules.multi_card_lead
        s.first_cap = rules.first_bout_cap(state.num_players)
        s.partners = rules.partners
        s.teams = tuple(
            sum(1 << q for q in range(s.n) if q % 2 == p % 2) if rules.partners else 1 << p
            for p in range(s.n)
        )
        s.swap_ok = rules.trump_swap
        s.stock = [int(c) for c in state.stock]
        s.sp = 0
        s.hands = list(state.hands)
        s.discard = state.discard
        s.attack = [int(c) for c in state.attack]
        s.defense = [NONE if c is None else int(c) for c in state.defense]
        s.ranks = state.ranks
        s.leader = state.leader
        s.attacker = state.attacker
        s.defender = state.defender
        s.limit = state.limit
        s.passed = state.passed
        s.taking = state.taking
        s.bout = state.bout
        s.out = list(state.out)
        s.out_mask = sum(1 << p for p in state.out)
        s.over = state.over
        s.durak = state.durak
        empty = [p for p in range(s.n) if state.hands[p] == 0 and p not in state.out]
        s.emptied = by_running_out(empty, (), state.history) if state.attack else []
        return s

    def copy(self) -> Sim:
        s = Sim()
        s.n = self.n
        s.trump = self.trump
        s.trump_card = self.trump_card
        s.low = self.low
        s.transfer_ok = self.transfer_ok
        s.throw_all = self.throw_all
        s.multi = self.multi
        s.first_cap = self.first_cap
        s.partners = self.partners
        s.teams = self.teams
        s.swap_ok = self.swap_ok
        s.stock = self.stock[:]
        s.sp = self.sp
        s.hands = self.hands[:]
        s.discard = self.discard
        s.attack = self.attack[:]
        s.defense = self.defense[:]
        s.ranks = self.ranks
        s.leader = self.leader
        s.attacker = self.attacker
        s.defender = self.defender
        s.limit = self.limit
        s.passed = self.passed
        s.taking = self.taking
        s.bout = self.bout
        s.out = self.out[:]
        s.out_mask = self.out_mask
        s.over = self.over
        s.durak = self.durak
        s.emptied = self.emptied[:]
        return s

    def is_loser(self, p: int) -> bool:
        """Whether ``p`` lost the finished game: the durak, or with partners a member
        of the durak's team (a draw loses nobody)."""
        return self.durak is not None and self.teams[self.durak] >> p & 1 == 1

    # --- who is in play ----------------------------------------------------------

    @property
    def stock_left(self) -> int:
        return len(self.stock) - self.sp

    def in_play(self, p: int) -> bool:
        return not self.out_mask >> p & 1 and (self.hands[p] != 0 or self.sp < len(self.stock))

    def left_of(self, p: int) -> int:
        n = self.n
        for step in range(1, n):
            seat = (p + step) % n
            if self.in_play(seat):
                return seat
        return p

    def next_opponent(self, p: int) -> int:
        """The next seat after ``p`` in play and not ``p``'s partner (``left_of``
        without partners)."""
        if not self.partners:
            return self.left_of(p)
        n, team = self.n, self.teams[p]
        for step in range(1, n):
            seat = (p + step) % n
            if self.in_play(seat) and not team >> seat & 1:
                return seat
        return p

    def may_throw_in(self, p: int) -> bool:
        if p == self.defender or self.out_mask >> p & 1:
            return False
        if self.partners and (p ^ self.defender) & 1 == 0:
            return False  # the defender's partner
        if self.throw_all:
            return True
        return p == self.attacker or p == self.left_of(self.defender)

    def can_throw_in(self, p: int) -> bool:
        return (
            not self.passed >> p & 1
            and len(self.attack) < self.limit
            and self.hands[p] & self.ranks != 0
            and self.may_throw_in(p)
        )

    def bout_cap(self) -> int:
        return self.first_cap if self.bout == 0 else MAX_BOUT_CARDS

    def waiting(self) -> list[int]:
        if self.over:
            return []
        if not self.attack:
            return [self.attacker]
        out: list[int] = []
        if not self.taking and NONE in self.defense:
            out.append(self.defender)
        n = self.n
        for step in range(n):
            seat = (self.attacker + step) % n
            if self.can_throw_in(seat):
                out.append(seat)
        return out

    def actor(self) -> int:
        """The first player waited for; -1 when the game is over."""
        if self.over:
            return -1
        if not self.attack:
            return self.attacker
        if not self.taking and NONE in self.defense:
            return self.defender
        n = self.n
        for step in range(n):
            seat = (self.attacker + step) % n
            if self.can_throw_in(seat):
                return seat
        return -1  # unreachable: the bout would have ended

    def transfer_target(self) -> int:
        """Who would defend after a transfer now, or -1 when no transfer is allowed."""
        if not self.transfer_ok:
            return -1
        for c in self.defense:
            if c != NONE:
                return -1
        if self.ranks != CARD_RANK_MASK[self.attack[0]]:
            return -1
        target = self.next_opponent(self.defender)
        if target == self.defender:
            return -1
        after = len(self.attack) + 1
        if after > self.hands[target].bit_count() or after > self.bout_cap():
            return -1
        return target

    def can_swap(self, p: int) -> bool:
        return (
            self.swap_ok
            and self.sp < len(self.stock)
            and self.hands[p] >> self.low & 1 == 1
            and self.trump_card != self.low
        )

    # --- actions (no legality checks: callers only play legal moves) -------------

    def do_attack(self, p: int, cards: list[int]) -> None:
        mask = 0
        for c in cards:
            mask |= 1 << c
        self.hands[p] &= ~mask
        if not self.hands[p]:
            self.emptied.append(p)
        self.attack.extend(cards)
        self.defense.extend([NONE] * len(cards))
        ranks = self.ranks | CARD_RANK_MASK[cards[0]]
        if ranks != self.ranks:
            self.passed = 0
            self.ranks = ranks
        self._after()

    def do_attack1(self, p: int, card: int) -> None:
        self.hands[p] &= ~(1 << card)
        if not self.hands[p]:
            self.emptied.append(p)
        self.attack.append(card)
        self.defense.append(NONE)
        ranks = self.ranks | CARD_RANK_MASK[card]
        if ranks != self.ranks:
            self.passed = 0
            self.ranks = ranks
        self._after()

    def do_beat(self, p: int, attack_card: int, card: int) -> None:
        self.hands[p] &= ~(1 << card)
        if not self.hands[p]:
            self.emptied.append(p)
        self.defense[self.attack.index(attack_card)] = card
        ranks = self.ranks | CARD_RANK_MASK[card]
        if ranks != self.ranks:
            self.passed = 0
            self.ranks = ranks
        self._after()

    def do_take(self, p: int) -> None:
        self.taking = True
        self._after()

    def do_pass(self, p: int) -> None:
        self.passed |= 1 << p
        self._after()

    def do_transfer(self, p: int, card: int) -> None:
        target = self.transfer_target()
        self.hands[p] &= ~(1 << card)
        if not self.hands[p]:
            self.emptied.append(p)
        self.attack.append(card)
        self.defense.append(NONE)
        self.attacker = p
        self.defender = target
        self.limit = min(self.bout_cap(), self.hands[target].bit_count())
        self.passed = 0
        self._after()

    def do_swap(self, p: int) -> None:
        low, face_up = self.low, self.trump_card
        self.hands[p] = self.hands[p] & ~(1 << low) | 1 << face_up
        self.stock[-1] = low
        self.trump_card = low
        self._after()

    def apply(self, p: int, action: Action) -> None:
        """Apply an engine action value (used at search roots and in tests)."""
        if isinstance(action, Attack):
            self.do_attack(p, [int(c) for c in action.cards])
        elif isinstance(action, Beat):
            self.do_beat(p, int(action.attack), int(action.card))
        elif isinstance(action, Take):
            self.do_take(p)
        elif isinstance(action, Pass):
            self.do_pass(p)
        elif isinstance(action, Transfer):
            self.do_transfer(p, int(action.card))
        elif isinstance(action, Swap):
            self.do_swap(p)
        else:  # pragma: no cover - exhaustive
            raise TypeError(action)

    # --- bout end ----------------------------------------------------------------

    def _after(self) -> None:
        if (
            self.attack
            and (self.taking or NONE not in self.defense)
            and ((not self.taking and self.hands[self.defender] == 0) or not self._anyone())
        ):
            self._end_bout()

    def _anyone(self) -> bool:
        if len(self.attack) >= self.limit:
            return False
        ranks, passed = self.ranks, self.passed
        for p, hand in enumerate(self.hands):
            if hand & ranks and not passed >> p & 1 and self.may_throw_in(p):
                return True
        return False

    def _end_bout(self) -> None:
        n = self.n
        table = mask_of(self.attack)
        for c in self.defense:
            if c != NONE:
                table |= 1 << c
        hands = self.hands
        defender = self.defender
        taken = self.taking
        if taken:
            hands[defender] |= table
        else:
            self.discard |= table
        out_mask = self.out_mask
        leader = self.leader
        stock = self.stock
        end = len(stock)
        if self.sp < end:
            order = [(leader + k) % n for k in range(n)]
            order = [p for p in order if p != defender and not out_mask >> p & 1]
            order.append(defender)
            for p in order:
                need = HAND_SIZE - hands[p].bit_count()
                sp = self.sp
                if need <= 0 or sp >= end:
                    continue
                stop = min(end, sp + need)
                for c in stock[sp:stop]:
                    hands[p] |= 1 << c
                self.sp = stop
        if self.sp >= end:
            # Everyone held cards when the bout began, so who has none now ran out
            # during it: they finish in the order they played their last card.
            for p in self.emptied:
                if hands[p] == 0:
                    self.out.append(p)
                    self.out_mask |= 1 << p
        self.attack = []
        self.defense = []
        self.ranks = 0
        self.passed = 0
        self.taking = False
        if self.emptied:
            self.emptied = []
        if self.sp >= end:
            remaining = [p for p in range(n) if not self.out_mask >> p & 1]
            # Over when at most one player (or, with partners, one side) holds cards.
            if len(remaining) <= 1 or (self.partners and len({p & 1 for p in remaining}) == 1):
                self.over = True
                self.durak = remaining[0] if remaining else None
                return
        attacker = self.left_of(defender) if taken or hands[defender] == 0 else defender
        new_defender = self.next_opponent(attacker)
        self.leader = attacker
        self.attacker = attacker
        self.defender = new_defender
        self.limit = min(MAX_BOUT_CARDS, hands[new_defender].bit_count())
        self.bout += 1
