"""Review by the Hard player: the decisions of one player that cost them the most.

Two layers, so that no hidden card can reach the judgement:

* Replay (``decision_points``): deals the recorded game again, applies its actions,
  and at each of the reviewed player's real choices (two or more ``candidates``) keeps
  that player's view (``engine.view``: own hand plus the public history, exactly what
  Hard would get sitting there) and the action taken. It is the only code here that
  holds a whole game state, and it hands out nothing else.
* Judgement (``judge``, ``review_points``): takes views only and scores the moves with
  Hard's own machinery (``HardPlayer.outcomes``: worlds sampled from the view and its
  memory, played out by the heuristic; ``HardPlayer.exact_results``: the exact solver
  once every card is known), with a budget of its own (``ReviewBudget``).

Each decision is judged in two rounds. A screen scores every candidate in the same
sampled worlds (Hard's search at a larger budget). When the move taken was not the
screen's best, the move taken and the screen's best alternatives (``finalists``) are
measured again in fresh worlds, in batches until the cost is clearly below the
reporting threshold or the world budget is spent; the reported figures come from that
second round only, so picking the finalists does not bias them. Decisions whose cost
is small (``min_cost``) or within the estimate's noise (``noise_z`` standard errors of
the paired difference) are not reported.

A "durak chance" is the share of worlds lost (with partners: lost by the player's
team), a draw counting half, as Hard scores them. Every random draw is seeded from
``seed`` and the view, so a review is reproducible.
"""

from __future__ import annotations

import math
import random
import statistics
from collections.abc import Callable, Iterable, Iterator, Sequence
from dataclasses import dataclass

from ai.hard import Budget, HardPlayer, duel
from engine import Action, Card, Rules, Swap, apply, new_game, view
from engine.actions import BEAT, PASS, SWAP, TAKE, TRANSFER, attack_of
from engine.events import Attacked, Beaten, Event, Passed, Swapped, Took, Transferred
from engine.view import PlayerView

SeatAction = tuple[int, Action]
"""Who did what: one applied action of a game record."""


@dataclass(frozen=True, slots=True)
class ReviewBudget:
    """Work per reviewed decision, counted (not timed), so a seed reproduces a review.

    The defaults cost about 0.13 s of one core per decision at the median (0.4 s at
    p99) and 2 to 3 s per game review, 2 to 4 players (``bench/review_cost.py``)."""

    screen_playouts: int = 720
    """The screen's playout work, shared by every legal action, counted like Hard's
    ``Budget.playouts`` (scaled by the cards in play): twice what Hard spends to play."""
    screen_min_worlds: int = 8
    screen_max_worlds: int = 200
    finalists: int = 2
    """Alternatives measured again with the move taken: the screen's best ones (1+)."""
    refine_batch: int = 60
    """Worlds per batch of the second round (the estimate's noise is in worlds)."""
    refine_max_worlds: int = 300
    endgame_nodes: int = 20_000
    """Node budget of the exact solver for a decision once every card is known."""
    min_cost: float = 0.03
    """Costs below this (3 percentage points of durak chance) are not reported."""
    noise_z: float = 2.0
    """A cost is reported only above this many standard errors of its estimate."""

    def hard_budget(self) -> Budget:
        return Budget(
            playouts=self.screen_playouts,
            min_worlds=self.screen_min_worlds,
            max_worlds=self.screen_max_worlds,
            endgame_nodes=self.endgame_nodes,
            time_cap=math.inf,  # counted work only: a loaded machine must not change it
        )


# --- the game record and its replay ----------------------------------------------------


@dataclass(frozen=True, slots=True)
class GameRecord:
    """What reproduces a game: ``new_game``'s arguments and every action applied."""

    rules: Rules
    num_players: int
    actions: tuple[SeatAction, ...]
    seed: int | None = None
    deck: tuple[Card, ...] | None = None
    dealer: int | None = 0
    first_game: bool = True


def actions_from_events(events: Iterable[Event]) -> tuple[SeatAction, ...]:
    """The actions behind a game's full event record (``State.all_events()``, which
    keeps every pass): each action leaves exactly one event naming its player."""
    out: list[SeatAction] = []
    for e in events:
        if isinstance(e, Attacked):
            out.append((e.player, attack_of(e.cards)))
        elif isinstance(e, Beaten):
            out.append((e.player, BEAT[e.attack][e.card]))
        elif isinstance(e, Took):
            out.append((e.player, TAKE))
        elif isinstance(e, Passed):
            out.append((e.player, PASS))
        elif isinstance(e, Transferred):
            out.append((e.player, TRANSFER[e.card]))
        elif isinstance(e, Swapped):
            out.append((e.player, SWAP[e.gave]))
    return tuple(out)


@dataclass(frozen=True, slots=True)
class DecisionPoint:
    """One real choice of the reviewed player, as they saw it."""

    number: int
    """The player's how-manieth real choice this was (0-based)."""
    action_index: int
    """Index of the action taken in ``GameRecord.actions``."""
    view: PlayerView
    taken: Action


def candidates(seen: PlayerView) -> list[Action]:
    """The actions a decision is judged among: the legal ones but the trump swap. Like
    Hard, the review takes the swap for always right (it trades the lowest trump for a
    higher one and keeps the turn); playouts cannot judge it fairly either, since after
    it the heuristic, not the player, picks the move the other candidates make at once."""
    return [a for a in seen.legal_actions if not isinstance(a, Swap)]


def decision_points(record: GameRecord, seat: int) -> list[DecisionPoint]:
    """Replay ``record``; at each action of ``seat`` that was a real choice (not a swap,
    and two or more ``candidates``), ``seat``'s view then and the action taken. Raises
    ``IllegalActionError`` if the record does not replay."""
    state = new_game(
        record.rules,
        record.num_players,
        seed=record.seed,
        deck=record.deck,
        dealer=record.dealer,
        first_game=record.first_game,
    )
    points: list[DecisionPoint] = []
    for index, (player, action) in enumerate(record.actions):
        if player == seat and not isinstance(action, Swap):
            seen = view(state, seat)
            if len(candidates(seen)) > 1:
                points.append(DecisionPoint(len(points), index, seen, action))
        state = apply(state, player, action)
    return points


# --- judging one decision --------------------------------------------------------------


@dataclass(frozen=True, slots=True)
class Estimate:
    action: Action
    durak: float
    """The estimated chance of being the durak (the team losing) after this action."""
    worlds: int
    """The sampled worlds it rests on; 0 when solved exactly."""


@dataclass(frozen=True, slots=True)
class Judgement:
    """The review's verdict on one decision."""

    estimates: tuple[Estimate, ...]
    """The screen's estimate for every action judged, in the view's order."""
    taken: Estimate
    best: Estimate | None
    """The best alternative to the move taken (None when there was none)."""
    noise: float
    """``noise_z`` standard errors of the cost (0 when solved exactly)."""
    exact: bool

    @property
    def cost(self) -> float:
        """How much more likely the move taken makes losing than the best alternative."""
        return 0.0 if self.best is None else max(0.0, self.taken.durak - self.best.durak)

    def reportable(self, min_cost: float) -> bool:
        return self.cost >= min_cost and self.cost > self.noise


def judge(
    seen: PlayerView,
    taken: Action,
    budget: ReviewBudget | None = None,
    seed: int = 0,
    among: Sequence[Action] | None = None,
) -> Judgement:
    """Judge ``taken`` against ``among`` (default: ``candidates(seen)``) from the
    player's view only, as Hard would see the position."""
    budget = budget or ReviewBudget()
    legal = list(candidates(seen) if among is None else among)
    if taken not in legal:
        legal.append(taken)
    hard, key = _evaluator(seen, legal, budget, seed)
    screen, rows = _first_round(hard, seen, legal, budget, key)
    if rows is None:
        return _exact_judgement(screen, taken)
    taken_is_best = min(e.durak for e in screen) >= screen[legal.index(taken)].durak
    if taken_is_best or len(rows) < 2:
        # A single world is a duel too big to solve: one deterministic playout of the
        # heuristic, which a second round would only repeat (and never report).
        return _screen_judgement(screen, taken, rows, budget.noise_z)
    return _refine(hard, seen, screen, taken, budget, random.Random(f"refine:{key}"))


def durak_chances(
    seen: PlayerView,
    among: Sequence[Action] | None = None,
    budget: ReviewBudget | None = None,
    seed: int = 0,
) -> dict[Action, float]:
    """Each action's estimated durak chance from ``seen`` (the first round only: the
    exact solver or the screen); ``among`` defaults to ``candidates(seen)``."""
    budget = budget or ReviewBudget()
    legal = list(candidates(seen) if among is None else among)
    if not legal:
        return {}
    hard, key = _evaluator(seen, legal, budget, seed)
    screen, _ = _first_round(hard, seen, legal, budget, key)
    return {e.action: e.durak for e in screen}


def _evaluator(
    seen: PlayerView, legal: list[Action], budget: ReviewBudget, seed: int
) -> tuple[HardPlayer, str]:
    """A Hard player that has read ``seen`` (its memory: the public history and the
    inferences Hard draws from it), and the key that seeds this decision's draws."""
    if any(a not in seen.legal_actions for a in legal):
        raise ValueError("every action judged must be a legal action of the view")
    hard = HardPlayer(seed, budget.hard_budget())
    hard.memory.update(seen)
    return hard, f"{seed}:{seen.player}:{seen.step}:{len(seen.history)}"


def _first_round(
    hard: HardPlayer, seen: PlayerView, legal: list[Action], budget: ReviewBudget, key: str
) -> tuple[tuple[Estimate, ...], list[list[float]] | None]:
    """Every action's estimate: exact once every card is known and the solver finishes
    (then no rows), else the screen's playouts and their rows (one per world)."""
    if duel(seen):
        world_rng = random.Random(f"duel:{key}")
        exact = hard.exact_results(seen, legal, world_rng, budget.endgame_nodes)
        if exact is not None:
            return tuple(Estimate(a, 1.0 - r, 0) for a, r in zip(legal, exact, strict=True)), None
    rows = hard.outcomes(seen, legal, hard.world_count(seen, len(legal)), random.Random(key))
    return tuple(Estimate(a, _durak(rows, i), len(rows)) for i, a in enumerate(legal)), rows


def _durak(rows: list[list[float]], column: int) -> float:
    return 1.0 - sum(row[column] for row in rows) / len(rows)


def _paired_error(rows: list[list[float]], first: int, second: int) -> float:
    """The standard error of the difference of two columns' means (same worlds); 1 (no
    estimate: never reported) from a single world."""
    if len(rows) < 2:
        return 1.0
    diffs = [row[first] - row[second] for row in rows]
    return statistics.stdev(diffs) / math.sqrt(len(rows))


def _exact_judgement(estimates: tuple[Estimate, ...], taken: Action) -> Judgement:
    taken_estimate = next(e for e in estimates if e.action == taken)
    others = [e for e in estimates if e.action != taken]
    best = min(others, key=lambda e: e.durak) if others else None
    return Judgement(estimates, taken_estimate, best, 0.0, True)


def _screen_judgement(
    screen: tuple[Estimate, ...], taken: Action, rows: list[list[float]], noise_z: float
) -> Judgement:
    """The verdict from the screen alone."""
    actions = [e.action for e in screen]
    t = actions.index(taken)
    others = [i for i in range(len(screen)) if i != t]
    if not others:
        return Judgement(screen, screen[t], None, 0.0, False)
    b = min(others, key=lambda i: screen[i].durak)
    return Judgement(screen, screen[t], screen[b], noise_z * _paired_error(rows, t, b), False)


def _refine(
    hard: HardPlayer,
    seen: PlayerView,
    screen: tuple[Estimate, ...],
    taken: Action,
    budget: ReviewBudget,
    rng: random.Random,
) -> Judgement:
    """Measure the move taken and the screen's best alternatives again in fresh worlds,
    a batch at a time, until the cost is clearly unreportable or the worlds run out."""
    ranked = sorted((e for e in screen if e.action != taken), key=lambda e: e.durak)
    finalists = [taken, *(e.action for e in ranked[: budget.finalists])]
    rows: list[list[float]] = []
    while True:
        rows += hard.outcomes(seen, finalists, budget.refine_batch, rng)
        means = [_durak(rows, i) for i in range(len(finalists))]
        best = min(range(1, len(finalists)), key=lambda i: means[i])
        cost = means[0] - means[best]
        noise = budget.noise_z * _paired_error(rows, 0, best)
        clearly_small = cost + noise < budget.min_cost
        if clearly_small or len(rows) >= budget.refine_max_worlds:
            break
    worlds = len(rows)
    return Judgement(
        screen,
        Estimate(taken, means[0], worlds),
        Estimate(finalists[best], means[best], worlds),
        noise,
        False,
    )


# --- the review ------------------------------------------------------------------------


@dataclass(frozen=True, slots=True)
class CostlyDecision:
    """A reported decision: what was played, what was better, and what it cost."""

    number: int
    """The player's how-manieth real choice (0-based; see ``DecisionPoint``)."""
    action_index: int
    bout: int
    step: int
    taken: Action
    best: Action
    durak_taken: float
    """The estimated chance of being the durak after the move taken."""
    durak_best: float
    """...and after the best alternative: also the chance before the decision, had it
    been played well (the value of the best move)."""
    noise: float
    exact: bool

    @property
    def cost(self) -> float:
        return self.durak_taken - self.durak_best


@dataclass(frozen=True, slots=True)
class Review:
    seat: int
    decisions: int
    """The real choices judged."""
    costly: tuple[CostlyDecision, ...]
    """The costliest reportable decisions, costliest first (at most ``top``)."""


Progress = Callable[[int, int], None]
"""Called with (decisions judged, decisions in all) after each decision."""


def judge_points(
    points: Sequence[DecisionPoint], budget: ReviewBudget | None = None, seed: int = 0
) -> Iterator[tuple[DecisionPoint, Judgement]]:
    """Judge each decision in turn (a generator, for a progress line)."""
    for point in points:
        yield point, judge(point.view, point.taken, budget, seed)


def review_points(
    points: Sequence[DecisionPoint],
    budget: ReviewBudget | None = None,
    seed: int = 0,
    top: int = 3,
    progress: Progress | None = None,
) -> tuple[CostlyDecision, ...]:
    """The ``top`` costliest reportable decisions among ``points`` (views only)."""
    budget = budget or ReviewBudget()
    found: list[CostlyDecision] = []
    for done, (point, verdict) in enumerate(judge_points(points, budget, seed), 1):
        if verdict.best is not None and verdict.reportable(budget.min_cost):
            found.append(_costly(point, verdict, verdict.best))
        if progress is not None:
            progress(done, len(points))
    found.sort(key=lambda c: (-c.cost, c.number))
    return tuple(found[:top])


def _costly(point: DecisionPoint, verdict: Judgement, best: Estimate) -> CostlyDecision:
    return CostlyDecision(
        number=point.number,
        action_index=point.action_index,
        bout=point.view.bout,
        step=point.view.step,
        taken=point.taken,
        best=best.action,
        durak_taken=verdict.taken.durak,
        durak_best=best.durak,
        noise=verdict.noise,
        exact=verdict.exact,
    )


def review(
    record: GameRecord,
    seat: int,
    *,
    budget: ReviewBudget | None = None,
    seed: int = 0,
    top: int = 3,
    progress: Progress | None = None,
) -> Review:
    """Review ``seat``'s play in ``record``: the views are built first, and only they
    reach the judgement."""
    points = decision_points(record, seat)
    costly = review_points(points, budget, seed, top, progress)
    return Review(seat, len(points), costly)


def describe_en(decision: CostlyDecision) -> str:
    """A one-line English summary, for debugging and tests (the bot localizes its own)."""
    return (
        f"decision {decision.number + 1} (bout {decision.bout + 1}): {decision.taken} "
        f"-> durak {decision.durak_taken:.0%}; {decision.best} -> {decision.durak_best:.0%}"
    )


__all__ = [
    "CostlyDecision",
    "DecisionPoint",
    "Estimate",
    "GameRecord",
    "Judgement",
    "Progress",
    "Review",
    "ReviewBudget",
    "SeatAction",
    "actions_from_events",
    "candidates",
    "decision_points",
    "describe_en",
    "durak_chances",
    "judge",
    "judge_points",
    "review",
    "review_points",
]
