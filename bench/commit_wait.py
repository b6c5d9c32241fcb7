"""Cost of REDIS_WAIT_REPLICAS: a game's commit with and without ``WAIT 1 <ms>``.

Starts a real master and a replica of it (``redis-server --replicaof``) on loopback and
stores a running game's record through ``Storage.update_table`` (as every move does),
``--commits`` times per chat in ``--chats`` concurrent chats, first without, then with
the wait. Reports p50/p99/max per commit.

    .venv/bin/python bench/commit_wait.py --commits 2000 --chats 1
    .venv/bin/python bench/commit_wait.py --commits 200 --chats 50
"""

from __future__ import annotations

import argparse
import asyncio
import shutil
import socket
import statistics
import subprocess
import tempfile
import time

from redis.asyncio import BlockingConnectionPool, Redis

from bot.domain.place import Place
from bot.domain.records import ChatGame, Seat
from bot.store.replica_wait import ReplicaWait
from bot.store.storage import Storage, Write
from engine import Rules, new_game


def free_port() -> int:
    with socket.socket() as s:
        s.bind(("127.0.0.1", 0))
        return int(s.getsockname()[1])


def server(port: int, *extra: str) -> subprocess.Popen[bytes]:
    binary = shutil.which("redis-server")
    if binary is None:
        raise SystemExit("redis-server is required")
    return subprocess.Popen(
        [binary, "--port", str(port), "--bind", "127.0.0.1", "--save", "", *extra],
        stdout=subprocess.DEVNULL,
    )


def game(chat_id: int, step: int) -> ChatGame:
    return ChatGame(
        game_id=f"bench-{chat_id}",
        chat_id=chat_id,
        creator_id=1,
        phase="playing",
        seats=[Seat(user_id=1, name="Ann"), Seat(user_id=2, name="Bob")],
        state=new_game(Rules(), 2, seed=chat_id).to_dict(),
        last_seen_step=step,
    )


async def commits(storage: Storage, chat_id: int, count: int, out: list[float]) -> None:
    record = game(chat_id, 0)
    for step in range(count):
        record.last_seen_step = step

        def change(_: ChatGame | None) -> Write[None]:
            return Write(record, None)

        started = time.perf_counter()
        await storage.update_table(Place(chat_id), change)
        out.append(time.perf_counter() - started)


def report(label: str, times: list[float], elapsed: float) -> None:
    ms = sorted(t * 1000 for t in times)
    p99 = ms[min(len(ms) - 1, int(len(ms) * 0.99))]
    print(
        f"{label}: {len(ms)} commits in {elapsed:.2f}s ({len(ms) / elapsed:.0f}/s); "
        f"p50 {statistics.median(ms):.3f} ms, p99 {p99:.3f} ms, max {ms[-1]:.3f} ms"
    )


async def run(args: argparse.Namespace) -> None:
    master_port, replica_port = free_port(), free_port()
    folder = tempfile.mkdtemp(prefix="commit-wait-")  # the replica's copy of the data
    master_proc = server(master_port, "--repl-diskless-sync-delay", "0", "--dir", folder)
    replica_proc = server(
        replica_port, "--replicaof", "127.0.0.1", str(master_port), "--dir", folder
    )
    # As the bot's pool: a burst waits for a free connection (64, the bot's default).
    master = Redis(connection_pool=BlockingConnectionPool(port=master_port, max_connections=64))
    try:
        deadline = time.monotonic() + 15
        while True:
            try:
                info = await master.info("replication")
                if info.get("connected_slaves") and "online" in str(info.get("slave0")):
                    break
            except Exception:  # still starting
                pass
            if time.monotonic() > deadline:
                raise SystemExit("the replica did not link")
            await asyncio.sleep(0.05)
        for label, wait in (
            ("no WAIT", None),
            (f"WAIT 1 {args.timeout_ms}", ReplicaWait(master, 1, args.timeout_ms)),
            ("no WAIT (again)", None),
        ):
            storage = Storage(master, finished_ttl=600, idle_ttl=600, after_commit=wait)
            times: list[float] = []
            started = time.perf_counter()
            await asyncio.gather(
                *(commits(storage, -1_000_000 - c, args.commits, times) for c in range(args.chats))
            )
            report(label, times, time.perf_counter() - started)
    finally:
        await master.aclose()
        for proc in (replica_proc, master_proc):
            proc.terminate()
            proc.wait(5)
        shutil.rmtree(folder, ignore_errors=True)


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.split("\n")[0])
    parser.add_argument("--commits", type=int, default=2000, help="per chat")
    parser.add_argument("--chats", type=int, default=1, help="chats committing at once")
    parser.add_argument("--timeout-ms", type=int, default=100)
    asyncio.run(run(parser.parse_args()))


if __name__ == "__main__":
    main()
