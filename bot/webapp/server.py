"""The Mini App's HTTP side (aiohttp): the page, a JSON API and server-sent events.

Every API request proves who it is with Telegram's signed init data (header
``X-Telegram-Init-Data``; for ``EventSource``, which cannot set headers, the query
parameter ``init_data``). No cookie, no session: the init data is checked each time.
Moves go through ``Games.run``, the same atomic path as a hand button. Every API
request is limited per client address (before the signature is checked) and per user
(after): over the limit, 429 with ``Retry-After`` (see ``ratelimit``).

The routes are here; which game a request is about is ``access``, its changes
``actions``, the event stream ``stream``, what a seat is shown ``views``.
"""

from __future__ import annotations

import time
from collections.abc import Awaitable, Callable
from pathlib import Path

from aiohttp import web

from bot.app.games import Games
from bot.app.reviews import Reviews
from bot.store.presence import Presence
from bot.webapp.access import seated
from bot.webapp.actions import Actions
from bot.webapp.hub import Hub, Viewer, dumps
from bot.webapp.initdata import InitDataError, WebAppUser, validate
from bot.webapp.ratelimit import (
    ADDRESS_RATE,
    STREAMS_PER_USER,
    USER_RATE,
    Buckets,
    Rate,
    client_address,
)
from bot.webapp.rating import rating_body
from bot.webapp.responses import content_security_policy, json_ok, read_body, too_many
from bot.webapp.review_api import ReviewApi
from bot.webapp.stream import LiveStreams
from bot.webapp.views import snapshot

STATIC = Path(__file__).resolve().parent / "static"
STATIC_FILES = {
    "app.js": "text/javascript",
    "app.css": "text/css",
    "favicon.svg": "image/svg+xml",
    "rating.js": "text/javascript",
    "rating.css": "text/css",
    "telegram-stand-in.js": "text/javascript",  # tests and the sandbox: no network
    "review.js": "text/javascript",
    "review.css": "text/css",
}
TELEGRAM_JS = "https://telegram.org/js/telegram-web-app.js"
TELEGRAM_FRAMES = "https://web.telegram.org https://*.web.telegram.org"
MAX_BODY = 4096
Handler = Callable[[web.Request], Awaitable[web.StreamResponse]]


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
        reviews: Reviews | None = None,
    ) -> None:
        self.games = games
        self.hub = hub
        self.user_buckets = Buckets(user_rate)
        self.address_buckets = Buckets(address_rate)
        self.streams_per_user = streams_per_user
        self.streams: dict[int, list[Viewer]] = {}
        """Each user's open event streams in this process, oldest first."""
        self.bot_token = bot_token
        self.max_age = max_age
        self.clock = clock
        self.actions = Actions(games, clock)
        self.live = LiveStreams(games, hub, presence, clock)
        self.review_api = ReviewApi(games, hub, reviews) if reviews is not None else None
        origin = telegram_js.split("/", 3)[:3]
        script_origin = "/".join(origin) if telegram_js.startswith("http") else ""
        self.csp = content_security_policy(script_origin, frame_ancestors)
        self.page = (STATIC / "index.html").read_text().replace("{{TELEGRAM_JS}}", telegram_js)
        self.rating_page = (
            (STATIC / "rating.html").read_text().replace("{{TELEGRAM_JS}}", telegram_js)
        )

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
        app.router.add_get("/rating", self.rating_chart)
        app.router.add_get("/api/rating", self.rating)
        app.router.add_get("/api/review", self.review)
        app.router.add_post("/api/review", self.ask_review)
        return app

    @web.middleware
    async def security_headers(self, request: web.Request, handler: Handler) -> web.StreamResponse:
        response = await handler(request)
        response.headers["Content-Security-Policy"] = self.csp
        response.headers["X-Content-Type-Options"] = "nosniff"
        response.headers["Referrer-Policy"] = "no-referrer"
        response.headers.setdefault("Cache-Control", "no-store")
        return response

    @web.middleware
    async def address_limit(self, request: web.Request, handler: Handler) -> web.StreamResponse:
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

    # --- the API --------------------------------------------------------------------------

    async def state(self, request: web.Request) -> web.Response:
        user = self.authenticate(request)
        game_id = request.query.get("game", "")
        who = await seated(self.games, self.hub, user, game_id, moved_status=200)
        if isinstance(who, web.Response):
            return who
        return json_ok(snapshot(who, self.clock()))

    async def move(self, request: web.Request) -> web.Response:
        user = self.authenticate(request)
        data = await read_body(request)
        who = await seated(self.games, self.hub, user, data["game"])
        if isinstance(who, web.Response):
            return who
        return await self.actions.move(who, data)

    async def rematch(self, request: web.Request) -> web.Response:
        user = self.authenticate(request)
        who = await seated(self.games, self.hub, user, (await read_body(request))["game"])
        if isinstance(who, web.Response):
            return who
        return await self.actions.rematch(who)

    async def start_game(self, request: web.Request) -> web.Response:
        user = self.authenticate(request)
        who = await seated(self.games, self.hub, user, (await read_body(request))["game"])
        if isinstance(who, web.Response):
            return who
        return await self.actions.start(who)

    # --- the rating chart -------------------------------------------------------------

    async def rating_chart(self, request: web.Request) -> web.Response:
        return web.Response(text=self.rating_page, content_type="text/html", charset="utf-8")

    async def rating(self, request: web.Request) -> web.Response:
        """The asker's own rating history (no game needed: it spans every group)."""
        user = self.authenticate(request)
        tr = await self.games.languages.person(user.user_id, user.language_code)
        history = await self.games.screens.ratings.history(user.user_id)
        return json_ok(rating_body(history, tr))

    async def review(self, request: web.Request) -> web.Response:
        user = self.authenticate(request)
        if self.review_api is None:
            raise web.HTTPNotFound()
        return await self.review_api.show(user, request.query)

    async def ask_review(self, request: web.Request) -> web.Response:
        user = self.authenticate(request)
        if self.review_api is None:
            raise web.HTTPNotFound()
        return await self.review_api.ask(user, await read_body(request))

    # --- live events ----------------------------------------------------------------------

    async def events(self, request: web.Request) -> web.StreamResponse:
        user = self.authenticate(request, query_allowed=True)
        game_id = request.query.get("game", "")
        who = await seated(self.games, self.hub, user, game_id, moved_status=200)
        if isinstance(who, web.Response):
            return who
        viewer = Viewer(user.user_id, who.place, who.game.game_id, who.lang)
        self.open_stream(viewer)
        return await self.live.serve(request, who, viewer, self.close_stream)

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

    def close(self) -> None:
        self.live.close()
