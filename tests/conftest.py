"""Shared fixtures: a real redis-server, fakeredis, and the emulator + bot harness.

The helpers themselves live in ``tests/support/``; this file only declares fixtures.
"""

from __future__ import annotations

from collections.abc import AsyncIterator, Callable, Iterator
from typing import Any

import fakeredis
import pytest
from redis.asyncio import Redis
from support.harness import (
    BOT_USERNAME,
    TOKEN,
    Bot,
    FakeClock,
    Harness,
    bot_settings,
    hand_buttons,
    harness,
    open_lobby,
    play_out,
    press,
    redis_server_process,
)

from sandbox.emulator import RateLimits

# Re-exported for test modules that still import these from conftest.
__all__ = [
    "BOT_USERNAME",
    "TOKEN",
    "Bot",
    "FakeClock",
    "Harness",
    "bot_settings",
    "hand_buttons",
    "open_lobby",
    "play_out",
    "press",
]


@pytest.fixture(scope="session")
def redis_server() -> Iterator[str]:
    """A throwaway redis-server on a free port (no persistence); its URL."""
    try:
        with redis_server_process() as url:
            yield url
    except RuntimeError as err:  # never skip silently: tests/run.sh installs it
        pytest.fail(str(err))


@pytest.fixture
async def real_redis(redis_server: str) -> AsyncIterator[Redis]:
    client: Redis = Redis.from_url(redis_server)
    await client.flushdb()
    yield client
    await client.flushdb()
    await client.aclose()


@pytest.fixture(params=["fakeredis", "redis-server"])
async def any_redis(request: pytest.FixtureRequest) -> AsyncIterator[Redis]:
    """Storage tests run against both stores."""
    if request.param == "fakeredis":
        client: Redis = fakeredis.aioredis.FakeRedis()
        yield client
        await client.aclose()
    else:
        server = request.getfixturevalue("redis_server")
        client = Redis.from_url(server)
        await client.flushdb()
        yield client
        await client.flushdb()
        await client.aclose()


@pytest.fixture
def clock() -> FakeClock:
    return FakeClock()


@pytest.fixture
def make_harness(real_redis: Redis, clock: FakeClock) -> Callable[..., Any]:
    """``async with make_harness(rate_limits=..., **settings) as h``: see support.harness."""

    def make(rate_limits: bool | RateLimits = False, **overrides: Any) -> Any:
        return harness(real_redis, clock, rate_limits, **overrides)

    return make
