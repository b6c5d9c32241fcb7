"""``BotApiEmulator``: the emulator's server and its Python control API in one object.

The real python-telegram-bot ``Application`` runs against it unmodified::

    async with BotApiEmulator() as emu:
        emu.add_bot("123:abc")
        emu.add_user(1, "Ann")
        app = ApplicationBuilder().token("123:abc").base_url(emu.base_url()).build()

This class only composes the parts and forwards to them: ``Scene`` (bots, people,
groups), ``UserActions`` (what people do), ``ForumActions`` (topics), ``EphemeralActions``
(ephemeral messages in people's apps), ``MessageStore`` (reading chats), ``EventLog``
(waiting for changes), ``Faults`` (injected failures), ``WebhookDelivery``.
"""

from __future__ import annotations

import copy
import time
from collections.abc import Callable
from types import TracebackType

from aiohttp import web

from sandbox.emulator.control import ControlRoutes
from sandbox.emulator.ephemeral import EphemeralActions, Ephemerals
from sandbox.emulator.faults import InjectedError, SlowAnswer
from sandbox.emulator.forum import Forum, ForumActions
from sandbox.emulator.httputil import is_loopback, loopback_host_only
from sandbox.emulator.limits import RateLimits
from sandbox.emulator.models import EmuBot, EmuUser
from sandbox.emulator.scene import Scene
from sandbox.emulator.server import BotApiRoutes
from sandbox.emulator.stats import EmuStats
from sandbox.emulator.types import BotRef, JsonDict
from sandbox.emulator.users import UserActions
from sandbox.emulator.webhook import RetryPolicy
from sandbox.emulator.world import World


class BotApiEmulator:
    """The emulator server. Use ``async with BotApiEmulator() as emu`` or start()/stop()."""

    def __init__(
        self,
        rate_limits: bool | RateLimits = False,
        *,
        clock: Callable[[], float] = time.monotonic,
        wall_clock: Callable[[], float] = time.time,
        callback_ttl: float | None = 15.0,
        webhook_retry: RetryPolicy | None = None,
    ) -> None:
        """``rate_limits``: True for Telegram's limits, or custom RateLimits; ``clock`` drives
        rate windows, callback expiry and fault windows (a fake clock keeps tests free of
        sleeps); ``webhook_retry``: pauses between webhook delivery attempts."""
        self.world = World(
            rate_limits=rate_limits,
            clock=clock,
            wall_clock=wall_clock,
            callback_ttl=callback_ttl,
            webhook_retry=webhook_retry or RetryPolicy(),
        )
        w = self.world
        self.scene = Scene(w)
        self.actions = UserActions(w)
        self.forum = ForumActions(w, Forum(w))
        self.ephemerals = EphemeralActions(w, Ephemerals(w))
        self.app = web.Application(middlewares=[loopback_host_only])
        BotApiRoutes(w).install(self.app)
        ControlRoutes(w, self.scene, self.actions, self.forum, self.ephemerals).install(self.app)
        self._runner: web.AppRunner | None = None
        self._url: str | None = None

        # The control API, forwarded to the part that implements it.
        self.add_bot = self.scene.add_bot
        self.add_user = self.scene.add_user
        self.add_group = self.scene.add_group
        self.add_member = self.scene.add_member
        self.add_bot_to_group = self.scene.add_bot_to_group
        self.remove_bot_from_group = self.scene.remove_bot_from_group
        self.migrate_group = self.scene.migrate_group
        self.set_admin_rights = self.scene.set_admin_rights
        self.set_muted = self.scene.set_muted
        self.user_sends = self.actions.user_sends
        self.user_starts_bot = self.actions.user_starts_bot
        self.user_opens_link = self.actions.user_opens_link
        self.user_blocks_bot = self.actions.user_blocks_bot
        self.user_presses = self.actions.user_presses
        self.user_sends_callback = self.actions.user_sends_callback
        self.user_deletes_message = self.actions.user_deletes_message
        self.user_presses_ephemeral = self.actions.user_presses_ephemeral
        # Forum topics (what admins do in the app) and ephemeral messages (people's apps).
        self.admin_sets_topics = self.forum.admin_sets_topics
        self.admin_creates_topic = self.forum.admin_creates_topic
        self.admin_edits_topic = self.forum.admin_edits_topic
        self.admin_closes_topic = self.forum.admin_closes_topic
        self.admin_reopens_topic = self.forum.admin_reopens_topic
        self.admin_deletes_topic = self.forum.admin_deletes_topic
        self.topics = self.forum.topics
        self.set_online = self.ephemerals.set_online
        self.user_drops_ephemeral = self.ephemerals.user_drops_ephemeral
        self.ephemerals_of = self.ephemerals.ephemerals_of
        self.ephemeral = self.ephemerals.ephemeral
        self.wait_for_ephemeral = self.ephemerals.wait_for_ephemeral
        self.messages_seen_by = w.messages.seen_by
        self.messages = w.messages.messages
        self.last_message = w.messages.last_message
        self.message = w.messages.message
        self.chat_events = w.messages.chat_events
        self.wait_for_message = w.messages.wait_for_message
        self.wait_for = w.events.wait_for
        self.subscribe = w.events.subscribe
        self.emit = w.events.emit
        self.touch = w.events.touch
        self.recent_events = w.events.recent_events
        self.bot = w.registry.bot
        self.chat = w.registry.chat
        self.member_status = w.registry.member_status
        self.state = w.registry.state

    # ----------------------------------------------------------------- lifecycle

    @property
    def url(self) -> str:
        """``http://127.0.0.1:PORT`` once started."""
        if self._url is None:
            raise RuntimeError("emulator is not started")
        return self._url

    def base_url(self) -> str:
        """For ``ApplicationBuilder().base_url(...)``."""
        return f"{self.url}/bot"

    def base_file_url(self) -> str:
        """For ``ApplicationBuilder().base_file_url(...)``."""
        return f"{self.url}/file/bot"

    async def start(self, host: str = "127.0.0.1", port: int = 0) -> str:
        """Listen on a loopback address (port 0 = ephemeral); returns the base URL."""
        if not is_loopback(host):
            raise ValueError(f"the emulator only binds to loopback addresses, not {host!r}")
        if self._runner is not None:
            raise RuntimeError("emulator already started")
        # handler_cancellation: an abandoned long poll (client went away) ends at once.
        runner = web.AppRunner(
            self.app, handler_cancellation=True, shutdown_timeout=1.0, access_log=None
        )
        await runner.setup()
        site = web.TCPSite(runner, host, port)
        await site.start()
        self._runner = runner
        bound_host, bound_port = runner.addresses[0][:2]
        shown = f"[{bound_host}]" if ":" in bound_host else bound_host
        self._url = f"http://{shown}:{bound_port}"
        self.world.closing = False
        return self._url

    async def stop(self) -> None:
        """Stop webhook delivery, release long polls and event streams, close the server."""
        self.world.closing = True
        await self.world.webhooks.close()
        for b in self.world.registry.bots:
            b.poke()
        self.world.events.close_subscriptions()
        if self._runner is not None:
            await self._runner.cleanup()
            self._runner = None

    async def __aenter__(self) -> BotApiEmulator:
        await self.start()
        return self

    async def __aexit__(
        self,
        exc_type: type[BaseException] | None,
        exc: BaseException | None,
        tb: TracebackType | None,
    ) -> None:
        await self.stop()

    # ----------------------------------------------------------------- registry

    @property
    def users(self) -> dict[int, EmuUser]:
        """Every account by id, people and bots (live objects)."""
        return self.world.registry.users

    @property
    def bots(self) -> list[EmuBot]:
        return self.world.registry.bots

    @property
    def clock(self) -> Callable[[], float]:
        return self.world.clock

    @clock.setter
    def clock(self, clock: Callable[[], float]) -> None:
        self.world.clock = clock

    def commands(
        self,
        *,
        scope_type: str = "default",
        chat_id: int | None = None,
        user_id: int | None = None,
        language_code: str = "",
        bot: BotRef = None,
    ) -> list[JsonDict]:
        """Commands stored by setMyCommands for exactly this scope and language."""
        key = (scope_type, chat_id, user_id, language_code)
        return copy.deepcopy(self.bot(bot).commands.get(key, []))

    def pending_updates(self, bot: BotRef = None) -> list[JsonDict]:
        """Updates not yet confirmed (getUpdates) or accepted (webhook)."""
        return copy.deepcopy(self.bot(bot).updates)

    # ----------------------------------------------------------------- limits & stats

    @property
    def stats(self) -> EmuStats:
        return self.world.stats

    def reset_stats(self) -> None:
        self.world.stats = EmuStats()

    def set_rate_limits(self, limits: RateLimits | bool = True) -> None:
        """Switch flood limits on (optionally with custom limits) or off; resets the windows."""
        self.world.flood.configure(limits)

    # ----------------------------------------------------------------- fault injection

    def fail_calls(
        self,
        method: str = "*",
        *,
        chat_id: int | None = None,
        times: int | None = None,
        for_seconds: float | None = None,
        error_code: int = 502,
        description: str = "Bad Gateway",
        retry_after: int | None = None,
    ) -> InjectedError:
        """Make calls of ``method`` ("*" = any) fail without any effect.

        Only calls naming ``chat_id`` if given; for the next ``times`` matching calls and/or
        for ``for_seconds`` on the emulator's clock (neither: until ``cancel()`` or
        ``clear_faults()``). Default answer: HTTP 502 "Bad Gateway" (PTB: NetworkError).
        Example: ``emu.fail_calls("editMessageText", chat_id=ann, for_seconds=8,
        error_code=500, description="Internal Server Error")``.
        """
        return self.world.faults.add_error(
            method,
            error_code=error_code,
            description=description,
            retry_after=retry_after,
            chat_id=chat_id,
            times=times,
            for_seconds=for_seconds,
        )

    def inject_error(
        self,
        method: str,
        error_code: int,
        description: str,
        *,
        retry_after: int | None = None,
        times: int = 1,
        chat_id: int | None = None,
    ) -> InjectedError:
        """Make the next ``times`` calls of ``method`` ("*" = any) fail with this error."""
        return self.fail_calls(
            method,
            chat_id=chat_id,
            times=times,
            error_code=error_code,
            description=description,
            retry_after=retry_after,
        )

    def delay_answers(
        self,
        method: str = "*",
        delay: float = 7.0,
        *,
        chat_id: int | None = None,
        times: int | None = None,
        for_seconds: float | None = None,
    ) -> SlowAnswer:
        """Slow answers: matching calls take effect at once (the message is sent, edited,
        ...) but their HTTP answer comes ``delay`` seconds later, so a client with a
        shorter timeout (PTB's default is 5 s) sees a timeout for a call that worked.

        Matching as for ``fail_calls``. Example: ``emu.delay_answers("sendMessage", 7,
        chat_id=group, times=1)``.
        """
        return self.world.faults.add_delay(
            method, delay, chat_id=chat_id, times=times, for_seconds=for_seconds
        )

    def clear_faults(self) -> None:
        """End every injected error and slow answer."""
        self.world.faults.clear()

    clear_injected_errors = clear_faults

    # ----------------------------------------------------------------- webhooks

    def route_webhook(self, public_prefix: str, local_base: str) -> None:
        """Deliver webhooks set to URLs starting with ``public_prefix`` to ``local_base``
        instead (a loopback URL), as a reverse proxy would: e.g.
        ``emu.route_webhook("https://bot.example.org", "http://127.0.0.1:8443")``.

        Without a route, only webhook URLs on loopback hosts are delivered to.
        """
        self.world.webhooks.route(public_prefix, local_base, self.world.registry.bots)
