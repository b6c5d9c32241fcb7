"""Plugging the Mini App into the bot: built with the application, started with it."""

from __future__ import annotations

import logging
from typing import Any

from aiohttp import web

from bot.app.games import Games
from bot.app.reviews import Reviews
from bot.domain import flow
from bot.domain.flow import Effects
from bot.domain.records import ChatGame
from bot.ops.settings import Settings
from bot.output.app_buttons import AppButtons
from bot.output.outbox import hand_targets
from bot.store.presence import Presence
from bot.store.storage import Storage
from bot.webapp.hub import Hub
from bot.webapp.server import MiniAppServer
from bot.webapp.views import viewer_state

log = logging.getLogger(__name__)
WEBAPP_KEY = "durak.webapp"


class LiveLink:
    """The Mini App as the game side sees it, built before ``Games``: its buttons in the
    chat's messages, and the hub told about every change."""

    def __init__(self, settings: Settings, storage: Storage) -> None:
        assert settings.webapp_url is not None
        self.settings = settings
        self.hub = Hub(storage.redis, storage.peek_table, state_of=viewer_state)
        self.presence = Presence(storage.redis)
        self.buttons = AppButtons(settings.webapp_url, settings.webapp_short_name, self.presence)

    async def changed(self, game: ChatGame, effects: Effects) -> None:
        if game.phase == "playing":
            # One read for every hand: players in the app see their turn there (no new,
            # notifying hand message), and a collapsed hand needs no refresh at all.
            effects.in_app = await self.presence.in_app_of(game.place, set(hand_targets(game)))
            # But the reminder before a timeout: it comes whichever way they play.
            effects.notify -= effects.in_app - {flow.reminded_user(game)}
        await self.hub.changed(game, self.settings.idle_ttl)


class MiniApp:
    """The server (built with ``Games``), the event hub and the presence marks."""

    def __init__(
        self, settings: Settings, games: Games, link: LiveLink, **server_options: Any
    ) -> None:
        self.settings = settings
        self.games = games
        self.hub = link.hub
        self.presence = link.presence
        self.buttons = link.buttons
        self.server = MiniAppServer(
            games,
            self.hub,
            self.presence,
            bot_token=settings.telegram_bot_token.get_secret_value(),
            max_age=settings.webapp_auth_max_age,
            clock=games.clock,
            **server_options,
        )
        self.runner: web.AppRunner | None = None

    async def start(self) -> None:
        await self.hub.start()
        self.runner = web.AppRunner(self.server.application(), access_log=None)
        await self.runner.setup()
        site = web.TCPSite(self.runner, self.settings.webapp_listen, self.settings.webapp_port)
        await site.start()
        log.info(
            "Mini App on http://%s:%s/ (public: %s)",
            self.settings.webapp_listen,
            self.settings.webapp_port,
            self.settings.webapp_url,
        )

    async def stop(self) -> None:
        self.server.close()
        if self.runner is not None:
            await self.runner.cleanup()
            self.runner = None
        await self.hub.stop()


def link(settings: Settings, storage: Storage) -> LiveLink | None:
    """With WEBAPP_URL set: the Mini App's side of the games (pass it to ``Games``)."""
    return LiveLink(settings, storage) if settings.webapp_url is not None else None


def install(
    bot_data: dict[str, Any],
    settings: Settings,
    games: Games,
    live: LiveLink | None,
    reviews: Reviews | None = None,
) -> MiniApp | None:
    """The Mini App's server for ``games``, if it has a ``live`` link; else nothing."""
    if live is None:
        return None
    mini_app = MiniApp(settings, games, live, reviews=reviews)
    bot_data[WEBAPP_KEY] = mini_app
    return mini_app


async def start(bot_data: dict[str, Any]) -> None:
    mini_app = bot_data.get(WEBAPP_KEY)
    if isinstance(mini_app, MiniApp):
        await mini_app.start()


async def stop(bot_data: dict[str, Any]) -> None:
    mini_app = bot_data.get(WEBAPP_KEY)
    if isinstance(mini_app, MiniApp):
        await mini_app.stop()
