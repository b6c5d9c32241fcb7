"""The Mini App's HTTP answers: JSON errors, the rate limit's 429, the page's policy."""

from __future__ import annotations

from aiohttp import web

from bot.webapp.hub import dumps
from bot.webapp.ratelimit import retry_after
from bot.webapp.state import JsonDict


def content_security_policy(script_origin: str, frame_ancestors: str) -> str:
    return "; ".join(
        (
            "default-src 'none'",
            f"script-src 'self' {script_origin}",
            "style-src 'self'",
            "img-src 'self' data:",
            "connect-src 'self'",
            "base-uri 'none'",
            "form-action 'none'",
            f"frame-ancestors {frame_ancestors}",
        )
    )


def too_many(seconds: float) -> web.HTTPTooManyRequests:
    wait = retry_after(seconds)
    return web.HTTPTooManyRequests(
        text=dumps({"error": "too many requests", "retry_after": int(wait)}),
        content_type="application/json",
        headers={"Retry-After": wait},
    )


def json_error(status: int, error: str, state: JsonDict | None = None) -> web.Response:
    body: JsonDict = {"error": error}
    if state is not None:
        body["state"] = state
    return web.json_response(body, status=status, dumps=dumps)


def json_ok(body: JsonDict) -> web.Response:
    return web.json_response(body, dumps=dumps)


async def read_body(request: web.Request) -> JsonDict:
    """A JSON object naming its game: ``{game, …}``."""
    if request.content_type != "application/json":
        raise web.HTTPUnsupportedMediaType(text=dumps({"error": "send JSON"}))
    try:
        data = await request.json()
    except ValueError:
        data = None
    if not isinstance(data, dict) or not isinstance(data.get("game"), str):
        raise web.HTTPBadRequest(
            text=dumps({"error": "expected {game, …}"}), content_type="application/json"
        )
    return data
