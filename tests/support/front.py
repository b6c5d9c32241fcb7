"""A fleet for tests and benchmarks: worker processes (``python -m bot`` in webhook mode)
behind a front that spreads the emulator's webhook deliveries over them, as a reverse
proxy would. The one module for it: the fleet tests and ``bench/bot_load.py`` use it."""

from __future__ import annotations

import asyncio
import itertools
import os
import socket
import sys
from collections.abc import Mapping
from dataclasses import dataclass
from pathlib import Path
from typing import IO

import aiohttp
from aiohttp import web

READY_TIMEOUT = 30.0


def free_port() -> int:
    with socket.socket() as probe:
        probe.bind(("127.0.0.1", 0))
        return int(probe.getsockname()[1])


class Front:
    """The reverse proxy: each delivery to the next worker in ``ports`` (``spread``) or to
    the first that answers; a worker that does not answer is skipped (as a proxy's health
    checks would), so no update is lost with it."""

    def __init__(self, ports: list[int] | None = None, *, spread: bool = True) -> None:
        self.ports = ports if ports is not None else []
        self.spread = spread
        self.turn = itertools.count()
        self.served: dict[int, int] = {}
        self.port = free_port()
        self.runner: web.AppRunner | None = None
        self.session: aiohttp.ClientSession | None = None

    @property
    def url(self) -> str:
        return f"http://127.0.0.1:{self.port}"

    async def start(self) -> str:
        app = web.Application()
        app.router.add_post("/telegram", self.forward)
        self.runner = web.AppRunner(app)
        await self.runner.setup()
        await web.TCPSite(self.runner, "127.0.0.1", self.port).start()
        self.session = aiohttp.ClientSession(
            connector=aiohttp.TCPConnector(limit=0), timeout=aiohttp.ClientTimeout(total=30)
        )
        return self.url

    async def forward(self, request: web.Request) -> web.Response:
        assert self.session is not None
        body = await request.read()
        headers = {
            k: v
            for k, v in request.headers.items()
            if k.lower() in ("content-type", "x-telegram-bot-api-secret-token")
        }
        ports = list(self.ports)
        first = next(self.turn) if self.spread else 0
        for offset in range(len(ports)):
            port = ports[(first + offset) % len(ports)]
            try:
                url = f"http://127.0.0.1:{port}/telegram"
                async with self.session.post(url, data=body, headers=headers) as answer:
                    self.served[port] = self.served.get(port, 0) + 1
                    return web.Response(status=answer.status, body=await answer.read())
            except aiohttp.ClientError:
                continue  # down, or died while handling it: the next worker gets it
        return web.Response(status=502)

    async def stop(self) -> None:
        if self.session is not None:
            await self.session.close()
        if self.runner is not None:
            await self.runner.cleanup()


@dataclass
class Worker:
    process: asyncio.subprocess.Process
    port: int
    health: int


async def start_worker(
    front: Front,
    cwd: Path,
    settings: Mapping[str, str],
    *,
    log: IO[str] | None = None,
    serve: bool = True,
) -> Worker:
    """One ``python -m bot`` webhook worker behind ``front`` (settings: env variables;
    the bot's TELEGRAM_* and REDIS_* come only from them). Its output goes to ``log``, or
    else to ``cwd/worker-<port>.log``. With ``serve`` the front sends it updates at once;
    otherwise the caller adds its port to ``front.ports`` (once it is ready, say)."""
    port, health = free_port(), free_port()
    env = {k: v for k, v in os.environ.items() if not k.startswith(("TELEGRAM_", "REDIS_"))}
    env |= dict(settings)
    env |= {"WEBHOOK_URL": front.url, "WEBHOOK_PORT": str(port), "HEALTH_PORT": str(health)}
    own_log = None if log is not None else (cwd / f"worker-{port}.log").open("w")
    try:
        output = log or own_log
        process = await asyncio.create_subprocess_exec(
            sys.executable, "-m", "bot", cwd=cwd, env=env, stdout=output, stderr=output
        )
    finally:
        if own_log is not None:
            own_log.close()  # the child has its own copy
    worker = Worker(process, port, health)
    if serve:
        front.ports.append(port)
    return worker


async def wait_ready(workers: list[Worker], timeout: float = READY_TIMEOUT) -> None:
    """Until every worker's /readyz answers 200 (Redis and the Bot API reachable)."""

    async def one(http: aiohttp.ClientSession, worker: Worker) -> None:
        while True:
            if worker.process.returncode is not None:
                raise AssertionError(f"worker on {worker.port} exited")
            try:
                async with http.get(f"http://127.0.0.1:{worker.health}/readyz") as r:
                    if r.status == 200:
                        return
            except aiohttp.ClientConnectionError:
                pass
            await asyncio.sleep(0.05)  # another process: nothing to await but its port

    async with aiohttp.ClientSession() as http:
        await asyncio.wait_for(asyncio.gather(*(one(http, w) for w in workers)), timeout)


async def stop_workers(workers: list[Worker], timeout: float = 15.0) -> None:
    """SIGTERM, then SIGKILL whatever has not exited within ``timeout``."""
    for worker in workers:
        if worker.process.returncode is None:
            worker.process.terminate()
    for worker in workers:
        try:
            await asyncio.wait_for(worker.process.wait(), timeout)
        except TimeoutError:
            worker.process.kill()
            await worker.process.wait()
