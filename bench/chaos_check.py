"""What the chaos soak compares the chats with: each group's stored record and a fresh
render of every message it names, read by the bot code under test.

The one module of the soak that touches the bot's internals (``bench/chaos_soak.py`` and
``tests/test_chaos_soak.py`` go through it). It runs as a small child process of the soak,
started with the bot tree under test first on ``sys.path`` (``--bot-tree``), so a record
written by an older checkout is read and rendered by that checkout, never by this one.
The soak talks to it over stdin/stdout, one JSON object a line:

    {"op": "snapshot", "chat": -1000000}  ->  {"game_id": ..., "phase": ..., "expected": ...}
    {"op": "user_played", "users": [10000, 10001]}  ->  {"10000": 3, "10001": 3}

Run by hand: ``PYTHONPATH=<tree> python bench/chaos_check.py --redis-url URL --cluster``.
"""

from __future__ import annotations

import argparse
import asyncio
import contextlib
import dataclasses
import importlib
import json
import os
import sys
import time
from collections.abc import AsyncIterator
from dataclasses import dataclass
from pathlib import Path
from types import ModuleType
from typing import Any

from redis.asyncio import Redis
from redis.asyncio.cluster import RedisCluster

STORAGE_HOMES = ("bot.storage", "bot.store", "bot.store.storage")
"""Where ``Storage`` lives: ``bot/storage.py`` until the package split, ``bot/store/`` after
it. Both are tried, so one soak runs against a checkout from before and after the move."""


@dataclass
class BotInternals:
    """The few pieces of the bot the checks need, imported from the tree under test."""

    storage_class: Any
    render: ModuleType
    translator: Any
    negotiate: Any
    place: Any
    """How the storage names a game's home: ``bot.domain.place.Place(chat)`` since games
    may live in forum topics, the bare chat id before."""


def load_bot_internals() -> BotInternals:
    """Every import of bot internals of the soak, in one place (see ``STORAGE_HOMES``)."""
    render = importlib.import_module("bot.render")
    locales = importlib.import_module("locales")
    place: Any = int
    with contextlib.suppress(ImportError):
        place = importlib.import_module("bot.domain.place").Place
    for home in STORAGE_HOMES:
        with contextlib.suppress(ImportError):
            storage = getattr(importlib.import_module(home), "Storage", None)
            if storage is not None:
                return BotInternals(storage, render, locales.translator, locales.negotiate, place)
    raise ImportError(f"no Storage in any of {STORAGE_HOMES}")


async def snapshot(bot: BotInternals, store: Any, chat: int, username: str) -> dict[str, Any]:
    """The group's record as it is now, and what its messages must show (an HTML text per
    (chat, message id)): the table, each player's hand and the results once finished."""
    game = await store.load_table(bot.place(chat))
    if game is None:
        return {"game_id": None}
    tr = bot.translator(bot.negotiate((await store.chat_settings(chat)).lang))
    finished = game.phase == "finished"
    expected: list[list[Any]] = []
    if finished:
        table = bot.render.table_message(game, tr, username).text
        expected.append([chat, game.table_message_id, table])
    seats: list[list[Any]] = []
    for seat, info in enumerate(game.seats):
        if info.user_id is None:
            continue  # a computer seat has no private chat
        seats.append([info.user_id, info.hand_message_id])
        own = bot.translator(bot.negotiate(info.lang))
        hand = await hand_text(bot, store, game, seat, own)
        expected.append([info.user_id, info.hand_message_id, hand])
    owed = await store.owed_output(bot.place(chat))
    return {
        "game_id": game.game_id,
        "phase": game.phase,
        "expected": expected,
        "seats": seats,
        "results": bot.render.results_message(game, tr).text if finished else None,
        "group_played": {str(line.user_id): line.played for line in await store.chat_stats(chat)},
        "owed_complete": bool(owed.complete),
    }


async def hand_text(bot: BotInternals, store: Any, game: Any, seat: int, tr: Any) -> str:
    """A hand as the bot renders it: a finished game's as its result with the player's
    rating change (``Ratings.game_line``), where the tree under test has one."""
    finished_hand = getattr(bot.render, "finished_hand", None)
    if game.phase != "finished" or finished_hand is None:
        return str(bot.render.hand_message(game, seat, tr, now=time.time()).text)
    rating = importlib.import_module("bot.domain.rating")
    user = game.seats[seat].user_id
    line = (await store.rating_lines(bot.place(game.chat_id), game.game_id)).get(user)
    if line is not None:
        line = dataclasses.replace(line, provisional=line.games < rating.MIN_GAMES_LISTED)
    return str(finished_hand(game, seat, tr, line, rating.MIN_GAMES_LISTED).text)


async def user_played(store: Any, users: list[int]) -> dict[str, int]:
    """Each user's own total of games played (added once per game, maybe by a settler)."""
    return {str(user): int((await store.user_stats(user)).played) for user in users}


def connect(url: str, cluster: bool) -> Redis:
    if cluster:
        client: Redis = RedisCluster.from_url(url)  # type: ignore[assignment]
        return client
    return Redis.from_url(url)


async def serve(url: str, cluster: bool, username: str) -> None:
    """Answer the soak's requests from stdin until it closes the pipe."""
    bot = load_bot_internals()
    redis = connect(url, cluster)
    store = bot.storage_class(redis, finished_ttl=3600, idle_ttl=3600)
    loop = asyncio.get_running_loop()
    print(json.dumps({"ready": True}), flush=True)
    try:
        while line := await loop.run_in_executor(None, sys.stdin.readline):
            request = json.loads(line)
            try:
                if request["op"] == "snapshot":
                    answer: dict[str, Any] = await snapshot(bot, store, request["chat"], username)
                else:
                    answer = await user_played(store, request["users"])
            except Exception as err:  # a Redis hiccup mid-failover, say: the soak asks again
                answer = {"error": f"{type(err).__name__}: {err}"}
            print(json.dumps(answer), flush=True)
    finally:
        await redis.aclose()


class Checker:
    """The soak's side: a ``chaos_check`` child run on ``tree``'s code, one request at a time."""

    def __init__(self, process: asyncio.subprocess.Process) -> None:
        self.process = process
        self.lock = asyncio.Lock()

    async def ask(self, request: dict[str, Any]) -> dict[str, Any]:
        assert self.process.stdin is not None and self.process.stdout is not None
        async with self.lock:  # answers come back in order, so one question at a time
            self.process.stdin.write(json.dumps(request).encode() + b"\n")
            await self.process.stdin.drain()
            answer: dict[str, Any] = json.loads(await self.process.stdout.readline())
        return answer

    async def snapshot(self, chat: int) -> dict[str, Any]:
        return await self.ask({"op": "snapshot", "chat": chat})

    async def user_played(self, users: list[int]) -> dict[int, int]:
        answer = await self.ask({"op": "user_played", "users": users})
        if "error" in answer:
            raise RuntimeError(answer["error"])
        return {int(user): int(n) for user, n in answer.items()}


@contextlib.asynccontextmanager
async def checker(tree: Path, redis_env: dict[str, str], username: str) -> AsyncIterator[Checker]:
    """A ``chaos_check`` child whose ``bot``, ``engine`` and ``locales`` come from ``tree``."""
    args = [sys.executable, str(Path(__file__).resolve()), "--redis-url", redis_env["REDIS_URL"]]
    args += ["--bot", username]
    if redis_env.get("REDIS_CLUSTER") == "true":
        args.append("--cluster")
    env = os.environ | {"PYTHONPATH": str(tree)}
    process = await asyncio.create_subprocess_exec(
        *args, cwd=tree, env=env, stdin=asyncio.subprocess.PIPE, stdout=asyncio.subprocess.PIPE
    )
    try:
        assert process.stdout is not None
        ready = await asyncio.wait_for(process.stdout.readline(), 60)
        if not ready:
            raise RuntimeError("bench/chaos_check.py did not start (see its stderr)")
        yield Checker(process)
    finally:
        if process.stdin is not None:
            process.stdin.close()
        try:
            await asyncio.wait_for(process.wait(), 10)
        except TimeoutError:
            process.kill()
            await process.wait()


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.split("\n")[0])
    parser.add_argument("--redis-url", required=True)
    parser.add_argument("--cluster", action="store_true")
    parser.add_argument("--bot", default="durak_chaos_bot", help="the bot's username")
    args = parser.parse_args()
    asyncio.run(serve(args.redis_url, args.cluster, args.bot))


if __name__ == "__main__":
    main()
