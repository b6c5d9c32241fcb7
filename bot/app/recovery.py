"""Watches Redis; when it comes back after an outage (or restarted), re-reads everything.

During an outage refreshes wait and retry, taps get "try again". Once Redis answers again
(or answers with a different ``run_id``: it restarted, maybe empty), every running game is
re-read and shown afresh, its timer set again, and tables this process still shows but
Redis lost are announced as lost.
"""

from __future__ import annotations

import asyncio
import contextlib
import logging
from typing import Any

from redis.exceptions import RedisError

from bot.app.games import Games
from bot.app.lost import check_live_tables

log = logging.getLogger(__name__)


class RedisWatch:
    def __init__(self, games: Games, *, interval: float = 1.0) -> None:
        self.games = games
        self.interval = interval
        self.down = False
        self.run_id: str | None = None
        self.recoveries = 0
        self._task: asyncio.Task[None] | None = None

    def start(self) -> None:
        if self._task is None:
            self._task = asyncio.create_task(self._loop(), name="durak-redis-watch")

    async def stop(self) -> None:
        if self._task is not None:
            self._task.cancel()
            with contextlib.suppress(asyncio.CancelledError):
                await self._task
            self._task = None

    async def _loop(self) -> None:
        while True:
            await self.check()
            await asyncio.sleep(self.interval)

    async def check(self) -> None:
        try:
            async with asyncio.timeout(max(self.interval, 1.0) * 3):
                run_id = await self._run_id()
        except (RedisError, TimeoutError, OSError) as err:
            if not self.down:
                log.warning("Redis is unreachable: %s", err)
            self.down = True
            return
        restarted = self.run_id is not None and run_id is not None and run_id != self.run_id
        self.run_id = run_id or self.run_id
        if self.down or restarted:
            self.down = False
            await self.recovered(restarted=restarted)

    async def _run_id(self) -> str | None:
        redis = self.games.storage.redis
        try:
            info: dict[str, Any] = await redis.info("server")
        except RedisError:
            await redis.ping()  # stores without INFO (the embedded one) still answer
            return None
        value = info.get("run_id")
        return None if value is None else str(value)

    async def recovered(self, *, restarted: bool) -> None:
        self.recoveries += 1
        log.warning("Redis is back%s: re-reading every game", " (restarted)" if restarted else "")
        try:
            await self.games.resume()
            await check_live_tables(self.games)
        except RedisError as err:
            log.warning("Redis failed again during recovery: %s", err)
            self.down = True
