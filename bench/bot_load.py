"""Load benchmark of the bot: K groups playing at once against the Bot API emulator.

The bot runs as its real entry point (``python -m bot``) in a child process, with a
real redis-server and the emulator's Telegram flood limits switched on; this process
runs the emulator and the simulated players. Two humans per group (``--players`` up
to 6; the Mini App's players two only), no computer seats, so AI thinking is excluded.
Each player waits a human-like moment, then presses a button that is legal for the
current state.

    .venv/bin/python bench/bot_load.py --groups 200 --seconds 60

Reports: handled updates per second, p50/p99 time from a tap to the bot's answer,
Bot API calls per game move, and 429s. With ``--app`` the players use the Mini App
instead (see ``bench/app_players.py``).

A fleet: ``--workers 3`` runs three webhook workers behind a front that spreads the
emulator's deliveries over them (tests/support/front.py), pacing shared in Redis;
``--cluster`` puts them on a Redis Cluster (three masters with a replica each,
tests/support/cluster.py). ``--webhook`` runs a single worker the same way, for
comparison. Then it also reports CPU per worker and pacing calls per Bot API send.

    .venv/bin/python bench/bot_load.py --workers 3 --cluster
    .venv/bin/python bench/bot_load.py --workers 1 --webhook
"""

from __future__ import annotations

import argparse
import asyncio
import contextlib
import os
import random
import shutil
import signal
import socket
import statistics
import subprocess
import sys
import tempfile
import time
from collections.abc import AsyncIterator, Iterator
from dataclasses import dataclass, field
from pathlib import Path
from typing import IO, Any

from redis.asyncio import Redis
from redis.asyncio.cluster import RedisCluster

from sandbox.emulator import BotApiEmulator, RateLimits
from sandbox.emulator.events import Subscription

# The tests' helpers (a Redis Cluster, the webhook front and its workers).
sys.path.insert(0, str(Path(__file__).resolve().parents[1] / "tests"))
from support.cluster import redis_cluster
from support.front import Front, Worker, start_worker, stop_workers, wait_ready

TOKEN = "7770001:bench-token"
BOT_ID = int(TOKEN.split(":")[0])
MOVE_TAKEN = "✓ "
"""How the answer to a taken move starts (the bot says the move to its maker)."""
BOT_USERNAME = "durak_bench_bot"


def free_port() -> int:
    with socket.socket() as s:
        s.bind(("127.0.0.1", 0))
        return int(s.getsockname()[1])


@dataclass
class Results:
    latencies: list[float] = field(default_factory=list)
    started: list[float] = field(default_factory=list)
    """When each measured tap was made (monotonic), in the order of ``latencies``."""
    moves: int = 0
    stale: int = 0
    games_done: int = 0
    unanswered: int = 0
    toasts: dict[str, int] = field(default_factory=dict)


IN_GROUP: dict[int, int] = {}
"""Players with no private chat (``--group-hands``) -> the group they play from, by the
buttons of their ephemeral hand there."""


def hand_buttons(emu: BotApiEmulator, user: int) -> list[tuple[int, int, str]]:
    """Move buttons in the user's private chat as (edits of the message so far, message
    id, data): read in place, no copies, it runs often. A hand keeps the step its buttons
    were made at while they stay the same, so what tells a keyboard the player has not
    pressed yet is the message's edit count, not the step. A player who plays from the
    group: the buttons of their ephemeral hands there (ids are ephemeral message ids)."""
    found: list[tuple[int, int, str]] = []
    if user in IN_GROUP:
        for message in emu.ephemerals_of(user, IN_GROUP[user]):
            for row in message.inline_keyboard:
                for button in row:
                    data = button.get("callback_data")
                    if isinstance(data, str) and data.startswith("h:"):
                        mid = message.ephemeral_message_id or 0
                        found.append((message.edit_count, mid, data))
        return found
    chat = emu.chat(user)
    if chat is None:
        return found
    for message in chat.messages.values():
        if message.deleted:
            continue
        for row in message.inline_keyboard:
            for button in row:
                data = button.get("callback_data")
                if isinstance(data, str) and data.startswith("h:"):
                    found.append((message.edit_count, message.message_id, data))
    return found


PREFERENCE = "pBatb"


async def player_pair(
    emu: BotApiEmulator,
    group: int,
    users: tuple[int, ...],
    results: Results,
    stop_at: float,
    rng: random.Random,
    think: tuple[float, float],
) -> None:
    # Woken only by changes in this pair's own chats: 200 pairs re-checking on every
    # change of any chat kept the emulator's loop so busy that it delayed the bot's calls.
    with emu.subscribe([group, *users]) as changes:
        await play_pair(emu, group, users, results, stop_at, rng, think, changes)


async def play_pair(
    emu: BotApiEmulator,
    group: int,
    users: tuple[int, ...],
    results: Results,
    stop_at: float,
    rng: random.Random,
    think: tuple[float, float],
    changes: Subscription,
) -> None:
    pressed: set[tuple[int, int, int]] = set()
    """(user, message id, its edit count) of every keyboard pressed on: a player acts
    once on each version of their keyboard, then waits for the next."""
    while time.monotonic() < stop_at:

        def ready() -> tuple[int, int, int, str] | None:
            best = None
            for user in users:
                for edits, mid, data in hand_buttons(emu, user):
                    op = data.split(":")[4][0]
                    if op not in PREFERENCE or (user, mid, edits) in pressed:
                        continue
                    key = PREFERENCE.index(op)
                    if best is None or key < best[0]:
                        best = (key, user, mid, data, edits)
            if best is None:
                return None
            return best[1], best[2], best[4], best[3]

        found = ready()
        while found is None:
            try:
                await changes.get(timeout=max(0.1, stop_at - time.monotonic()))
            except TimeoutError:
                return
            found = ready()
        user, mid, edits, data = found
        pressed.add((user, mid, edits))
        chat = emu.chat(group)
        if chat is not None and any("Game over" in m.text for m in chat.messages.values()):
            results.games_done += 1
            return
        await asyncio.sleep(rng.uniform(*think))
        started = time.monotonic()
        try:
            if user in IN_GROUP:
                handle = await emu.user_presses_ephemeral(user, group, mid, data=data)
            else:
                handle = await emu.user_presses(user, user, mid, data=data)
        except Exception:
            continue  # the message changed under us (deleted / edited): look again
        try:
            answer = await handle.answer(timeout=60)
        except TimeoutError:
            results.unanswered += 1
            continue
        results.latencies.append(time.monotonic() - started)
        results.started.append(started)
        # A move the bot made is answered with no toast (older code) or with the move
        # said to its maker ("✓ You beat …"); any other toast refused the tap.
        if answer.text and not answer.text.startswith(MOVE_TAKEN):
            results.stale += 1
            results.toasts[answer.text] = results.toasts.get(answer.text, 0) + 1
        elif data.split(":")[4][0] != "b":
            results.moves += 1


async def set_up(
    emu: BotApiEmulator, groups: int, players: int = 2, topics: int = 0, group_hands: int = 0
) -> list[tuple[int, tuple[int, ...]]]:
    """Every group seats ``players`` humans; the first ``topics`` groups are forums whose
    game runs in a topic of their own ("Cards"), not in General; in the last
    ``group_hands`` groups (the bot an admin there) the last player never opens a private
    chat and plays from the group ("🃏 My hand", ``IN_GROUP``)."""
    tables, threads = [], {}
    for g in range(groups):
        chat = -1_000_000 - g
        users = tuple(10_000 + 8 * g + k for k in range(players))
        for k, user in enumerate(users):
            emu.add_user(user, f"{'ABCDEF'[k]}{g}")
        forum = g < topics
        admins = [BOT_ID] if g >= groups - group_hands else []
        emu.add_group(
            chat, f"Bench {g}", members=list(users), admins=admins, creator=users[0], forum=forum
        )
        if admins:
            IN_GROUP[users[-1]] = chat
        if forum:
            threads[chat] = emu.admin_creates_topic(users[0], chat, "Cards").id
        # Writing to the bot opens the private chat (the bot answers nothing).
        for user in users:
            if user not in IN_GROUP:
                await emu.user_sends(user, user, "hello")
        tables.append((chat, users))
    for chat, users in tables:
        await emu.user_sends(users[0], chat, "/newgame", message_thread_id=threads.get(chat))
    for chat, users in tables:

        def lobby_of(chat: int = chat) -> int | None:
            return next((m.message_id for m in emu.messages(chat) if m.from_bot), None)

        lobby_id = await emu.wait_for(lobby_of, 120)
        for user in users[1:]:
            await (await emu.user_presses(user, chat, lobby_id, text="Join")).answer()
    for chat, users in tables:

        def joined(chat: int = chat) -> int | None:
            for m in emu.messages(chat):
                if m.from_bot and f"{players}. {'ABCDEF'[players - 1]}" in m.text:
                    return m.message_id
            return None

        mid = await emu.wait_for(joined, 120)
        await (await emu.user_presses(users[0], chat, mid, text="Start")).answer()
    for chat, users in tables:
        for user in (u for u in users if u in IN_GROUP):
            table = await emu.wait_for(lambda chat=chat: table_message(emu, chat), 120)
            await (await emu.user_presses(user, chat, table, text="🃏 My hand")).answer()
    return tables


def table_message(emu: BotApiEmulator, chat: int) -> int | None:
    """The group's table message once it offers "🃏 My hand"."""
    for m in emu.messages(chat):
        if m.from_bot and any(b.get("text") == "🃏 My hand" for r in m.inline_keyboard for b in r):
            return m.message_id
    return None


@contextlib.contextmanager
def redis_backend(cluster: bool) -> Iterator[dict[str, str]]:
    """A throwaway Redis (or Redis Cluster); yields the bot's REDIS_* settings."""
    if cluster:
        with tempfile.TemporaryDirectory() as folder, redis_cluster(Path(folder)) as running:
            yield {"REDIS_URL": running.url, "REDIS_CLUSTER": "true"}
        return
    redis_bin = shutil.which("redis-server")
    if redis_bin is None:
        sys.exit("redis-server is required")
    port = free_port()
    redis = subprocess.Popen(
        [redis_bin, "--port", str(port), "--bind", "127.0.0.1", "--save", "", "--appendonly", "no"],
        stdout=subprocess.DEVNULL,
    )
    try:
        yield {"REDIS_URL": f"redis://127.0.0.1:{port}/0"}
    finally:
        redis.terminate()
        redis.wait(5)


def cpu_seconds(pid: int) -> float:
    """User + system CPU time of a process so far (Linux /proc)."""
    fields = Path(f"/proc/{pid}/stat").read_text().rsplit(")", 1)[1].split()
    return (int(fields[11]) + int(fields[12])) / os.sysconf("SC_CLK_TCK")


async def redis_commands(redis_env: dict[str, str]) -> dict[str, int]:
    """Commands run so far by name, over every master (INFO commandstats)."""
    url = redis_env["REDIS_URL"]
    per_node: list[dict[str, Any]]
    if redis_env.get("REDIS_CLUSTER") == "true":
        cluster = RedisCluster.from_url(url)
        try:
            stats = await cluster.info("commandstats", target_nodes=RedisCluster.PRIMARIES)
            per_node = list(stats.values())
        finally:
            await cluster.aclose()
    else:
        client = Redis.from_url(url)
        try:
            per_node = [await client.info("commandstats")]
        finally:
            await client.aclose()
    counts: dict[str, int] = {}
    for node in per_node:
        for name, stat in node.items():
            if name.startswith("cmdstat_") and isinstance(stat, dict):
                command = name.removeprefix("cmdstat_")
                counts[command] = counts.get(command, 0) + int(stat.get("calls", 0))
    return counts


@contextlib.asynccontextmanager
async def bot_processes(
    args: argparse.Namespace,
    env: dict[str, str],
    emu: BotApiEmulator,
    app_ports: list[int],
) -> AsyncIterator[list[int]]:
    """The bot: one polling process, or ``--workers`` webhook workers behind a front
    (worker i serves the Mini App on ``app_ports[i]`` when given). Yields their pids;
    stops them at the end and prints their latency summaries."""
    logs: list[IO[str]] = []
    try:
        if args.workers == 1 and not args.webhook:
            profile = ["-m", "cProfile", "-o", args.profile] if args.profile else []
            logs.append(open(args.bot_log, "w"))  # noqa: SIM115 - closed in finally
            bot = subprocess.Popen(
                [sys.executable, *profile, "-m", "bot"], env=env, stdout=logs[0], stderr=logs[0]
            )
            try:
                yield [bot.pid]
            finally:
                bot.send_signal(signal.SIGINT)
                with contextlib.suppress(subprocess.TimeoutExpired):
                    await asyncio.to_thread(bot.wait, 15)  # the emulator keeps serving
                if bot.poll() is None:
                    bot.kill()
            return
        front = Front()
        await front.start()
        workers: list[Worker] = []
        try:
            for i in range(args.workers):
                logs.append(open(f"{args.bot_log}.{i}", "w"))  # noqa: SIM115 - closed below
                # Each worker serves the Mini App on its own port (a reverse proxy's backends).
                own = env | {"WEBAPP_PORT": str(app_ports[i])} if app_ports else env
                workers.append(await start_worker(front, Path.cwd(), own, log=logs[-1]))
            await wait_ready(workers, timeout=120)
            yield [w.process.pid for w in workers]
            served = sorted(front.served.values())
            print(f"updates per worker (front): {served}")
        finally:
            await stop_workers(workers)
            await front.stop()
    finally:
        for log in logs:
            log.close()
        for log in logs:
            with open(log.name) as lines:
                for line in lines:
                    if "tap handler to answer" in line or "outbox at exit" in line:
                        print("bot side:", line.split(": ", 1)[-1].strip())


async def run(args: argparse.Namespace) -> None:
    with redis_backend(args.cluster) as redis_env:
        await measure_bot(args, redis_env)


async def measure_bot(args: argparse.Namespace, redis_env: dict[str, str]) -> None:
    emu = BotApiEmulator(rate_limits=RateLimits())
    await emu.start()
    emu.add_bot(TOKEN, username=BOT_USERNAME)
    env = {
        **{k: v for k, v in os.environ.items() if not k.startswith(("TELEGRAM_", "REDIS_"))},
        **redis_env,
        "TELEGRAM_BOT_TOKEN": TOKEN,
        "TELEGRAM_API_URL": emu.url,
        "TURN_TIMEOUT": "600",
        "LOG_LEVEL": "INFO",
    }
    app_ports = [free_port() for _ in range(args.workers)] if args.app else []
    if args.app:
        # Buttons open the first worker's address; players use every worker's (see measure).
        first = app_ports[0]
        env |= {"WEBAPP_URL": f"http://127.0.0.1:{first}", "WEBAPP_PORT": str(first)}
    try:
        async with bot_processes(args, env, emu, app_ports) as pids:
            t0 = time.monotonic()
            tables = await set_up(emu, args.groups, args.players, args.topics, args.group_hands)
            print(f"set up {len(tables)} groups in {time.monotonic() - t0:.1f}s", flush=True)
            # Let the deal's messages go out before measuring.
            await emu.wait_for(
                lambda: all(any(hand_buttons(emu, u) for u in users) for _, users in tables),
                300,
            )
            if args.app:
                from app_players import measure  # bench/ is on the path

                games = [
                    (c, (hand_buttons(emu, a) or hand_buttons(emu, b))[0][2].split(":")[2], (a, b))
                    for c, (a, b, *_) in tables
                ]
                think = (args.think_min, args.think_max)
                bases = [f"http://127.0.0.1:{port}" for port in app_ports]
                await measure(emu, games, bases, TOKEN, args.seconds, think, pids)
                return
            await play_and_report(args, emu, tables, pids, redis_env)
    finally:
        await emu.stop()


async def play_and_report(
    args: argparse.Namespace,
    emu: BotApiEmulator,
    tables: list[tuple[int, tuple[int, ...]]],
    pids: list[int],
    redis_env: dict[str, str],
) -> None:
    emu.reset_stats()
    results = Results()
    rng = random.Random(1)
    cpu_before = [cpu_seconds(pid) for pid in pids]
    commands_before = await redis_commands(redis_env)
    stop_at = time.monotonic() + args.seconds
    start = time.monotonic()
    await asyncio.gather(
        *(
            player_pair(emu, chat, users, results, stop_at, rng, (args.think_min, args.think_max))
            for chat, users in tables
        )
    )
    elapsed = time.monotonic() - start
    cpu = [cpu_seconds(pid) - before for pid, before in zip(pids, cpu_before, strict=True)]
    commands_after = await redis_commands(redis_env)
    commands = {
        k: v - commands_before.get(k, 0)
        for k, v in commands_after.items()
        if k != "info" and v > commands_before.get(k, 0)
    }
    paced = commands.get("evalsha", 0)
    stats = emu.stats
    lat = sorted(results.latencies)
    calls = stats.total - stats.calls.get("getUpdates", 0)
    p50 = statistics.median(lat) * 1000 if lat else float("nan")
    p99 = lat[min(len(lat) - 1, int(len(lat) * 0.99))] * 1000 if lat else float("nan")
    backend = "Redis Cluster" if args.cluster else "one Redis"
    mode = "webhook" if args.workers > 1 or args.webhook else "polling"
    topics = f" ({args.topics} in forum topics)" if args.topics else ""
    if args.group_hands:
        topics += f" ({args.group_hands} with a player playing from the group)"
    print(f"groups: {args.groups}{topics}, {args.workers} worker(s), {mode}, {backend}")
    print(f"measured {elapsed:.1f}s")
    print(
        f"updates handled: {len(lat)} ({len(lat) / elapsed:.1f}/s); moves: "
        f"{results.moves}; stale taps: {results.stale}; games finished: "
        f"{results.games_done}"
    )
    common = sorted(results.toasts.items(), key=lambda kv: -kv[1])[:3]
    print("most common toasts: " + "; ".join(f"{n} x {text!r}" for text, n in common))
    print(f"tap -> answer: p50 {p50:.1f} ms, p99 {p99:.1f} ms ({len(lat)} taps)")
    # Every table's first tap falls within the first think time: a wave no real bot sees
    # (its tables start at different moments). Shown apart, and the steady state without it.
    warm = start + args.warmup
    for label, part in (
        (
            f"after the first {args.warmup:.0f} s",
            [x for x, t in zip(results.latencies, results.started, strict=True) if t >= warm],
        ),
        (
            f"in the first {args.warmup:.0f} s",
            [x for x, t in zip(results.latencies, results.started, strict=True) if t < warm],
        ),
    ):
        part.sort()
        if part:
            print(
                f"  {label}: p50 {statistics.median(part) * 1000:.1f} ms, "
                f"p99 {part[min(len(part) - 1, int(len(part) * 0.99))] * 1000:.1f} ms "
                f"({len(part)} taps)"
            )
    print(
        f"Bot API calls (without getUpdates): {calls}; per move: "
        f"{calls / max(1, results.moves):.2f}; by method: "
        f"{dict(sorted((k, v) for k, v in stats.calls.items() if k != 'getUpdates'))}"
    )
    to_groups = sum(n for (chat, method), n in stats.chat_method_calls.items() if chat < 0)
    to_private = sum(
        n
        for (chat, method), n in stats.chat_method_calls.items()
        if chat > 0 and method != "answerCallbackQuery"
    )
    moves = max(1, results.moves)
    print(
        f"per move: {to_groups / moves:.2f} group messages and edits, "
        f"{to_private / moves:.2f} private ones (hands), "
        f"{stats.calls.get('answerCallbackQuery', 0) / moves:.2f} answers"
    )
    sends = sum(
        stats.calls.get(m, 0) for m in ("sendMessage", "editMessageText", "editMessageReplyMarkup")
    )
    print(
        f"Lua script calls (pacing, leases, marks): {paced} "
        f"({paced / max(1, sends):.2f} per send/edit)"
    )
    top = sorted(commands.items(), key=lambda kv: -kv[1])[:12]
    print(
        f"Redis commands per move: {sum(commands.values()) / moves:.1f}; top: "
        + ", ".join(f"{k} {v / moves:.1f}" for k, v in top)
    )
    print(
        "CPU per worker: "
        + ", ".join(f"{c:.1f}s ({100 * c / elapsed:.0f}%)" for c in cpu)
        + f"; load average {os.getloadavg()[0]:.2f}"
    )
    import resource

    usage = resource.getrusage(resource.RUSAGE_SELF)
    print(f"bench process (emulator + players) CPU: {usage.ru_utime + usage.ru_stime:.1f}s")
    print(f"429 responses: {stats.too_many_requests}; unanswered taps: {results.unanswered}")
    # A 400 here is mostly "message is not modified": an edit that showed nothing new.
    print(f"Bot API errors by code: {dict(sorted(stats.errors.items()))}")


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.split("\n")[0])
    parser.add_argument("--groups", type=int, default=200)
    parser.add_argument("--seconds", type=float, default=60.0)
    parser.add_argument("--think-min", type=float, default=1.0)
    parser.add_argument("--think-max", type=float, default=3.0)
    parser.add_argument(
        "--warmup",
        type=float,
        default=10.0,
        help="seconds whose taps are also reported apart (every table's first tap)",
    )
    parser.add_argument("--bot-log", default="/tmp/durak_bench_bot.log")
    parser.add_argument("--profile", help="write a cProfile of the bot process here")
    parser.add_argument("--app", action="store_true", help="players use the Mini App")
    parser.add_argument(
        "--players", type=int, default=2, choices=range(2, 7), help="humans per group (2-6)"
    )
    parser.add_argument("--topics", type=int, default=0, help="groups whose game is in a topic")
    parser.add_argument(
        "--group-hands", type=int, default=0, help="groups with a player playing from the group"
    )
    parser.add_argument("--workers", type=int, default=1, help="webhook workers (fleet)")
    parser.add_argument("--webhook", action="store_true", help="one worker, as a fleet does")
    parser.add_argument("--cluster", action="store_true", help="on a Redis Cluster")
    args = parser.parse_args()
    if args.app and args.players != 2:
        parser.error("--app plays two humans per group")
    asyncio.run(run(args))


if __name__ == "__main__":
    main()
