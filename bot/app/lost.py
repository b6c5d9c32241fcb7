"""A game that vanished from Redis (restarted empty, flushed): say so once, retire buttons."""

from __future__ import annotations

import contextlib
import logging

from telegram.error import TelegramError

from bot.app.games import Games
from bot.domain.place import Place
from bot.render import Rendered

log = logging.getLogger(__name__)


async def retire_keyboard(games: Games, chat_id: int, message_id: int) -> None:
    """Remove a message's buttons: they belong to a game that no longer exists."""
    with contextlib.suppress(TelegramError):
        await games.box.bot.edit_message_reply_markup(chat_id, message_id, reply_markup=None)


async def announce_lost(games: Games, place: Place, game_id: str) -> None:
    """Tell the group once (across processes), in the game's place, and take the buttons
    off its table."""
    if not await games.storage.claim_lost_notice(place, game_id):
        return
    log.warning("the game %s of chat %s is missing from Redis", game_id, place)
    live = games.box.live_tables.pop(place, None)
    if live is not None and live[0] == game_id:
        await retire_keyboard(games, place.chat_id, live[1])
    tr = await games.languages.group(place.chat_id)
    games.box.say(place, Rendered(tr.t("group.game_lost")))


async def check_live_tables(games: Games) -> None:
    """After Redis came back: every table this process shows must still exist."""
    for place, (game_id, _message_id) in list(games.box.live_tables.items()):
        if await games.storage.load_table(place) is None:
            await announce_lost(games, place, game_id)
