"""Live events across processes: Redis pub/sub, one subscription per process.

Every committed table change (any process, any input: a button, the app, a timer)
publishes its chat id on ``CHANNEL``. Each process listens once and, for the chats it
has viewers of, reads the latest table once and hands every viewer its own state.
Each viewer keeps only the newest state (a slow reader skips ahead, never queues up)
and gets an event only when what *it* may see changed.

The index ``durak:webapp:game:{<game_id>}`` maps a game id (the one in callback data
and links) to its chat, written with the same round trip as the publish.
"""

from __future__ import annotations

import asyncio
import contextlib
import json
import logging
from collections.abc import Awaitable, Callable
from dataclasses import dataclass, field

from redis.asyncio import Redis
from redis.exceptions import RedisError

from bot.domain.records import ChatGame
from engine import State

log = logging.getLogger(__name__)

CHANNEL = "durak:webapp:changed"
RECONNECT_DELAY = 0.5
CHATS_KEPT = 50_000


def game_key(game_id: str) -> str:
    return f"durak:webapp:game:{{{game_id}}}"


StateOf = Callable[[ChatGame, State | None, "Viewer"], str]
"""The JSON text a viewer should see of a table and its parsed engine state."""


@dataclass(eq=False)
class Viewer:
    """One open event stream: a user looking at one game."""

    user_id: int
    chat_id: int
    game_id: str
    lang: str
    latest: str | None = None
    sent: str | None = None
    ended: bool = False
    """Set to end the stream (too many of one user's)."""
    wake: asyncio.Event = field(default_factory=asyncio.Event)

    def offer(self, text: str) -> None:
        if text != self.latest:
            self.latest = text
            self.wake.set()


class Hub:
    def __init__(
        self,
        redis: Redis,
        load: Callable[[int], Awaitable[ChatGame | None]],
        *,
        state_of: StateOf | None = None,
    ) -> None:
        """``state_of``: what each viewer is sent (None: nothing, for tests of the index)."""
        self.redis = redis
        self.load = load
        self.state_of = state_of
        self.viewers: dict[int, set[Viewer]] = {}
        self._dirty: set[int] = set()
        self._refreshing: dict[int, asyncio.Task[None]] = {}
        self._listener: asyncio.Task[None] | None = None
        self._subscribed = asyncio.Event()
        self._chats: dict[str, int] = {}
        """Game id -> chat id, as read from the index (see ``chat_of``)."""

    # --- publishing -----------------------------------------------------------------------

    async def changed(self, table: ChatGame, index_ttl: int) -> None:
        """After a committed change: index the game id and tell every process."""
        try:
            async with self.redis.pipeline(transaction=False) as pipe:
                pipe.set(game_key(table.game_id), str(table.chat_id), ex=index_ttl)
                pipe.publish(CHANNEL, str(table.chat_id))
                await pipe.execute()
        except RedisError as err:  # the move is stored; only live views lag
            log.warning("could not publish a change of chat %s: %s", table.chat_id, err)

    async def chat_of(self, game_id: str, *, fresh: bool = False) -> int | None:
        """The chat of a game id. Remembered: a game stays in its chat (a group that
        becomes a supergroup is the exception, so callers retry ``fresh`` when the chat
        they were told holds no such game)."""
        if not fresh and (known := self._chats.get(game_id)) is not None:
            return known
        raw = await self.redis.get(game_key(game_id))
        if raw is None:
            return None
        if len(self._chats) >= CHATS_KEPT:
            self._chats.clear()
        chat_id = self._chats[game_id] = int(raw)
        return chat_id

    # --- listening ------------------------------------------------------------------------

    async def start(self) -> None:
        self._listener = asyncio.create_task(self._listen(), name="webapp:pubsub")
        await asyncio.wait_for(self._subscribed.wait(), 10)

    async def stop(self) -> None:
        tasks = [t for t in (self._listener, *self._refreshing.values()) if t is not None]
        for task in tasks:
            task.cancel()
        for task in tasks:
            with contextlib.suppress(asyncio.CancelledError, Exception):
                await task
        for viewers in self.viewers.values():
            for viewer in viewers:
                viewer.wake.set()  # their streams end

    async def _listen(self) -> None:
        while True:
            pubsub = self.redis.pubsub(ignore_subscribe_messages=True)
            try:
                await pubsub.subscribe(CHANNEL)
                self._subscribed.set()
                # Changes may have been missed while (re)connecting.
                for chat_id in list(self.viewers):
                    self.poke(chat_id)
                while True:
                    message = await pubsub.get_message(timeout=30.0)
                    if message is not None and message.get("type") == "message":
                        with contextlib.suppress(ValueError):
                            self.poke(int(message["data"]))
            except (RedisError, OSError) as err:
                log.warning("Mini App event subscription lost (%s); reconnecting", err)
                await asyncio.sleep(RECONNECT_DELAY)
            except Exception:  # never let live views die silently
                log.exception("Mini App event subscription failed; restarting it")
                await asyncio.sleep(RECONNECT_DELAY)
            finally:
                with contextlib.suppress(Exception):
                    await pubsub.aclose()  # type: ignore[no-untyped-call, unused-ignore]

    def poke(self, chat_id: int) -> None:
        """Chat ``chat_id`` changed: refresh its viewers (coalescing quick changes)."""
        if chat_id not in self.viewers:
            return
        self._dirty.add(chat_id)
        task = self._refreshing.get(chat_id)
        if task is None or task.done():
            self._refreshing[chat_id] = asyncio.create_task(self._refresh(chat_id))

    async def _refresh(self, chat_id: int) -> None:
        try:
            while chat_id in self._dirty:
                self._dirty.discard(chat_id)
                viewers = self.viewers.get(chat_id)
                if not viewers or self.state_of is None:
                    return
                table = await self.load(chat_id)
                if table is None:
                    continue
                state = table.engine_state() if table.state is not None else None
                for viewer in list(viewers):
                    viewer.offer(self.state_of(table, state, viewer))
        except Exception:
            log.exception("Mini App refresh of chat %s failed", chat_id)
        finally:
            self._refreshing.pop(chat_id, None)

    # --- viewers --------------------------------------------------------------------------

    def add(self, viewer: Viewer) -> None:
        self.viewers.setdefault(viewer.chat_id, set()).add(viewer)

    def remove(self, viewer: Viewer) -> None:
        viewers = self.viewers.get(viewer.chat_id)
        if viewers is not None:
            viewers.discard(viewer)
            if not viewers:
                del self.viewers[viewer.chat_id]


def dumps(state: object) -> str:
    return json.dumps(state, ensure_ascii=False, separators=(",", ":"))
