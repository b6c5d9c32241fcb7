"""Wiring: build the PTB ``Application`` with storage, games, outbox and scheduler."""

from __future__ import annotations

import logging
import time
from collections.abc import Callable
from typing import Any

from redis.asyncio import Redis
from telegram import Bot
from telegram.ext import Application, ApplicationBuilder

from bot.app.ai_runner import AiRunner
from bot.app.games import Games, Timing
from bot.app.language import Languages
from bot.app.migration import follow_migration
from bot.app.place_gone import end_game_there
from bot.app.quarantine_notice import QuarantineNotice
from bot.app.ratings import Ratings
from bot.app.recovery import RedisWatch
from bot.app.review_worker import ReviewWorker
from bot.app.reviews import Reviews
from bot.app.screens import BotName, Screens
from bot.app.turn_gate import TurnGate
from bot.domain.bounded import BoundedDict
from bot.domain.place import Place
from bot.ops.settings import Settings
from bot.output.outbox import Outbox, OutboxHooks
from bot.store.games import Quarantined
from bot.store.replica_wait import ReplicaWait
from bot.store.reviews import ReviewStore
from bot.store.storage import Storage
from bot.telegram import registry
from bot.telegram.common import Members, Services
from bot.telegram.guard import Guard
from bot.telegram.registry import (
    GROUP_COMMANDS,
    HANDLERS_KEY,
    PRIVATE_COMMANDS,
    publish_commands,
)
from bot.telegram.taps import TapRouter
from bot.transport.fleet_pacing import send_limiter
from bot.transport.metered_request import MeteredRequest
from bot.wiring import miniapp as webapp

__all__ = [
    "GROUP_COMMANDS",
    "PRIVATE_COMMANDS",
    "build_application",
    "build_games",
    "build_outbox",
    "build_services",
    "build_storage",
    "games_of",
    "publish_commands",
    "start_services",
    "stop_services",
]
App = Application[Any, Any, Any, Any, Any, Any]

log = logging.getLogger(__name__)

GAMES_KEY = "durak.games"
WATCH_KEY = "durak.redis_watch"
REVIEWS_KEY = "durak.review_worker"
MAX_ADMIN_ANSWERS = 20_000


def bot_api_client(settings: Settings, *, connections: int) -> MeteredRequest:
    return MeteredRequest(
        connection_pool_size=connections,
        read_timeout=settings.bot_api_timeout,
        write_timeout=settings.bot_api_timeout,
        connect_timeout=min(10.0, settings.bot_api_timeout),
    )


def build_storage(
    settings: Settings, redis: Redis, *, on_quarantine: Quarantined | None = None
) -> Storage:
    wait = None
    if settings.redis_wait_replicas:
        wait = ReplicaWait(redis, settings.redis_wait_replicas, settings.redis_wait_timeout_ms)
    return Storage(
        redis,
        finished_ttl=settings.finished_ttl,
        idle_ttl=settings.idle_ttl,
        settings_ttl=settings.settings_ttl,
        output_lease=settings.output_lease,
        on_quarantine=on_quarantine,
        after_commit=wait,
    )


def build_ptb(settings: Settings, *, set_commands: bool) -> App:
    """PTB's ``Application``, which starts and stops our services with it."""

    async def post_init(app: App) -> None:
        await start_services(app, set_commands=set_commands)

    async def post_stop(app: App) -> None:
        await stop_services(app)

    return (
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


def build_outbox(
    settings: Settings,
    bot: Bot,
    storage: Storage,
    screens: Screens,
    clock: Callable[[], float],
    hooks: OutboxHooks,
    *,
    pacing_clock: Callable[[], float] = time.monotonic,
) -> Outbox:
    """``clock``: wall-clock time (when a hand landed); ``pacing_clock``: what the lanes
    and the per-process budget pace by."""
    return Outbox(
        bot,
        storage,
        render_group=screens.group,
        render_hand=screens.hand,
        render_group_hand=screens.group_hand,
        group_interval=settings.group_edit_interval,
        group_max_per_minute=settings.group_max_per_minute,
        calm_delay=settings.calm_delay,
        private_interval=settings.private_interval,
        global_rate=settings.global_rate,
        clock=pacing_clock,
        wall_clock=clock,
        settle_delay=settings.bot_api_timeout,
        limiter=send_limiter(settings, storage.redis, pacing_clock),
        hooks=hooks,
    )


def build_games(
    settings: Settings,
    storage: Storage,
    bot: Bot,
    live: webapp.LiveLink | None,
    *,
    clock: Callable[[], float],
    ai_processes: int,
    pacing_clock: Callable[[], float] = time.monotonic,
) -> Games:
    """Languages, then the screens the outbox renders, then the games that use both."""
    app_buttons = live.buttons if live is not None else None
    ratings = Ratings(storage, min_games=settings.rating_min_games, clock=clock)
    languages = Languages(storage)
    screens = Screens(
        storage, languages, BotName(), app_buttons=app_buttons, ratings=ratings, clock=clock
    )
    timing = Timing(
        settings.turn_timeout, settings.ai_delay, settings.notify_quiet, settings.throw_in_window
    )

    async def migrated(old: int, new: int) -> None:
        """The outbox's ChatMigrated answers move the records too (``games`` exists by then)."""
        await follow_migration(games, old, new)

    # Tidy-up hears of what the outbox sends (``games.tidy`` exists by then).
    async def reply_sent(place: Place, message_id: int) -> None:
        await games.tidy.reply_sent(place, message_id)

    async def note_sent(place: Place, note: dict[str, Any], message_id: int) -> None:
        await games.tidy.note_sent(place, note, message_id)

    async def place_gone(place: Place) -> None:
        """The outbox's refusals for good (a topic closed or deleted) end that game."""
        await end_game_there(games, place)

    hooks = OutboxHooks(migrated, place_gone, reply_sent, note_sent)

    games = Games(
        storage,
        timing,
        AiRunner(ai_processes),
        outbox=build_outbox(
            settings, bot, storage, screens, clock, hooks, pacing_clock=pacing_clock
        ),
        screens=screens,
        on_change=[live.changed] if live is not None else [],
        # The scheduler asks the turn gate first: no deadline passes on a hand not yet shown.
        fire_through=lambda games: TurnGate(games).fire,
        clock=clock,
    )
    return games


def build_application(
    settings: Settings,
    redis: Redis,
    *,
    clock: Callable[[], float] = time.time,
    ai_processes: int = 1,
    set_commands: bool = True,
) -> App:
    """The bot, ready for ``run_polling``/``run_webhook`` (or ``start_bot`` in tests)."""
    notice = QuarantineNotice()  # the storage tells it; it tells the group, once bound
    storage = build_storage(settings, redis, on_quarantine=notice)
    app = build_ptb(settings, set_commands=set_commands)
    live = webapp.link(settings, storage)
    games = build_games(settings, storage, app.bot, live, clock=clock, ai_processes=ai_processes)
    app.bot_data[GAMES_KEY] = games
    notice.bind(games)
    reviews = build_reviews(settings, games, clock)
    app.bot_data[REVIEWS_KEY] = ReviewWorker(reviews, games.ai, clock=clock)
    registry.install(app, build_services(games, reviews), Guard(games))
    app.bot_data[WATCH_KEY] = RedisWatch(games)
    webapp.install(app.bot_data, settings, games, live, reviews)
    return app


def build_reviews(settings: Settings, games: Games, clock: Callable[[], float]) -> Reviews:
    """The Hard player's reviews; every finished game is kept for them."""
    store = ReviewStore(games.storage.redis, ttl=settings.finished_ttl)
    reviews = Reviews(store, games, per_minute=settings.reviews_per_minute, clock=clock)
    games.on_change.append(reviews.keep)
    return reviews


def build_services(games: Games, reviews: Reviews | None = None) -> Services:
    """What every handler uses: the games, who is a member or admin where, and the
    reviews (None: not offered)."""
    members = Members(BoundedDict(MAX_ADMIN_ANSWERS))  # forgotten answers are asked again
    return Services(games, members, reviews)


def games_of(app: App) -> Games:
    games = app.bot_data[GAMES_KEY]
    assert isinstance(games, Games)
    return games


async def start_services(app: App, *, set_commands: bool = True) -> None:
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
    worker = app.bot_data.get(REVIEWS_KEY)
    if isinstance(worker, ReviewWorker):
        worker.start()

    await webapp.start(app.bot_data)


async def stop_services(app: App) -> None:
    games = games_of(app)
    taps = app.bot_data.get(HANDLERS_KEY)
    if isinstance(taps, TapRouter):
        log.info("%s", taps.latency_summary())
    log.info("outbox at exit: %s", games.box.stats)
    watch = app.bot_data.get(WATCH_KEY)
    if isinstance(watch, RedisWatch):
        await watch.stop()
    worker = app.bot_data.get(REVIEWS_KEY)
    if isinstance(worker, ReviewWorker):
        await worker.stop()

    await webapp.stop(app.bot_data)
    await games.scheduler.stop()
    await games.box.close()
    games.ai.close()
