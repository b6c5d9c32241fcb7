"""A finished game's review by the Hard player, as the bot keeps it (pure).

``ReviewSubject`` is what a finished game leaves for reviews: ``ai.review.GameRecord``
(its deal and every action) and who sat where. A review replays it into the reviewed
player's own views (``ai.review.decision_points``) and only those views are judged
(``judge_point``, run in the process pool one decision at a time), so no hidden card can
reach the judgement. ``ReviewResult`` is the stored outcome: the costliest moments, with
what the table showed the player then, in no language (rendering localises it).
"""

from __future__ import annotations

import json
from dataclasses import dataclass
from typing import Any

from ai.review import (
    CostlyDecision,
    DecisionPoint,
    GameRecord,
    ReviewBudget,
    actions_from_events,
    decision_points,
    review_points,
)
from bot.domain.flow.common import game_seed
from bot.domain.place import Place
from bot.domain.records import ChatGame
from bot.domain.review_deal import initial_deal
from engine import Action, Card, Rules, parse_action

TOP = 3
"""Moments a review reports at most."""


@dataclass(frozen=True, slots=True)
class ReviewSubject:
    """A finished game as its reviews need it."""

    place: Place
    game_id: str
    title: str
    users: tuple[int | None, ...]
    """Each seat's user id (None: a computer seat)."""
    record: GameRecord
    names: tuple[str, ...] = ()
    """Each seat's name ("" for a computer seat)."""
    levels: tuple[str | None, ...] = ()
    """Each computer seat's level (None for a person)."""

    def seat_of(self, user_id: int) -> int | None:
        """The user's seat, also after they left the game."""
        return self.users.index(user_id) if user_id in self.users else None

    def to_json(self) -> str:
        r = self.record
        return json.dumps(
            {
                "place": self.place.text,
                "game_id": self.game_id,
                "title": self.title,
                "users": list(self.users),
                "names": list(self.names),
                "levels": list(self.levels),
                "rules": r.rules.model_dump(mode="json"),
                "players": r.num_players,
                "actions": [[seat, str(action)] for seat, action in r.actions],
                "seed": r.seed,
                "deck": None if r.deck is None else [str(c) for c in r.deck],
                "dealer": r.dealer,
                "first_game": r.first_game,
            },
            ensure_ascii=False,
        )

    @classmethod
    def from_json(cls, raw: str | bytes) -> ReviewSubject:
        data = json.loads(raw)
        deck = data["deck"]
        record = GameRecord(
            rules=Rules.model_validate(data["rules"]),
            num_players=data["players"],
            actions=tuple((seat, parse_action(text)) for seat, text in data["actions"]),
            seed=data["seed"],
            deck=None if deck is None else tuple(Card.parse(c) for c in deck),
            dealer=data["dealer"],
            first_game=data["first_game"],
        )
        users = tuple(data["users"])
        names, levels = tuple(data.get("names", ())), tuple(data.get("levels", ()))
        return cls(
            Place.parse(data["place"]), data["game_id"], data["title"], users, record, names, levels
        )


def review_subject(game: ChatGame) -> ReviewSubject | None:
    """What the finished ``game`` leaves for its reviews (None: not a finished game)."""
    if game.phase != "finished" or game.state is None:
        return None
    deal = initial_deal(game)
    record = GameRecord(
        rules=game.rules,
        num_players=len(game.seats),
        actions=actions_from_events(game.engine_state().all_events()),
        seed=deal.seed,
        deck=deal.deck,
        dealer=deal.dealer,
        first_game=deal.first_game,
    )
    users = tuple(seat.user_id for seat in game.seats)
    names = tuple("" if seat.user_id is None else seat.shown_name for seat in game.seats)
    levels = tuple(seat.ai if seat.user_id is None else None for seat in game.seats)
    return ReviewSubject(game.place, game.game_id, game.chat_title, users, record, names, levels)


def review_seed(game_id: str, seat: int) -> int:
    """The review's random draws: the same game and seat always get the same review."""
    return game_seed(game_id, f"review:{seat}") % 2**31


def player_points(subject: ReviewSubject, seat: int) -> list[DecisionPoint]:
    """The player's real choices, each with their own view then (the replay's only
    output: the rest of the game state stays here)."""
    return decision_points(subject.record, seat)


def judge_point(
    point: DecisionPoint, seed: int, budget: ReviewBudget | None = None
) -> CostlyDecision | None:
    """One decision judged from its view alone: the cost, when it is worth reporting.
    Run in the process pool (a module-level function, its arguments views and numbers)."""
    found = review_points([point], budget, seed, top=1)
    return found[0] if found else None


@dataclass(frozen=True, slots=True)
class Moment:
    """A costly decision as the player saw it: the move taken, the better one, and the
    durak chances after each."""

    number: int
    bout: int
    step: int
    taken: Action
    best: Action
    durak_taken: float
    durak_best: float
    table: tuple[tuple[Card, Card | None], ...]
    """The table then (what a take picked up)."""


@dataclass(frozen=True, slots=True)
class ReviewResult:
    seat: int
    decisions: int
    moments: tuple[Moment, ...]
    """The costliest first, at most ``TOP``."""

    def to_json(self) -> str:
        return json.dumps(
            {
                "seat": self.seat,
                "decisions": self.decisions,
                "moments": [_moment_json(m) for m in self.moments],
            },
            ensure_ascii=False,
        )

    @classmethod
    def from_json(cls, raw: str | bytes) -> ReviewResult:
        data = json.loads(raw)
        moments = tuple(_moment_of(m) for m in data["moments"])
        return cls(data["seat"], data["decisions"], moments)


def moment(point: DecisionPoint, costly: CostlyDecision) -> Moment:
    return Moment(
        number=costly.number,
        bout=costly.bout,
        step=costly.step,
        taken=costly.taken,
        best=costly.best,
        durak_taken=round(costly.durak_taken, 4),
        durak_best=round(costly.durak_best, 4),
        table=point.view.table,
    )


def costliest(seat: int, decisions: int, found: list[Moment]) -> ReviewResult:
    """The ``TOP`` costliest, costliest first (ties: the earlier decision)."""
    ranked = sorted(found, key=lambda m: (-(m.durak_taken - m.durak_best), m.number))
    return ReviewResult(seat, decisions, tuple(ranked[:TOP]))


def _card_text(card: Card | None) -> str | None:
    return None if card is None else str(card)


def _moment_json(m: Moment) -> dict[str, Any]:
    return {
        "number": m.number,
        "bout": m.bout,
        "step": m.step,
        "taken": str(m.taken),
        "best": str(m.best),
        "durak_taken": m.durak_taken,
        "durak_best": m.durak_best,
        "table": [[str(a), _card_text(d)] for a, d in m.table],
    }


def _moment_of(data: dict[str, Any]) -> Moment:
    table = tuple((Card.parse(a), None if d is None else Card.parse(d)) for a, d in data["table"])
    return Moment(
        number=data["number"],
        bout=data["bout"],
        step=data["step"],
        taken=parse_action(data["taken"]),
        best=parse_action(data["best"]),
        durak_taken=data["durak_taken"],
        durak_best=data["durak_best"],
        table=table,
    )
