"""The Mini App's HTTP side (aiohttp): the page, a JSON API and server-sent events.

Every API request proves who it is with Telegram's signed init data (header
``X-Telegram-Init-Data``; for ``EventSource``, which cannot set headers, the query
parameter ``init_data``). No cookie, no session: the init data is checked each time.
Moves go through ``Games.play``, the same atomic path as a hand button. Every API
request is limited per client address (before the signature is checked) and per user
(after): over the limit, 429 with ``Retry-After`` (see ``ratelimit``).
"""

from __future__ import annotations

import asyncio
import contextlib
import logging
import time
from collections.abc import Awaitable, Callable
from dataclasses import dataclass
from pathlib import Path
from typing import Any

from aiohttp import web

from bot import render
from bot.app.games import Games
from bot.app.ids import new_game_id
from bot.domain import flow
from bot.domain.flow import FlowError
from bot.domain.records import ChatGame
from bot.store.presence import REFRESH_EVERY, Presence
from bot.webapp.hub import Hub, Viewer, dumps
from bot.webapp.initdata import InitDataError, WebAppUser, validate
from bot.webapp.ratelimit import (
    ADDRESS_RATE,
    STREAMS_PER_USER,
    USER_RATE,
    Buckets,
    Rate,
    client_address,
    retry_after,
)
from bot.webapp.state import JsonDict, game_state, moved_on, plain
from engine import ParseError, State, parse_action
from locales import negotiate, translator

log = logging.getLogger(__name__)

STATIC = Path(__file__).resolve().parent / "static"
STATIC_FILES = {
    "app.js": "text/javascript",
    "app.css": "text/css",
    "favicon.svg": "image/svg+xml",
    "telegram-stand-in.js": "text/javascript",  # tests and the sandbox: no network
}
TELEGRAM_JS = "https://telegram.org/js/telegram-web-app.js"
TELEGRAM_FRAMES = "https://web.telegram.org https://*.web.telegram.org"
KEEPALIVE = 15.0
LANG_TTL = 30.0
"""How long a user's chosen language (``/language``) is reused without a read."""
LANGS_KEPT = 20_000
MAX_BODY = 4096


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


@dataclass
class Seated:
    """An authenticated request about a game its user sits in."""

    user: WebAppUser
    chat_id: int
    table: ChatGame
    seat: int
    lang: str


class MiniAppServer:
    def __init__(
        self,
        games: Games,
        hub: Hub,
        presence: Presence,
        *,
        bot_token: str,
        max_age: float,
        telegram_js: str = TELEGRAM_JS,
        frame_ancestors: str = TELEGRAM_FRAMES,
        clock: Callable[[], float] = time.time,
        user_rate: Rate = USER_RATE,
        address_rate: Rate = ADDRESS_RATE,
        streams_per_user: int = STREAMS_PER_USER,
    ) -> None:
        self.games = games
        self.user_buckets = Buckets(user_rate)
        self.address_buckets = Buckets(address_rate)
        self.streams_per_user = streams_per_user
        self.streams: dict[int, list[Viewer]] = {}
        self.langs: dict[int, tuple[str | None, float]] = {}
        """User id -> (chosen language, until when it is reused)."""
        """Each user's open event streams in this process, oldest first."""
        self.hub = hub
        self.presence = presence
        self.restores: set[asyncio.Task[None]] = set()
        self.bot_token = bot_token
        self.max_age = max_age
        self.telegram_js = telegram_js
        self.clock = clock
        origin = telegram_js.split("/", 3)[:3]
        script_origin = "/".join(origin) if telegram_js.startswith("http") else ""
        self.csp = content_security_policy(script_origin, frame_ancestors)
        self.page = (STATIC / "index.html").read_text().replace("{{TELEGRAM_JS}}", telegram_js)
        self.closing = asyncio.Event()
        hub.state_of = self.viewer_state

    def application(self) -> web.Application:
        app = web.Application(
            middlewares=[self.security_headers, self.address_limit], client_max_size=MAX_BODY
        )
        app.router.add_get("/", self.index)
        app.router.add_get("/static/{name}", self.static)
        app.router.add_get("/api/state", self.state)
        app.router.add_post("/api/move", self.move)
        app.router.add_post("/api/rematch", self.rematch)
        app.router.add_post("/api/start", self.start_game)
        app.router.add_get("/api/events", self.events)
        return app

    @web.middleware
    async def security_headers(
        self, request: web.Request, handler: Callable[[web.Request], Awaitable[web.StreamResponse]]
    ) -> web.StreamResponse:
        response = await handler(request)
        response.headers["Content-Security-Policy"] = self.csp
        response.headers["X-Content-Type-Options"] = "nosniff"
        response.headers["Referrer-Policy"] = "no-referrer"
        response.headers.setdefault("Cache-Control", "no-store")
        return response

    @web.middleware
    async def address_limit(
        self, request: web.Request, handler: Callable[[web.Request], Awaitable[web.StreamResponse]]
    ) -> web.StreamResponse:
        if request.path.startswith("/api/"):
            address = client_address(request.remote, request.headers.get("X-Forwarded-For"))
            if address is not None and (wait := self.address_buckets.take(address)):
                raise too_many(wait)
        return await handler(request)

    # --- the page -------------------------------------------------------------------------

    async def index(self, request: web.Request) -> web.Response:
        return web.Response(text=self.page, content_type="text/html", charset="utf-8")

    async def static(self, request: web.Request) -> web.Response:
        name = request.match_info["name"]
        kind = STATIC_FILES.get(name)
        if kind is None:
            raise web.HTTPNotFound()
        return web.Response(
            body=(STATIC / name).read_bytes(),
            content_type=kind,
            headers={"Cache-Control": "no-cache"},
        )

    # --- who is asking --------------------------------------------------------------------

    def authenticate(self, request: web.Request, *, query_allowed: bool = False) -> WebAppUser:
        raw = request.headers.get("X-Telegram-Init-Data")
        if raw is None and query_allowed:
            raw = request.query.get("init_data")
        try:
            user = validate(raw, self.bot_token, max_age=self.max_age, now=time.time())
        except InitDataError as err:
            raise web.HTTPUnauthorized(
                text=dumps({"error": f"init data: {err}"}), content_type="application/json"
            ) from None
        if wait := self.user_buckets.take(user.user_id):
            raise too_many(wait)
        return user

    async def seated(
        self, user: WebAppUser, game_id: str, *, moved_status: int = 409
    ) -> Seated | web.Response:
        """The game and the user's seat; a response when there is none to give."""
        chat_id = await self.hub.chat_of(game_id) if game_id else None
        table = await self.games.storage.peek_table(chat_id) if chat_id is not None else None
        if chat_id is not None and (table is None or table.seat_of(user.user_id) is None):
            # Maybe remembered from before the group moved: ask the index once more.
            now_in = await self.hub.chat_of(game_id, fresh=True)
            if now_in is not None and now_in != chat_id:
                chat_id, table = now_in, await self.games.storage.load_table(now_in)
        if chat_id is None or table is None:
            return json_error(404, "no such game")
        seat = table.seat_of(user.user_id)
        if table.game_id != game_id:
            if seat is None:
                return json_error(403, "not seated")
            moved = moved_on(game_id, table, user.user_id)
            if moved_status == 200:
                return web.json_response(moved, dumps=dumps)
            return json_error(moved_status, "game over", moved)
        if seat is None:
            return json_error(403, "not seated")
        chosen = await self.chosen_lang(user.user_id)
        lang = negotiate(chosen or user.language_code or table.seats[seat].lang)
        return Seated(user, chat_id, table, seat, lang)

    async def chosen_lang(self, user_id: int) -> str | None:
        """The language the user chose with /language, read at most every ``LANG_TTL``
        seconds: every request needs it, and it rarely changes."""
        now = time.monotonic()
        kept = self.langs.get(user_id)
        if kept is not None and kept[1] > now:
            return kept[0]
        lang = await self.games.storage.user_language(user_id)
        if len(self.langs) >= LANGS_KEPT:
            self.langs.clear()
        self.langs[user_id] = (lang, now + LANG_TTL)
        return lang

    def snapshot(self, who: Seated, table: ChatGame | None = None) -> JsonDict:
        table = table or who.table
        if table.game_id != who.table.game_id:
            return moved_on(who.table.game_id, table, who.user.user_id)
        seat = table.seat_of(who.user.user_id)
        if seat is None:
            return {"game": who.table.game_id, "phase": "gone"}
        return {**game_state(table, seat, translator(who.lang)), "now": self.clock()}

    async def refused(self, who: Seated, err: FlowError) -> web.Response:
        """A refused change, worded as the chat's toast, with the state as it is now."""
        table = await self.games.storage.load_table(who.chat_id)
        tr = translator(who.lang)
        kwargs = err.kwargs
        if err.key == "toast.moved_on":  # the flow has no translator to name the change
            kwargs = {"change": render.moved_on_change(table, tr)}
        state = (
            self.snapshot(who, table)
            if table is not None
            else {"game": who.table.game_id, "phase": "gone"}
        )
        return json_error(409, plain(tr.t(err.key, **kwargs)), state)

    async def body(self, request: web.Request) -> JsonDict:
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

    # --- the API --------------------------------------------------------------------------

    async def state(self, request: web.Request) -> web.Response:
        user = self.authenticate(request)
        who = await self.seated(user, request.query.get("game", ""), moved_status=200)
        if isinstance(who, web.Response):
            return who
        return web.json_response(self.snapshot(who), dumps=dumps)

    async def move(self, request: web.Request) -> web.Response:
        user = self.authenticate(request)
        data = await self.body(request)
        who = await self.seated(user, data["game"])
        if isinstance(who, web.Response):
            return who
        try:
            action = parse_action(str(data.get("action", "")))
        except ParseError as err:
            return json_error(400, str(err))
        table = who.table
        if table.phase != "playing" or table.state is None:
            return json_error(409, "not running", self.snapshot(who))
        step = data.get("step", table.state.get("step"))
        if not isinstance(step, int):
            return json_error(400, "step must be a number")
        # Like a tap in the chat: a half-made choice on the hand message is dropped.
        self.games.clear_mode(who.chat_id, user.user_id)
        try:
            table = await self.games.run(
                who.chat_id, flow.play, table.game_id, user.user_id, step, action
            )
        except FlowError as err:
            return await self.refused(who, err)
        # The table as this move left it: no second read (the event stream has any later one).
        return web.json_response(self.snapshot(who, table), dumps=dumps)

    async def rematch(self, request: web.Request) -> web.Response:
        """The result's Rematch: the group's "New game"/"Next game" button, from the app."""
        user = self.authenticate(request)
        who = await self.seated(user, (await self.body(request))["game"])
        if isinstance(who, web.Response):
            return who
        return await self._change(who, flow.next_game, who.table.game_id, new_game_id())

    async def start_game(self, request: web.Request) -> web.Response:
        """Start the lobby (its creator only: group admins use the group's button)."""
        user = self.authenticate(request)
        who = await self.seated(user, (await self.body(request))["game"])
        if isinstance(who, web.Response):
            return who
        if who.table.creator_id != user.user_id:
            return json_error(403, "only the creator starts from the app")
        unreachable = await self.games.unreachable(who.table)
        return await self._change(who, flow.start, who.table.game_id, user.user_id, unreachable)

    async def _change(self, who: Seated, operation: Any, *args: Any) -> web.Response:
        """Run a flow operation the way the group's buttons do (``Games.run``)."""
        try:
            table = await self.games.run(who.chat_id, operation, *args)
        except FlowError as err:
            return await self.refused(who, err)
        seat = table.seat_of(who.user.user_id)
        if seat is None:
            return json_error(403, "not seated")
        return web.json_response(
            {**game_state(table, seat, translator(who.lang)), "now": self.clock()}, dumps=dumps
        )

    # --- live events ----------------------------------------------------------------------

    def viewer_state(self, table: ChatGame, state: State | None, viewer: Viewer) -> str:
        if table.game_id != viewer.game_id:
            return dumps(moved_on(viewer.game_id, table, viewer.user_id))
        seat = table.seat_of(viewer.user_id)
        if seat is None:
            return dumps({"game": viewer.game_id, "phase": "gone"})
        return dumps(game_state(table, seat, translator(viewer.lang), state))

    async def events(self, request: web.Request) -> web.StreamResponse:
        user = self.authenticate(request, query_allowed=True)
        who = await self.seated(user, request.query.get("game", ""), moved_status=200)
        if isinstance(who, web.Response):
            return who
        viewer = Viewer(user.user_id, who.chat_id, who.table.game_id, who.lang)
        self.open_stream(viewer)
        response = web.StreamResponse(
            headers={
                "Content-Type": "text/event-stream",
                "Cache-Control": "no-store",
                "X-Accel-Buffering": "no",  # nginx: pass events on at once
            }
        )
        await response.prepare(request)
        await response.write(b"retry: 1000\n\n")
        self.hub.add(viewer)
        chat_id, user_id = who.chat_id, user.user_id
        try:
            # Read after subscribing, so no change between the two is missed.
            table = await self.games.storage.load_table(chat_id) or who.table
            viewer.offer(self.viewer_state(table, None, viewer))
            await self.presence.mark(chat_id, user_id)
            self.games.box.refresh_hand(chat_id, user_id)  # collapses to "Open table"
            marked = time.monotonic()
            while not self.closing.is_set() and not viewer.ended:
                with contextlib.suppress(TimeoutError):
                    # A closed page is only noticed when a write fails: write often enough
                    # that the hand's buttons come back soon after the presence expires.
                    await asyncio.wait_for(
                        viewer.wake.wait(), min(KEEPALIVE, self.presence.ttl / 3)
                    )
                viewer.wake.clear()
                if time.monotonic() - marked >= min(REFRESH_EVERY, self.presence.ttl / 3):
                    # Only kept, never re-made: after "Play here" the chat has the buttons
                    # until the app is opened again (a new stream).
                    await self.presence.keep(chat_id, user_id)
                    marked = time.monotonic()
                latest = viewer.latest
                if latest is not None and latest != viewer.sent:
                    now = dumps(self.clock())
                    payload = f'{latest[:-1]},"now":{now}}}' if latest.endswith("}") else latest
                    await response.write(f"event: state\ndata: {payload}\n\n".encode())
                    viewer.sent = latest
                else:
                    await response.write(b": keep-alive\n\n")
        except (ConnectionResetError, asyncio.CancelledError):
            pass
        finally:
            self.hub.remove(viewer)
            self.close_stream(viewer)
            if not self.closing.is_set():
                self.restore_later(chat_id, user_id)
        return response

    def open_stream(self, viewer: Viewer) -> None:
        """Count the stream; past the cap the user's oldest one ends (a reloaded page's
        old stream is only noticed at its next write)."""
        mine = self.streams.setdefault(viewer.user_id, [])
        mine.append(viewer)
        while len(mine) > self.streams_per_user:
            oldest = mine.pop(0)
            oldest.ended = True
            oldest.wake.set()

    def close_stream(self, viewer: Viewer) -> None:
        mine = self.streams.get(viewer.user_id, [])
        if viewer in mine:
            mine.remove(viewer)
        if not mine:
            self.streams.pop(viewer.user_id, None)

    def restore_later(self, chat_id: int, user_id: int) -> None:
        """Once the app has been closed for a while, the hand's buttons come back (the
        refresh renders the collapsed message again, unchanged, if it was reopened)."""

        async def restore() -> None:
            await asyncio.sleep(self.presence.ttl + 1)
            self.games.box.refresh_hand(chat_id, user_id)

        task = asyncio.create_task(restore())
        self.restores.add(task)
        task.add_done_callback(self.restores.discard)

    def close(self) -> None:
        self.closing.set()
        for task in self.restores:
            task.cancel()
        for viewers in self.hub.viewers.values():
            for viewer in viewers:
                viewer.wake.set()
