"""A game whose place refuses the bot's messages for good: its forum topic was closed or
deleted, or the bot may no longer post in the group (``bot.transport.delivery``
classifies Telegram's answers; the outbox calls ``end_game_there`` once per refusal).

The game ends as if cancelled (``flow.place_gone``): no durak, nothing counted, its
timers gone with the phase, nothing more owed in the place (so nothing is retried there),
and each player's hand comes again as a new private message, in their language, saying
that the game in that group (and topic) ended.
"""

from __future__ import annotations

import contextlib
import logging

from bot.app.games import Games
from bot.domain import flow
from bot.domain.flow import FlowError
from bot.domain.place import Place

log = logging.getLogger(__name__)


async def end_game_there(games: Games, place: Place) -> None:
    """End the lobby or running game at ``place`` (a finished or cancelled one stays)."""
    game = await games.storage.peek_table(place)
    if game is None or game.phase not in ("lobby", "playing"):
        return
    log.warning("%s refuses the bot's messages: its game %s ends", place, game.game_id)
    with contextlib.suppress(FlowError):  # another worker ended it first
        await games.run(place, flow.place_gone, game.game_id)
    live = games.box.live_tables.get(place)
    if live is not None and live[0] == game.game_id:
        games.box.live_tables.pop(place, None)
