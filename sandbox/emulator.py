"""Our own Telegram Bot API emulator: an aiohttp server on 127.0.0.1 for end-to-end tests.

The real python-telegram-bot ``Application`` runs against it unmodified::

    async with BotApiEmulator() as emu:
        emu.add_bot("123:abc")
        emu.add_user(1, "Ann")
        app = ApplicationBuilder().token("123:abc").base_url(f"{emu.url}/bot").build()

Bot-facing API: ``/bot<token>/<method>``. Control API for tests is the Python methods of
``BotApiEmulator`` (see ``EmulatorCore``); the sandbox page uses the JSON mirror under
``/_emu/`` including a Server-Sent Events stream at ``/_emu/events``.
"""

from __future__ import annotations

import contextlib
import ipaddress
import json
import time
from collections.abc import Awaitable, Callable
from types import TracebackType
from typing import Any

from aiohttp import web

from sandbox.emulator_core import EmulatorCore
from sandbox.emulator_events import Subscription
from sandbox.emulator_limits import EmuStats, RateLimits
from sandbox.emulator_methods import call_method
from sandbox.emulator_models import (
    ApiError,
    CallbackAnswer,
    CallbackHandle,
    EmuBot,
    EmuChat,
    EmulatorError,
    EmuMessage,
    EmuUser,
    JsonDict,
    NotFound,
    Params,
)
from sandbox.emulator_state import BotRef

__all__ = [
    "ApiError",
    "BotApiEmulator",
    "BotRef",
    "CallbackAnswer",
    "CallbackHandle",
    "EmuBot",
    "EmuChat",
    "EmuMessage",
    "EmuStats",
    "EmuUser",
    "EmulatorError",
    "NotFound",
    "RateLimits",
    "Subscription",
    "json_body",
    "json_endpoint",
]

_SSE_HEARTBEAT = 15.0
ControlHandler = Callable[[web.Request], Awaitable[Any]]


def _is_loopback(host: str) -> bool:
    if host == "localhost":
        return True
    try:
        return ipaddress.ip_address(host).is_loopback
    except ValueError:
        return False


@web.middleware
async def _loopback_host_only(
    request: web.Request, handler: Callable[[web.Request], Awaitable[web.StreamResponse]]
) -> web.StreamResponse:
    # Binding to 127.0.0.1 is not enough against DNS rebinding: a web page on an attacker's
    # hostname resolving to 127.0.0.1 would otherwise be able to read and drive the emulator.
    try:
        host = request.url.host or ""
    except ValueError:  # a malformed Host header
        host = ""
    if not _is_loopback(host):
        return web.json_response({"ok": False, "error": "loopback Host required"}, status=403)
    return await handler(request)


def json_endpoint(handler: ControlHandler) -> Callable[[web.Request], Awaitable[web.Response]]:
    """Wrap a control endpoint (the emulator's or the sandbox page's): JSON
    ``{"ok": true, "result": ...}``, or 404/400 with the reason."""

    async def wrapped(request: web.Request) -> web.Response:
        try:
            result = await handler(request)
        except NotFound as err:
            return web.json_response({"ok": False, "error": str(err)}, status=404)
        except KeyError as err:
            return web.json_response({"ok": False, "error": f"missing field {err}"}, status=400)
        except (EmulatorError, ValueError, TypeError) as err:
            return web.json_response({"ok": False, "error": str(err)}, status=400)
        return web.json_response({"ok": True, "result": result})

    return wrapped


async def json_body(request: web.Request) -> JsonDict:
    # Requiring application/json means a foreign web page cannot drive the emulator with a
    # simple cross-origin form post.
    if request.content_type != "application/json":
        raise EmulatorError("control endpoints take Content-Type: application/json")
    body = await request.json()
    if not isinstance(body, dict):
        raise EmulatorError("JSON object expected")
    return body


def _opt_int(value: Any) -> int | None:
    return None if value is None else int(value)


def _bot_ref(value: Any) -> BotRef:
    if value is None or isinstance(value, int):
        return value
    text = str(value)
    return int(text) if text.lstrip("-").isdigit() else text


class BotApiEmulator(EmulatorCore):
    """The emulator server. Use ``async with BotApiEmulator() as emu`` or start()/stop()."""

    def __init__(
        self,
        rate_limits: bool | RateLimits = False,
        *,
        clock: Callable[[], float] = time.monotonic,
        wall_clock: Callable[[], float] = time.time,
        callback_ttl: float | None = 15.0,
    ) -> None:
        """``rate_limits``: True for Telegram's limits, or custom RateLimits; ``clock`` drives
        rate windows and callback expiry (a fake clock keeps tests free of sleeps)."""
        super().__init__(
            rate_limits=rate_limits, clock=clock, wall_clock=wall_clock, callback_ttl=callback_ttl
        )
        self.app = web.Application(middlewares=[_loopback_host_only])
        self._runner: web.AppRunner | None = None
        self._url: str | None = None
        self._setup_routes()

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
        if not _is_loopback(host):
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
        self.closing = False
        return self._url

    async def stop(self) -> None:
        """Release pending long polls and event streams, then close the server."""
        self.closing = True
        for b in self.bots:
            b.poke()
        self.close_subscriptions()
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

    # ----------------------------------------------------------------- routes

    def _setup_routes(self) -> None:
        r = self.app.router
        r.add_route("*", "/bot{token}/{method}", self._bot_endpoint)
        r.add_route("*", "/file/bot{token}/{path:.*}", self._file_endpoint)
        r.add_post("/_emu/users", json_endpoint(self._c_add_user))
        r.add_post("/_emu/groups", json_endpoint(self._c_add_group))
        r.add_post("/_emu/send", json_endpoint(self._c_send))
        r.add_post("/_emu/start", json_endpoint(self._c_start))
        r.add_post("/_emu/block", json_endpoint(self._c_block))
        r.add_post("/_emu/press", json_endpoint(self._c_press))
        r.add_get("/_emu/chats/{chat_id}/messages", json_endpoint(self._c_messages))
        r.add_get("/_emu/chats/{chat_id}/events", json_endpoint(self._c_chat_events))
        r.add_get("/_emu/state", json_endpoint(self._c_state))
        r.add_get("/_emu/stats", json_endpoint(self._c_stats))
        r.add_get("/_emu/events", self._sse_endpoint)

    async def _read_params(self, request: web.Request) -> Params:
        values: JsonDict = dict(request.query)
        if request.method == "POST" and request.body_exists:
            if request.content_type == "application/json":
                try:
                    body = await request.json()
                except ValueError:
                    raise ApiError(400, "Bad Request: invalid JSON in request body") from None
                if isinstance(body, dict):
                    values.update(body)
            elif request.content_type in (
                "application/x-www-form-urlencoded",
                "multipart/form-data",
            ):
                form = await request.post()
                for key, value in form.items():
                    # Uploaded files are accepted but not stored; only their names are kept.
                    values[key] = (
                        value if isinstance(value, str) else getattr(value, "filename", "")
                    )
        return Params(values)

    async def _bot_endpoint(self, request: web.Request) -> web.Response:
        try:
            params = await self._read_params(request)
        except ApiError as err:
            return web.json_response(err.to_json(), status=err.error_code)
        status, body = await call_method(
            self, request.match_info["token"], request.match_info["method"], params
        )
        return web.json_response(body, status=status)

    async def _file_endpoint(self, request: web.Request) -> web.Response:
        return web.json_response(ApiError(404, "Not Found").to_json(), status=404)

    # ----------------------------------------------------------------- control endpoints

    def _chat_ref(self, request: web.Request) -> tuple[int, BotRef]:
        return int(request.match_info["chat_id"]), _bot_ref(request.query.get("bot"))

    async def _c_add_user(self, request: web.Request) -> Any:
        body = await json_body(request)
        user = self.add_user(
            int(body["user_id"]),
            str(body["first_name"]),
            username=body.get("username"),
            language_code=body.get("language_code", "en"),
            last_name=body.get("last_name"),
        )
        return user.to_api()

    async def _c_add_group(self, request: web.Request) -> Any:
        body = await json_body(request)
        bots = body.get("bots")
        chat = self.add_group(
            int(body["chat_id"]),
            str(body["title"]),
            members=[int(u) for u in body.get("members", [])],
            admins=[int(u) for u in body.get("admins", [])],
            creator=_opt_int(body.get("creator")),
            bots=[_bot_ref(b) for b in bots] if bots is not None else None,
            chat_type=str(body.get("type", "supergroup")),
        )
        return chat.to_dict()

    async def _c_send(self, request: web.Request) -> Any:
        body = await json_body(request)
        message = await self.user_sends(
            int(body["user_id"]),
            int(body["chat_id"]),
            str(body["text"]),
            bot=_bot_ref(body.get("bot")),
            reply_to=_opt_int(body.get("reply_to")),
        )
        return message.to_dict()

    async def _c_start(self, request: web.Request) -> Any:
        body = await json_body(request)
        payload = body.get("payload")
        message = await self.user_starts_bot(
            int(body["user_id"]),
            None if payload in (None, "") else str(payload),
            bot=_bot_ref(body.get("bot")),
        )
        return message.to_dict()

    async def _c_block(self, request: web.Request) -> Any:
        body = await json_body(request)
        self.user_blocks_bot(int(body["user_id"]), bot=_bot_ref(body.get("bot")))
        return True

    async def _c_press(self, request: web.Request) -> Any:
        body = await json_body(request)
        handle = await self.user_presses(
            int(body["user_id"]),
            int(body["chat_id"]),
            int(body["message_id"]),
            data=body.get("data"),
            text=body.get("text"),
            bot=_bot_ref(body.get("bot")),
        )
        answer: JsonDict | None = None
        wait = body.get("wait")
        if wait:
            with contextlib.suppress(TimeoutError):
                answer = (await handle.answer(timeout=float(wait))).to_dict()
        return {"callback_query_id": handle.id, "answer": answer}

    async def _c_messages(self, request: web.Request) -> Any:
        chat_id, bot = self._chat_ref(request)
        return [m.to_dict() for m in self.messages(chat_id, bot=bot)]

    async def _c_chat_events(self, request: web.Request) -> Any:
        chat_id, bot = self._chat_ref(request)
        return self.chat_events(chat_id, bot=bot)

    async def _c_state(self, request: web.Request) -> Any:
        return self.state()

    async def _c_stats(self, request: web.Request) -> Any:
        return self.stats.to_dict()

    async def _sse_endpoint(self, request: web.Request) -> web.StreamResponse:
        """Server-Sent Events: one ``event: <type>`` with JSON data per change."""
        try:
            chat_ids = [int(v) for v in request.query.getall("chat_id", [])]
        except ValueError:
            return web.json_response({"ok": False, "error": "bad chat_id"}, status=400)
        response = web.StreamResponse(
            headers={
                "Content-Type": "text/event-stream",
                "Cache-Control": "no-cache",
                "X-Accel-Buffering": "no",
            }
        )
        with self.subscribe(chat_ids or None) as subscription:
            await response.prepare(request)
            # The comment tells clients the subscription is live before anything happens.
            await response.write(b": connected\n\n")
            with contextlib.suppress(ConnectionResetError):
                while True:
                    try:
                        event = await subscription.get(timeout=_SSE_HEARTBEAT)
                    except TimeoutError:
                        await response.write(b": ping\n\n")
                        continue
                    if event is None:
                        break
                    data = json.dumps(event, ensure_ascii=False)
                    frame = f"id: {event['seq']}\nevent: {event['type']}\ndata: {data}\n\n"
                    await response.write(frame.encode("utf-8"))
        return response
