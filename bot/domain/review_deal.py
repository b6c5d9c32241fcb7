"""The one place that knows how a finished game was dealt, for its review.

Today a game is dealt from ``game_seed(game_id, games_played)`` by the series (its dealer,
and whether the lowest trump leads); once the record keeps its secret deck, ``Deal.deck``
is that deck and nothing else here changes.
"""

from __future__ import annotations

from dataclasses import dataclass

from bot.domain.flow.common import game_seed
from bot.domain.records import ChatGame
from engine import Card, State, new_game


@dataclass(frozen=True, slots=True)
class Deal:
    """``new_game``'s arguments that deal the game again (``seed`` or ``deck``)."""

    seed: int | None
    deck: tuple[Card, ...] | None
    dealer: int
    first_game: bool


def initial_deal(game: ChatGame) -> Deal:
    """How ``game`` (finished: its series already counts it) was dealt."""
    state = game.engine_state()
    played = game.series.games_played if game.series is not None else 1
    seed = game_seed(game.game_id, max(0, played - 1))
    first_game = _lowest_trump_led(game, state, seed)
    return Deal(seed=seed, deck=None, dealer=state.dealer, first_game=first_game)


def _lowest_trump_led(game: ChatGame, state: State, seed: int) -> bool:
    """Whether the lowest trump chose the first attacker: the deal's first events say."""
    dealt = new_game(game.rules, len(game.seats), seed=seed, dealer=state.dealer).all_events()
    return state.all_events()[: len(dealt)] == dealt
