"""Who has the Mini App open: while they do, their private hand collapses to one button.

Opening an event stream marks ``durak:webapp:open:{<chat_id>}:<user_id>`` (any process);
the open stream only *keeps* that key alive. Once the server sees the stream close (the
app was closed: within about a second), the key outlives it by ``CLOSE_GRACE`` seconds, so
a reload (a new stream) does not flip the hand message back and forth; a stream that
vanished unseen (a dead network) lets the key lapse after ``OPEN_TTL`` seconds.
Tapping "Play here" (or writing to the bot) in the private chat drops the key at once:
the old stream can no longer revive it, only opening the app again can.
``durak:webapp:user:{<user_id>}`` remembers which chat that user last opened the app for,
so a private message finds the hand to bring back without scanning every game.
"""

from __future__ import annotations

from redis.asyncio import Redis

OPEN_TTL = 45
REFRESH_EVERY = 15.0
CLOSE_GRACE = 3
"""Seconds the app still counts as open after its stream closed (a reload opens another)."""


def open_key(chat_id: int, user_id: int) -> str:
    return f"durak:webapp:open:{{{chat_id}}}:{user_id}"


def user_key(user_id: int) -> str:
    return f"durak:webapp:user:{{{user_id}}}"


class Presence:
    def __init__(self, redis: Redis, ttl: int = OPEN_TTL) -> None:
        self.redis = redis
        self.ttl = ttl

    async def mark(self, chat_id: int, user_id: int) -> None:
        """The app was opened (a new event stream): collapse the hand from now on."""
        # Two slots in a cluster: a pipeline without a transaction splits by node.
        async with self.redis.pipeline(transaction=False) as pipe:
            pipe.set(open_key(chat_id, user_id), "1", ex=self.ttl)
            pipe.set(user_key(user_id), str(chat_id), ex=self.ttl)
            await pipe.execute()

    async def keep(self, chat_id: int, user_id: int) -> bool:
        """An open stream is still there: extend the mark, unless it was dropped since
        (``back_in_chat``); whether the app still counts as open."""
        async with self.redis.pipeline(transaction=False) as pipe:
            pipe.set(open_key(chat_id, user_id), "1", ex=self.ttl, xx=True)
            pipe.set(user_key(user_id), str(chat_id), ex=self.ttl, xx=True)
            kept, _ = await pipe.execute()
        return bool(kept)

    async def closed(self, chat_id: int, user_id: int, grace: int = CLOSE_GRACE) -> None:
        """The app's stream closed: it counts as open for ``grace`` seconds more (unless it
        was dropped already: then nothing revives it)."""
        async with self.redis.pipeline(transaction=False) as pipe:
            pipe.expire(open_key(chat_id, user_id), grace)
            pipe.expire(user_key(user_id), grace)
            await pipe.execute()

    async def back_in_chat(self, user_id: int, chat_id: int | None = None) -> int | None:
        """The user acts in the private chat: the app no longer counts as open. The chat
        whose hand was collapsed (``chat_id`` if given), or None if none was."""
        if chat_id is None:
            raw = await self.redis.get(user_key(user_id))
            if raw is None:
                return None
            chat_id = int(raw)
        async with self.redis.pipeline(transaction=False) as pipe:
            pipe.delete(open_key(chat_id, user_id))
            pipe.delete(user_key(user_id))
            dropped, _ = await pipe.execute()
        return chat_id if dropped else None

    async def in_app(self, chat_id: int, user_id: int) -> bool:
        return bool(await self.redis.exists(open_key(chat_id, user_id)))

    async def in_app_of(self, chat_id: int, user_ids: set[int]) -> set[int]:
        if not user_ids:
            return set()
        ordered = sorted(user_ids)
        found = await self.redis.mget([open_key(chat_id, uid) for uid in ordered])
        return {uid for uid, value in zip(ordered, found, strict=True) if value is not None}
