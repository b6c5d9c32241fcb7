"""Unit tests of the failure handling that needs no Bot API: timers, memory, floods."""

from __future__ import annotations

import asyncio
import contextlib
import time
from collections.abc import AsyncIterator, Awaitable, Callable
from typing import Any

import fakeredis
import pytest
from redis.exceptions import ConnectionError as RedisConnectionError
from support.timers import next_due

from bot.app.scheduler import Scheduler
from bot.domain.bounded import BoundedDict
from bot.domain.place import Place
from bot.domain.records import ChatGame
from bot.output import outbox
from bot.output.outbox import Outbox
from bot.render import Rendered
from bot.store.storage import Storage, Write
from bot.telegram.guard import FLOOD_MAX, FLOOD_WINDOW, Guard


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

    async def set_timer(self, place: Place, due: float) -> None:
        if not self.up:
            raise RedisConnectionError("Redis is away")
        await super().set_timer(place, due)


async def test_a_timer_redis_refused_is_kept_and_written_later() -> None:
    store = FlakyStorage()
    fired: list[int] = []

    async def fire(place: Place) -> None:
        chat_id = place.chat_id
        fired.append(chat_id)

    scheduler = Scheduler(store, fire, clock=Clock())
    await scheduler.schedule(Place(-5), 2000.0)  # never raises
    assert scheduler.unsaved == {Place(-5): 2000.0}
    store.up = True
    await scheduler._flush_unsaved()
    assert scheduler.unsaved == {}
    assert await next_due(store) == 2000.0


async def test_a_failing_timer_whose_rescheduling_fails_is_not_lost() -> None:
    store = FlakyStorage()

    async def fire(place: Place) -> None:
        raise RedisConnectionError("Redis is away")

    clock = Clock()
    scheduler = Scheduler(store, fire, clock=clock)
    await scheduler._fire(Place(-6))  # before: the retry's own write failed and the timer was gone
    assert scheduler.unsaved == {Place(-6): clock.now + 1.0}


class CountingStorage(Storage):
    """Counts the scheduler's looks at the timers; can hold one look after its read."""

    def __init__(self) -> None:
        super().__init__(fakeredis.aioredis.FakeRedis(), finished_ttl=10, idle_ttl=10)
        self.looks = 0
        self.looked = asyncio.Event()
        self.hold: asyncio.Event | None = None

    async def timers_due_by(self, until: float, limit: int = 100) -> list[tuple[float, Place, str]]:
        due = await super().timers_due_by(until, limit)
        self.looks += 1
        self.looked.set()
        if self.hold is not None:
            await self.hold.wait()
        return due


@contextlib.asynccontextmanager
async def after_first_read(
    store: CountingStorage, fire: Callable[[Place], Awaitable[None]]
) -> AsyncIterator[Scheduler]:
    """A running scheduler (30 s between reads) once its first read of the timers is done."""
    scheduler = Scheduler(store, fire, max_sleep=30.0)
    scheduler.start()
    try:
        await asyncio.wait_for(store.looked.wait(), 5)
        yield scheduler
    finally:
        await scheduler.stop()


async def test_a_timer_due_after_the_next_look_does_not_wake_the_scheduler() -> None:
    store = CountingStorage()
    fired = asyncio.Event()

    async def fire(place: Place) -> None:
        fired.set()

    async with after_first_read(store, fire) as scheduler:
        for chat_id in range(-20, 0):  # every move sets a timer a turn away
            await scheduler.schedule(Place(chat_id), time.time() + 600)
        for _ in range(10):
            await asyncio.sleep(0)  # a woken loop would look again now
        assert store.looks == 1
        await scheduler.schedule(Place(-99), time.time() + 0.05)  # sooner than the next look
        await asyncio.wait_for(fired.wait(), 5)


async def test_a_timer_set_while_the_scheduler_looks_fires_on_time() -> None:
    store = CountingStorage()
    store.hold = asyncio.Event()
    fired = asyncio.Event()

    async def fire(place: Place) -> None:
        fired.set()

    async with after_first_read(store, fire) as scheduler:  # read done, nothing due yet
        await scheduler.schedule(Place(-7), time.time() + 0.05)
        store.hold.set()
        store.hold = None
        await asyncio.wait_for(fired.wait(), 5)  # not after max_sleep


async def test_timers_due_between_two_reads_fire_without_reading_every_shard_again() -> None:
    store = CountingStorage()
    fired: list[int] = []
    all_fired = asyncio.Event()

    async def fire(place: Place) -> None:
        chat_id = place.chat_id
        fired.append(chat_id)
        if len(fired) == 12:
            all_fired.set()

    soon = time.time() + 0.3
    for n in range(6):  # set by another worker before this one's read
        await store.set_timer(Place(-100 - n), soon + 0.03 * n)
    async with after_first_read(store, fire) as scheduler:
        for n in range(6):  # set here: straight into the local heap
            await scheduler.schedule(Place(-200 - n), time.time() + 0.02 * (n + 1))
        await asyncio.wait_for(all_fired.wait(), 5)
        # One read of every shard for twelve wake-ups (each used to read all of them).
        assert store.looks == 1
        assert sorted(fired) == sorted([-100 - n for n in range(6)] + [-200 - n for n in range(6)])


async def test_a_timer_moved_later_elsewhere_is_not_fired_from_the_local_heap() -> None:
    store = CountingStorage()
    fired: list[int] = []
    later_fired = asyncio.Event()

    async def fire(place: Place) -> None:
        chat_id = place.chat_id
        fired.append(chat_id)
        if chat_id == -301:
            later_fired.set()

    async with after_first_read(store, fire) as scheduler:
        await scheduler.schedule(Place(-300), time.time() + 0.05)
        await store.set_timer(Place(-300), time.time() + 600)  # another worker: a turn later
        await scheduler.schedule(Place(-301), time.time() + 0.1)
        await asyncio.wait_for(later_fired.wait(), 5)
        assert fired == [-301]  # -300's entry came first, and its claim failed


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

    async def do_api_request(self, endpoint: str, api_kwargs: dict[str, Any]) -> Any:
        return {"message_id": 1}  # the outbox's raw sendMessage / editMessageText


async def render_x(*args: Any) -> Rendered:
    return Rendered("x")


def unpaced_outbox(
    bot: object,
    storage: Storage | None = None,
    render: Callable[..., Awaitable[Rendered]] = render_x,
    **options: Any,
) -> Outbox:
    """An outbox on fakeredis with no per-chat pacing (the global rate and ``options`` as
    given)."""
    settings: dict[str, Any] = {
        "group_interval": 0,
        "group_max_per_minute": 100,
        "calm_delay": 0,
        "private_interval": 0,
        "global_rate": 100,
    }
    return Outbox(
        bot,  # type: ignore[arg-type]
        storage or Storage(fakeredis.aioredis.FakeRedis(), finished_ttl=10, idle_ttl=10),
        render_group=render,
        render_hand=render,
        **(settings | options),
    )


class MovingClock:
    def __init__(self) -> None:
        self.offset = 0.0

    def __call__(self) -> float:
        return time.monotonic() + self.offset


async def test_idle_chats_are_forgotten() -> None:
    clock = MovingClock()
    box = unpaced_outbox(SilentBot(), global_rate=1000, clock=clock, idle_forget=60)
    for chat in range(1, 201):
        box.say(Place(chat), Rendered("hi"))
    await asyncio.wait_for(box.idle(), 5)
    assert len(box.lanes) == 200
    clock.offset += 61
    box.say(Place(-1), Rendered("hi"))
    await asyncio.wait_for(box.idle(), 5)
    assert list(box.lanes) == [-1]  # before: every chat ever seen stayed


class HeldBot(SilentBot):
    """Holds every send until released, counting how many jobs wait there."""

    def __init__(self) -> None:
        self.waiting = 0
        self.most = 0
        self.release = asyncio.Event()
        self.crowded = asyncio.Event()

    async def send_message(self, chat_id: int, text: str, **kwargs: Any) -> Any:
        self.waiting += 1
        self.most = max(self.most, self.waiting)
        if self.waiting >= 5:
            self.crowded.set()
        await self.release.wait()
        self.waiting -= 1
        return await super().send_message(chat_id, text, **kwargs)


async def test_a_burst_of_output_is_worked_on_a_few_jobs_at_a_time(
    monkeypatch: pytest.MonkeyPatch,
) -> None:
    # 0.05 s of a 100/s budget: five jobs of each kind at once (at least four).
    monkeypatch.setattr(outbox, "IN_FLIGHT_SECONDS", 0.05)
    bot = HeldBot()
    box = unpaced_outbox(bot)
    for chat in range(1, 31):
        box.say(Place(chat), Rendered("hi"))
    await asyncio.wait_for(bot.crowded.wait(), 5)
    for _ in range(20):
        await asyncio.sleep(0)  # the other lanes run as far as they may
    assert bot.waiting == 5  # the other 25 wait before starting their job
    bot.release.set()
    await asyncio.wait_for(box.idle(), 5)
    assert bot.most == 5
    assert box.stats.sent == 30


async def test_output_waits_to_render_until_the_tap_being_answered_is(
    monkeypatch: pytest.MonkeyPatch,
) -> None:
    # The wait is capped; long enough here that only the answer can end it.
    monkeypatch.setattr(outbox, "TAPS_FIRST_WAIT", 30.0)
    storage = Storage(fakeredis.aioredis.FakeRedis(), finished_ttl=10, idle_ttl=10)
    tap_open = False
    rendered_during_tap: list[bool] = []

    async def render(*args: Any) -> Rendered:
        rendered_during_tap.append(tap_open)
        return Rendered("lobby")

    box = unpaced_outbox(SilentBot(), storage, render)
    await storage.update_table(
        Place(-5), lambda _: Write(ChatGame(game_id="g1", chat_id=-5, creator_id=1), None)
    )
    game = await storage.load_table(Place(-5))
    assert game is not None
    read = asyncio.Event()
    read_record = storage.peek_screen

    async def peek_screen(place: Place, role: str) -> Any:
        try:
            return await read_record(place, role)
        finally:
            read.set()

    monkeypatch.setattr(storage, "peek_screen", peek_screen)
    with box.answering():
        tap_open = True
        box.refresh(game)
        await asyncio.wait_for(read.wait(), 5)  # the job is about to render
        for _ in range(20):
            await asyncio.sleep(0)  # it may run as far as it will
        assert rendered_during_tap == []
        tap_open = False
    await asyncio.wait_for(box.idle(), 5)
    # Rendered once (to look; the send under the message's claim reuses it), not mid-tap.
    assert rendered_during_tap == [False]


def test_a_member_flooding_commands_is_quieted() -> None:
    clock = Clock()
    guard = Guard(None, clock=clock)  # type: ignore[arg-type]
    allowed = [not guard.flooding(-1, 7) for _ in range(20)]
    assert allowed.count(True) == FLOOD_MAX
    assert not guard.flooding(-1, 8)  # others are not affected
    clock.now += FLOOD_WINDOW + 1
    assert not guard.flooding(-1, 7)
