"""Tidy-up's Redis side: messages due to be deleted, and what a game leaves in its chat.

A delete is a member of one sorted set (``TIDY_KEY``) scored with when it is due; a worker
takes a due one by leasing it (as timers are leased), and drops it once deleted, so one
that dies in between leaves it to come back for another. What a place's games leave in the
chat (announcements, /newgame commands) is a list next to the game (``litter_key``),
handed over to that set when a game ends.
"""

from __future__ import annotations

from bot.domain.place import Place
from bot.store.conditional import ConditionalWrites, as_text
from bot.store.keys import TIDY_KEY, litter_key
from bot.store.transactions import Transactions

DELETE_LEASE = 60.0
"""A leased delete comes back after this long unless its worker deleted the message."""
LITTER_SECONDS = 2 * 24 * 3600
"""A place's list of what to tidy lives this long after its last addition."""


def _member(chat_id: int, message_id: int) -> str:
    return f"{chat_id}:{message_id}"


class Tidying:
    def __init__(self, db: Transactions, conditional: ConditionalWrites) -> None:
        self._db = db
        self._conditional = conditional

    async def delete_at(self, due: float, messages: list[tuple[int, int]]) -> None:
        """Delete each (chat, message) at ``due`` (epoch seconds)."""
        if messages:
            await self._db.redis.zadd(TIDY_KEY, {_member(c, m): due for c, m in messages})

    async def due(self, now: float, limit: int = 100) -> list[tuple[int, int]]:
        """Deletes due by ``now``: (chat, message)."""
        found = await self._db.redis.zrangebyscore(TIDY_KEY, "-inf", now, start=0, num=limit)
        out = []
        for member in found:
            chat, _, message = as_text(member).partition(":")
            out.append((int(chat), int(message)))
        return out

    async def lease(self, chat_id: int, message_id: int, now: float) -> float | None:
        """Lease a due delete: its lease (for ``done``) for exactly one of several
        workers, else None."""
        lease = now + DELETE_LEASE
        member = _member(chat_id, message_id)
        return lease if await self._conditional.lease_due(TIDY_KEY, member, now, lease) else None

    async def done(self, chat_id: int, message_id: int, lease: float) -> None:
        await self._conditional.drop_if(TIDY_KEY, _member(chat_id, message_id), lease)

    async def litter(self, place: Place, message_id: int, *, person: bool) -> None:
        """Remember a message the place's game left (``person``: someone's command)."""
        key = litter_key(place)
        pipe = self._db.redis.pipeline(transaction=False)
        pipe.rpush(key, f"{'u' if person else 'b'}:{message_id}")
        pipe.expire(key, LITTER_SECONDS)
        await pipe.execute()

    async def litter_of(self, place: Place) -> list[tuple[int, bool]]:
        """(message, written by a person) of everything the place's games left."""
        out = []
        for item in await self._db.redis.lrange(litter_key(place), 0, -1):
            who, _, message = as_text(item).partition(":")
            out.append((int(message), who == "u"))
        return out

    async def forget_litter(self, place: Place, count: int) -> None:
        """Drop the first ``count`` entries (those handed over; newer ones stay)."""
        await self._db.redis.ltrim(litter_key(place), count, -1)
