"""Compare-and-set writes of the storage, in one round trip each.

A lease (a timer's, a chat's owed output) or an owed-output field may only change if it
is still what this process saw (another worker may have taken it over). Each such step is
a small Lua script: one round trip instead of WATCH, read, MULTI and EXEC, and the
bookkeeping of every move runs several of them. A store without Lua (the embedded
fakeredis) gets the same steps as WATCH transactions. Every key of one step lives in one
cluster slot.
"""

from __future__ import annotations

import logging
from collections.abc import Callable
from contextlib import AbstractAsyncContextManager
from typing import Any

from redis.asyncio.client import Pipeline
from redis.exceptions import ResponseError, WatchError

from bot.ops import metrics

log = logging.getLogger(__name__)

MAX_RETRIES = 50

# ARGV: member, the score it must still have, the new score.
MOVE_IF = """
local held = redis.call('ZSCORE', KEYS[1], ARGV[1])
if not held or tonumber(held) ~= tonumber(ARGV[2]) then return 0 end
redis.call('ZADD', KEYS[1], ARGV[3], ARGV[1])
return 1
"""

# ARGV: member, the score it must still have.
DROP_IF = """
local held = redis.call('ZSCORE', KEYS[1], ARGV[1])
if not held or tonumber(held) ~= tonumber(ARGV[2]) then return 0 end
redis.call('ZREM', KEYS[1], ARGV[1])
return 1
"""

# ARGV: member, now, the lease's end. Only a member due by now may be leased.
LEASE_DUE = """
local due = redis.call('ZSCORE', KEYS[1], ARGV[1])
if not due or tonumber(due) > tonumber(ARGV[2]) then return 0 end
redis.call('ZADD', KEYS[1], ARGV[3], ARGV[1])
return 1
"""

# ARGV: pairs of (field, highest revision it may ask for; '' for any). Returns the
# fields left, as HGETALL does.
SETTLE = """
for i = 1, #ARGV, 2 do
  local asked = redis.call('HGET', KEYS[1], ARGV[i])
  if asked and (ARGV[i + 1] == '' or tonumber(asked) <= tonumber(ARGV[i + 1])) then
    redis.call('HDEL', KEYS[1], ARGV[i])
  end
end
return redis.call('HGETALL', KEYS[1])
"""

# ARGV: field, the prefix that means "already set for this step", the value, the TTL.
SET_FIRST = """
local current = redis.call('HGET', KEYS[1], ARGV[1])
if current and string.sub(current, 1, #ARGV[2]) == ARGV[2] then return 0 end
redis.call('HSET', KEYS[1], ARGV[1], ARGV[3])
redis.call('EXPIRE', KEYS[1], ARGV[4])
return 1
"""

Transaction = Callable[[str], AbstractAsyncContextManager[Pipeline]]


def as_text(value: Any) -> str:
    """A Redis reply as text (bytes unless the client decodes them)."""
    return value.decode() if isinstance(value, bytes) else str(value)


class ConditionalWrites:
    def __init__(self, redis: Any, transaction: Transaction) -> None:
        self._transaction = transaction
        self._move_if = redis.register_script(MOVE_IF)
        self._drop_if = redis.register_script(DROP_IF)
        self._lease_due = redis.register_script(LEASE_DUE)
        self._settle = redis.register_script(SETTLE)
        self._set_first = redis.register_script(SET_FIRST)
        self._redis = redis
        self.scripted = True
        """False once the store turned out to have no Lua: WATCH transactions from then."""

    def register(self, source: str) -> Any:
        """A script of another repository, to ``run`` (its keys all in one slot)."""
        return self._redis.register_script(source)

    async def run(self, script: Any, keys: list[str], *args: Any) -> Any:
        """``script``'s answer, or None when the store turned out to have no Lua (then the
        caller does the same step as a WATCH transaction, as it must from now on)."""
        if not self.scripted:
            return None
        try:
            return await script(keys=keys, args=list(args))
        except ResponseError as err:
            if "unknown command" not in str(err).lower():
                raise
            self.scripted = False
            log.info("the store cannot run Lua scripts: leases and marks use WATCH")
            return None

    async def _run(self, script: Any, key: str, *args: Any) -> Any:
        return await self.run(script, [key], *args)

    async def move_if(self, key: str, member: str, score: float, new: float) -> bool:
        """Set ``member``'s score to ``new`` if it is still ``score`` (nobody else's)."""
        if self.scripted:
            done = await self._run(self._move_if, key, member, repr(score), repr(new))
            if done is not None:
                return bool(done)
        return await self._watched(key, member, lambda held: held == score, new)

    async def drop_if(self, key: str, member: str, score: float) -> None:
        """Remove ``member`` if its score is still ``score`` (a new one written meanwhile
        stays)."""
        if self.scripted and await self._run(self._drop_if, key, member, repr(score)) is not None:
            return
        await self._watched(key, member, lambda held: held == score, None)

    async def lease_due(self, key: str, member: str, now: float, lease: float) -> bool:
        """Move a member due by ``now`` to ``lease``: true for exactly one of several
        claimants."""
        if self.scripted:
            done = await self._run(self._lease_due, key, member, repr(now), repr(lease))
            if done is not None:
                return bool(done)
        return await self._watched(
            key, member, lambda held: held is not None and held <= now, lease
        )

    async def _watched(
        self, key: str, member: str, holds: Callable[[float | None], bool], new: float | None
    ) -> bool:
        """Without Lua: if ``holds(member's score)``, set it to ``new`` (None: remove it),
        in a WATCH transaction; false if it did not hold or changed meanwhile."""
        async with self._transaction(key) as pipe:
            try:
                await pipe.watch(key)
                if not holds(await pipe.zscore(key, member)):
                    await pipe.unwatch()  # type: ignore[no-untyped-call]
                    return False
                pipe.multi()  # type: ignore[no-untyped-call]
                if new is None:
                    pipe.zrem(key, member)
                else:
                    pipe.zadd(key, {member: new})
                await pipe.execute()
                return True
            except WatchError:
                return False  # another worker changed it first

    async def settle(self, key: str, fields: dict[str, int | None]) -> dict[str, str]:
        """Delete the hash ``fields`` whose value is at most the given bound (None: any
        value); returns the fields left."""
        if self.scripted:
            args = [part for name, bound in fields.items() for part in (name, _bound(bound))]
            left = await self._run(self._settle, key, *args)
            if left is not None:
                pairs = [as_text(part) for part in left]
                return dict(zip(pairs[::2], pairs[1::2], strict=True))
        for _ in range(MAX_RETRIES):
            async with self._transaction(key) as pipe:
                try:
                    await pipe.watch(key)
                    current = {as_text(k): as_text(v) for k, v in (await pipe.hgetall(key)).items()}
                    stale = [
                        name
                        for name, bound in fields.items()
                        if name in current and (bound is None or int(current[name]) <= bound)
                    ]
                    if stale:
                        pipe.multi()  # type: ignore[no-untyped-call]
                        pipe.hdel(key, *stale)
                        await pipe.execute()
                    else:
                        await pipe.unwatch()  # type: ignore[no-untyped-call]
                    return {k: v for k, v in current.items() if k not in stale}
                except WatchError:
                    metrics.storage_conflict()
        raise WatchError(f"{key} kept changing")

    async def set_first(self, key: str, name: str, prefix: str, value: str, ttl: int) -> None:
        """Set the hash field ``name`` to ``value`` (and the key's TTL) unless it already
        starts with ``prefix``."""
        if (
            self.scripted
            and await self._run(self._set_first, key, name, prefix, value, ttl) is not None
        ):
            return
        current = await self._redis.hget(key, name)
        if current is not None and as_text(current).startswith(prefix):
            return
        async with self._redis.pipeline(transaction=False) as pipe:
            pipe.hset(key, name, value)
            pipe.expire(key, ttl)
            await pipe.execute()


def _bound(bound: int | None) -> str:
    return "" if bound is None else str(bound)
