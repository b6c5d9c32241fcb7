"""Wiring: build the PTB ``Application`` with storage, games, outbox and scheduler."""

from __future__ import annotations

import logging
import time
from collections.abc import Callable
from typing import Any

from redis.asyncio import Redis
from telegram import BotCommand, BotCommandScopeAllGroupChats, BotCommandScopeAllPrivateChats
from telegram.error import TelegramError
from telegram.ext import Application, ApplicationBuilder

from bot.app.ai_runner import AiRunner
from bot.app.games import Games, Timing
from bot.app.migration import install_migration
from bot.app.quarantine_notice import install_quarantine_notice
from bot.app.recovery import RedisWatch
from bot.app.turn_gate import TurnGate
from bot.domain.bounded import BoundedDict
from bot.ops.settings import Settings
from bot.output.outbox import Outbox
from bot.store.replica_wait import ReplicaWait
from bot.store.storage import Storage
from bot.telegram.guard import Guard
from bot.telegram.handlers import HANDLERS_KEY, Handlers
from bot.transport.fleet_pacing import send_limiter
from bot.transport.metered_request import MeteredRequest
from bot.wiring import miniapp as webapp
from locales import SUPPORTED, translator

log = logging.getLogger(__name__)

GROUP_COMMANDS = ("newgame", "rules", "stats", "language", "help")
PRIVATE_COMMANDS = ("start", "stats", "rules", "language", "help")
GAMES_KEY = "durak.games"
GUARD_KEY = "durak.guard"
WATCH_KEY = "durak.redis_watch"
MAX_ADMIN_ANSWERS = 20_000


def bot_api_client(settings: Settings, *, connections: int) -> MeteredRequest:
    return MeteredRequest(
        connection_pool_size=connections,
        read_timeout=settings.bot_api_timeout,
        write_timeout=settings.bot_api_timeout,
        connect_timeout=min(10.0, settings.bot_api_timeout),
    )


def build_application(
    settings: Settings,
    redis: Redis,
    *,
    clock: Callable[[], float] = time.time,
    ai_processes: int = 1,
    set_commands: bool = True,
) -> Application[Any, Any, Any, Any, Any, Any]:
    """The bot, ready for ``run_polling``/``run_webhook`` (or ``start_bot`` in tests)."""
    storage = Storage(
        redis,
        finished_ttl=settings.finished_ttl,
        idle_ttl=settings.idle_ttl,
        settings_ttl=settings.settings_ttl,
        output_lease=settings.output_lease,
    )
    if settings.redis_wait_replicas:
        storage.after_commit = ReplicaWait(
            redis, settings.redis_wait_replicas, settings.redis_wait_timeout_ms
        )
    timing = Timing(
        settings.turn_timeout, settings.ai_delay, settings.notify_quiet, settings.throw_in_window
    )
    games = Games(storage, timing, AiRunner(ai_processes), clock=clock)

    async def post_init(app: Application[Any, Any, Any, Any, Any, Any]) -> None:
        await start_services(app, set_commands=set_commands)

    async def post_stop(app: Application[Any, Any, Any, Any, Any, Any]) -> None:
        await stop_services(app)

    app = (
        ApplicationBuilder()
        .token(settings.telegram_bot_token.get_secret_value())
        .base_url(f"{settings.telegram_api_url.rstrip('/')}/bot")
        .base_file_url(f"{settings.telegram_api_url.rstrip('/')}/file/bot")
        .concurrent_updates(256)
        # PTB's 5 s default is shorter than Telegram's slow moments; a timed-out request
        # may still be carried out, so waiting longer means fewer unknown outcomes.
        .request(bot_api_client(settings, connections=256))
        .get_updates_request(bot_api_client(settings, connections=1))
        .post_init(post_init)
        .post_stop(post_stop)
        .build()
    )
    app.bot_data[GAMES_KEY] = games
    games.outbox = Outbox(
        app.bot,
        storage,
        render_group=games.render_group,
        render_hand=games.render_hand,
        group_interval=settings.group_edit_interval,
        group_max_per_minute=settings.group_max_per_minute,
        calm_delay=settings.calm_delay,
        private_interval=settings.private_interval,
        global_rate=settings.global_rate,
        wall_clock=clock,
        settle_delay=settings.bot_api_timeout,
    )
    games.outbox.limiter = send_limiter(settings, redis)
    # The scheduler asks the turn gate first: no deadline passes on a hand not yet shown.
    games.scheduler.fire = TurnGate(games).fire
    guard = Guard(games)
    guard.install(app)
    install_migration(app, games)
    install_quarantine_notice(games)
    handlers = Handlers(games)
    handlers.admins = BoundedDict(MAX_ADMIN_ANSWERS)  # forgotten answers are asked again
    handlers.install(app)
    app.bot_data[GUARD_KEY] = guard
    app.bot_data[WATCH_KEY] = RedisWatch(games)
    webapp.install(app.bot_data, settings, games)
    return app


def games_of(app: Application[Any, Any, Any, Any, Any, Any]) -> Games:
    games = app.bot_data[GAMES_KEY]
    assert isinstance(games, Games)
    return games


async def start_services(
    app: Application[Any, Any, Any, Any, Any, Any], *, set_commands: bool = True
) -> None:
    """After ``initialize``: learn our username, set the menus, resume running games."""
    games = games_of(app)
    games.bot_username = app.bot.username
    if set_commands:
        await publish_commands(app)
    games.scheduler.start()
    await games.resume()
    watch = app.bot_data.get(WATCH_KEY)
    if isinstance(watch, RedisWatch):
        watch.start()

    await webapp.start(app.bot_data)


async def stop_services(app: Application[Any, Any, Any, Any, Any, Any]) -> None:
    games = games_of(app)
    handlers = app.bot_data.get(HANDLERS_KEY)
    if isinstance(handlers, Handlers):
        log.info("%s", handlers.latency_summary())
    log.info("outbox at exit: %s", games.box.stats)
    watch = app.bot_data.get(WATCH_KEY)
    if isinstance(watch, RedisWatch):
        await watch.stop()

    await webapp.stop(app.bot_data)
    await games.scheduler.stop()
    await games.box.close()
    games.ai.close()


async def publish_commands(app: Application[Any, Any, Any, Any, Any, Any]) -> None:
    """The command menu for groups and private chats, in every language."""
    for lang in ("", *SUPPORTED):
        tr = translator(lang or "en")
        for scope, names in (
            (BotCommandScopeAllGroupChats(), GROUP_COMMANDS),
            (BotCommandScopeAllPrivateChats(), PRIVATE_COMMANDS),
        ):
            commands = [BotCommand(name, tr.t(f"command.{name}")) for name in names]
            try:
                await app.bot.set_my_commands(commands, scope=scope, language_code=lang or None)
            except TelegramError as err:
                log.warning("setMyCommands failed (%s, %s): %s", lang, scope.type, err)
