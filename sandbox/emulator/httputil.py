"""HTTP helpers shared by the emulator's server and the sandbox page."""

from __future__ import annotations

import contextlib
import ipaddress
import json
from collections.abc import Awaitable, Callable
from typing import Any

from aiohttp import web

from sandbox.emulator.errors import EmulatorError, NotFound
from sandbox.emulator.events import Subscription
from sandbox.emulator.types import JsonDict

HEARTBEAT = 15.0  # seconds between keep-alive comments on an idle event stream
ControlHandler = Callable[[web.Request], Awaitable[Any]]
_SSE_HEADERS = {
    "Content-Type": "text/event-stream",
    "Cache-Control": "no-cache",
    "X-Accel-Buffering": "no",
}


def is_loopback(host: str) -> bool:
    """True for localhost and loopback IP addresses (127.0.0.0/8, ::1)."""
    if host == "localhost":
        return True
    try:
        return ipaddress.ip_address(host).is_loopback
    except ValueError:
        return False


@web.middleware
async def loopback_host_only(
    request: web.Request, handler: Callable[[web.Request], Awaitable[web.StreamResponse]]
) -> web.StreamResponse:
    """Refuse requests whose Host header is not a loopback name."""
    # Binding to 127.0.0.1 is not enough against DNS rebinding: a web page on an attacker's
    # hostname resolving to 127.0.0.1 would otherwise be able to read and drive the emulator.
    try:
        host = request.url.host or ""
    except ValueError:  # a malformed Host header
        host = ""
    if not is_loopback(host):
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
    """The request's JSON object body."""
    # Requiring application/json means a foreign web page cannot drive the emulator with a
    # simple cross-origin form post.
    if request.content_type != "application/json":
        raise EmulatorError("control endpoints take Content-Type: application/json")
    body = await request.json()
    if not isinstance(body, dict):
        raise EmulatorError("JSON object expected")
    return body


def sse_frame(name: str, data: JsonDict, *, event_id: int | None = None) -> bytes:
    """One Server-Sent Event: ``event: <name>`` with JSON data."""
    head = f"id: {event_id}\n" if event_id is not None else ""
    return f"{head}event: {name}\ndata: {json.dumps(data, ensure_ascii=False)}\n\n".encode()


async def stream_events(
    request: web.Request,
    subscription: Subscription,
    encode: Callable[[JsonDict], bytes | None],
    *,
    preamble: bytes,
) -> web.StreamResponse:
    """Serve a subscription as Server-Sent Events until it closes or the client leaves.

    ``preamble`` goes first (e.g. a snapshot); ``encode`` turns each event into a frame
    (None skips it); an idle stream gets a keep-alive comment every ``HEARTBEAT`` seconds.
    """
    response = web.StreamResponse(headers=_SSE_HEADERS)
    await response.prepare(request)
    await response.write(preamble)
    with contextlib.suppress(ConnectionResetError):
        while True:
            try:
                event = await subscription.get(timeout=HEARTBEAT)
            except TimeoutError:
                await response.write(b": ping\n\n")
                continue
            if event is None:  # the emulator is shutting down
                break
            frame = encode(event)
            if frame is not None:
                await response.write(frame)
    return response
