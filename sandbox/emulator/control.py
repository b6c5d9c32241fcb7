"""The control API over HTTP (``/_emu/...``): a JSON mirror of the Python one, plus an
event stream at ``/_emu/events``, for tools that do not run in the emulator's process."""

from __future__ import annotations

import contextlib
from collections.abc import Callable
from typing import Any

from aiohttp import web

from sandbox.emulator.ephemeral import EphemeralActions
from sandbox.emulator.errors import EmulatorError
from sandbox.emulator.forum import ForumActions
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

    def __init__(
        self,
        world: World,
        scene: Scene,
        users: UserActions,
        forum: ForumActions,
        ephemerals: EphemeralActions,
    ) -> None:
        self.w = world
        self.scene = scene
        self.users = users
        self.forum = forum
        self.ephemerals = ephemerals

    def install(self, app: web.Application) -> None:
        r = app.router
        r.add_post("/_emu/users", json_endpoint(self._add_user))
        r.add_post("/_emu/groups", json_endpoint(self._add_group))
        r.add_post("/_emu/send", json_endpoint(self._send))
        r.add_post("/_emu/start", json_endpoint(self._start))
        r.add_post("/_emu/block", json_endpoint(self._block))
        r.add_post("/_emu/press", json_endpoint(self._press))
        r.add_post("/_emu/forum", json_endpoint(self._set_forum))
        r.add_post("/_emu/topics", json_endpoint(self._create_topic))
        r.add_post("/_emu/topics/edit", json_endpoint(self._edit_topic))
        r.add_post("/_emu/topics/close", json_endpoint(self._close_topic))
        r.add_post("/_emu/topics/reopen", json_endpoint(self._reopen_topic))
        r.add_post("/_emu/topics/delete", json_endpoint(self._delete_topic))
        r.add_post("/_emu/rights", json_endpoint(self._rights))
        r.add_post("/_emu/mute", json_endpoint(self._mute))
        r.add_post("/_emu/presence", json_endpoint(self._presence))
        r.add_post("/_emu/ephemeral/drop", json_endpoint(self._drop_ephemeral))
        r.add_get("/_emu/chats/{chat_id}/topics", json_endpoint(self._topics))
        r.add_get("/_emu/chats/{chat_id}/seen", json_endpoint(self._seen))
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
            forum=bool(body.get("forum", False)),
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
            message_thread_id=_opt_int(body.get("message_thread_id")),
            ephemeral=bool(body.get("ephemeral", False)),
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
        """A button of a message (``message_id``) or of an ephemeral message
        (``ephemeral_message_id``)."""
        body = await json_body(request)
        if body.get("ephemeral_message_id") is not None:
            handle = await self.users.user_presses_ephemeral(
                int(body["user_id"]),
                int(body["chat_id"]),
                int(body["ephemeral_message_id"]),
                data=body.get("data"),
                text=body.get("text"),
            )
        else:
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

    async def _set_forum(self, request: web.Request) -> Any:
        body = await json_body(request)
        self.forum.admin_sets_topics(
            int(body["user_id"]), int(body["chat_id"]), bool(body["enabled"])
        )
        return True

    async def _create_topic(self, request: web.Request) -> Any:
        body = await json_body(request)
        topic = self.forum.admin_creates_topic(
            int(body["user_id"]),
            int(body["chat_id"]),
            str(body["name"]),
            icon_color=_opt_int(body.get("icon_color")),
            icon_custom_emoji_id=body.get("icon_custom_emoji_id"),
        )
        return topic.to_dict()

    async def _edit_topic(self, request: web.Request) -> Any:
        body = await json_body(request)
        topic = self.forum.admin_edits_topic(
            int(body["user_id"]),
            int(body["chat_id"]),
            int(body["message_thread_id"]),
            name=body.get("name"),
            icon_custom_emoji_id=body.get("icon_custom_emoji_id"),
        )
        return topic.to_dict()

    async def _topic_action(
        self, request: web.Request, action: Callable[[int, int, int], None]
    ) -> Any:
        body = await json_body(request)
        action(int(body["user_id"]), int(body["chat_id"]), int(body["message_thread_id"]))
        return True

    async def _close_topic(self, request: web.Request) -> Any:
        return await self._topic_action(request, self.forum.admin_closes_topic)

    async def _reopen_topic(self, request: web.Request) -> Any:
        return await self._topic_action(request, self.forum.admin_reopens_topic)

    async def _delete_topic(self, request: web.Request) -> Any:
        return await self._topic_action(request, self.forum.admin_deletes_topic)

    async def _rights(self, request: web.Request) -> Any:
        body = await json_body(request)
        rights = body.get("rights") or {}
        if not isinstance(rights, dict):
            raise EmulatorError("rights must be an object of booleans")
        self.scene.set_admin_rights(
            int(body["chat_id"]),
            int(body["user_id"]),
            **{str(k): bool(v) for k, v in rights.items()},
        )
        return True

    async def _mute(self, request: web.Request) -> Any:
        body = await json_body(request)
        self.scene.set_muted(
            int(body["chat_id"]), int(body["user_id"]), bool(body.get("muted", True))
        )
        return True

    async def _presence(self, request: web.Request) -> Any:
        body = await json_body(request)
        self.ephemerals.set_online(int(body["user_id"]), bool(body.get("online", True)))
        return True

    async def _drop_ephemeral(self, request: web.Request) -> Any:
        body = await json_body(request)
        return self.ephemerals.user_drops_ephemeral(
            int(body["user_id"]),
            int(body["chat_id"]),
            _opt_int(body.get("ephemeral_message_id")),
        )

    async def _topics(self, request: web.Request) -> Any:
        chat_id, _bot = self._chat_ref(request)
        return [t.to_dict() for t in self.forum.topics(chat_id)]

    async def _seen(self, request: web.Request) -> Any:
        """What one person's app shows in a chat (``?user_id=``): the history with their
        own ephemeral messages."""
        chat_id, bot = self._chat_ref(request)
        user_id = int(request.query["user_id"])
        return [m.to_dict() for m in self.w.messages.seen_by(user_id, chat_id, bot=bot)]

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
