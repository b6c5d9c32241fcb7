"""The rules of a game, in brief (/rules) or in full (its buttons)."""

from __future__ import annotations

from bot import render
from bot.app.games import Games
from bot.app.players import current_game
from bot.domain import flow
from bot.domain.place import Place
from bot.domain.records import ChatGame
from bot.render import Rendered
from engine import Rules
from locales import Translator, rules_text
from locales.rules_text import Section


async def game_for_rules(
    games: Games, place: Place, *, private: bool, user_id: int
) -> ChatGame | None:
    """In a group, the lobby or game of ``place``; in private, the reader's current game
    (if any)."""
    if private:
        return await current_game(games.storage, user_id)
    return await games.storage.load_table(place)


def brief(games: Games, game: ChatGame | None, tr: Translator) -> Rendered:
    """The rules in brief, with buttons for the full text and each of its sections."""
    return render.rules_message(game, games.timing, tr)


async def full(games: Games, place: Place | None, section: Section | None, lang: str) -> list[str]:
    """The full rules of the game at ``place`` (None: the default options), or a section."""
    game = await games.storage.load_table(place) if place is not None else None
    rules = game.rules if game is not None else Rules()
    pace = render.table_pace(game, games.timing)
    return rules_text(
        rules,
        lang,
        turn_timeout=round(pace.turn_timeout),
        max_timeouts=flow.TIMEOUTS_BEFORE_HANDOVER,
        pace=pace,
        section=section,
    )
