"""The Bot API over HTTP: ``/bot<token>/<method>`` as api.telegram.org serves it."""

from __future__ import annotations

from aiohttp import web

from sandbox.emulator.bot_api.dispatch import call_method
from sandbox.emulator.errors import ApiError
from sandbox.emulator.params import Params
from sandbox.emulator.types import JsonDict
from sandbox.emulator.world import World


async def read_params(request: web.Request) -> Params:
    """Parameters from the query string and a JSON, form or multipart body."""
    values: JsonDict = dict(request.query)
    if request.method == "POST" and request.body_exists:
        if request.content_type == "application/json":
            try:
                body = await request.json()
            except ValueError:
                raise ApiError(400, "Bad Request: invalid JSON in request body") from None
            if isinstance(body, dict):
                values.update(body)
        elif request.content_type in ("application/x-www-form-urlencoded", "multipart/form-data"):
            form = await request.post()
            for key, value in form.items():
                # Uploaded files are accepted but not stored; only their names are kept.
                values[key] = value if isinstance(value, str) else getattr(value, "filename", "")
    return Params(values)


class BotApiRoutes:
    """The bot-facing routes (methods and files) on the emulator's aiohttp app."""

    def __init__(self, world: World) -> None:
        self.w = world

    def install(self, app: web.Application) -> None:
        app.router.add_route("*", "/bot{token}/{method}", self._method)
        app.router.add_route("*", "/file/bot{token}/{path:.*}", self._file)

    async def _method(self, request: web.Request) -> web.Response:
        try:
            params = await read_params(request)
        except ApiError as err:
            return web.json_response(err.to_json(), status=err.error_code)
        status, body = await call_method(
            self.w, request.match_info["token"], request.match_info["method"], params
        )
        return web.json_response(body, status=status)

    async def _file(self, request: web.Request) -> web.Response:
        return web.json_response(ApiError(404, "Not Found").to_json(), status=404)
