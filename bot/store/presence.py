"""Who has the Mini App open: while they do, their private hand collapses to one button.

Opening an event stream marks ``durak:webapp:open:<place>:<user_id>`` (any process; the
place as in every game's key, ``Place.tag``: ``{<chat>}`` or ``{<chat>}_<topic>``); the
open stream only *keeps* that key alive. Once the server sees the stream close (the app
was closed: within about a second), the key outlives it by ``CLOSE_GRACE`` seconds, so a
reload (a new stream) does not flip the hand message back and forth; a stream that
vanished unseen (a dead network) lets the key lapse after ``OPEN_TTL`` seconds.
Tapping "Play here" (or writing to the bot) in the private chat drops the key at once:
the old stream can no longer revive it, only opening the app again can.
``durak:webapp:user:{<user_id>}`` remembers which game's place (its ``Place.text``) that
user last opened the app for,
so a private message finds the hand to bring back without scanning every game.
"""

from __future__ import annotations

from redis.asyncio import Redis

from bot.domain.place import Place

OPEN_TTL = 45
REFRESH_EVERY = 15.0
CLOSE_GRACE = 3
"""Seconds the app still counts as open after its stream closed (a reload opens another)."""


def open_key(place: Place, user_id: int) -> str:
    return f"durak:webapp:open:{place.tag}:{user_id}"


def user_key(user_id: int) -> str:
    return f"durak:webapp:user:{{{user_id}}}"


class Presence:
    def __init__(self, redis: Redis, ttl: int = OPEN_TTL) -> None:
        self.redis = redis
        self.ttl = ttl

    async def mark(self, place: Place, user_id: int) -> None:
        """The app was opened (a new event stream): collapse the hand from now on."""
        # Two slots in a cluster: a pipeline without a transaction splits by node.
        async with self.redis.pipeline(transaction=False) as pipe:
            pipe.set(open_key(place, user_id), "1", ex=self.ttl)
            pipe.set(user_key(user_id), place.text, ex=self.ttl)
            await pipe.execute()

    async def keep(self, place: Place, user_id: int) -> bool:
        """An open stream is still there: extend the mark, unless it was dropped since
        (``back_in_chat``); whether the app still counts as open."""
        async with self.redis.pipeline(transaction=False) as pipe:
            pipe.set(open_key(place, user_id), "1", ex=self.ttl, xx=True)
            pipe.set(user_key(user_id), place.text, ex=self.ttl, xx=True)
            kept, _ = await pipe.execute()
        return bool(kept)

    async def closed(self, place: Place, user_id: int, grace: int = CLOSE_GRACE) -> None:
        """The app's stream closed: it counts as open for ``grace`` seconds more (unless it
        was dropped already: then nothing revives it)."""
        async with self.redis.pipeline(transaction=False) as pipe:
            pipe.expire(open_key(place, user_id), grace)
            pipe.expire(user_key(user_id), grace)
            await pipe.execute()

    async def back_in_chat(self, user_id: int, place: Place | None = None) -> Place | None:
        """The user acts in the private chat: the app no longer counts as open. The place
        of the game whose hand was collapsed (``place`` if given), or None if none was."""
        if place is None:
            raw = await self.redis.get(user_key(user_id))
            if raw is None:
                return None
            place = Place.parse(raw.decode() if isinstance(raw, bytes) else str(raw))
        async with self.redis.pipeline(transaction=False) as pipe:
            pipe.delete(open_key(place, user_id))
            pipe.delete(user_key(user_id))
            dropped, _ = await pipe.execute()
        return place if dropped else None

    async def in_app(self, place: Place, user_id: int) -> bool:
        return bool(await self.redis.exists(open_key(place, user_id)))

    async def in_app_of(self, place: Place, user_ids: set[int]) -> set[int]:
        if not user_ids:
            return set()
        ordered = sorted(user_ids)
        found = await self.redis.mget([open_key(place, uid) for uid in ordered])
        return {uid for uid, value in zip(ordered, found, strict=True) if value is not None}
