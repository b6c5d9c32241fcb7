"""Live events across processes: Redis pub/sub, one subscription per process.

Every committed table change (any process, any input: a button, the app, a timer)
publishes its game's place (``Place.text``) on ``CHANNEL``. Each process listens once and,
for the places it has viewers of, reads the latest table once and hands every viewer its
own state.
Each viewer keeps only the newest state (a slow reader skips ahead, never queues up)
and gets an event only when what *it* may see changed.

The index ``durak:webapp:game:{<game_id>}`` maps a game id (the one in callback data
and links) to its place's text (a bare chat id for a chat without topics, as before
places existed), written with the same round trip as the publish.
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

from bot.domain.place import Place, PlaceError
from bot.domain.records import ChatGame
from engine import State

log = logging.getLogger(__name__)

CHANNEL = "durak:webapp:changed"
RECONNECT_DELAY = 0.5
PLACES_KEPT = 50_000


def game_key(game_id: str) -> str:
    return f"durak:webapp:game:{{{game_id}}}"


StateOf = Callable[[ChatGame, State | None, "Viewer"], str]
"""The JSON text a viewer should see of a table and its parsed engine state."""


@dataclass(eq=False)
class Viewer:
    """One open event stream: a user looking at one game."""

    user_id: int
    place: Place
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
        load: Callable[[Place], Awaitable[ChatGame | None]],
        *,
        state_of: StateOf | None = None,
    ) -> None:
        """``state_of``: what each viewer is sent (None: nothing, for tests of the index)."""
        self.redis = redis
        self.load = load
        self.state_of = state_of
        self.viewers: dict[Place, set[Viewer]] = {}
        self._dirty: set[Place] = set()
        self._refreshing: dict[Place, asyncio.Task[None]] = {}
        self._listener: asyncio.Task[None] | None = None
        self._subscribed = asyncio.Event()
        self._places: dict[str, Place] = {}
        """Game id -> place, as read from the index (see ``place_of``)."""

    # --- publishing -----------------------------------------------------------------------

    async def changed(self, table: ChatGame, index_ttl: int) -> None:
        """After a committed change: index the game id and tell every process."""
        try:
            async with self.redis.pipeline(transaction=False) as pipe:
                pipe.set(game_key(table.game_id), table.place.text, ex=index_ttl)
                pipe.publish(CHANNEL, table.place.text)
                await pipe.execute()
        except RedisError as err:  # the move is stored; only live views lag
            log.warning("could not publish a change of chat %s: %s", table.place, err)

    async def place_of(self, game_id: str, *, fresh: bool = False) -> Place | None:
        """The place of a game id. Remembered: a game stays in its place (a group that
        becomes a supergroup is the exception, so callers retry ``fresh`` when the place
        they were told holds no such game)."""
        if not fresh and (known := self._places.get(game_id)) is not None:
            return known
        raw = await self.redis.get(game_key(game_id))
        if raw is None:
            return None
        if len(self._places) >= PLACES_KEPT:
            self._places.clear()
        place = self._places[game_id] = Place.parse(_text(raw))
        return place

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
                for place in list(self.viewers):
                    self.poke(place)
                while True:
                    message = await pubsub.get_message(timeout=30.0)
                    if message is not None and message.get("type") == "message":
                        with contextlib.suppress(PlaceError):
                            self.poke(Place.parse(_text(message["data"])))
            except (RedisError, OSError) as err:
                log.warning("Mini App event subscription lost (%s); reconnecting", err)
                await asyncio.sleep(RECONNECT_DELAY)
            except Exception:  # never let live views die silently
                log.exception("Mini App event subscription failed; restarting it")
                await asyncio.sleep(RECONNECT_DELAY)
            finally:
                with contextlib.suppress(Exception):
                    await pubsub.aclose()  # type: ignore[no-untyped-call, unused-ignore]

    def poke(self, place: Place) -> None:
        """The game at ``place`` changed: refresh its viewers (coalescing quick changes)."""
        if place not in self.viewers:
            return
        self._dirty.add(place)
        task = self._refreshing.get(place)
        if task is None or task.done():
            self._refreshing[place] = asyncio.create_task(self._refresh(place))

    async def _refresh(self, place: Place) -> None:
        try:
            while place in self._dirty:
                self._dirty.discard(place)
                viewers = self.viewers.get(place)
                if not viewers or self.state_of is None:
                    return
                table = await self.load(place)
                if table is None:
                    continue
                state = table.engine_state() if table.state is not None else None
                for viewer in list(viewers):
                    viewer.offer(self.state_of(table, state, viewer))
        except Exception:
            log.exception("Mini App refresh of chat %s failed", place)
        finally:
            self._refreshing.pop(place, None)

    # --- viewers --------------------------------------------------------------------------

    def add(self, viewer: Viewer) -> None:
        self.viewers.setdefault(viewer.place, set()).add(viewer)

    def remove(self, viewer: Viewer) -> None:
        viewers = self.viewers.get(viewer.place)
        if viewers is not None:
            viewers.discard(viewer)
            if not viewers:
                del self.viewers[viewer.place]


def _text(raw: object) -> str:
    return raw.decode() if isinstance(raw, bytes) else str(raw)


def dumps(state: object) -> str:
    return json.dumps(state, ensure_ascii=False, separators=(",", ":"))
