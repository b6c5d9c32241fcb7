"""Health endpoints for probes and Prometheus: ``/healthz``, ``/readyz``, ``/metrics``.

A small aiohttp server on ``HEALTH_PORT`` inside the bot's own event loop, so a hung
loop fails the liveness probe too.
"""

from __future__ import annotations

import asyncio
import logging
import time
from collections.abc import Awaitable, Callable

from aiohttp import web
from prometheus_client import CONTENT_TYPE_LATEST, generate_latest

from bot.ops.metrics import REGISTRY

log = logging.getLogger(__name__)

API_FRESH_SECONDS = 60.0
"""The Bot API counts as reachable this long after a call that got an answer."""
PROBE_TIMEOUT = 3.0


class Health:
    """Readiness facts: Redis answers a PING, the Bot API answered recently."""

    def __init__(
        self,
        *,
        ping_redis: Callable[[], Awaitable[object]],
        probe_api: Callable[[], Awaitable[object]],
        before_scrape: Callable[[], Awaitable[None]] | None = None,
        clock: Callable[[], float] = time.monotonic,
    ) -> None:
        self.ping_redis = ping_redis
        self.probe_api = probe_api
        self.before_scrape = before_scrape
        self.clock = clock
        self.api_ok_at: float | None = None
        self.started = False
        """Set once running games are resumed: not ready before."""
        self.stopping = False
        """Set on SIGTERM: readiness fails so the load balancer stops sending updates."""
        self._probe_lock = asyncio.Lock()

    def note_api_answer(self) -> None:
        """Any Bot API answer (even an error) shows Telegram is reachable."""
        self.api_ok_at = self.clock()

    async def redis_ready(self) -> bool:
        try:
            await asyncio.wait_for(self.ping_redis(), PROBE_TIMEOUT)
        except Exception as err:  # any failure means "not ready"; the reason is logged
            log.warning("readiness: Redis does not answer: %s", type(err).__name__)
            return False
        return True

    async def api_ready(self) -> bool:
        if self._api_fresh():
            return True
        async with self._probe_lock:  # concurrent probes share one getMe
            if self._api_fresh():
                return True
            try:
                await asyncio.wait_for(self.probe_api(), PROBE_TIMEOUT)
            except Exception as err:
                log.warning("readiness: Bot API does not answer: %s", type(err).__name__)
                return False
            self.note_api_answer()
            return True

    def _api_fresh(self) -> bool:
        return self.api_ok_at is not None and self.clock() - self.api_ok_at < API_FRESH_SECONDS

    # --- HTTP -------------------------------------------------------------------

    def web_app(self) -> web.Application:
        app = web.Application()
        app.router.add_get("/healthz", self._healthz)
        app.router.add_get("/readyz", self._readyz)
        app.router.add_get("/metrics", self._metrics)
        return app

    async def _healthz(self, _: web.Request) -> web.Response:
        return web.Response(text="ok\n")

    async def _readyz(self, _: web.Request) -> web.Response:
        if self.stopping or not self.started:
            text = "stopping\n" if self.stopping else "starting\n"
            return web.Response(status=503, text=text)
        redis_ok, api_ok = await asyncio.gather(self.redis_ready(), self.api_ready())
        lines = [f"redis {'ok' if redis_ok else 'down'}", f"bot_api {'ok' if api_ok else 'down'}"]
        status = 200 if redis_ok and api_ok else 503
        return web.Response(status=status, text="\n".join(lines) + "\n")

    async def _metrics(self, _: web.Request) -> web.Response:
        if self.before_scrape is not None:
            try:
                await self.before_scrape()
            except Exception as err:  # stale figures beat a failed scrape
                log.warning("metrics: refresh failed: %s", type(err).__name__)
        body = generate_latest(REGISTRY)
        return web.Response(body=body, headers={"Content-Type": CONTENT_TYPE_LATEST})


class HealthServer:
    """Runs ``Health`` on ``host:port`` until ``stop``."""

    def __init__(self, health: Health, host: str, port: int) -> None:
        self.health = health
        self.host = host
        self.port = port
        self._runner: web.AppRunner | None = None

    async def start(self) -> None:
        self._runner = web.AppRunner(self.health.web_app(), access_log=None)
        await self._runner.setup()
        site = web.TCPSite(self._runner, self.host, self.port)
        await site.start()
        log.info("health endpoints on http://%s:%d/{healthz,readyz,metrics}", self.host, self.port)

    @property
    def bound_port(self) -> int:
        """The real port (useful when started on port 0)."""
        assert self._runner is not None
        for address in self._runner.addresses:
            return int(address[1])
        raise RuntimeError("health server not started")

    async def stop(self) -> None:
        if self._runner is not None:
            await self._runner.cleanup()
            self._runner = None
