"""Plugging the Mini App into the bot: built with the application, started with it."""

from __future__ import annotations

import logging
from typing import Any

from aiohttp import web

from bot.app.games import Games
from bot.domain.flow import Effects
from bot.domain.records import ChatGame
from bot.ops.settings import Settings
from bot.output.app_buttons import AppButtons
from bot.output.outbox import hand_targets
from bot.store.presence import Presence
from bot.webapp.hub import Hub
from bot.webapp.server import MiniAppServer

log = logging.getLogger(__name__)
WEBAPP_KEY = "durak.webapp"


class MiniApp:
    """The server, the event hub and the hook that tells the hub about changes."""

    def __init__(self, settings: Settings, games: Games, **server_options: Any) -> None:
        assert settings.webapp_url is not None
        self.settings = settings
        self.games = games
        self.hub = Hub(games.storage.redis, games.storage.peek_table)
        self.presence = Presence(games.storage.redis)
        self.server = MiniAppServer(
            games,
            self.hub,
            self.presence,
            bot_token=settings.telegram_bot_token.get_secret_value(),
            max_age=settings.webapp_auth_max_age,
            clock=games.clock,
            **server_options,
        )
        self.buttons = AppButtons(settings.webapp_url, settings.webapp_short_name, self.presence)
        self.runner: web.AppRunner | None = None

    async def changed(self, table: ChatGame, effects: Effects) -> None:
        if table.phase == "playing":
            # One read for every hand: players in the app see their turn there (no new,
            # notifying hand message), and a collapsed hand needs no refresh at all.
            effects.in_app = await self.presence.in_app_of(table.chat_id, set(hand_targets(table)))
            effects.notify -= effects.in_app
        await self.hub.changed(table, self.settings.idle_ttl)

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


def install(bot_data: dict[str, Any], settings: Settings, games: Games) -> MiniApp | None:
    """With WEBAPP_URL set: the Mini App, hooked into ``games``; else nothing."""
    if settings.webapp_url is None:
        return None
    mini_app = MiniApp(settings, games)
    games.on_change.append(mini_app.changed)
    games.app_buttons = mini_app.buttons
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
