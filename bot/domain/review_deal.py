"""The one place that knows how a finished game was dealt, for its review.

A game started since deals became verifiable keeps its secret deck (``ChatGame.deal``);
an older one was dealt from ``game_seed(game_id, games_played)`` by the series. Either way
the dealer and whether the lowest trump led come from the game's own first events.
"""

from __future__ import annotations

from dataclasses import dataclass

from bot.domain.flow.common import game_seed
from bot.domain.records import ChatGame
from engine import Card, State, new_game


@dataclass(frozen=True, slots=True)
class Redeal:
    """``new_game``'s arguments that deal the game again (``seed`` or ``deck``)."""

    seed: int | None
    deck: tuple[Card, ...] | None
    dealer: int
    first_game: bool


def initial_deal(game: ChatGame) -> Redeal:
    """How ``game`` (finished: its series already counts it) was dealt."""
    state = game.engine_state()
    if game.deal is not None:
        deck, seed = game.deal.cards, None
    else:
        played = game.series.games_played if game.series is not None else 1
        deck, seed = None, game_seed(game.game_id, max(0, played - 1))
    first_game = _lowest_trump_led(game, state, seed, deck)
    return Redeal(seed=seed, deck=deck, dealer=state.dealer, first_game=first_game)


def _lowest_trump_led(
    game: ChatGame, state: State, seed: int | None, deck: tuple[Card, ...] | None
) -> bool:
    """Whether the lowest trump chose the first attacker: the deal's first events say."""
    dealt = new_game(
        game.rules, len(game.seats), seed=seed, deck=deck, dealer=state.dealer
    ).all_events()
    return state.all_events()[: len(dealt)] == dealt
