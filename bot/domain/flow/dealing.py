"""Dealing a game at Start: from the app's secret deal (its code announced to the group
before anyone plays), or, without one, from the game's seed as before verifiable deals."""

from __future__ import annotations

from bot.domain.deal import Deal
from bot.domain.flow.common import Announcement, Effects, FlowError, game_seed
from bot.domain.records import ChatGame
from engine import Series, State


def deal_game(game: ChatGame, series: Series, deal: Deal | None, effects: Effects) -> State:
    """The next game of ``series`` dealt from ``deal``, its code announced as a new group
    message (sent once, never edited), and the deal kept in the record for the result.

    Without a deal (a caller that has none, a test of the flow) the game is dealt from
    ``game_seed`` and shows no code. A deal for another deck size than the lobby's (the
    deck option changed after the app made it) is refused, before anything changed."""
    if deal is None:
        game.deal = None
        return series.next_game(seed=game_seed(game.game_id, series.games_played))
    if deal.size != game.rules.deck_size:
        raise FlowError("toast.stale")
    game.deal = deal
    effects.announce.append(code_announcement(game, series, deal))
    return series.next_game(deck=deal.cards)


def code_announcement(game: ChatGame, series: Series, deal: Deal) -> Announcement:
    total = game.rules.series_length
    if total == 1:
        return Announcement("deal.code", {"code": deal.code})
    number = series.games_played + 1
    return Announcement("deal.code_series", {"code": deal.code, "game": number, "total": total})
