"""The Mini App's request limits: token buckets per user and per address, 429 with
Retry-After and a JSON error, and a cap on one user's open event streams."""

from __future__ import annotations

import asyncio
from typing import Any

import aiohttp
import pytest
from hypothesis import given
from hypothesis import strategies as st
from support.webapp import (
    ANN,
    BOB,
    GROUP,
    AppClient,
    init_data,
    seat_people,
    start_game,
    webapp_settings,
)

from bot.webapp.ratelimit import Buckets, Rate, client_address, retry_after
from bot.wiring import miniapp as wiring

pytestmark = pytest.mark.filterwarnings("ignore:Deprecated since version v22.2")


class Clock:
    def __init__(self) -> None:
        self.now = 100.0

    def __call__(self) -> float:
        return self.now


def test_bucket_allows_the_burst_then_the_rate() -> None:
    clock = Clock()
    buckets = Buckets(Rate(per_second=2.0, burst=3.0), clock)
    assert [buckets.take("a") for _ in range(3)] == [0.0, 0.0, 0.0]
    assert buckets.take("a") == pytest.approx(0.5)
    assert buckets.take("b") == 0.0  # another key has its own bucket
    clock.now += 0.5
    assert buckets.take("a") == 0.0
    assert buckets.take("a") == pytest.approx(0.5)
    clock.now += 60
    assert [buckets.take("a") for _ in range(4)][-1] > 0  # refills to the burst, no more


@given(
    st.lists(st.tuples(st.sampled_from("abc"), st.floats(min_value=0, max_value=2)), max_size=200)
)
def test_bucket_never_lets_more_than_burst_plus_rate_through(
    requests: list[tuple[str, float]],
) -> None:
    rate = Rate(per_second=4.0, burst=5.0)
    clock = Clock()
    buckets = Buckets(rate, clock, most=2)  # forgetting full buckets happens all the time
    start = clock.now
    passed: dict[str, int] = {}
    for key, gap in requests:
        clock.now += gap
        wait = buckets.take(key)
        assert wait >= 0
        passed[key] = passed.get(key, 0) + (wait == 0)
    for count in passed.values():
        assert count <= rate.burst + (clock.now - start) * rate.per_second + 1e-9


def test_forgetting_keeps_memory_bounded() -> None:
    clock = Clock()
    buckets = Buckets(Rate(per_second=1.0, burst=2.0), clock, most=100)
    for n in range(10_000):
        buckets.take(n)
    assert len(buckets.levels) <= 100


def test_client_address() -> None:
    assert client_address("198.51.100.4", "203.0.113.9") == "198.51.100.4"  # not from a proxy
    assert client_address("127.0.0.1", "10.0.0.1, 203.0.113.9") == "203.0.113.9"
    assert client_address("::1", "2001:db8::7") == "2001:db8::7"
    assert client_address("127.0.0.1", None) is None  # a local client: not limited per address
    assert client_address("127.0.0.1", "nonsense") is None
    assert client_address(None, None) is None
    assert retry_after(0.01) == "1" and retry_after(2.2) == "3"


async def test_api_answers_429_past_the_limits(make_harness: Any) -> None:
    async with make_harness(**webapp_settings()) as h, aiohttp.ClientSession() as http:
        await h.start_bot()
        await seat_people(h, ANN, BOB)
        gid = await start_game(h, [ANN, BOB])
        server = h.bot.app.bot_data[wiring.WEBAPP_KEY].server
        server.user_buckets = Buckets(Rate(per_second=0.5, burst=3))
        port = h.settings.webapp_port
        ann, bob = AppClient(http, port, ANN), AppClient(http, port, BOB)
        assert [(await ann.state(gid))[0] for _ in range(3)] == [200, 200, 200]
        async with http.get(
            f"http://127.0.0.1:{port}/api/state", params={"game": gid}, headers=ann.headers()
        ) as r:
            assert r.status == 429
            assert r.headers["Retry-After"] == "2"
            body = await r.json()
            assert body == {"error": "too many requests", "retry_after": 2}
        status, body = await ann.move(gid, "take")  # moves share the user's bucket
        assert status == 429 and body["error"] == "too many requests"
        assert (await bob.state(gid))[0] == 200  # only Ann is limited
        assert (await h.table(GROUP)).engine_state().step == 0

        # Per address (behind a proxy on this host): counted before the signature check.
        server.user_buckets = Buckets(Rate(per_second=100, burst=100))
        server.address_buckets = Buckets(Rate(per_second=0.5, burst=2))
        url = f"http://127.0.0.1:{port}/api/state"

        async def status_from(address: str, user: int, forged: bool = False) -> int:
            headers = {"X-Forwarded-For": address, "X-Telegram-Init-Data": init_data(user)}
            if forged:
                headers["X-Telegram-Init-Data"] = "user=%7B%7D&hash=00"
            async with http.get(url, params={"game": gid}, headers=headers) as r:
                return r.status

        assert await status_from("203.0.113.9", ANN, forged=True) == 401
        assert await status_from("203.0.113.9", BOB) == 200
        assert await status_from("203.0.113.9", ANN) == 429
        assert await status_from("203.0.113.9", ANN, forged=True) == 429
        assert await status_from("198.51.100.4", ANN) == 200
        assert (await ann.state(gid))[0] == 200  # this host itself is not limited per address


async def test_one_user_streams_are_capped(make_harness: Any) -> None:
    async with make_harness(**webapp_settings()) as h, aiohttp.ClientSession() as http:
        await h.start_bot()
        await seat_people(h, ANN, BOB)
        gid = await start_game(h, [ANN, BOB])
        server = h.bot.app.bot_data[wiring.WEBAPP_KEY].server
        server.streams_per_user = 2
        params = {"game": gid, "init_data": init_data(ANN)}
        url = f"http://127.0.0.1:{h.settings.webapp_port}/api/events"
        async with (
            http.get(url, params=params) as first,
            http.get(url, params=params) as second,
        ):
            assert first.status == second.status == 200
            await second.content.readuntil(b"event: state")
            assert len(server.streams[ANN]) == 2
            async with http.get(url, params=params) as third:
                assert third.status == 200
                await third.content.readuntil(b"event: state")
                # The oldest ended: its body runs out; the newer two stay open.
                rest = await asyncio.wait_for(first.content.read(), 5)
                assert first.content.at_eof() and b"retry:" in rest
                assert len(server.streams[ANN]) == 2
                assert not second.content.at_eof()
                bob = AppClient(http, h.settings.webapp_port, BOB)
                async with bob.events(gid) as stream:  # Bob has streams of his own
                    assert (await stream.next())["game"] == gid
                    assert len(server.streams[BOB]) == 1
