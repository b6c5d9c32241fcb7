"""Unit tests of the failure handling that needs no Bot API: timers, memory, floods."""

from __future__ import annotations

import asyncio
import time
from typing import Any

import fakeredis
from redis.exceptions import ConnectionError as RedisConnectionError

from bot.bounded import BoundedDict
from bot.guard import FLOOD_MAX, FLOOD_WINDOW, Guard
from bot.outbox import Outbox
from bot.render import Rendered
from bot.scheduler import Scheduler
from bot.storage import Storage


class Clock:
    def __init__(self) -> None:
        self.now = 1000.0

    def __call__(self) -> float:
        return self.now


class FlakyStorage(Storage):
    """Redis that refuses timer writes until ``up`` is set."""

    def __init__(self) -> None:
        super().__init__(fakeredis.aioredis.FakeRedis(), finished_ttl=10, idle_ttl=10)
        self.up = False

    async def set_timer(self, chat_id: int, due: float) -> None:
        if not self.up:
            raise RedisConnectionError("Redis is away")
        await super().set_timer(chat_id, due)


async def test_a_timer_redis_refused_is_kept_and_written_later() -> None:
    store = FlakyStorage()
    fired: list[int] = []

    async def fire(chat_id: int) -> None:
        fired.append(chat_id)

    scheduler = Scheduler(store, fire, clock=Clock())
    await scheduler.schedule(-5, 2000.0)  # never raises
    assert scheduler.unsaved == {-5: 2000.0}
    store.up = True
    await scheduler._flush_unsaved()
    assert scheduler.unsaved == {}
    assert await store.next_due() == 2000.0


async def test_a_failing_timer_whose_rescheduling_fails_is_not_lost() -> None:
    store = FlakyStorage()

    async def fire(chat_id: int) -> None:
        raise RedisConnectionError("Redis is away")

    clock = Clock()
    scheduler = Scheduler(store, fire, clock=clock)
    await scheduler._fire(-6)  # before: the retry's own write failed and the timer was gone
    assert scheduler.unsaved == {-6: clock.now + 1.0}


class CountingStorage(Storage):
    """Counts the scheduler's looks at the timers; can hold one look after its read."""

    def __init__(self) -> None:
        super().__init__(fakeredis.aioredis.FakeRedis(), finished_ttl=10, idle_ttl=10)
        self.looks = 0
        self.looked = asyncio.Event()
        self.hold: asyncio.Event | None = None

    async def timers_due_by(self, until: float, limit: int = 100) -> list[tuple[float, int, str]]:
        due = await super().timers_due_by(until, limit)
        self.looks += 1
        self.looked.set()
        if self.hold is not None:
            await self.hold.wait()
        return due


async def test_a_timer_due_after_the_next_look_does_not_wake_the_scheduler() -> None:
    store = CountingStorage()
    fired = asyncio.Event()

    async def fire(chat_id: int) -> None:
        fired.set()

    scheduler = Scheduler(store, fire, max_sleep=30.0)
    scheduler.start()
    try:
        await asyncio.wait_for(store.looked.wait(), 5)
        for chat_id in range(-20, 0):  # every move sets a timer a turn away
            await scheduler.schedule(chat_id, time.time() + 600)
        for _ in range(10):
            await asyncio.sleep(0)  # a woken loop would look again now
        assert store.looks == 1
        await scheduler.schedule(-99, time.time() + 0.05)  # sooner than the next look
        await asyncio.wait_for(fired.wait(), 5)
    finally:
        await scheduler.stop()


async def test_a_timer_set_while_the_scheduler_looks_fires_on_time() -> None:
    store = CountingStorage()
    store.hold = asyncio.Event()
    fired = asyncio.Event()

    async def fire(chat_id: int) -> None:
        fired.set()

    scheduler = Scheduler(store, fire, max_sleep=30.0)
    scheduler.start()
    try:
        await asyncio.wait_for(store.looked.wait(), 5)  # read done, nothing due yet
        await scheduler.schedule(-7, time.time() + 0.05)
        store.hold.set()
        store.hold = None
        await asyncio.wait_for(fired.wait(), 5)  # not after max_sleep
    finally:
        await scheduler.stop()


def test_bounded_dict_forgets_the_oldest() -> None:
    cache: BoundedDict[int, int] = BoundedDict(3)
    for i in range(10):
        cache[i] = i
    cache[7] = 70  # rewriting keeps a key
    cache[10] = 10
    assert list(cache) == [9, 7, 10]


class SilentBot:
    async def send_message(self, chat_id: int, text: str, **kwargs: Any) -> Any:
        class Sent:
            message_id = 1

        return Sent()


class MovingClock:
    def __init__(self) -> None:
        self.offset = 0.0

    def __call__(self) -> float:
        return time.monotonic() + self.offset


async def test_idle_chats_are_forgotten() -> None:
    clock = MovingClock()
    store = Storage(fakeredis.aioredis.FakeRedis(), finished_ttl=10, idle_ttl=10)

    async def render(*args: Any) -> Rendered:
        return Rendered("x")

    box = Outbox(
        SilentBot(),  # type: ignore[arg-type]
        store,
        render_group=render,
        render_hand=render,
        group_interval=0,
        group_max_per_minute=100,
        calm_delay=0,
        private_interval=0,
        global_rate=1000,
        clock=clock,
        idle_forget=60,
    )
    for chat in range(1, 201):
        box.say(chat, Rendered("hi"))
    await asyncio.wait_for(box.idle(), 5)
    assert len(box.lanes) == 200
    clock.offset += 61
    box.say(-1, Rendered("hi"))
    await asyncio.wait_for(box.idle(), 5)
    assert list(box.lanes) == [-1]  # before: every chat ever seen stayed


def test_a_member_flooding_commands_is_quieted() -> None:
    clock = Clock()
    guard = Guard(None, clock=clock)  # type: ignore[arg-type]
    allowed = [not guard.flooding(-1, 7) for _ in range(20)]
    assert allowed.count(True) == FLOOD_MAX
    assert not guard.flooding(-1, 8)  # others are not affected
    clock.now += FLOOD_WINDOW + 1
    assert not guard.flooding(-1, 7)
