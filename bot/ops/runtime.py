"""Production runtime around the PTB application: health server and graceful SIGTERM.

Wraps the application's ``post_init``/``post_stop`` hooks instead of editing the
wiring, so the bot built by ``bot.wiring.application`` stays the same in tests and in production.
"""

from __future__ import annotations

import asyncio
import logging
import os
import signal
import threading
from typing import Any

from redis.asyncio import Redis
from telegram import Update
from telegram.ext import Application, TypeHandler

from bot.ops.health import Health, HealthServer
from bot.ops.metrics import running_games, update_seen
from bot.ops.settings import Settings
from bot.store.storage import Storage

log = logging.getLogger("bot")

SHUTDOWN_GRACE = 10.0
"""Seconds between SIGTERM and a forced exit (Kubernetes waits 30 s before SIGKILL)."""
STOP_SIGNALS = (signal.SIGINT, signal.SIGABRT)
"""Signals PTB handles itself; SIGTERM is ours (readiness off first, then a bounded stop)."""

AnyApp = Application[Any, Any, Any, Any, Any, Any]


def install_runtime(app: AnyApp, settings: Settings, redis: Redis) -> Health:
    """Start the health endpoints with the bot and stop them after it; handle SIGTERM."""

    async def running_count() -> None:
        running_games(len(await Storage(redis, finished_ttl=1, idle_ttl=1).running_places()))

    health = Health(
        ping_redis=redis.ping,
        probe_api=app.bot.get_me,
        before_scrape=running_count,
    )
    server = (
        HealthServer(health, settings.webhook_listen, settings.health_port)
        if settings.health_port
        else None
    )
    inner_init, inner_stop = app.post_init, app.post_stop

    async def post_init(application: AnyApp) -> None:
        _handle_sigterm(application, health)
        if server is not None:
            try:
                await server.start()
            except OSError as err:  # the bot still serves games; probes will notice
                log.error("health endpoints not started on port %d: %s", server.port, err)
        if inner_init is not None:
            await inner_init(application)
        health.note_api_answer()  # initialize() just called getMe
        health.started = True

    async def post_stop(application: AnyApp) -> None:
        try:
            if inner_stop is not None:
                await inner_stop(application)
        finally:
            if server is not None:
                await server.stop()

    app.post_init = post_init
    app.post_stop = post_stop
    # Counts every update before any handler sees it (a group that never stops the chain).
    app.add_handler(TypeHandler(Update, _count_update), group=COUNT_GROUP)
    return health


COUNT_GROUP = -1000


async def _count_update(update: Update, _: object) -> None:
    update_seen(_kind_of(update))


def _kind_of(update: Update) -> str:
    if update.callback_query is not None:
        return "callback_query"
    message = update.effective_message
    if update.message is not None and message is not None and message.text:
        return "command" if message.text.startswith("/") else "message"
    for kind in ("my_chat_member", "chat_member", "edited_message", "message"):
        if getattr(update, kind, None) is not None:
            return kind
    return "other"


def _handle_sigterm(app: AnyApp, health: Health) -> None:
    """SIGTERM: fail readiness, stop taking updates, let in-flight ones finish; a watchdog
    ends the process if that takes longer than ``SHUTDOWN_GRACE``."""
    loop = asyncio.get_running_loop()

    def on_term() -> None:
        if health.stopping:
            return
        health.stopping = True
        log.info("SIGTERM: finishing in-flight updates, exiting within %.0f s", SHUTDOWN_GRACE)
        watchdog = threading.Timer(SHUTDOWN_GRACE, _force_exit)
        watchdog.daemon = True
        watchdog.start()
        app.stop_running()

    loop.add_signal_handler(signal.SIGTERM, on_term)


def _force_exit() -> None:
    log.error("shutdown took longer than %.0f s: exiting now", SHUTDOWN_GRACE)
    logging.shutdown()
    os._exit(1)
