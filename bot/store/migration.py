"""A group that became a supergroup: its games, statistics and settings follow it.

The two ids live in different cluster slots, so this is two transactions: copy into the
new chat (with a once marker, so a repeat after a crash copies nothing twice), then retire
the old one. The indexes (other slots) follow. Each of the chat's places moves to the same
topic in the new chat (``Place.in_chat``); the chat's own records (totals, settings)
move once.
"""

from __future__ import annotations

from dataclasses import dataclass
from typing import Any

from redis.exceptions import WatchError

from bot.domain.place import Place
from bot.domain.records import ChatGame
from bot.ops import metrics
from bot.store.conditional import MAX_RETRIES
from bot.store.games import parse_table
from bot.store.keys import migrated_key, moved_key, settings_key, shown_key, stats_key, table_key
from bot.store.stats import copy_chat_stats
from bot.store.timers import RunningGames, Timers
from bot.store.transactions import Lifetimes, StorageConflict, Transactions


@dataclass
class _OldChat:
    """The old chat's records, read before the copy (another slot)."""

    place: Place
    """The place of the chat's game (the one place of a chat without topics)."""
    table: ChatGame | None
    stats: dict[Any, Any]
    settings: bytes | str | None
    due: float | None


def places_of(chat_id: int) -> list[Place]:
    """The places of a chat whose games a migration moves: for now a chat has one game,
    in the place without a topic (a game per forum topic will list its topics here)."""
    return [Place(chat_id)]


class ChatMigration:
    """Moves a chat's records to its new id, once."""

    def __init__(
        self, db: Transactions, lives: Lifetimes, *, timers: Timers, running: RunningGames
    ) -> None:
        self._db = db
        self._lives = lives
        self._timers = timers
        self._running = running

    async def migrate(self, old: int, new: int) -> ChatGame | None:
        """Move the chat's records to ``new``; returns the moved table. Safe to call twice
        (the second does nothing)."""
        (place,) = places_of(old)
        moved, due = await self._copy_once(place, new)
        await self._retire(place, new)
        await self._running.remove(place)
        await self._running.remove_unsharded(place)
        await self._timers.remove(place)
        await self._timers.remove_unsharded(place)
        if moved is not None and moved.phase == "playing":
            await self._running.add(moved.place)
            if due is not None:
                await self._timers.set(moved.place, due)
        return moved

    async def _copy_once(self, place: Place, new: int) -> tuple[ChatGame | None, float | None]:
        """Old chat's records into the new chat, once (``migrated_key`` marks it done)."""
        redis, old = self._db.redis, place.chat_id
        source = _OldChat(
            place=place,
            table=parse_table(await redis.get(table_key(place))),
            stats=await redis.hgetall(stats_key(old)),
            settings=await redis.get(settings_key(old)),
            due=await self._timers.due_of(place),
        )
        target = place.in_chat(new)
        watched = [table_key(target), settings_key(new), migrated_key(new, old)]
        for _ in range(MAX_RETRIES):
            async with self._db.transaction(watched[0]) as pipe:
                try:
                    await pipe.watch(*watched)
                    # GET, not EXISTS: a cluster pipeline splits EXISTS by slot.
                    if await pipe.get(migrated_key(new, old)) is not None:
                        await pipe.unwatch()  # type: ignore[no-untyped-call]
                        return None, None
                    taken = await pipe.get(table_key(target)) is not None
                    has_settings = await pipe.get(settings_key(new)) is not None
                    pipe.multi()  # type: ignore[no-untyped-call]
                    moved = self._copy(pipe, source, new, taken=taken, has_settings=has_settings)
                    pipe.set(migrated_key(new, old), "1", ex=self._lives.idle)
                    await pipe.execute()
                    return moved, source.due
                except WatchError:
                    metrics.storage_conflict()
                    continue
        raise StorageConflict(f"chat {new} kept changing during a migration")

    def _copy(
        self, pipe: Any, source: _OldChat, new: int, *, taken: bool, has_settings: bool
    ) -> ChatGame | None:
        """Add the copy to ``pipe``'s MULTI; returns the table copied, if any."""
        moved = None
        if source.table is not None and not taken:
            # Message ids belong to the old chat: the new one gets new messages. The
            # record keeps its topic (``Place.in_chat``).
            moved = source.table.model_copy(
                update={"chat_id": new, "table_message_id": None, "lobby_message_id": None}
            )
            pipe.set(table_key(moved.place), moved.to_json(), ex=self._lives.of_table(moved.phase))
        copy_chat_stats(pipe, source.stats, new)
        if source.settings is not None and not has_settings:
            pipe.set(settings_key(new), source.settings, ex=self._lives.settings)
        return moved

    async def _retire(self, place: Place, new: int) -> None:
        old = place.chat_id
        async with self._db.transaction(table_key(place)) as pipe:
            pipe.delete(table_key(place), shown_key(place), stats_key(old), settings_key(old))
            pipe.set(moved_key(old), str(new), ex=self._lives.idle)
            await pipe.execute()
