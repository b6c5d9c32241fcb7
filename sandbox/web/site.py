"""The sandbox page and its small JSON + Server-Sent Events API, on the emulator's server.

Routes (added to ``BotApiEmulator.app`` before it starts, so one loopback port serves the
Bot API for the bot and the page for people):

- ``GET /`` and ``/static/...``: the page (plain files from ``sandbox/web/static``).
- ``GET /_sandbox/info``: bot, group, languages, who is here, bot process status.
- ``POST /_sandbox/join``: a new sandbox user (a browser tab) who joins the demo group.
- ``GET /_sandbox/events?user_id=``: SSE; a ``snapshot`` first, then changes.
- ``POST /_sandbox/send`` / ``press`` / ``open``: type a message (in a forum topic:
  ``thread``), press a button (of an ephemeral message: ``ephemeral_id``), follow a link.
- ``POST /_sandbox/topics``: the group's admin turns topics on or off, creates, closes,
  reopens or deletes a topic.
- ``POST /_sandbox/dismiss`` / ``presence``: drop an ephemeral message from this app, go
  offline or online (offline, ephemeral messages do not arrive).
- ``GET /_sandbox/commands``: the bot's command menu for that user and chat.

Everything acts through the emulator's user-side API, so the bot sees exactly the updates
a Telegram client would cause.
"""

from __future__ import annotations

import re
from dataclasses import dataclass
from pathlib import Path
from typing import Any

from aiohttp import web

from locales import SUPPORTED, language_name
from sandbox.emulator import BotApiEmulator, EmulatorError, JsonDict, NotFound
from sandbox.emulator.httputil import json_body, json_endpoint, sse_frame, stream_events
from sandbox.web.miniapp import MiniAppLauncher
from sandbox.web.view import ChatName, classify_link, message_view, page_event, seen_views

STATIC_DIR = Path(__file__).with_name("static")
_STATIC_TYPES = {
    "app.js": "text/javascript",
    "style.css": "text/css",
    "favicon.svg": "image/svg+xml",
}
# Every language the bot speaks, by its own name (one list: the catalogues').
LANGUAGES = {code: language_name(code) for code in SUPPORTED}
GROUP_ID = -1001000000001
GROUP_TITLE = "Durak sandbox"
FIRST_USER_ID = 1_000_001
MAX_NAME = 64
MAX_TEXT = 4096  # what a Telegram client lets you type into one message
_CONTROL_CHARS = re.compile(r"[\x00-\x1f\x7f]")
# The page runs only its own script and talks only to this server, so even a rendering
# bug could not run injected markup or send data elsewhere.
_PAGE_HEADERS = {
    "Content-Security-Policy": (
        "default-src 'none'; script-src 'self'; style-src 'self'; img-src 'self' data:; "
        "connect-src 'self'; base-uri 'none'; form-action 'none'; frame-ancestors 'none'"
    ),
    "X-Content-Type-Options": "nosniff",
    "Referrer-Policy": "no-referrer",
    "Cache-Control": "no-cache",
}


@dataclass
class SandboxUser:
    id: int
    name: str
    language: str

    def to_json(self) -> JsonDict:
        return {"id": self.id, "name": self.name, "language": self.language}


def _chat(value: Any) -> ChatName:
    if value == "group":
        return "group"
    if value == "private":
        return "private"
    raise ValueError("chat must be 'group' or 'private'")


class SandboxWeb:
    """The demo group, its people, and the page's API."""

    def __init__(
        self,
        emulator: BotApiEmulator,
        *,
        bot_username: str,
        group_id: int = GROUP_ID,
        group_title: str = GROUP_TITLE,
    ) -> None:
        self.emu = emulator
        self.bot_username = bot_username
        self.group_id = group_id
        self.group_title = group_title
        self.users: dict[int, SandboxUser] = {}
        self.bot_status: JsonDict = {"state": "starting"}
        self.mini_app: MiniAppLauncher | None = None

    def install(self, app: web.Application) -> None:
        r = app.router
        r.add_get("/", self._index)
        r.add_get("/static/{name}", self._static)
        r.add_get("/favicon.ico", self._favicon)
        r.add_get("/_sandbox/info", json_endpoint(self._info))
        r.add_post("/_sandbox/join", json_endpoint(self._join))
        r.add_get("/_sandbox/events", self._events)
        r.add_post("/_sandbox/send", json_endpoint(self._send))
        r.add_post("/_sandbox/press", json_endpoint(self._press))
        r.add_post("/_sandbox/open", json_endpoint(self._open))
        r.add_post("/_sandbox/topics", json_endpoint(self._topics))
        r.add_post("/_sandbox/dismiss", json_endpoint(self._dismiss))
        r.add_post("/_sandbox/presence", json_endpoint(self._presence))
        r.add_get("/_sandbox/commands", json_endpoint(self._commands))
        r.add_post("/_sandbox/webapp", json_endpoint(self._webapp))

    # ----------------------------------------------------------------- state

    def set_bot_status(self, state: str, **details: Any) -> None:
        """Record the bot process state and tell every open page."""
        self.bot_status = {"state": state, **details}
        self.emu.emit(None, "sandbox", bot=self.bot_status)

    def join(self, name: str, language: str) -> SandboxUser:
        """A new person: an emulator user in the demo group (the first one creates it)."""
        clean = _CONTROL_CHARS.sub(" ", name).strip()[:MAX_NAME].strip()
        if not clean:
            raise ValueError("choose a name")
        if language not in LANGUAGES:
            raise ValueError(f"language must be one of {', '.join(LANGUAGES)}")
        user_id = FIRST_USER_ID + len(self.users)
        self.emu.add_user(user_id, clean, language_code=language)
        if self.emu.chat(self.group_id) is None:
            # Created on the first join, as in Telegram: that person makes the group and
            # adds the bot, so the bot's my_chat_member update names them. The bot joins as
            # an admin, as a group playing from ephemeral hands needs (README "Playing").
            self.emu.add_group(
                self.group_id,
                self.group_title,
                members=[user_id],
                admins=[user_id, *(bot.id for bot in self.emu.bots)],
                creator=user_id,
            )
        else:
            self.emu.add_member(self.group_id, user_id)
        user = SandboxUser(user_id, clean, language)
        self.users[user_id] = user
        return user

    def user(self, value: Any) -> SandboxUser:
        try:
            user_id = int(value)
        except (TypeError, ValueError):
            raise ValueError("user_id must be a number") from None
        user = self.users.get(user_id)
        if user is None:
            raise NotFound(f"no sandbox user {user_id}; join again")
        return user

    def chat_id(self, user: SandboxUser, chat: ChatName) -> int:
        return self.group_id if chat == "group" else user.id

    def group_info(self) -> JsonDict:
        creator = next(iter(self.users), None)
        chat = self.emu.chat(self.group_id)
        return {
            "id": self.group_id,
            "title": self.group_title,
            "members": [{**u.to_json(), "creator": u.id == creator} for u in self.users.values()],
            "forum": bool(chat is not None and chat.is_forum),
            "topics": [t.to_dict() for t in self.emu.topics(self.group_id)] if chat else [],
        }

    def snapshot(self, user: SandboxUser) -> JsonDict:
        """Everything one page shows, at one instant."""
        bot = self.emu.bot(self.bot_username)
        return {
            "me": user.to_json(),
            "bot": {"id": bot.id, "username": self.bot_username, "name": bot.user.first_name},
            "group": self.group_info(),
            "started": user.id in bot.started,
            "bot_status": self.bot_status,
            "online": self.emu.users[user.id].online,
            "messages": {
                # What this person's app shows: the history and their ephemeral messages.
                "group": seen_views(
                    [m.to_dict() for m in self.emu.messages_seen_by(user.id, self.group_id)],
                    user.id,
                ),
                "private": [
                    message_view(m.to_dict(), user.id)
                    for m in self.emu.messages(user.id, bot=self.bot_username)
                ],
            },
        }

    def commands(self, user: SandboxUser, chat: ChatName) -> list[JsonDict]:
        """The command menu Telegram would show: the most specific scope that has one."""
        chat_id = self.chat_id(user, chat)
        broad = "all_group_chats" if chat == "group" else "all_private_chats"
        for scope, scoped_chat in (("chat", chat_id), (broad, None), ("default", None)):
            for language in (user.language, ""):
                found = self.emu.commands(
                    scope_type=scope,
                    chat_id=scoped_chat,
                    language_code=language,
                    bot=self.bot_username,
                )
                if found:
                    return found
        return []

    # ----------------------------------------------------------------- page files

    async def _index(self, request: web.Request) -> web.StreamResponse:
        return web.FileResponse(STATIC_DIR / "index.html", headers=_PAGE_HEADERS)

    async def _static(self, request: web.Request) -> web.StreamResponse:
        name = request.match_info["name"]
        if name not in _STATIC_TYPES:  # an allow-list: no path tricks possible
            raise web.HTTPNotFound()
        headers = {**_PAGE_HEADERS, "Content-Type": _STATIC_TYPES[name]}
        return web.FileResponse(STATIC_DIR / name, headers=headers)

    async def _favicon(self, request: web.Request) -> web.StreamResponse:
        raise web.HTTPFound("/static/favicon.svg")

    # ----------------------------------------------------------------- API

    async def _info(self, request: web.Request) -> Any:
        return {
            "bot": {"username": self.bot_username},
            "group": self.group_info(),
            "languages": [{"code": k, "name": v} for k, v in LANGUAGES.items()],
            "bot_status": self.bot_status,
        }

    async def _join(self, request: web.Request) -> Any:
        body = await json_body(request)
        return self.join(str(body["name"]), str(body.get("language", "en"))).to_json()

    async def _send(self, request: web.Request) -> Any:
        body = await json_body(request)
        user = self.user(body["user_id"])
        text = str(body["text"])
        if len(text) > MAX_TEXT:
            raise ValueError(f"a message has at most {MAX_TEXT} characters")
        chat = _chat(body["chat"])
        chat_id = self.chat_id(user, chat)
        thread = body.get("thread")
        message = await self.emu.user_sends(
            user.id,
            chat_id,
            text,
            bot=self.bot_username,
            message_thread_id=int(thread) if thread and chat == "group" else None,
        )
        return {"message_id": message.message_id}

    async def _press(self, request: web.Request) -> Any:
        body = await json_body(request)
        user = self.user(body["user_id"])
        chat_id = self.chat_id(user, _chat(body["chat"]))
        try:
            if body.get("ephemeral_id") is not None:
                handle = await self.emu.user_presses_ephemeral(
                    user.id, chat_id, int(body["ephemeral_id"]), data=str(body["data"])
                )
            else:
                handle = await self.emu.user_presses(
                    user.id,
                    chat_id,
                    int(body["message_id"]),
                    data=str(body["data"]),
                    bot=self.bot_username,
                )
        except EmulatorError:
            # The keyboard changed between render and click; Telegram would simply not
            # show the old button any more.
            raise ValueError("This button is no longer there.") from None
        # The bot's answer arrives as an "answer" event on the page's stream.
        return {"callback_query_id": handle.id}

    async def _open(self, request: web.Request) -> Any:
        """Follow a link (URL button or link in a message) as the Telegram app would."""
        body = await json_body(request)
        user = self.user(body["user_id"])
        link = classify_link(str(body["url"]), self.bot_username)
        if link.kind == "external":
            return {"action": "external", "url": link.url}
        if link.kind == "telegram":
            raise ValueError(f"t.me/{link.target} is outside the sandbox")
        if link.kind == "unsupported":
            raise ValueError("this kind of link does not work in the sandbox")
        bot = self.emu.bot(self.bot_username)
        if user.id not in bot.started:
            # A chat never started shows a START button; pressing it sends the link's
            # payload (the person may also just go back: they have not started the bot).
            return {"action": "show_start", "payload": link.payload}
        if link.payload is None:
            return {"action": "show_private"}  # Telegram just opens the existing chat
        await self.emu.user_starts_bot(user.id, link.payload, bot=self.bot_username)
        return {"action": "started"}

    async def _webapp(self, request: web.Request) -> Any:
        """A web_app button: its URL with init data signed for this user (the Mini App)."""
        body = await json_body(request)
        user = self.user(body["user_id"])
        if self.mini_app is None:
            raise ValueError("the bot's Mini App is not running")
        return {
            "url": self.mini_app.launch_url(str(body["url"]), user.id, user.name, user.language)
        }

    async def _topics(self, request: web.Request) -> Any:
        """Topic management, as the group's admin does it in the app."""
        body = await json_body(request)
        user = self.user(body["user_id"])
        action = str(body["action"])
        thread = int(body.get("thread") or 0)
        if action in ("enable", "disable"):
            self.emu.admin_sets_topics(user.id, self.group_id, action == "enable")
            return self.group_info()
        if action == "create":
            topic = self.emu.admin_creates_topic(user.id, self.group_id, str(body.get("name", "")))
            return {"thread": topic.id}
        steps = {
            "close": self.emu.admin_closes_topic,
            "reopen": self.emu.admin_reopens_topic,
            "delete": self.emu.admin_deletes_topic,
        }
        if action not in steps:
            raise ValueError("action must be enable, disable, create, close, reopen or delete")
        steps[action](user.id, self.group_id, thread or 1)
        return self.group_info()

    async def _dismiss(self, request: web.Request) -> Any:
        """This app drops one of its ephemeral messages (as an app may, e.g. on restart)."""
        body = await json_body(request)
        user = self.user(body["user_id"])
        return self.emu.user_drops_ephemeral(user.id, self.group_id, int(body["ephemeral_id"]))

    async def _presence(self, request: web.Request) -> Any:
        body = await json_body(request)
        user = self.user(body["user_id"])
        self.emu.set_online(user.id, bool(body.get("online", True)))
        return {"online": self.emu.users[user.id].online}

    async def _commands(self, request: web.Request) -> Any:
        user = self.user(request.query.get("user_id"))
        return self.commands(user, _chat(request.query.get("chat")))

    async def _events(self, request: web.Request) -> web.StreamResponse:
        """The page's live feed: ``snapshot``, then ``message``/``delete``/``answer``/..."""
        try:
            user = self.user(request.query.get("user_id"))
        except (NotFound, ValueError) as err:
            status = 404 if isinstance(err, NotFound) else 400
            return web.json_response({"ok": False, "error": str(err)}, status=status)

        def encode(event: JsonDict) -> bytes | None:
            converted = page_event(event, user.id, self.group_id)
            if converted is None:
                return None
            name, data = converted
            if name == "members":
                return sse_frame(name, self.group_info())
            if name == "topics":
                return sse_frame(name, self.group_info())
            return sse_frame(name, data)

        with self.emu.subscribe([self.group_id, user.id]) as subscription:
            # Subscribed and snapshotted with no await in between: nothing is missed or
            # applied twice. A reconnecting EventSource simply gets a fresh snapshot.
            preamble = b"retry: 1000\n\n" + sse_frame("snapshot", self.snapshot(user))
            return await stream_events(request, subscription, encode, preamble=preamble)
