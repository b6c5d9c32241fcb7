"""The Mini App mode of ``bench/bot_load.py``: both players of each table play through the
app (event stream + ``POST /api/move``) instead of the inline keyboard.

Measures, per move, the time from sending it to the moment *every* viewer of that table
got the event of the new step (the mover included), and counts Bot API calls per move.
"""

from __future__ import annotations

import asyncio
import contextlib
import json
import os
import random
import time
from dataclasses import dataclass, field
from typing import Any

import aiohttp

from bot.webapp.initdata import make_init_data

ORDER = ("pass", "beat", "attack", "take", "transfer", "swap")


@dataclass
class AppResults:
    moves: int = 0
    conflicts: int = 0
    errors: int = 0
    games_done: int = 0
    posts: list[float] = field(default_factory=list)
    """Per move: send -> the POST's answer (the mover's new state)."""
    fanout: list[float] = field(default_factory=list)
    """Per move: send -> the last of the table's viewers has the new step."""
    sent_at: dict[tuple[int, int], float] = field(default_factory=dict)
    seen_by: dict[tuple[int, int], int] = field(default_factory=dict)


def choose(legal: list[str], rng: random.Random) -> str:
    for verb in ORDER:
        options = [a for a in legal if a.split()[0] == verb]
        if options:
            return rng.choice(options)
    return legal[0]


class AppTable:
    """Two players of one group, each with its own event stream (each on the app's
    address in ``bases``: in a fleet, the two may talk to different workers)."""

    def __init__(
        self,
        http: aiohttp.ClientSession,
        bases: dict[int, str],
        token: str,
        chat: int,
        game: str,
        users: tuple[int, int],
        results: AppResults,
        rng: random.Random,
        think: tuple[float, float],
    ) -> None:
        self.http, self.bases, self.chat, self.game = http, bases, chat, game
        self.users, self.results, self.rng, self.think = users, results, rng, think
        now = int(time.time())
        self.init = {u: make_init_data(token, u, f"U{u}", auth_date=now) for u in users}
        self.states: dict[int, dict[str, Any]] = {}
        self.changed = asyncio.Event()
        self.connected = asyncio.Event()

    async def stream(self, user: int, stop_at: float) -> None:
        params = {"game": self.game, "init_data": self.init[user]}
        timeout = aiohttp.ClientTimeout(total=None, sock_read=None)
        url = f"{self.bases[user]}/api/events"
        async with self.http.get(url, params=params, timeout=timeout) as r:
            r.raise_for_status()
            async for raw in r.content:
                line = raw.decode().rstrip("\n")
                if not line.startswith("data: "):
                    continue
                state = json.loads(line[len("data: ") :])
                self.seen(user, state)
                if time.monotonic() > stop_at or state.get("phase") != "playing":
                    return

    def seen(self, user: int, state: dict[str, Any]) -> None:
        self.states[user] = state
        if len(self.states) == len(self.users):
            self.connected.set()
        key = (self.chat, int(state.get("step", -1)))
        sent = self.results.sent_at.get(key)
        if sent is not None:
            count = self.results.seen_by.get(key, 0) + 1
            self.results.seen_by[key] = count
            if count == len(self.users):
                self.results.fanout.append(time.monotonic() - sent)
        self.changed.set()

    async def play(self, stop_at: float) -> None:
        while time.monotonic() < stop_at:
            mover = next((u for u, s in self.states.items() if s.get("legal")), None)
            if any(s.get("phase") != "playing" for s in self.states.values()):
                self.results.games_done += 1
                return
            if mover is None:
                self.changed.clear()
                with contextlib.suppress(TimeoutError):
                    await asyncio.wait_for(
                        self.changed.wait(), max(0.05, stop_at - time.monotonic())
                    )
                continue
            state = self.states[mover]
            await asyncio.sleep(self.rng.uniform(*self.think))
            if self.states[mover]["step"] != state["step"]:
                continue
            action = choose(state["legal"], self.rng)
            sent = self.results.sent_at[(self.chat, state["step"] + 1)] = time.monotonic()
            body = {"game": self.game, "action": action, "step": state["step"]}
            headers = {"X-Telegram-Init-Data": self.init[mover]}
            url = f"{self.bases[mover]}/api/move"
            async with self.http.post(url, json=body, headers=headers) as r:
                self.results.posts.append(time.monotonic() - sent)
                if r.status == 200:
                    self.results.moves += 1
                    self.seen_reply(mover, await r.json())
                elif r.status == 409:
                    self.results.conflicts += 1
                else:
                    self.results.errors += 1

    def seen_reply(self, user: int, state: dict[str, Any]) -> None:
        # The reply is newer than or as new as the stream's last event for this user.
        if state.get("step", -1) >= self.states[user].get("step", -1):
            self.states[user] = state

    def connect(self, stop_at: float) -> list[asyncio.Task[None]]:
        return [asyncio.create_task(self.stream(u, stop_at)) for u in self.users]


async def measure(
    emu: Any,
    tables: list[tuple[int, str, tuple[int, int]]],
    bases: list[str],
    token: str,
    seconds: float,
    think: tuple[float, float],
    bot_pids: list[int],
) -> None:
    """Open every player's app, let the hands collapse, then play for ``seconds``. With
    several ``bases`` (one per worker, as a reverse proxy would spread them), the two
    players of table i use bases i and i + 1: every move reaches one of them through
    another worker."""
    results = AppResults()
    rng = random.Random(1)
    connector = aiohttp.TCPConnector(limit=0)
    async with aiohttp.ClientSession(connector=connector) as http:
        apps = [
            AppTable(
                http,
                {user: bases[(i + j) % len(bases)] for j, user in enumerate(users)},
                token,
                chat,
                game,
                users,
                results,
                rng,
                think,
            )
            for i, (chat, game, users) in enumerate(tables)
        ]
        stop_at = time.monotonic() + 3600
        streams = [task for app in apps for task in app.connect(stop_at)]
        try:
            await asyncio.wait_for(asyncio.gather(*(a.connected.wait() for a in apps)), 120)
            # The hands collapse to "Open table" (not measured): wait for every one, then
            # for the bot's output to go quiet, so no edit of the collapse is counted.
            users = [u for _, _, pair in tables for u in pair]
            await emu.wait_for(lambda: all(collapsed(emu, u) for u in users), 300)
            await quiet(emu)
            print(f"hands collapsed; measuring {seconds:.0f}s", flush=True)
            emu.reset_stats()
            cpu_before = sum(cpu_seconds(pid) for pid in bot_pids)
            bench_before = cpu_seconds(os.getpid())
            started = time.monotonic()
            stop_at = started + seconds
            await asyncio.gather(*(app.play(stop_at) for app in apps))
            elapsed = time.monotonic() - started
            bot_cpu = sum(cpu_seconds(pid) for pid in bot_pids) - cpu_before
            bench_cpu = cpu_seconds(os.getpid()) - bench_before
        finally:
            for task in streams:
                task.cancel()
            for task in streams:
                with contextlib.suppress(asyncio.CancelledError, Exception):
                    await task
    stats = emu.stats
    calls = stats.total - stats.calls.get("getUpdates", 0)
    private = sum(n for chat, n in stats.chat_calls.items() if chat > 0)
    fan = results.fanout
    print(
        f"app mode: {len(tables)} tables, {2 * len(tables)} event streams, "
        f"{len(bases)} app server(s), {elapsed:.1f}s"
    )
    print(
        f"moves: {results.moves} ({results.moves / elapsed:.1f}/s); conflicts (409): "
        f"{results.conflicts}; errors: {results.errors}; games finished: {results.games_done}"
    )
    print(
        f"move -> every viewer's event: p50 {percentile(fan, 0.5) * 1000:.1f} ms, "
        f"p99 {percentile(fan, 0.99) * 1000:.1f} ms, max {max(fan, default=0) * 1000:.1f} ms "
        f"({len(fan)} moves)"
    )
    posts = results.posts
    print(
        f"POST /api/move answered: p50 {percentile(posts, 0.5) * 1000:.1f} ms, "
        f"p99 {percentile(posts, 0.99) * 1000:.1f} ms"
    )
    print(
        f"Bot API calls (without getUpdates): {calls}; per move: "
        f"{calls / max(1, results.moves):.2f}; by method: "
        f"{dict(sorted((k, v) for k, v in stats.calls.items() if k != 'getUpdates'))}; "
        f"to private chats: {private}, to groups: {calls - private}"
    )
    print(f"429 responses: {stats.too_many_requests}")
    print(
        f"bench process CPU (emulator + players) during the run: {bench_cpu:.1f}s; "
        f"load average {os.getloadavg()[0]:.1f} on {os.cpu_count()} cores"
    )
    print(
        f"bot process CPU (all workers): {bot_cpu:.1f}s in {elapsed:.1f}s "
        f"({bot_cpu / max(1, results.moves) * 1000:.1f} ms per move, all work included)"
    )


def collapsed(emu: Any, user: int) -> bool:
    """The user's hand message shows only the app's buttons (no move to keep up to date)."""
    hands = [m for m in emu.messages(user) if m.from_bot and m.inline_keyboard]
    if not hands:
        return False
    buttons = [b for row in hands[-1].inline_keyboard for b in row]
    return any("web_app" in b for b in buttons) and all(
        str(b.get("callback_data", ":w")).endswith(":w") for b in buttons
    )


async def quiet(emu: Any, for_seconds: float = 1.0, most: float = 60.0) -> None:
    """Until no Bot API call but getUpdates came for ``for_seconds`` (at most ``most``)."""
    deadline = time.monotonic() + most

    def calls() -> int:
        return int(emu.stats.total - emu.stats.calls.get("getUpdates", 0))

    last, since = calls(), time.monotonic()
    while time.monotonic() < deadline and time.monotonic() - since < for_seconds:
        await asyncio.sleep(0.1)  # polling the emulator's counters: no event to await
        if calls() != last:
            last, since = calls(), time.monotonic()


def cpu_seconds(pid: int) -> float:
    """User + system CPU time of a process so far (Linux)."""
    with open(f"/proc/{pid}/stat") as f:
        fields = f.read().rsplit(")", 1)[1].split()
    ticks = os.sysconf("SC_CLK_TCK")
    return (int(fields[11]) + int(fields[12])) / ticks


def percentile(values: list[float], q: float) -> float:
    ordered = sorted(values)
    if not ordered:
        return float("nan")
    return ordered[min(len(ordered) - 1, int(len(ordered) * q))]
