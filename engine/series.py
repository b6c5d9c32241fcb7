"""A match of several games: who deals next, durak counts and standings."""

from __future__ import annotations

from pydantic import BaseModel, ConfigDict

from engine.cards import Card
from engine.game import GameResult, new_game
from engine.rules import Rules
from engine.state import State


class Series(BaseModel):
    """The score of a match; ``Series.start(rules, n)`` then ``next_game`` / ``record``."""

    model_config = ConfigDict(frozen=True, extra="forbid")

    rules: Rules
    num_players: int
    games_played: int = 0
    durak_counts: tuple[int, ...]
    first_out_counts: tuple[int, ...]
    draws: int = 0
    dealer: int = 0
    last_durak: int | None = None
    """The previous game's durak; None before the first game and after a draw."""

    @classmethod
    def start(cls, rules: Rules, num_players: int, *, dealer: int = 0) -> Series:
        rules.check_players(num_players)
        zeros = (0,) * num_players
        return cls(
            rules=rules,
            num_players=num_players,
            durak_counts=zeros,
            first_out_counts=zeros,
            dealer=dealer,
        )

    @property
    def finished(self) -> bool:
        return self.games_played >= self.rules.series_length

    def next_game(
        self, *, seed: int | None = None, deck: list[Card] | tuple[Card, ...] | None = None
    ) -> State:
        """Deal the next game: the last durak deals and their left neighbour attacks;
        the first game, and any game after a draw, starts with the lowest trump."""
        return new_game(
            self.rules,
            self.num_players,
            seed=seed,
            deck=deck,
            dealer=self.dealer,
            first_game=self.last_durak is None,
        )

    def record(self, result: GameResult) -> Series:
        """The series after a finished game."""
        durak_counts = list(self.durak_counts)
        first_out = list(self.first_out_counts)
        if result.durak is not None:
            durak_counts[result.durak] += 1
        if result.order and result.order[0] != result.durak:
            first_out[result.order[0]] += 1
        return self.model_copy(
            update={
                "games_played": self.games_played + 1,
                "durak_counts": tuple(durak_counts),
                "first_out_counts": tuple(first_out),
                "draws": self.draws + (result.durak is None),
                "dealer": self.dealer if result.durak is None else result.durak,
                "last_durak": result.durak,
            }
        )

    def standings(self) -> list[int]:
        """Players best first: fewest durak counts, then most first-outs, then seat."""
        return sorted(
            range(self.num_players),
            key=lambda p: (self.durak_counts[p], -self.first_out_counts[p], p),
        )
