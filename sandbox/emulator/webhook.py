"""Webhook delivery: POST each bot's pending updates to the URL it set, as Telegram does.

Telegram sends an update as a JSON POST with the header ``X-Telegram-Bot-Api-Secret-Token``
(when the bot set a secret), counts any 2xx answer as delivered, and retries the rest
with growing pauses. Here updates of one chat are delivered strictly in order (the next
one only after the previous was accepted), different chats in parallel up to the
webhook's ``max_connections``.

The emulator never connects anywhere but loopback: a webhook URL is delivered to only if
its host is a loopback address, or if a route maps it to one (``route``), e.g. the
public ``https://bot.example.org`` a reverse proxy would serve to ``http://127.0.0.1:8443``.
"""

from __future__ import annotations

import asyncio
import contextlib
from collections.abc import Callable
from dataclasses import dataclass
from urllib.parse import urlsplit

import aiohttp

from sandbox.emulator.events import EventLog
from sandbox.emulator.httputil import is_loopback
from sandbox.emulator.models import EmuBot, Webhook
from sandbox.emulator.stats import EmuStats
from sandbox.emulator.types import JsonDict

SECRET_HEADER = "X-Telegram-Bot-Api-Secret-Token"


@dataclass(frozen=True)
class RetryPolicy:
    """Pauses between attempts at one update: ``first_delay`` growing by ``factor`` up to
    ``max_delay``; ``timeout`` is how long one POST may take before it counts as failed."""

    first_delay: float = 0.5
    factor: float = 2.0
    max_delay: float = 8.0
    timeout: float = 10.0

    def delay(self, failures: int) -> float:
        return min(self.max_delay, self.first_delay * self.factor ** max(0, failures - 1))


def chat_key(update: JsonDict) -> int | str:
    """What orders an update: its chat (or user); updates without either stand alone."""
    for kind, payload in update.items():
        if not isinstance(payload, dict):
            continue
        message = payload.get("message") if kind == "callback_query" else payload
        chat = message.get("chat") if isinstance(message, dict) else None
        if isinstance(chat, dict) and isinstance(chat.get("id"), int):
            return int(chat["id"])
        sender = payload.get("from")
        if isinstance(sender, dict) and isinstance(sender.get("id"), int):
            return int(sender["id"])
    return f"update {update.get('update_id')}"


class WebhookDelivery:
    """One delivery loop per bot with a webhook; started and stopped by the Bot API methods."""

    def __init__(
        self, events: EventLog, stats: Callable[[], EmuStats], policy: RetryPolicy
    ) -> None:
        self.events = events
        self.stats = stats
        self.policy = policy
        self.routes: dict[str, str] = {}
        self._loops: dict[int, tuple[Webhook, asyncio.Task[None]]] = {}
        self._session: aiohttp.ClientSession | None = None

    def target(self, url: str) -> str | None:
        """Where a webhook URL is actually posted to, or None if it is not reachable here."""
        for prefix, local in sorted(self.routes.items(), key=lambda item: -len(item[0])):
            if url.startswith(prefix):
                return local.rstrip("/") + url[len(prefix) :]
        host = urlsplit(url).hostname or ""
        return url if is_loopback(host) else None

    def route(self, public_prefix: str, local_base: str, bots: list[EmuBot]) -> None:
        host = urlsplit(local_base).hostname or ""
        if not is_loopback(host):
            raise ValueError(f"webhook routes lead to loopback addresses only, not {host!r}")
        self.routes[public_prefix] = local_base
        for b in bots:
            if b.webhook is not None:
                self.start(b)

    def start(self, b: EmuBot) -> None:
        """(Re)start delivery for the bot's current webhook; a no-op if it is unchanged."""
        hook = b.webhook
        running = self._loops.get(b.id)
        if running is not None and running[0] is hook and not running[1].done():
            return
        self.stop(b)
        if hook is None:
            return
        target = self.target(hook.url)
        if target is None:
            hook.last_error_date = self.events.now()
            hook.last_error_message = (
                "emulator: not delivering to a non-loopback host; route the URL to a local "
                "address with route_webhook()"
            )
            return
        task = asyncio.create_task(self._deliver(b, hook, target), name=f"webhook:{b.id}")
        self._loops[b.id] = (hook, task)

    def stop(self, b: EmuBot) -> None:
        running = self._loops.pop(b.id, None)
        if running is not None:
            running[1].cancel()

    async def close(self) -> None:
        tasks = [task for _, task in self._loops.values()]
        self._loops.clear()
        for task in tasks:
            task.cancel()
        for task in tasks:
            with contextlib.suppress(asyncio.CancelledError):
                await task
        if self._session is not None:
            await self._session.close()
            self._session = None

    def _client(self) -> aiohttp.ClientSession:
        if self._session is None:
            # trust_env=False: no proxy from the environment may see the updates.
            self._session = aiohttp.ClientSession(
                timeout=aiohttp.ClientTimeout(total=self.policy.timeout), trust_env=False
            )
        return self._session

    async def _deliver(self, b: EmuBot, hook: Webhook, target: str) -> None:
        loop = asyncio.get_running_loop()
        in_flight: dict[int | str, asyncio.Task[bool]] = {}
        failures: dict[int | str, int] = {}
        retry_at: dict[int | str, float] = {}
        try:
            while b.webhook is hook:
                wake = b.wake
                now = loop.time()
                heads: set[int | str] = set()
                for update in list(b.updates):
                    key = chat_key(update)
                    if key in heads:
                        continue  # an earlier update of this chat goes first
                    heads.add(key)
                    if len(in_flight) >= hook.max_connections:
                        break
                    if key in in_flight or retry_at.get(key, 0.0) > now:
                        continue
                    in_flight[key] = asyncio.create_task(self._post(b, hook, target, update))
                woken: asyncio.Future[bool] = asyncio.ensure_future(wake.wait())
                waits: list[asyncio.Future[bool]] = [*in_flight.values(), woken]
                pending_retries = [t for k, t in retry_at.items() if t > now and k not in in_flight]
                timeout = max(0.0, min(pending_retries) - now) if pending_retries else None
                try:
                    await asyncio.wait(waits, timeout=timeout, return_when=asyncio.FIRST_COMPLETED)
                finally:
                    woken.cancel()
                for key, task in list(in_flight.items()):
                    if not task.done():
                        continue
                    del in_flight[key]
                    if task.result():
                        failures.pop(key, None)
                        retry_at.pop(key, None)
                    else:
                        failures[key] = failures.get(key, 0) + 1
                        retry_at[key] = loop.time() + self.policy.delay(failures[key])
        finally:
            for task in in_flight.values():
                task.cancel()
            # Let them finish cancelling before the client session may be closed.
            await asyncio.gather(*in_flight.values(), return_exceptions=True)

    async def _post(self, b: EmuBot, hook: Webhook, target: str, update: JsonDict) -> bool:
        """One attempt; True (and the update is gone from the queue) if the bot took it."""
        headers = {SECRET_HEADER: hook.secret_token} if hook.secret_token else {}
        self.stats().webhook_posts += 1
        try:
            async with self._client().post(target, json=update, headers=headers) as response:
                await response.read()
                if 200 <= response.status < 300:
                    b.updates = [u for u in b.updates if u["update_id"] != update["update_id"]]
                    self.stats().webhook_delivered += 1
                    self.events.touch()
                    return True
                error = f"Wrong response from the webhook: {response.status} {response.reason}"
        except TimeoutError:
            error = "Read timeout expired"
        except aiohttp.ClientConnectionError:
            error = "Connection refused"
        except aiohttp.ClientError as err:
            error = f"Connection error: {type(err).__name__}"
        hook.last_error_date = self.events.now()
        hook.last_error_message = error
        self.events.touch()
        return False
