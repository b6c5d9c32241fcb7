"""What the bot knows of a person: whether it may write to them, which game they play."""

from __future__ import annotations

from bot.domain.records import ChatGame
from bot.store.storage import Storage


async def mark_dm_open(storage: Storage, user_id: int, name: str) -> None:
    """They wrote to the bot in private: it may write to them (and their name is this)."""
    record = await storage.user(user_id)
    if not record.dm_open or record.name != name:
        record.dm_open = True
        record.name = name
        await storage.save_user(user_id, record)


async def dm_open(storage: Storage, user_id: int) -> bool:
    return (await storage.user(user_id)).dm_open


async def current_game(storage: Storage, user_id: int) -> ChatGame | None:
    """The running game ``user_id`` plays in, if any (a rare command: a scan is fine)."""
    for place in await storage.running_places():
        game = await storage.load_table(place)
        if game is not None and game.phase == "playing" and game.seat_of(user_id) is not None:
            return game
    return None
