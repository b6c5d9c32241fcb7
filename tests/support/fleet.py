"""Fleet tests' parts: real ``python -m bot`` webhook workers behind a test front that
spreads the emulator's webhook deliveries over them, like a reverse proxy."""

from __future__ import annotations

import asyncio
import itertools
import os
import sys
from dataclasses import dataclass
from pathlib import Path

import aiohttp
from aiohttp import web

from support.harness import free_port


class Front:
    """The reverse proxy: each delivery to the next worker (``spread``) or to the first
    that answers; a worker that does not answer is skipped (as a proxy's health checks
    would), so no update is lost with it."""

    def __init__(self, ports: list[int], *, spread: bool = True) -> None:
        self.ports = ports
        self.spread = spread
        self.turn = itertools.count()
        self.served: dict[int, int] = {}
        self.port = free_port()
        self.runner: web.AppRunner | None = None
        self.session: aiohttp.ClientSession | None = None

    async def start(self) -> str:
        app = web.Application()
        app.router.add_post("/telegram", self.forward)
        self.runner = web.AppRunner(app)
        await self.runner.setup()
        await web.TCPSite(self.runner, "127.0.0.1", self.port).start()
        self.session = aiohttp.ClientSession(timeout=aiohttp.ClientTimeout(total=30))
        return f"http://127.0.0.1:{self.port}"

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
    tmp: Path,
    *,
    token: str,
    emu_url: str,
    redis_url: str,
    front: str,
    cluster: bool = False,
    env: dict[str, str] | None = None,
) -> Worker:
    port, health = free_port(), free_port()
    base = {k: v for k, v in os.environ.items() if not k.startswith(("TELEGRAM_", "REDIS_"))}
    base |= {
        "TELEGRAM_BOT_TOKEN": token,
        "TELEGRAM_API_URL": emu_url,
        "REDIS_URL": redis_url,
        "WEBHOOK_URL": front,
        "WEBHOOK_PORT": str(port),
        "HEALTH_PORT": str(health),
        "AI_DELAY": "0",
        "TURN_TIMEOUT": "5",
        "LOG_LEVEL": "WARNING",
    }
    if cluster:
        base["REDIS_CLUSTER"] = "true"
    log = (tmp / f"worker-{port}.log").open("wb")
    try:
        process = await asyncio.create_subprocess_exec(
            sys.executable, "-m", "bot", cwd=tmp, env=base | (env or {}), stderr=log
        )
    finally:
        log.close()  # the child has its own copy
    return Worker(process, port, health)


async def wait_ready(http: aiohttp.ClientSession, worker: Worker, timeout: float = 30) -> None:
    async with asyncio.timeout(timeout):
        while True:
            try:
                async with http.get(f"http://127.0.0.1:{worker.health}/readyz") as r:
                    if r.status == 200:
                        return
            except aiohttp.ClientConnectionError:
                pass
            if worker.process.returncode is not None:
                raise AssertionError(f"worker on {worker.port} exited before it was ready")
            await asyncio.sleep(0.05)


async def stop_workers(workers: list[Worker]) -> None:
    """Every worker ends, whatever state it is in (bounded: SIGKILL after 10 s)."""
    for worker in workers:
        if worker.process.returncode is None:
            worker.process.terminate()
    for worker in workers:
        try:
            await asyncio.wait_for(worker.process.wait(), 12)
        except TimeoutError:
            worker.process.kill()
            await worker.process.wait()
