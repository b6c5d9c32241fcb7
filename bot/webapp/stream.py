"""The live event stream (server-sent events) of one viewer, and what the game's hand
does meanwhile: collapsed while the app is open, its buttons back once it closed."""

from __future__ import annotations

import asyncio
import contextlib
import time
from collections.abc import Callable

from aiohttp import web

from bot.app.games import Games
from bot.domain.place import Place
from bot.store.presence import CLOSE_GRACE, REFRESH_EVERY, Presence
from bot.webapp.hub import Hub, Viewer, dumps
from bot.webapp.views import Seated, viewer_state

KEEPALIVE = 15.0
CLOSED_POLL = 1.0
"""Seconds between looks at whether the page went (no I/O: the connection's state)."""
HEADERS = {
    "Content-Type": "text/event-stream",
    "Cache-Control": "no-store",
    "X-Accel-Buffering": "no",  # nginx: pass events on at once
}


def _gone(request: web.Request) -> bool:
    """The page's connection is closed (the app was closed, or the network dropped)."""
    transport = request.transport
    return transport is None or transport.is_closing()


class LiveStreams:
    def __init__(
        self, games: Games, hub: Hub, presence: Presence, clock: Callable[[], float]
    ) -> None:
        self.games = games
        self.hub = hub
        self.presence = presence
        self.clock = clock
        self.restores: set[asyncio.Task[None]] = set()
        self.closing = asyncio.Event()

    async def serve(
        self,
        request: web.Request,
        who: Seated,
        viewer: Viewer,
        ended: Callable[[Viewer], None],
    ) -> web.StreamResponse:
        """Stream ``viewer``'s states until the page goes or the server closes;
        ``ended`` is told once the stream is over."""
        response = web.StreamResponse(headers=HEADERS)
        await response.prepare(request)
        await response.write(b"retry: 1000\n\n")
        self.hub.add(viewer)
        place, user_id = who.place, who.user.user_id
        try:
            # Read after subscribing, so no change between the two is missed.
            game = await self.games.storage.load_table(place) or who.game
            viewer.offer(viewer_state(game, None, viewer))
            await self.presence.mark(place, user_id)
            self.games.box.refresh_hand(place, user_id)  # collapses to "Open table"
            await self._send_changes(response, viewer, lambda: _gone(request))
        except (ConnectionResetError, asyncio.CancelledError):
            pass
        finally:
            self.hub.remove(viewer)
            ended(viewer)
            if not self.closing.is_set():
                await self._closed(place, user_id)
        return response

    async def _closed(self, place: Place, user_id: int) -> None:
        """The app closed: its hand's buttons come back after a short grace, unless
        another of this user's streams on this game is still open here."""
        others = self.hub.viewers.get(place, set())
        if any(v.user_id == user_id for v in others):
            return
        with contextlib.suppress(Exception):  # Redis away: the mark lapses by itself
            await self.presence.closed(place, user_id)
        self.restore_later(place, user_id, CLOSE_GRACE + 0.5)

    async def _send_changes(
        self, response: web.StreamResponse, viewer: Viewer, gone: Callable[[], bool]
    ) -> None:
        """Each new state as an event, a keep-alive comment when nothing changed; ends
        within ``CLOSED_POLL`` of the page going (``gone``)."""
        marked = written = time.monotonic()
        while not self.closing.is_set() and not viewer.ended:
            with contextlib.suppress(TimeoutError):
                await asyncio.wait_for(viewer.wake.wait(), CLOSED_POLL)
            if gone():
                return
            if not viewer.wake.is_set() and time.monotonic() - written < min(
                KEEPALIVE, self.presence.ttl / 3
            ):
                continue
            viewer.wake.clear()
            written = time.monotonic()
            if time.monotonic() - marked >= min(REFRESH_EVERY, self.presence.ttl / 3):
                # Only kept, never re-made: after "Play here" the chat has the buttons
                # until the app is opened again (a new stream).
                await self.presence.keep(viewer.place, viewer.user_id)
                marked = time.monotonic()
            latest = viewer.latest
            if latest is not None and latest != viewer.sent:
                now = dumps(self.clock())
                payload = f'{latest[:-1]},"now":{now}}}' if latest.endswith("}") else latest
                await response.write(f"event: state\ndata: {payload}\n\n".encode())
                viewer.sent = latest
            else:
                await response.write(b": keep-alive\n\n")

    def restore_later(self, place: Place, user_id: int, after: float) -> None:
        """Once the app has been closed for ``after`` seconds, the hand's buttons come
        back (the refresh renders the collapsed message again, unchanged, if it was
        reopened)."""

        async def restore() -> None:
            await asyncio.sleep(after)
            self.games.box.refresh_hand(place, user_id)

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
