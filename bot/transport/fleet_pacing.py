"""Send pacing shared by every worker of a fleet: Telegram's budgets kept in Redis.

Telegram counts per bot, not per process: 20 messages (edits included) a minute in a
group, about one a second in a private chat, about 30 a second overall. Each worker's
outbox still paces its own lanes (``bot.transport.pacing``); before each send it also asks Redis
here, in one script call, whether the chat's budget *and* the global budget allow the
send now, and records it in both if so. So three workers together keep the same limits
one process keeps alone.

One call per send: the chat's keys and the global budget must sit in one cluster slot
(a script may only touch keys of one slot). The global budget is therefore split into
``shards`` parts (one for a single Redis), each with ``rate / shards`` of the rate; a
chat's keys carry the hash tag of its shard. The shards' sum stays within the rate
(each shard allows at most ``rate / shards + 1`` sends in any second; GLOBAL_RATE's
margin under Telegram's 30 covers the ``+ shards``).

Times come from Redis (``TIME``), so workers on machines with drifting clocks agree.
When Redis cannot answer, sends fall back to the in-process pacing for a few seconds
(a reply telling users the storage is down must still go out); a store that cannot run
Lua (the embedded fakeredis) keeps the in-process pacing for good.
"""

from __future__ import annotations

import asyncio
import logging
import math
import time
from collections.abc import Callable
from typing import Any

from redis.asyncio import Redis
from redis.exceptions import RedisError, ResponseError

from bot.ops import metrics
from bot.ops.settings import Settings
from bot.transport.pacing import ChatBusy, GlobalLimiter, SendLimiter

log = logging.getLogger(__name__)

CHAT, GLOBAL = 1, 2
"""Why the script said "not yet": the chat's budget or the global one."""
WINDOW_KEPT_MAX = 1000
"""Windows allowing more sends than this are not tracked (only the spacing is)."""
RESERVE_AHEAD_MS = 200
"""A send may book a global slot this far ahead (then sleeps until it): one script call
per send even when the budget is full, and a later high-priority send waits at most this
long behind booked low-priority ones."""
LATE = 0.25
"""Seconds past its booked slot after which a send books again instead of going out."""
MAX_LATE_BOOKINGS = 3
LOCAL_AFTER_FAILURE = 5.0
"""Seconds of in-process pacing after Redis failed to answer, before asking it again."""
CLUSTER_SHARDS = 3
"""Global budget shards on a Redis Cluster (as many as the smallest cluster's masters)."""

# KEYS: chat's sends (newest first), chat's back-off end, the global shard's sends.
# ARGV: chat spacing ms, chat window size (0: none), chat window ms,
#       global cap for this priority, global cap kept, global spacing ms, global window ms,
#       how far ahead a global slot may be reserved (ms).
# The global slot is the earliest one free, reserved (and counted in both budgets) if it
# is at most ``ahead`` away; the chat must be free by that slot. A chat's last send may
# itself be booked a little ahead, so "free by the slot", not "free now": with no spacing
# a chat's sends that land in one millisecond are not refused. Returns {ms until the
# reserved slot, 0}, or {ms to wait before asking again, CHAT|GLOBAL}.
ACQUIRE = """
local t = redis.call('TIME')
local now = tonumber(t[1]) * 1000 + math.floor(tonumber(t[2]) / 1000)
local spacing, wmax, wspan = tonumber(ARGV[1]), tonumber(ARGV[2]), tonumber(ARGV[3])
local free = now
local hold = redis.call('GET', KEYS[2])
if hold then free = math.max(free, tonumber(hold)) end
local last = redis.call('LINDEX', KEYS[1], 0)
if last then free = math.max(free, tonumber(last) + spacing) end
if wmax > 0 then
  local edge = redis.call('LINDEX', KEYS[1], wmax - 1)
  if edge then free = math.max(free, tonumber(edge) + wspan) end
end
local cap, kept = tonumber(ARGV[4]), tonumber(ARGV[5])
local gspacing, gspan, ahead = tonumber(ARGV[6]), tonumber(ARGV[7]), tonumber(ARGV[8])
local at = now
local newest = redis.call('LINDEX', KEYS[3], 0)
if newest then at = math.max(at, tonumber(newest) + gspacing) end
local edge = redis.call('LINDEX', KEYS[3], cap - 1)
if edge then at = math.max(at, tonumber(edge) + gspan) end
if free > at then return {free - now, 1} end
if at - now > ahead then return {at - now - ahead, 2} end
redis.call('LPUSH', KEYS[1], at)
redis.call('LTRIM', KEYS[1], 0, math.max(wmax, 1) - 1)
redis.call('PEXPIRE', KEYS[1], at - now + math.max(spacing, wspan) + 1000)
redis.call('LPUSH', KEYS[3], at)
redis.call('LTRIM', KEYS[3], 0, kept - 1)
redis.call('PEXPIRE', KEYS[3], at - now + gspan + gspacing + 1000)
return {at - now, 0}
"""

# KEYS: the chat's back-off end. ARGV: ms from now. Only ever moves the end later.
BACK_OFF = """
local t = redis.call('TIME')
local now = tonumber(t[1]) * 1000 + math.floor(tonumber(t[2]) / 1000)
local until_ms = now + tonumber(ARGV[1])
local hold = redis.call('GET', KEYS[1])
if hold and tonumber(hold) >= until_ms then return 0 end
redis.call('SET', KEYS[1], until_ms, 'PX', tonumber(ARGV[1]) + 1000)
return 1
"""


def chat_keys(chat_id: int, shards: int) -> tuple[str, str, str]:
    """The chat's sends, its back-off end and its global shard: one hash tag, one slot."""
    tag = f"durak:pace:{{p{chat_id % shards}}}"
    return f"{tag}:chat:{chat_id}", f"{tag}:hold:{chat_id}", f"{tag}:global"


class FleetLimiter:
    """Per-chat and global send budgets in Redis, shared by every worker.

    The same ``acquire`` as ``GlobalLimiter`` (with the chat named), so the outbox calls
    one or the other; ``back_off`` after a 429 holds that chat for every worker.
    """

    def __init__(
        self,
        redis: Redis,
        *,
        group_interval: float,
        group_max_per_minute: int,
        private_interval: float,
        global_rate: float,
        shards: int = 1,
        clock: Callable[[], float] = time.monotonic,
    ) -> None:
        self.redis = redis
        self.shards = max(1, shards)
        self.group_interval_ms = round(group_interval * 1000)
        tracked = group_max_per_minute <= WINDOW_KEPT_MAX
        self.group_window_max = group_max_per_minute if tracked else 0
        self.private_interval_ms = round(private_interval * 1000)
        per_shard = global_rate / self.shards
        self.cap = max(1, int(per_shard))
        self.low_cap = max(1, self.cap * 4 // 5)  # low priority leaves a fifth free
        self.global_spacing_ms = math.ceil(1000 / per_shard)
        self.clock = clock
        self.local = GlobalLimiter(global_rate, clock)
        """Used while Redis does not answer, or for good if it cannot run scripts."""
        self.local_until = 0.0
        self.scripted = True
        self.calls = 0
        """Script calls made (the Redis round trips pacing costs; tests and benchmarks)."""
        self._acquire: Any = redis.register_script(ACQUIRE)
        self._back_off: Any = redis.register_script(BACK_OFF)
        self._high = asyncio.Lock()
        self._low = asyncio.Lock()

    async def acquire(self, *, low_priority: bool = False, chat_id: int | None = None) -> None:
        """Wait until a send to ``chat_id`` fits the global budget, and count it.

        As in ``GlobalLimiter``, one task per priority waits on a full global budget while
        the others queue behind it. A chat another worker has just sent to raises
        ``ChatBusy``: what this worker was about to send was read before that send, so
        the outbox reads it again when the chat's budget allows."""
        if chat_id is None or not self._use_redis():
            await self.local.acquire(low_priority=low_priority)
            return
        for _ in range(MAX_LATE_BOOKINGS):
            wait_ms = await self._book(chat_id, low_priority)
            if wait_ms is None:
                await self.local.acquire(low_priority=low_priority)
                return
            due = self.clock() + wait_ms / 1000
            if wait_ms > 0:
                await asyncio.sleep(wait_ms / 1000)  # until the global slot it booked
            if self.clock() - due <= LATE:
                return
            # This process woke up late (a starved host): sent now, this send would bunch
            # with the next slots' sends. The missed slot stays counted; book another.
        log.debug("fleet pacing: woke up late %s times for chat %s", MAX_LATE_BOOKINGS, chat_id)

    async def _book(self, chat_id: int, low_priority: bool) -> int | None:
        """Book a global slot for a send to ``chat_id``: ms until it, or None when Redis
        failed (pace per process then); ``ChatBusy`` if the chat's budget is used up."""
        lock = self._low if low_priority else self._high
        async with lock:
            while True:
                try:
                    wait_ms, cause = await self.try_acquire(chat_id, low_priority=low_priority)
                except RedisError as err:
                    self._redis_failed(err)
                    return None
                if cause == CHAT:
                    raise ChatBusy(wait_ms / 1000)
                if cause != GLOBAL:
                    return wait_ms
                await asyncio.sleep(wait_ms / 1000)

    async def back_off(self, chat_id: int, seconds: float) -> None:
        """Telegram said 429 for this chat: no worker sends there for ``seconds``."""
        if not self._use_redis():
            return
        hold = chat_keys(chat_id, self.shards)[1]
        try:
            self.calls += 1
            await self._back_off(keys=[hold], args=[max(1, round(seconds * 1000))])
        except RedisError as err:
            self._redis_failed(err)

    async def try_acquire(self, chat_id: int, *, low_priority: bool = False) -> tuple[int, int]:
        """One attempt: (ms until its booked slot, 0) if the send was counted, else (ms to
        wait before asking again, CHAT or GLOBAL)."""
        chat, hold, shard = chat_keys(chat_id, self.shards)
        args = (
            *self._chat_args(chat_id),
            self.low_cap if low_priority else self.cap,
            self.cap,
            self.global_spacing_ms,
            1000,
            RESERVE_AHEAD_MS,
        )
        self.calls += 1
        metrics.pacing_called()
        wait_ms, cause = await self._acquire(keys=[chat, hold, shard], args=args)
        return int(wait_ms), int(cause)

    def _chat_args(self, chat_id: int) -> tuple[int, int, int]:
        """The chat's spacing (ms), window size (0: none) and window (ms)."""
        if chat_id < 0:
            return self.group_interval_ms, self.group_window_max, 60_000
        return self.private_interval_ms, 0, 60_000

    def _use_redis(self) -> bool:
        return self.scripted and self.clock() >= self.local_until

    def _redis_failed(self, err: RedisError) -> None:
        if isinstance(err, ResponseError) and "unknown command" in str(err).lower():
            self.scripted = False
            log.info("the store cannot run Lua scripts: pacing stays per process")
            return
        if self.clock() >= self.local_until:
            log.warning("fleet pacing: Redis did not answer (%s); pacing per process", err)
        self.local_until = self.clock() + LOCAL_AFTER_FAILURE


def send_limiter(
    settings: Settings, redis: Redis, clock: Callable[[], float] = time.monotonic
) -> SendLimiter:
    """The outbox's limiter: fleet-wide in Redis or per process (``FLEET_PACING``; that
    one paces by ``clock``)."""
    if not settings.paces_fleet_wide():
        return GlobalLimiter(settings.global_rate, clock)
    return FleetLimiter(
        redis,
        group_interval=settings.group_edit_interval,
        group_max_per_minute=settings.group_max_per_minute,
        private_interval=settings.private_interval,
        global_rate=settings.global_rate,
        shards=CLUSTER_SHARDS if settings.redis_cluster else 1,
    )
