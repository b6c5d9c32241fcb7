"""A match of several games: who deals next, durak counts and standings.

The series rule (German seed, "Wertung"): every game gives each of its duraks one
durak count (in a partners game, each member of the losing team); after the agreed
number of games whoever has the fewest durak counts wins. Players tied on the fewest
share the win: ``winners()`` returns them all, and nothing else breaks the tie.
A drawn game counts for nobody: no durak, no first-out.
"""

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
        """A new series; pass ``dealer=dealer_by_lot(num_players, seed)`` to draw the
        first dealer by lot."""
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
        the first game, and any game after a draw, starts with the lowest trump
        (``new_game(..., first_game=True)``)."""
        return new_game(
            self.rules,
            self.num_players,
            seed=seed,
            deck=deck,
            dealer=self.dealer,
            first_game=self.last_durak is None,
        )

    def record(self, result: GameResult) -> Series:
        """The series after a finished game: a durak count for each of its losers, a
        first-out for whoever ran out of cards first unless the game was a draw or
        they lost with their team."""
        durak_counts = list(self.durak_counts)
        first_out = list(self.first_out_counts)
        losers = result.losers
        for loser in losers:
            durak_counts[loser] += 1
        if not result.draw and result.order and result.order[0] not in losers:
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

    def winners(self) -> tuple[int, ...]:
        """Everyone with the fewest durak counts, in seat order: ties share the win."""
        fewest = min(self.durak_counts)
        return tuple(p for p in range(self.num_players) if self.durak_counts[p] == fewest)

    def standings(self) -> list[int]:
        """Players best first: fewest durak counts; players with equal counts share a
        place and are listed in seat order (first-outs are a statistic, not a tiebreak)."""
        return sorted(range(self.num_players), key=lambda p: (self.durak_counts[p], p))

    def place(self, player: int) -> int:
        """``player``'s place, 1 for the winners; tied players share a place."""
        return 1 + sum(1 for c in self.durak_counts if c < self.durak_counts[player])
