"""A Bot API fault injector between the bot and the emulator (127.0.0.1 only).

The bot talks to the proxy; the proxy forwards to the emulator, except where a rule says
otherwise: answer slowly (the call is carried out, the answer comes late), carry a call
out late (after calls made later), answer 500 without forwarding, or refuse a chat with
``migrate_to_chat_id`` like Telegram does after a group became a supergroup.
"""

from __future__ import annotations

import asyncio
import json
from dataclasses import dataclass, field
from typing import Any

import aiohttp
from aiohttp import web


@dataclass
class Fault:
    kind: str  # "slow", "late", "error", "migrated"
    method: str | None = None
    chat_id: int | None = None
    seconds: float = 0.0
    migrate_to: int = 0
    times: int | None = None
    """Matches at most this many calls (None: all)."""

    def matches(self, method: str, chat_id: int | None) -> bool:
        return (
            (self.times is None or self.times > 0)
            # The Bot API's method names are case-insensitive (the bot's raw calls use that).
            and (self.method is None or self.method.lower() == method.lower())
            and (self.chat_id is None or self.chat_id == chat_id)
        )


@dataclass
class FaultProxy:
    target: str
    faults: list[Fault] = field(default_factory=list)
    hits: dict[str, int] = field(default_factory=dict)
    url: str = ""
    _runner: web.AppRunner | None = None
    _session: aiohttp.ClientSession | None = None

    async def start(self) -> str:
        app = web.Application()
        app.router.add_route("*", "/{tail:.*}", self._handle)
        self._runner = web.AppRunner(app, access_log=None, handler_cancellation=True)
        await self._runner.setup()
        site = web.TCPSite(self._runner, "127.0.0.1", 0)
        await site.start()
        host, port = self._runner.addresses[0][:2]
        self.url = f"http://{host}:{port}"
        self._session = aiohttp.ClientSession()
        return self.url

    async def stop(self) -> None:
        if self._session is not None:
            await self._session.close()
        if self._runner is not None:
            await self._runner.cleanup()

    async def _handle(self, request: web.Request) -> web.StreamResponse:
        assert self._session is not None
        body = await request.read()
        method = request.path.rsplit("/", 1)[-1]
        chat_id = _chat_id(body, request.content_type)
        fault = next((f for f in self.faults if f.matches(method, chat_id)), None)
        if fault is not None:
            self.hits[fault.kind] = self.hits.get(fault.kind, 0) + 1
            if fault.times is not None:
                fault.times -= 1
        if fault is not None and fault.kind == "error":
            return _error(500, "Internal Server Error")
        if fault is not None and fault.kind == "migrated":
            return _error(
                400,
                "Bad Request: group chat was upgraded to a supergroup chat",
                {"migrate_to_chat_id": fault.migrate_to},
            )
        if fault is not None and fault.kind == "late":
            await asyncio.sleep(fault.seconds)  # carried out late: after newer calls
        headers = {"Content-Type": request.headers.get("Content-Type", "application/json")}
        async with self._session.request(
            request.method, self.target + request.path_qs, data=body, headers=headers
        ) as answer:
            payload = await answer.read()
            status = answer.status
        if fault is not None and fault.kind == "slow":
            await asyncio.sleep(fault.seconds)  # carried out already; the answer is late
        return web.Response(body=payload, status=status, content_type="application/json")


def _chat_id(body: bytes, content_type: str) -> int | None:
    values: dict[str, Any] = {}
    try:
        if content_type == "application/json":
            values = json.loads(body or b"{}")
        else:
            from urllib.parse import parse_qsl

            values = dict(parse_qsl(body.decode()))
    except ValueError:
        return None
    raw = values.get("chat_id")
    try:
        return int(raw) if raw is not None else None
    except (TypeError, ValueError):
        return None


def _error(code: int, description: str, parameters: dict[str, Any] | None = None) -> web.Response:
    payload: dict[str, Any] = {"ok": False, "error_code": code, "description": description}
    if parameters:
        payload["parameters"] = parameters
    return web.json_response(payload, status=code)
