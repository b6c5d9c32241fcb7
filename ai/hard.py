"""The Hard computer player: card memory, sampled worlds, search, exact endgames.

* Memory: the view's public record (discard pile, cards everyone knows each player
  holds, including the face-up trump card and who drew it) plus ``Memory``'s
  inferences (what a player probably lacks, from how it took, beat and led; whether
  its moves so far all fit the simplest rule-of-thumb play).
* Worlds: the unseen cards are dealt at random to the other players' unknown slots
  and the stock, consistently with all of that (``engine.worlds`` validates and builds
  the hypothetical state; inferred "hints" steer the deal but never contradict it).
* Search: perfect-information Monte Carlo. Every candidate action is tried in the
  same sampled worlds and each world is played out by the Normal heuristic (opponents
  whose moves all fit the simplest play by ``policy.simple_decide``), a random one of
  the players who may act at once going first, as at a real table; late in a
  two-player game each world is solved exactly instead. Once the stock is empty and
  only two players hold cards (a two-player game, or the last two of any table) there
  is only one world, and the exact solver decides, for this player even when the
  defender may also act (a thrower may move first at a real table). Where perfect play
  cannot win, or the tree is too big to solve against every defence, a search that
  follows the opponent's simplest play (when its moves all fit it, two players only)
  picks a move that wins against that; else a playout against its modelled play picks
  among the moves that hold. At bigger tables the last two keep the older rule (the
  solver only when this player is the first to act), as their matches were measured.

Reproducibility: the work per decision is counted in playouts and solver nodes, and
the random generator is seeded from (seed, step, player), so a decision depends only
on the seed and the view. A wall-clock cap (``time_cap``) only stops a search that
runs far past its normal time (a badly overloaded machine); then it decides with the
worlds it has finished, which is the only case where a seeded result can change.
"""

from __future__ import annotations

import logging
import math
import random
import time
from dataclasses import dataclass

from ai.cycles import progress_action
from ai.levels import NormalPlayer, _check
from ai.memory import Memory
from ai.policy import NORMAL, Move, Style, decide, do, playout, to_action
from ai.solver import Solver, SolverBudget, moves, same_side
from engine import core
from engine.actions import Action, Swap
from engine.cards import Card
from engine.core import RULES, Position
from engine.view import PlayerView
from engine.worlds import hidden_slots, unseen_cards, world_position

log = logging.getLogger(__name__)


@dataclass(frozen=True, slots=True)
class Budget:
    """Work per decision, counted (not timed) so that a seed decides the same way on
    any machine. The defaults aim at a median well under 100 ms on one core at every
    table the lobby offers (2 to 6 players, 24 to 52 cards)."""

    playouts: int = 360
    """Playouts per decision (shared by the candidate actions) when one playout costs
    as much as a fresh two-player 36-card game; scaled by ``playout_cost`` so the work
    (not the count) stays level: more playouts late in a game, fewer at big tables."""
    min_worlds: int = 6
    max_worlds: int = 200
    endgame_nodes: int = 8_000
    """Node budget of the exact two-player endgame solver at the root."""
    late_stock: int = 0
    """Two players and at most this many stock cards: solve each world exactly.
    Off (0) by default: 3 was measured no stronger against Easy, and slower."""
    late_nodes: int = 2_000
    """Node budget per world for those late solves (beyond it: playouts)."""
    late_worlds: int = 24
    """At most this many worlds when solving them exactly."""
    model_simple: bool = True
    """Two players: simulate an opponent whose moves so far all fit the simplest play
    (``Memory.simple``) with that play in the playouts, instead of the Normal heuristic."""
    time_cap: float = 0.8
    """Wall-clock safety cap in seconds (only an overloaded machine reaches it)."""


def playout_cost(view: PlayerView) -> float:
    """The cost of one playout from ``view`` relative to a fresh two-player 36-card
    game: proportional to the cards still in play, each a little dearer with more
    players (measured: about 10, 13 and 15 us a card with 2, 4 and 6 players)."""
    cards = sum(view.hand_sizes) + view.stock_count
    for _, d in view.table:
        cards += 1 if d is None else 2
    return max(cards, 4) * (8 + view.num_players) / (36 * 10)


def duel(view: PlayerView) -> bool:
    """Whether the stock is empty and at most one opponent still holds cards: then every
    card is known (that opponent holds all the unseen ones) and the rest of the game is
    a two-player game of perfect information (a player who has just played their last
    card is out at the end of the bout and never acts again)."""
    if view.stock_count:
        return False
    me = view.player
    holding = [p for p, size in enumerate(view.hand_sizes) if size and p != me]
    return len(holding) <= 1


def _table_order(view: PlayerView, rng: random.Random) -> random.Random | None:
    """How playouts order players who may act at once (see ``policy.playout``): at
    random, as at a real table, while more than two players are in the game; in the
    fixed order between two. Measured on the same deals (seeded random order in the
    arena): Hard + 3 Normal gave Hard the durak in 10.7% of 773 games with fixed-order
    playouts and 7.3% of 771 with random-order ones, but Hard vs Normal fell from 84.2%
    to 80.7% (about 380 decided games each) and Hard vs Easy from 91.8% to 89.6%.
    Keeping the playouts' own Hard from throwing in before the defender has beaten did
    not help at four players (7.7% of 779)."""
    in_game = view.num_players if view.stock_count else sum(1 for h in view.hand_sizes if h)
    return rng if in_game > 2 else None


class HardPlayer:
    level = "hard"

    def __init__(self, seed: int = 0, budget: Budget | None = None, style: Style = NORMAL):
        self.seed = seed
        self.budget = budget or Budget()
        self.style = style
        self.memory = Memory()
        self.normal = NormalPlayer(seed, style)
        self.last_worlds = 0
        self.last_playouts = 0
        """Worlds and playouts of the last decision (tests and benchmarks read them)."""
        self.last_nodes = 0
        """Exact-solver nodes of the last decision."""

    def choose(self, view: PlayerView) -> Action:
        _check(view)
        self.memory.update(view)
        legal = list(view.legal_actions)
        for a in legal:
            if isinstance(a, Swap):
                return a  # the lowest trump for the face-up one: always a gain
        if len(legal) == 1:
            return legal[0]
        progress = progress_action(view)
        if progress is not None:
            return progress  # a long run of taken bouts: see ai.cycles
        try:
            return self._search(view, legal)
        except Exception:
            # A bug in the search must not cost the table its computer seat, but it
            # must not hide either: log it and play the Normal heuristic's move.
            log.exception("Hard's search failed at step %s; playing Normal's move", view.step)
            return self.normal.choose(view)

    def _search(self, view: PlayerView, legal: list[Action]) -> Action:
        rng = random.Random(f"{self.seed}:{view.step}:{view.player}:{len(view.history)}")
        start = time.perf_counter()
        self.last_worlds = self.last_playouts = self.last_nodes = 0
        if duel(view):
            action = self._solve_endgame(view, legal, rng, start)
            if action is not None:
                return action
        return self._pimc(view, legal, rng, start)

    # --- exact endgame -------------------------------------------------------------

    def _world(self, view: PlayerView, rng: random.Random) -> Position:
        """One random world consistent with everything this player knows."""
        cards = list(unseen_cards(view))
        rng.shuffle(cards)
        slots, stock_slots = hidden_slots(view)
        memory = self.memory
        hands: dict[int, tuple[Card, ...]] = {}
        # Players believed to lack some cards are dealt first, each unknown card from
        # the cards it most likely is (see ``Memory.hint_masks``) when there are any.
        masks = {p: memory.hint_masks(p, need) for p, need in slots.items()}
        order = sorted(slots, key=lambda p: (-(any(masks[p])), p))
        for p in order:
            pick = []
            taken = 0
            for lack in masks[p]:
                for i, c in enumerate(cards):
                    if not taken >> i & 1 and not lack >> c & 1:
                        break
                else:
                    i = next(i for i in range(len(cards)) if not taken >> i & 1)
                taken |= 1 << i
                pick.append(cards[i])
            chosen = set(pick)
            cards = [c for c in cards if c not in chosen]
            hands[p] = (*view.known_cards[p], *pick)
        assert len(cards) == stock_slots
        stock = (*cards, view.trump_card) if view.trump_card_in_stock else ()
        return world_position(view, hands, tuple(stock))

    def _solve_endgame(
        self, view: PlayerView, legal: list[Action], rng: random.Random, start: float
    ) -> Action | None:
        sim = self._world(view, rng)  # the only world: every card is known
        p = view.player
        if view.num_players > 2 and core.actor(sim) != p:
            return None  # the last two of a bigger table: the older rule (see above)
        simple = self._simple(view)
        deadline = start + self.budget.time_cap * 0.6
        solver = Solver(self.budget.endgame_nodes, deadline, me=p)
        cands = moves(sim, p)
        preferred = decide(sim, p, self.style)
        try:
            values = solver.best_moves(sim, cands, p)
        except SolverBudget:
            values = None
        finally:
            self.last_nodes += solver.nodes
        if values is None:
            if not simple:
                return None
            # Too big to solve against every defence; against the modelled simplest
            # play the tree is far smaller: take a move that wins against it.
            good, move = cands, preferred if preferred in cands else cands[0]
            won = self._model_win(sim, p, good, move, simple, deadline)
            if won is None:
                return None
            move = won
        else:
            best = max(v for _, v in values)
            good = [m for m, v in values if v == best]
            move = preferred if preferred in good else good[0]
            if best < 1 and len(good) > 1:
                # Perfect play cannot win here, but the opponent is no perfect player:
                # of the moves that hold the best result, take one that wins against its
                # modelled play (the heuristic, or the simplest play if it looks simple).
                won = self._model_win(sim, p, good, move, simple, deadline) if simple else None
                move = won if won is not None else self._exploit(sim, p, good, move, simple)
        action = to_action(move)
        return action if action in legal else None

    def _model_win(
        self, sim: Position, p: int, good: list[Move], move: Move, simple: int, deadline: float
    ) -> Move | None:
        """Of ``good``, a move that wins against the simplest play of the ``simple``
        seats (``move`` first), or None when none does or the search is too big."""
        solver = Solver(self.budget.endgame_nodes, deadline, me=p, model=simple)
        try:
            for m in [move, *(g for g in good if g != move)]:
                if solver.best_moves(sim, [m], p)[0][1] == 1:
                    return m
        except SolverBudget:
            return None
        finally:
            self.last_nodes += solver.nodes
        return None

    def _exploit(self, sim: Position, p: int, good: list[Move], move: Move, simple: int) -> Move:
        for m in [move, *(g for g in good if g != move)]:
            child = core.copy(sim)
            do(child, p, m)
            durak = playout(child, self.style, simple=simple)  # two in the game: fixed order
            self.last_playouts += 1
            if durak is not None and not same_side(sim[RULES].partners, p, durak):
                return m
        return move

    def _solve_world(
        self, world: Position, me: int, legal: list[Action], nodes: int | None = None
    ) -> list[float] | None:
        """Exact results of each action in one world (1 won, 0.5 a draw, 0 lost), or
        None if it takes more than ``nodes`` (default ``late_nodes``) solver nodes."""
        solver = Solver(self.budget.late_nodes if nodes is None else nodes, me=me)
        out = []
        try:
            for action in legal:
                sim = core.copy(world)
                core.play(sim, me, action)
                out.append(solver.value(sim) * 0.5 + 0.5)
        except SolverBudget:
            return None
        finally:
            self.last_nodes += solver.nodes
        return out

    def _simple(self, view: PlayerView) -> int:
        """The opponents to simulate with the simplest play (a bit mask).

        Only with two players: at bigger tables Normal players look "simple" for long
        stretches (few of their moves tell the two apart), and modelling them so made
        Hard + 3 Normal worse (Hard the durak in 8.3% of 2,000 games, 6.4% without
        the model)."""
        if not self.budget.model_simple or view.num_players != 2:
            return 0
        flags = self.memory.simple
        return sum(1 << p for p, flag in enumerate(flags) if flag and p != view.player)

    # --- sampled worlds --------------------------------------------------------------

    def world_count(self, view: PlayerView, candidates: int) -> int:
        """How many worlds the budget affords for ``candidates`` actions from ``view``."""
        budget = self.budget
        total = int(budget.playouts / playout_cost(view))
        worlds = max(budget.min_worlds, min(budget.max_worlds, total // candidates))
        if worlds * candidates > 2 * total:
            worlds = max(2, 2 * total // candidates)  # many candidates: fewer worlds each
        if duel(view):
            worlds = 1  # every card is known: one world is the truth
        if view.num_players == 2 and view.stock_count <= budget.late_stock:
            worlds = min(worlds, budget.late_worlds)
        return worlds

    def outcomes(
        self,
        view: PlayerView,
        legal: list[Action],
        worlds: int,
        rng: random.Random,
        deadline: float = math.inf,
    ) -> list[list[float]]:
        """Each action's result in each of ``worlds`` sampled worlds (one row per world:
        1 won, 0.5 a draw, 0 lost), the search Hard decides by; the same worlds for every
        action, so their differences carry little sampling noise. Stops early once
        ``time.perf_counter()`` passes ``deadline``. The memory must have seen ``view``."""
        me = view.player
        n = view.num_players
        late = n == 2 and view.stock_count <= self.budget.late_stock
        simple = self._simple(view)
        order = _table_order(view, rng)
        # With partners the team loses together: a playout is lost when the durak is
        # on this player's side (seat % 2), so helping the other side never pays.
        side = sum(1 << q for q in range(n) if same_side(view.rules.partners, me, q))
        rows: list[list[float]] = []
        for _ in range(worlds):
            world = self._world(view, rng)
            results = self._solve_world(world, me, legal) if late else None
            if results is None:
                results = []
                for action in legal:
                    sim = core.copy(world)
                    core.play(sim, me, action)
                    durak = playout(sim, self.style, simple=simple, order=order)
                    self.last_playouts += 1
                    results.append(0.5 if durak is None else float(not side >> durak & 1))
            rows.append(results)
            if time.perf_counter() > deadline:
                break
        return rows

    def exact_results(
        self, view: PlayerView, legal: list[Action], rng: random.Random, nodes: int
    ) -> list[float] | None:
        """In a duel (every card known), each action's exact result under perfect play
        by both sides (1 won, 0.5 a draw, 0 lost), or None past ``nodes`` solver nodes."""
        return self._solve_world(self._world(view, rng), view.player, legal, nodes)

    def _pimc(
        self, view: PlayerView, legal: list[Action], rng: random.Random, start: float
    ) -> Action:
        worlds = self.world_count(view, len(legal))
        rows = self.outcomes(view, legal, worlds, rng, start + self.budget.time_cap)
        score = [0.0] * len(legal)
        for results in rows:
            for i, r in enumerate(results):
                score[i] += r
        self.last_worlds = len(rows)
        fallback = self.normal.choose(view)
        best = max(score)
        # Ties go to the heuristic's choice, then to the engine's order.
        if score[legal.index(fallback)] >= best - 1e-9:
            return fallback
        return legal[score.index(best)]
