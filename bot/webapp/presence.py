"""Who has the Mini App open: while they do, their private hand collapses to one button.

An open event stream keeps ``durak:webapp:open:{<chat_id>}:<user_id>`` alive (any
process); the key outlives a closed app by ``OPEN_TTL`` seconds, so a reload or a
short network drop does not flip the hand message back and forth.
"""

from __future__ import annotations

from redis.asyncio import Redis

OPEN_TTL = 45
REFRESH_EVERY = 15.0


def open_key(chat_id: int, user_id: int) -> str:
    return f"durak:webapp:open:{{{chat_id}}}:{user_id}"


class Presence:
    def __init__(self, redis: Redis, ttl: int = OPEN_TTL) -> None:
        self.redis = redis
        self.ttl = ttl

    async def mark(self, chat_id: int, user_id: int) -> None:
        await self.redis.set(open_key(chat_id, user_id), "1", ex=self.ttl)

    async def in_app(self, chat_id: int, user_id: int) -> bool:
        return bool(await self.redis.exists(open_key(chat_id, user_id)))

    async def in_app_of(self, chat_id: int, user_ids: set[int]) -> set[int]:
        if not user_ids:
            return set()
        ordered = sorted(user_ids)
        found = await self.redis.mget([open_key(chat_id, uid) for uid in ordered])
        return {uid for uid, value in zip(ordered, found, strict=True) if value is not None}
