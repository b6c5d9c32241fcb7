"""The control API over HTTP (``/_emu/...``): a JSON mirror of the Python one, plus an
event stream at ``/_emu/events``, for tools that do not run in the emulator's process."""

from __future__ import annotations

import contextlib
from typing import Any

from aiohttp import web

from sandbox.emulator.httputil import json_body, json_endpoint, sse_frame, stream_events
from sandbox.emulator.scene import Scene
from sandbox.emulator.types import BotRef, JsonDict
from sandbox.emulator.users import UserActions
from sandbox.emulator.world import World


def _opt_int(value: Any) -> int | None:
    return None if value is None else int(value)


def _bot_ref(value: Any) -> BotRef:
    if value is None or isinstance(value, int):
        return value
    text = str(value)
    return int(text) if text.lstrip("-").isdigit() else text


def _event_frame(event: JsonDict) -> bytes:
    return sse_frame(str(event["type"]), event, event_id=int(event["seq"]))


class ControlRoutes:
    """``/_emu/...`` endpoints; each one calls the same code as the Python control API."""

    def __init__(self, world: World, scene: Scene, users: UserActions) -> None:
        self.w = world
        self.scene = scene
        self.users = users

    def install(self, app: web.Application) -> None:
        r = app.router
        r.add_post("/_emu/users", json_endpoint(self._add_user))
        r.add_post("/_emu/groups", json_endpoint(self._add_group))
        r.add_post("/_emu/send", json_endpoint(self._send))
        r.add_post("/_emu/start", json_endpoint(self._start))
        r.add_post("/_emu/block", json_endpoint(self._block))
        r.add_post("/_emu/press", json_endpoint(self._press))
        r.add_get("/_emu/chats/{chat_id}/messages", json_endpoint(self._messages))
        r.add_get("/_emu/chats/{chat_id}/events", json_endpoint(self._chat_events))
        r.add_get("/_emu/state", json_endpoint(self._state))
        r.add_get("/_emu/stats", json_endpoint(self._stats))
        r.add_get("/_emu/events", self._events)

    def _chat_ref(self, request: web.Request) -> tuple[int, BotRef]:
        return int(request.match_info["chat_id"]), _bot_ref(request.query.get("bot"))

    async def _add_user(self, request: web.Request) -> Any:
        body = await json_body(request)
        user = self.scene.add_user(
            int(body["user_id"]),
            str(body["first_name"]),
            username=body.get("username"),
            language_code=body.get("language_code", "en"),
            last_name=body.get("last_name"),
        )
        return user.to_api()

    async def _add_group(self, request: web.Request) -> Any:
        body = await json_body(request)
        bots = body.get("bots")
        chat = self.scene.add_group(
            int(body["chat_id"]),
            str(body["title"]),
            members=[int(u) for u in body.get("members", [])],
            admins=[int(u) for u in body.get("admins", [])],
            creator=_opt_int(body.get("creator")),
            bots=[_bot_ref(b) for b in bots] if bots is not None else None,
            chat_type=str(body.get("type", "supergroup")),
        )
        return chat.to_dict()

    async def _send(self, request: web.Request) -> Any:
        body = await json_body(request)
        message = await self.users.user_sends(
            int(body["user_id"]),
            int(body["chat_id"]),
            str(body["text"]),
            bot=_bot_ref(body.get("bot")),
            reply_to=_opt_int(body.get("reply_to")),
        )
        return message.to_dict()

    async def _start(self, request: web.Request) -> Any:
        body = await json_body(request)
        payload = body.get("payload")
        message = await self.users.user_starts_bot(
            int(body["user_id"]),
            None if payload in (None, "") else str(payload),
            bot=_bot_ref(body.get("bot")),
        )
        return message.to_dict()

    async def _block(self, request: web.Request) -> Any:
        body = await json_body(request)
        self.users.user_blocks_bot(int(body["user_id"]), bot=_bot_ref(body.get("bot")))
        return True

    async def _press(self, request: web.Request) -> Any:
        body = await json_body(request)
        handle = await self.users.user_presses(
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

    async def _messages(self, request: web.Request) -> Any:
        chat_id, bot = self._chat_ref(request)
        return [m.to_dict() for m in self.w.messages.messages(chat_id, bot=bot)]

    async def _chat_events(self, request: web.Request) -> Any:
        chat_id, bot = self._chat_ref(request)
        return self.w.messages.chat_events(chat_id, bot=bot)

    async def _state(self, request: web.Request) -> Any:
        return self.w.registry.state()

    async def _stats(self, request: web.Request) -> Any:
        return self.w.stats.to_dict()

    async def _events(self, request: web.Request) -> web.StreamResponse:
        """Server-Sent Events: one ``event: <type>`` with JSON data per change."""
        try:
            chat_ids = [int(v) for v in request.query.getall("chat_id", [])]
        except ValueError:
            return web.json_response({"ok": False, "error": "bad chat_id"}, status=400)
        with self.w.events.subscribe(chat_ids or None) as subscription:
            # The comment tells clients the subscription is live before anything happens.
            return await stream_events(
                request, subscription, _event_frame, preamble=b": connected\n\n"
            )
