"""Output that survives any crash: what a move must show is stored with the move, so when
the worker that made it dies before (or while) sending, another worker sends it.

Real ``python -m bot`` webhook workers on a real redis-server behind a test front; the
players press the buttons the emulator shows them, so a hand left stale by a dead worker
stalls the game until another worker takes its output over (turn timers are long here:
no timer move re-renders anything meanwhile).
"""

from __future__ import annotations

import asyncio
import contextlib
import itertools
import random
import signal
import time
from collections.abc import AsyncIterator, Awaitable, Callable
from dataclasses import dataclass, field
from pathlib import Path
from types import SimpleNamespace
from typing import Any

import aiohttp
import pytest
from redis.asyncio import Redis
from support.front import Front, Worker, start_worker, stop_workers, wait_ready
from support.harness import hand_buttons

from bot import render
from bot.app.games import CRASH_AFTER_COMMIT, CRASH_EXIT_CODE
from bot.domain.place import Place
from bot.domain.rating import MIN_GAMES_LISTED, ResultLine
from bot.domain.records import ChatGame, Seat
from bot.domain.roles import hand_role
from bot.output.outbox import NOTIFY_LATE, Outbox
from bot.render import Rendered
from bot.store.storage import (
    OUTPUT_LEASE,
    SETTLE_EVERY,
    Owed,
    Storage,
    Write,
    output_index_key,
    shard_of,
    stats_key,
)
from engine import Rules, new_game
from locales import negotiate, translator
from sandbox.emulator import BotApiEmulator, EmuMessage

TOKEN = "5550006:fleet-output-token-secret"
BOT = "durak_output_bot"
GROUP = -100777
ANN, BOB = 61, 62
LEASE = 1.0
WORKER_ENV = {
    "DURAK_OUTPUT_LEASE": str(LEASE),
    "TURN_TIMEOUT": "300",
    "GROUP_EDIT_INTERVAL": "0",
    "GROUP_MAX_PER_MINUTE": "100000",
    "PRIVATE_INTERVAL": "0",
    "CALM_DELAY": "0",
    "NOTIFY_QUIET": "0",
    "GLOBAL_RATE": "1000",
    "LOG_LEVEL": "INFO",
}
GAME_OVER = "Game over"
PREFERENCE = "pBabt"
"""Which move a player prefers (as in ``support.harness.play_out``): a short game."""
STALL = 15.0
"""Longest wait for the next button: a takeover needs about a lease and a sweep."""


@dataclass
class Fleet:
    tmp: Path
    emu: BotApiEmulator
    redis_url: str
    front: Front
    front_url: str
    http: aiohttp.ClientSession
    workers: list[Worker] = field(default_factory=list)

    async def start(self, **env: str) -> Worker:
        """A new worker process (booting in parallel with whatever the test does next)."""
        settings = {
            "TELEGRAM_BOT_TOKEN": TOKEN,
            "TELEGRAM_API_URL": self.emu.url,
            "REDIS_URL": self.redis_url,
            "AI_DELAY": "0",
        }
        worker = await start_worker(self.front, self.tmp, settings | WORKER_ENV | env, serve=False)
        self.workers.append(worker)
        return worker

    async def ready(self, worker: Worker) -> Worker:
        """Once it is ready, the front sends it updates too."""
        await wait_ready([worker])
        self.front.ports.append(worker.port)
        return worker

    def serving(self) -> list[Worker]:
        return [
            w for w in self.workers if w.process.returncode is None and w.port in self.front.ports
        ]

    def retire(self, worker: Worker) -> None:
        with contextlib.suppress(ValueError):
            self.front.ports.remove(worker.port)


@contextlib.asynccontextmanager
async def fleet(tmp: Path, redis_url: str, *, spread: bool) -> AsyncIterator[Fleet]:
    async with BotApiEmulator() as emu, aiohttp.ClientSession() as http:
        emu.add_bot(TOKEN, username=BOT)
        for uid, name in ((ANN, "Ann"), (BOB, "Bob")):
            emu.add_user(uid, name)
        emu.add_group(GROUP, "Output Club", members=[ANN, BOB], creator=ANN)
        front = Front([], spread=spread)
        running = Fleet(tmp, emu, redis_url, front, await front.start(), http)
        try:
            yield running
        finally:
            await stop_workers(running.workers)
            await front.stop()


@pytest.fixture
async def redis(redis_server: str) -> AsyncIterator[Redis]:
    client: Redis = Redis.from_url(redis_server)
    await client.flushdb()
    yield client
    await client.flushdb()
    await client.aclose()


async def open_game(emu: BotApiEmulator) -> dict[int, int]:
    """Lobby, join, start; returns each player's last private message id before it."""
    greeted = {}
    for uid in (ANN, BOB):
        await emu.user_starts_bot(uid)
        greeted[uid] = (await emu.wait_for_message(uid, timeout=15)).message_id
    await emu.user_sends(ANN, GROUP, "/newgame")
    lobby = await emu.wait_for(
        lambda: next((m for m in emu.messages(GROUP) if m.from_bot), None), 15, what="lobby"
    )
    for user, label, shown in ((BOB, "Join", "2. Bob"), (ANN, "Start", "Trump:")):
        handle = await emu.user_presses(user, GROUP, lobby.message_id, text=label)
        await asyncio.wait_for(handle.answer(), 15)
        await emu.wait_for(
            lambda shown=shown: any(shown in m.text for m in emu.messages(GROUP)), 15, what=shown
        )
    return greeted


async def play(
    emu: BotApiEmulator, between: Callable[[int], Awaitable[None]] | None = None
) -> EmuMessage:
    """Press legal buttons until the result comes; ``between(n)`` runs before press n."""
    pressed: set[tuple[int, int, int, str]] = set()
    """(user, message id, its edit count, data): a keyboard whose moves stay the same keeps
    its data, so a button is worth pressing again only on a new version of its message."""

    def version(user: int, mid: int) -> int:
        message = emu.message(user, mid)
        return -1 if message is None else message.edit_count

    def over() -> EmuMessage | None:
        return next((m for m in emu.messages(GROUP) if m.from_bot and GAME_OVER in m.text), None)

    def candidate() -> tuple[int, int, str] | None:
        options = [
            (-step, PREFERENCE.index(data.split(":")[4][0]), user, mid, data)
            for user in (ANN, BOB)
            for step, mid, data in hand_buttons(emu, user)
            if data.split(":")[4][0] in PREFERENCE
            and (user, mid, version(user, mid), data) not in pressed
        ]
        return min(options)[2:] if options else None

    for n in range(3000):
        if between is not None:
            await between(n)
        found = await emu.wait_for(lambda: over() or candidate(), STALL, what="a move")
        if isinstance(found, EmuMessage):
            return found
        user, mid, data = found
        pressed.add((user, mid, version(user, mid), data))
        # A refused (stale) button is part of play; so is a tap whose worker was killed
        # after it took the update (never answered: the buttons move on without it).
        with contextlib.suppress(Exception):
            handle = await emu.user_presses(user, user, mid, data=data)
            await asyncio.wait_for(handle.answer(), 3)
    raise AssertionError("the game did not end")


async def rating_lines_of(store: Storage, game: ChatGame) -> dict[int, ResultLine]:
    """The finished game's rating lines, once some worker has rated it."""
    humans = {seat.user_id for seat in game.seats if seat.user_id is not None}
    deadline = time.monotonic() + STALL
    while True:
        lines = await store.rating_lines(Place(GROUP), game.game_id)
        if set(lines) >= humans or time.monotonic() > deadline:
            return lines
        await asyncio.sleep(0.05)


async def assert_everything_shows_the_end(
    emu: BotApiEmulator, redis: Redis, greeted: dict[int, int], left_behind: int = 0
) -> ChatGame:
    """The game finished once, every message shows the stored final state, nothing that
    notifies was sent twice, the stats counted it once and no output is owed any more.

    ``left_behind``: at most this many old hand messages may be left over in all (a worker
    killed between Telegram's answer to a new hand and noting its id leaves one that
    nobody knows of); each goes at its first tap."""
    store = Storage(redis, finished_ttl=3600, idle_ttl=3600)
    game = await store.load_table(Place(GROUP))
    assert game is not None and game.phase == "finished"
    state = game.engine_state().to_dict()
    cards = [c for hand in state["hands"] for c in hand] + state["stock"] + state["discard"]
    cards += state["attack"] + [c for c in state["defense"] if c is not None]
    assert len(cards) == len(set(cards)) == game.rules.deck_size  # every card once
    tr = translator(negotiate((await store.chat_settings(GROUP)).lang))
    expected = {(GROUP, game.table_message_id): render.table_message(game, tr, BOT).text}
    # Each hand shows its player's result and rating change: the game is rated by whichever
    # worker gets there first (the one that ended it, the settler, or the hand's render).
    lines = await rating_lines_of(store, game)
    for seat, info in enumerate(game.seats):
        assert info.user_id is not None and info.hand_message_id is not None
        expected[(info.user_id, info.hand_message_id)] = render.finished_hand(
            game, seat, translator(negotiate(info.lang)), lines.get(info.user_id), MIN_GAMES_LISTED
        ).text

    def shown() -> dict[tuple[int, int | None], str]:
        return {
            (chat, m.message_id): m.html
            for chat in (GROUP, ANN, BOB)
            for m in emu.messages(chat)
            if (chat, m.message_id) in expected
        }

    await emu.wait_for(lambda: shown() == expected or None, STALL, what="the final state")
    group = [m.text for m in emu.messages(GROUP) if m.from_bot]
    assert sum(GAME_OVER in text for text in group) == 1  # the result once, not twice
    assert len(group) == len(set(group)), group  # no group message twice
    stats = await redis.hgetall(stats_key(GROUP))
    assert int(stats[f"{ANN}:played".encode()]) == 1
    assert int(stats[f"{BOB}:played".encode()]) == 1

    async def own_totals() -> list[int]:
        return [int((await store.user_stats(uid)).played) for uid in (ANN, BOB)]

    # The players' own totals: added right after the last move, or, if its worker died
    # first, by another worker's settler (at its start, then every SETTLE_EVERY).
    async with asyncio.timeout(SETTLE_EVERY + 10):
        while 0 in await own_totals():
            await asyncio.sleep(0.1)
    assert await own_totals() == [1, 1]
    # Nothing stays owed, and the index entry goes with the last of it (or, left by a
    # dead worker, at a sweep). Polling Redis: it has no event to wait on here.
    async with asyncio.timeout(3 * LEASE + 5):
        while not (await store.owed_output(Place(GROUP))).complete:
            await asyncio.sleep(0.1)
        while await redis.zscore(output_index_key(shard_of(GROUP)), str(GROUP)) is not None:
            await asyncio.sleep(0.1)
    assert (await store.owed_output(Place(GROUP))).rev > 0  # the moves did record their output
    leftovers = 0
    for seat in game.seats:
        user = seat.user_id
        assert user is not None

        def hands(user: int = user) -> list[EmuMessage]:
            return [m for m in emu.messages(user) if m.message_id > greeted[user] and m.from_bot]

        # Every hand sent as a new message replaced (deleted) the one before: one is left.
        # Checked once nothing is owed: a dead worker's owed delete is a sweeper's to do.
        for old in [m for m in hands() if m.message_id != seat.hand_message_id]:
            leftovers += 1
            assert leftovers <= left_behind, [m.message_id for m in hands()]
            data = next(b["callback_data"] for row in old.inline_keyboard for b in row)
            handle = await emu.user_presses(user, user, old.message_id, data=data)
            await asyncio.wait_for(handle.answer(), 15)
            await emu.wait_for(
                lambda old=old, user=user: emu.message(user, old.message_id) is None,
                STALL,
                what=f"hand {old.message_id} left behind goes at its first tap",
            )
        assert [m.message_id for m in hands()] == [seat.hand_message_id]
    return game


async def test_a_worker_dying_right_after_a_commit_leaves_its_output_to_another(
    tmp_path: Path, redis_server: str, redis: Redis
) -> None:
    """The front sends everything to the first live worker: the first dies right after
    its 6th commit (mid-game), the second right after the commit that ends the game, both
    before sending anything; the third finishes all they owed (table, hands, results)."""
    async with fleet(tmp_path, redis_server, spread=False) as f:
        booting = [
            await f.start(**{CRASH_AFTER_COMMIT: "6"}),
            await f.start(**{CRASH_AFTER_COMMIT: "end"}),
            await f.start(),
        ]
        first, second, third = [await f.ready(w) for w in booting]  # the front's order
        greeted = await open_game(f.emu)
        await play(f.emu)
        await assert_everything_shows_the_end(f.emu, redis, greeted)
        assert first.process.returncode == CRASH_EXIT_CODE
        await asyncio.wait_for(second.process.wait(), 5)
        assert second.process.returncode == CRASH_EXIT_CODE
        assert third.process.returncode is None


async def test_kill_9_at_random_moments_loses_nothing(
    tmp_path: Path, redis_server: str, redis: Redis
) -> None:
    """Three workers share the updates; three times a random one is killed with SIGKILL
    between random presses, and a fresh one boots meanwhile and joins when ready."""
    chance = random.Random(12)
    async with fleet(tmp_path, redis_server, spread=True) as f:
        for worker in [await f.start() for _ in range(3)]:
            await f.ready(worker)
        greeted = await open_game(f.emu)
        kills = sorted(chance.sample(range(2, 40), 3))
        killed: list[Worker] = []
        joining: list[asyncio.Task[Worker]] = []

        async def between(n: int) -> None:
            if n not in kills:
                return
            while len(f.serving()) < 2:  # one must be left to serve after the kill
                await asyncio.wait_for(joining.pop(0), 30)
            victim = chance.choice(f.serving())
            victim.process.kill()  # SIGKILL: no chance to hand anything back
            await asyncio.wait_for(victim.process.wait(), 5)
            f.retire(victim)
            killed.append(victim)
            joining.append(asyncio.create_task(f.ready(await f.start())))

        await play(f.emu, between)
        await assert_everything_shows_the_end(f.emu, redis, greeted, left_behind=len(kills))
        assert [w.process.returncode for w in killed] == [-signal.SIGKILL] * 3
        await asyncio.wait_for(asyncio.gather(*joining), 30)


async def test_a_rolling_restart_mid_game_loses_nothing(
    tmp_path: Path, redis_server: str, redis: Redis
) -> None:
    """A rolling update while the game goes on: a new worker starts, and once it is ready
    an old one leaves the proxy and gets SIGTERM (it stops taking updates, hands back what
    it owes and exits within the grace); three times, so every worker is replaced."""
    async with fleet(tmp_path, redis_server, spread=True) as f:
        old = [await f.start() for _ in range(3)]
        for worker in old:
            await f.ready(worker)
        greeted = await open_game(f.emu)

        async def roll() -> None:
            for worker in old:
                await f.ready(await f.start())
                f.retire(worker)
                worker.process.send_signal(signal.SIGTERM)
                await asyncio.wait_for(worker.process.wait(), 12)

        rolling: list[asyncio.Task[None]] = []

        async def between(n: int) -> None:
            if n == 3:
                rolling.append(asyncio.create_task(roll()))
            elif n == 25:
                await asyncio.wait_for(rolling[0], 90)  # the game is not over before it is

        await play(f.emu, between)
        await assert_everything_shows_the_end(f.emu, redis, greeted)
        assert [w.process.returncode for w in old] == [0, 0, 0]


# --- the storage side, on its own -------------------------------------------------------


def _move(game_id: str = "g1") -> Callable[[ChatGame | None], Write[None]]:
    def change(current: ChatGame | None) -> Write[None]:
        game = current or ChatGame(game_id=game_id, chat_id=GROUP, creator_id=ANN)
        owed = Owed(["group", f"hand:{ANN}"], [ANN], [{"kind": "announce", "key": "k"}])
        return Write(game, None, output=owed)

    return change


async def test_a_move_and_what_it_must_show_are_stored_together(redis: Redis) -> None:
    worker = Storage(redis, finished_ttl=3600, idle_ttl=3600)
    await worker.update_table(Place(GROUP), _move())
    await worker.update_table(Place(GROUP), _move())
    owed = await worker.owed_output(Place(GROUP))
    assert owed.rev == 2
    assert owed.targets == {"group": 2, f"hand:{ANN}": 2} and owed.notify == {ANN: 2}
    assert list(owed.notes) == ["0000000001.000", "0000000002.000"]  # in the order made
    lease = await redis.zscore(output_index_key(shard_of(GROUP)), str(GROUP))
    assert lease is not None and time.time() < lease <= time.time() + OUTPUT_LEASE
    # What was shown at revision 1 settles nothing of revision 2; a note goes at once.
    assert not await worker.settle_output(
        Place(GROUP), {"owe:group": 1, "note:0000000001.000": None}
    )
    owed = await worker.owed_output(Place(GROUP))
    assert owed.targets["group"] == 2 and list(owed.notes) == ["0000000002.000"]
    fields: dict[str, int | None] = {"owe:group": 2, f"owe:hand:{ANN}": 2, f"new:{ANN}": 2}
    assert await worker.settle_output(Place(GROUP), fields | {"note:0000000002.000": None})
    await worker.release_output(Place(GROUP))
    assert await redis.zscore(output_index_key(shard_of(GROUP)), str(GROUP)) is None


async def test_another_worker_takes_over_only_when_the_lease_is_over(redis: Redis) -> None:
    dead = Storage(redis, finished_ttl=3600, idle_ttl=3600)
    other = Storage(redis, finished_ttl=3600, idle_ttl=3600)
    await dead.update_table(Place(GROUP), _move())
    now = time.time()
    assert await other.claim_owed_output(now) == []  # the mover still holds it
    later = now + OUTPUT_LEASE + 0.5
    [(chat, owed)] = await other.claim_owed_output(later)
    assert chat == Place(GROUP) and owed.rev == 1 and owed.notify == {ANN: 1}
    third = Storage(redis, finished_ttl=3600, idle_ttl=3600)
    assert await third.claim_owed_output(later + 0.1) == []  # leased to ``other`` now
    await other.renew_output_leases(later + OUTPUT_LEASE * 0.75, {Place(GROUP)})
    assert await third.claim_owed_output(later + OUTPUT_LEASE + 0.1) == []  # renewed
    await other.hand_back_output()  # shutting down: due at once for anyone
    assert [c for c, _ in await third.claim_owed_output(later + OUTPUT_LEASE + 2)] == [Place(GROUP)]


async def test_an_entry_that_owes_nothing_is_dropped_by_the_sweeper(redis: Redis) -> None:
    worker = Storage(redis, finished_ttl=3600, idle_ttl=3600)
    await worker.update_table(Place(GROUP), _move())
    owed = await worker.owed_output(Place(GROUP))
    fields: dict[str, int | None] = {f"owe:{t}": 1 for t in owed.targets}
    fields |= {f"new:{ANN}": 1} | {f"note:{n}": None for n in owed.notes}
    assert await worker.settle_output(Place(GROUP), fields)
    # The worker died before dropping its index entry: a sweeper finds nothing to send.
    sweeper = Storage(redis, finished_ttl=3600, idle_ttl=3600)
    assert await sweeper.claim_owed_output(time.time() + OUTPUT_LEASE + 1) == []
    assert await redis.zscore(output_index_key(shard_of(GROUP)), str(GROUP)) is None


async def test_one_worker_at_a_time_sends_a_new_message(redis: Redis) -> None:
    one = Storage(redis, finished_ttl=3600, idle_ttl=3600)
    two = Storage(redis, finished_ttl=3600, idle_ttl=3600)
    assert await one.claim_send(Place(ANN), "hand:-100777:g1")
    assert not await two.claim_send(Place(ANN), "hand:-100777:g1")
    assert await two.claim_send(Place(BOB), "hand:-100777:g1")  # another message: no wait
    await one.release_send(Place(ANN), "hand:-100777:g1")
    assert await two.claim_send(Place(ANN), "hand:-100777:g1")


class CountingBot:
    """Bot API stand-in for two outboxes at once: a little latency, so their sends overlap."""

    def __init__(self) -> None:
        self.sent: list[tuple[int, str]] = []
        self.edited: list[tuple[int, int, str]] = []
        self.ids = itertools.count(100)

    async def send_message(self, chat_id: int, text: str, **kwargs: Any) -> Any:
        await asyncio.sleep(0.02)
        self.sent.append((chat_id, text))
        return SimpleNamespace(message_id=next(self.ids))

    async def do_api_request(self, endpoint: str, api_kwargs: dict[str, Any]) -> Any:
        # The outbox's raw calls; the Bot API's method names are case-insensitive.
        if endpoint.lower() == "sendmessage":
            sent = await self.send_message(api_kwargs["chat_id"], api_kwargs["text"])
            return {"message_id": sent.message_id}
        assert endpoint.lower() == "editmessagetext"
        await asyncio.sleep(0.02)
        self.edited.append((api_kwargs["chat_id"], api_kwargs["message_id"], api_kwargs["text"]))
        return True


def worker_outbox(
    redis: Redis,
    bot: CountingBot,
    render_group: Callable[[ChatGame], Awaitable[Rendered]],
    render_hand: Callable[[ChatGame, int], Awaitable[Rendered]] | None = None,
    **options: Any,
) -> Outbox:
    """One worker's outbox, unpaced, on its own ``Storage`` of the shared Redis (hands
    rendered like the group unless ``render_hand`` is given; ``options`` as given)."""
    return Outbox(
        bot,  # type: ignore[arg-type]
        Storage(redis, finished_ttl=3600, idle_ttl=3600),
        render_group=render_group,
        render_hand=render_hand or render_group,  # type: ignore[arg-type]
        group_interval=0,
        group_max_per_minute=100_000,
        calm_delay=0,
        private_interval=0,
        global_rate=1000,
        **options,
    )


async def test_two_workers_delivering_the_same_output_send_each_new_message_once(
    redis: Redis,
) -> None:
    """A slow worker and the sweeper that took its chat over both work the output off."""
    bot = CountingBot()

    def change(current: ChatGame | None) -> Write[None]:
        game = ChatGame(game_id="g1", chat_id=GROUP, creator_id=ANN)
        notes = [{"kind": "announce", "key": "one"}, {"kind": "announce", "key": "two"}]
        return Write(game, None, output=Owed(["group"], [], notes))

    async def render_group(game: ChatGame) -> Rendered:
        return Rendered(f"lobby of {game.game_id}")

    async def render_note(place: Place, note: dict[str, Any]) -> Rendered:
        return Rendered(str(note["key"]))

    boxes = [worker_outbox(redis, bot, render_group) for _ in range(2)]
    await boxes[0].storage.update_table(Place(GROUP), change)
    owed = await boxes[0].storage.owed_output(Place(GROUP))
    for box in boxes:
        box.deliver(Place(GROUP), owed, render_note)
    await asyncio.wait_for(asyncio.gather(*(box.idle() for box in boxes)), 10)
    assert sorted(text for _, text in bot.sent) == ["lobby of g1", "one", "two"]
    game = await boxes[0].storage.load_table(Place(GROUP))
    assert game is not None and game.lobby_message_id is not None
    assert (await boxes[0].storage.owed_output(Place(GROUP))).complete
    for box in boxes:
        await box.close()


async def test_a_refresh_another_worker_already_showed_costs_no_call(redis: Redis) -> None:
    """A table's moves land on different workers, each queueing the same refreshes; the
    one that runs later finds the target settled by the first and sends nothing."""
    bot = CountingBot()

    def change(current: ChatGame | None) -> Write[None]:
        game = ChatGame(game_id="g1", chat_id=GROUP, creator_id=ANN, lobby_message_id=5)
        return Write(game, None, output=Owed(["group"], [], []))

    async def render_group(game: ChatGame) -> Rendered:
        return Rendered(f"lobby of {game.game_id} {game.chat_title}".strip())

    one, two = (worker_outbox(redis, bot, render_group) for _ in range(2))
    await one.storage.update_table(Place(GROUP), change)  # a move on the first worker
    await two.storage.update_table(Place(GROUP), change)  # the next one on the second
    table = await one.storage.load_table(Place(GROUP))
    assert table is not None
    one.refresh(table, owed=True)  # shows the second move already
    await asyncio.wait_for(one.idle(), 10)
    assert bot.edited == [(GROUP, 5, "lobby of g1")]
    two.refresh(table, owed=True)
    await asyncio.wait_for(two.idle(), 10)
    assert len(bot.edited) == 1  # before: the same edit again ("message is not modified")
    table.chat_title = "renamed"  # a change that owes nothing (no move)
    await two.storage.update_table(Place(GROUP), lambda _: Write(table, None))
    two.refresh(table)  # a refresh for another reason still runs
    await asyncio.wait_for(two.idle(), 10)
    assert bot.edited[1:] == [(GROUP, 5, "lobby of g1 renamed")]
    for box in (one, two):
        await box.close()


def _titled(title: str) -> Callable[[ChatGame | None], Write[None]]:
    """A change that shows as ``title`` in every message (the renderers below)."""

    def change(current: ChatGame | None) -> Write[None]:
        game = ChatGame(game_id="g1", chat_id=GROUP, creator_id=ANN, phase="playing")
        game.table_message_id = 5
        game.seats = [Seat(user_id=ANN, name="Ann", hand_message_id=7)]
        game.set_engine_state(new_game(Rules(), 2, seed=3))
        game.chat_title = title
        return Write(game, None)

    return change


async def _render_title(game: ChatGame, seat: int = 0) -> Rendered:
    return Rendered(f"shows {game.chat_title}")


@pytest.mark.parametrize("message", ["group", "hand"])
async def test_a_message_another_worker_edited_since_is_edited_back(
    redis: Redis, message: str
) -> None:
    """What a message shows is one fact for the fleet: a worker whose last edit showed A
    must not skip showing A again after another worker edited the message to B."""
    bot = CountingBot()
    one, two = (worker_outbox(redis, bot, _render_title, _render_title) for _ in range(2))

    async def show(box: Outbox, title: str) -> None:
        await box.storage.update_table(Place(GROUP), _titled(title))
        if message == "group":
            box._refresh_group(Place(GROUP))
        else:
            box.refresh_hand(Place(GROUP), ANN)
        await asyncio.wait_for(box.idle(), 10)

    where = (GROUP, 5) if message == "group" else (ANN, 7)
    for box, title in ((one, "A"), (two, "B"), (one, "A")):
        await show(box, title)
    assert bot.edited == [(*where, "shows A"), (*where, "shows B"), (*where, "shows A")]
    await show(two, "A")  # already on screen, as both workers know now
    assert len(bot.edited) == 3
    for box in (one, two):
        await box.close()


async def test_a_message_whose_worker_died_changing_it_is_edited_again(redis: Redis) -> None:
    """A worker killed between its claim and its close may have had an edit on its way:
    once the claim runs out, what the message shows is unknown, so the next refresh edits
    it even when it would show what the record last said."""
    bot = CountingBot()
    box = worker_outbox(redis, bot, _render_title, _render_title)
    await box.storage.update_table(Place(GROUP), _titled("A"))
    box.refresh_hand(Place(GROUP), ANN)
    await asyncio.wait_for(box.idle(), 10)
    dying = Storage(redis, finished_ttl=3600, idle_ttl=3600, output_lease=0.1)
    await dying.open_screen(Place(GROUP), hand_role(ANN))  # editing to "B", say; never closed
    assert not await box.shows_hand(Place(GROUP), ANN, 7, Rendered("shows A"))
    box.refresh_hand(Place(GROUP), ANN)  # waits for the claim (0.2 s), then edits
    await asyncio.wait_for(box.idle(), 10)
    assert bot.edited == [(ANN, 7, "shows A")] * 2
    assert await box.shows_hand(Place(GROUP), ANN, 7, Rendered("shows A"))
    await box.close()


@pytest.mark.parametrize("stored", [False, True])
async def test_a_new_hand_whose_worker_died_before_storing_it_is_deleted(
    redis: Redis, stored: bool
) -> None:
    """A worker notes a new message's id right after Telegram's answer, then stores it in
    the record. Killed in between, it leaves the noted id: the next refresh deletes that
    message (nobody would keep it up to date), unless the record did get it."""
    bot = DeletingBot()
    box = worker_outbox(redis, bot, _render_title, _render_title)
    await box.storage.update_table(Place(GROUP), _titled("A"))  # the record's hand: message 7
    dying = Storage(redis, finished_ttl=3600, idle_ttl=3600, output_lease=0.1)
    _, _, screen = await dying.open_screen(Place(GROUP), hand_role(ANN))
    await dying.note_sent(screen, 7 if stored else 55)  # then SIGKILL
    box.refresh_hand(Place(GROUP), ANN)
    await asyncio.wait_for(box.idle(), 10)
    assert bot.deleted == ([] if stored else [(ANN, 55)])
    assert bot.edited == [(ANN, 7, "shows A")]
    assert await redis.hget(f"durak:{{{GROUP}}}:screen", f"sent:hand:{ANN}") is None
    box.refresh_hand(Place(GROUP), ANN)  # nothing left to delete, nothing to edit
    await asyncio.wait_for(box.idle(), 10)
    assert (len(bot.deleted), len(bot.edited)) == (0 if stored else 1, 1)
    await box.close()


class SlowFirstEditBot(CountingBot):
    """The first edit takes long (a slow connection), so a later one could land first."""

    def __init__(self) -> None:
        super().__init__()
        self.slowed = False

    async def do_api_request(self, endpoint: str, api_kwargs: dict[str, Any]) -> Any:
        if not self.edited and not self.slowed:
            self.slowed = True
            await asyncio.sleep(0.3)
        return await super().do_api_request(endpoint, api_kwargs)


async def test_an_edit_that_lands_late_never_hides_a_newer_one(redis: Redis) -> None:
    """Two workers refresh one hand at once, for two moves: one edit at a time, each of
    the latest record, so the message ends showing the last move (before, the first
    worker's slow edit of the older move landed last, and nothing was owed any more)."""
    bot = SlowFirstEditBot()
    one, two = (worker_outbox(redis, bot, _render_title, _render_title) for _ in range(2))
    await one.storage.update_table(Place(GROUP), _titled("first"))
    one.refresh_hand(Place(GROUP), ANN)
    while not bot.slowed:  # the first edit is on its way
        await asyncio.sleep(0.01)
    await two.storage.update_table(Place(GROUP), _titled("second"))
    two.refresh_hand(Place(GROUP), ANN)
    await asyncio.wait_for(asyncio.gather(one.idle(), two.idle()), 10)
    assert bot.edited[-1] == (ANN, 7, "shows second")
    for box in (one, two):
        await box.close()


class DeletingBot(CountingBot):
    def __init__(self) -> None:
        super().__init__()
        self.deleted: list[tuple[int, int]] = []

    async def delete_message(self, chat_id: int, message_id: int) -> bool:
        self.deleted.append((chat_id, message_id))
        return True


class StepClock:
    def __init__(self) -> None:
        self.now = 1000.0

    def __call__(self) -> float:
        return self.now


@pytest.mark.parametrize(("waited", "reminder"), [(0.5, False), (2.5, False), (2.5, True)])
async def test_a_turn_notification_that_would_leave_late_is_an_edit(
    redis: Redis, waited: float, reminder: bool
) -> None:
    """When the bot is behind (the hand leaves more than NOTIFY_LATE after its move), a
    turn's notification is an edit of the hand in place: one call, not a send and a
    delete. The reminder before a timeout always comes as a new message."""
    bot, clock = DeletingBot(), StepClock()

    async def render_table(game: ChatGame) -> Rendered:
        return Rendered("table")

    async def render_hand(game: ChatGame, seat: int) -> Rendered:
        return Rendered(f"hand of seat {seat}")

    box = worker_outbox(redis, bot, render_table, render_hand, clock=clock)
    storage = box.storage
    state = new_game(Rules(), 2, seed=3)

    def move(current: ChatGame | None) -> Write[None]:
        game = ChatGame(game_id="g1", chat_id=GROUP, creator_id=ANN, phase="playing")
        game.seats = [
            Seat(user_id=ANN, name="Ann", hand_message_id=7),
            Seat(user_id=BOB, name="Bob", hand_message_id=8),
        ]
        game.set_engine_state(state)
        game.reminded_step = state.step if reminder else -1
        return Write(game, None, output=Owed([f"hand:{ANN}"], [ANN], []))

    await storage.update_table(Place(GROUP), move)
    box.refresh_hand(Place(GROUP), ANN, notify=True)
    clock.now += waited  # before the job runs: how long it waited for its turn
    await asyncio.wait_for(box.idle(), 10)
    if waited > NOTIFY_LATE and not reminder:
        assert (bot.sent, bot.deleted) == ([], [])
        assert bot.edited == [(ANN, 7, "hand of seat 0")]
        assert box.stats.quieted == 1
    else:
        assert bot.sent == [(ANN, "hand of seat 0")] and bot.deleted == [(ANN, 7)]
        assert bot.edited == [] and box.stats.quieted == 0
    owed = await storage.owed_output(Place(GROUP))
    assert ANN not in owed.notify and f"hand:{ANN}" not in owed.targets  # nobody sends it again
    game = await storage.load_table(Place(GROUP))
    assert game is not None and (game.seats[0].hand_message_id == 7) == (bot.sent == [])
    await box.close()
