"""Helpers for tests that drive the emulator directly (a PTB ``Bot`` or raw HTTP calls)."""

from __future__ import annotations

import json
from collections.abc import Awaitable, Callable
from dataclasses import dataclass
from typing import Any

import aiohttp
from aiohttp import web

from sandbox.emulator import SECRET_HEADER, BotApiEmulator

TOKEN = "123456:TEST-secret"
OTHER_TOKEN = "654321:OTHER-secret"
ANN, BOB, CAROL = 1001, 1002, 1003
GROUP = -1001234567890


class ManualClock:
    """Monotonic clock the test moves by hand, so rate windows pass without sleeping."""

    def __init__(self) -> None:
        self.now = 1000.0

    def __call__(self) -> float:
        return self.now

    def advance(self, seconds: float) -> None:
        self.now += seconds


def populate(emu: BotApiEmulator) -> None:
    emu.add_bot(TOKEN, username="durak_test_bot", first_name="Durak")
    emu.add_user(ANN, "Ann", username="ann")
    emu.add_user(BOB, "Bob", language_code="ru")
    emu.add_user(CAROL, "Carol")


async def raw(
    http: aiohttp.ClientSession, emu: BotApiEmulator, method: str, token: str = TOKEN, **params: Any
) -> tuple[int, dict[str, Any]]:
    """Call the Bot API the way PTB does: form data, non-strings JSON-encoded."""
    form = {k: v if isinstance(v, str) else json.dumps(v) for k, v in params.items()}
    async with http.post(f"{emu.url}/bot{token}/{method}", data=form) as resp:
        return resp.status, await resp.json()


async def send_in_topic(
    http: aiohttp.ClientSession,
    emu: BotApiEmulator,
    user_id: int,
    chat_id: int,
    thread_id: int | None,
    text: str,
) -> dict[str, Any]:
    """A person writes in a forum topic (``None``: General), through the control API."""
    body = {"user_id": user_id, "chat_id": chat_id, "text": text, "message_thread_id": thread_id}
    async with http.post(f"{emu.url}/_emu/send", json=body) as resp:
        data = await resp.json()
        assert resp.status == 200, data
        result: dict[str, Any] = data["result"]
        return result


def ephemeral_of(emu: BotApiEmulator, user_id: int, chat_id: int) -> list[dict[str, Any]]:
    """The ephemeral messages a person's app shows in a group (as ``to_dict()``)."""
    return [m.to_dict() for m in emu.ephemerals_of(user_id, chat_id)]


def seen_by(emu: BotApiEmulator, user_id: int, chat_id: int) -> list[str]:
    """The texts a person sees in a group: its history plus their own ephemeral messages."""
    return [m.text for m in emu.messages_seen_by(user_id, chat_id)]


@dataclass
class Delivery:
    """One webhook POST as the receiver saw it, and the status it answered."""

    update: dict[str, Any]
    secret: str | None
    status: int

    @property
    def text(self) -> str:
        return str(self.update.get("message", {}).get("text", ""))


Verdict = Callable[[dict[str, Any]], Awaitable[int]]


async def accept(update: dict[str, Any]) -> int:
    return 200


class WebhookReceiver:
    """A stand-in webhook endpoint on 127.0.0.1 that records every POST.

    ``verdict`` decides the HTTP status for each update (and may wait, to be slow).
    """

    def __init__(self, verdict: Verdict = accept) -> None:
        self.verdict = verdict
        self.deliveries: list[Delivery] = []
        self._runner: web.AppRunner | None = None
        self.base = ""

    @property
    def url(self) -> str:
        return f"{self.base}/hook"

    def accepted(self) -> list[Delivery]:
        return [d for d in self.deliveries if 200 <= d.status < 300]

    async def _hook(self, request: web.Request) -> web.Response:
        update = await request.json()
        status = await self.verdict(update)
        secret = request.headers.get(SECRET_HEADER)
        self.deliveries.append(Delivery(update, secret, status))
        return web.Response(status=status)

    async def __aenter__(self) -> WebhookReceiver:
        app = web.Application()
        app.router.add_post("/hook", self._hook)
        self._runner = web.AppRunner(app, access_log=None, shutdown_timeout=0.5)
        await self._runner.setup()
        site = web.TCPSite(self._runner, "127.0.0.1", 0)
        await site.start()
        host, port = self._runner.addresses[0][:2]
        self.base = f"http://{host}:{port}"
        return self

    async def __aexit__(self, *exc: object) -> None:
        if self._runner is not None:
            await self._runner.cleanup()
