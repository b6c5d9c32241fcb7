"""Shared by the Mini App tests: a bot with the app on a free port, signed init data."""

from __future__ import annotations

import asyncio
import json
import time
from collections.abc import AsyncIterator
from contextlib import asynccontextmanager
from typing import Any

import aiohttp

from bot.webapp.initdata import make_init_data
from support.harness import TOKEN, Harness, free_port, open_lobby, press

GROUP = -100500
ANN, BOB, CAROL = 11, 12, 13
NAMES = {ANN: "Ann", BOB: "Bob", CAROL: "Carol"}


def webapp_settings(port: int | None = None, **extra: Any) -> dict[str, Any]:
    port = port or free_port()
    return {
        "webapp_url": f"http://127.0.0.1:{port}",
        "webapp_port": port,
        "webapp_short_name": "table",
        **extra,
    }


def init_data(
    user_id: int, *, token: str = TOKEN, age: float = 0, lang: str = "en", game: str | None = None
) -> str:
    return make_init_data(
        token,
        user_id,
        NAMES.get(user_id, f"U{user_id}"),
        auth_date=int(time.time() - age),
        language_code=lang,
        start_param=game,
    )


COLLAPSED = "playing in the app"
"""What the private hand says while its owner plays in the open Mini App."""


def latest_hand(h: Harness, user: int) -> Any:
    """The user's latest hand message, or None before the first one arrives: the app's event
    stream can answer before the bot's first send of the hand reaches the emulator."""
    hands = [m for m in h.emu.messages(user) if m.from_bot and m.inline_keyboard]
    return hands[-1] if hands else None


def hand_if(h: Harness, user: int, *, collapsed: bool) -> Any:
    """The user's latest hand message if it is collapsed (or, with ``collapsed=False``, if
    it is not), else None: a predicate for ``wait_for``."""
    message = latest_hand(h, user)
    if message is None or (COLLAPSED in message.text) != collapsed:
        return None
    return message


async def seat_people(h: Harness, *users: int) -> None:
    for uid in users:
        h.emu.add_user(uid, NAMES.get(uid, f"U{uid}"))
    h.emu.add_group(GROUP, "Card Club", members=list(users), admins=[], creator=users[0])
    for uid in users:
        await h.emu.user_starts_bot(uid)
        await h.wait_text(uid, "Hi!")


async def start_game(h: Harness, humans: list[int], ais: list[str] = ()) -> str:  # type: ignore[assignment]
    """A running game with these humans and computer players; its game id."""
    lobby = await open_lobby(h, GROUP, humans[0])
    for uid in humans[1:]:
        await press(h, uid, GROUP, lobby.message_id, text="Join")
    for level in ais:
        await press(h, humans[0], GROUP, lobby.message_id, text=f"+ AI {level}")
    await h.wait_text(GROUP, f"{len(humans) + len(ais)}. ")
    await press(h, humans[0], GROUP, lobby.message_id, text="Start")
    await h.wait_text(GROUP, "Trump:")
    table = await h.table(GROUP)
    assert table.phase == "playing"
    return table.game_id


class AppClient:
    """Talks to one bot process's Mini App as one user."""

    def __init__(self, http: aiohttp.ClientSession, port: int, user_id: int) -> None:
        self.http = http
        self.base = f"http://127.0.0.1:{port}"
        self.user_id = user_id

    def headers(self, **kw: Any) -> dict[str, str]:
        return {"X-Telegram-Init-Data": init_data(self.user_id, **kw)}

    async def state(self, game: str, **kw: Any) -> tuple[int, dict[str, Any]]:
        async with self.http.get(
            f"{self.base}/api/state", params={"game": game}, headers=self.headers(**kw)
        ) as r:
            return r.status, await r.json()

    async def move(
        self, game: str, action: str, step: int | None = None, **kw: Any
    ) -> tuple[int, dict[str, Any]]:
        body: dict[str, Any] = {"game": game, "action": action}
        if step is not None:  # the step the move was chosen at (the page sends it)
            body["step"] = step
        async with self.http.post(
            f"{self.base}/api/move",
            json=body,
            headers=self.headers(**kw),
        ) as r:
            return r.status, await r.json()

    @asynccontextmanager
    async def events(self, game: str) -> AsyncIterator[EventStream]:
        params = {"game": game, "init_data": init_data(self.user_id)}
        async with self.http.get(f"{self.base}/api/events", params=params) as r:
            assert r.status == 200, await r.text()
            assert r.headers["Content-Type"].startswith("text/event-stream")
            yield EventStream(r)


class EventStream:
    def __init__(self, response: aiohttp.ClientResponse) -> None:
        self.response = response

    async def next(self, timeout: float = 5.0) -> dict[str, Any]:
        async def read() -> dict[str, Any]:
            name = ""
            while True:
                line = (await self.response.content.readline()).decode().rstrip("\n")
                if line.startswith("event: "):
                    name = line[len("event: ") :]
                elif line.startswith("data: ") and name == "state":
                    data: dict[str, Any] = json.loads(line[len("data: ") :])
                    return data

        return await asyncio.wait_for(read(), timeout)

    async def until(self, test: Any, timeout: float = 10.0) -> dict[str, Any]:
        deadline = time.monotonic() + timeout
        while True:
            state = await self.next(max(0.01, deadline - time.monotonic()))
            if test(state):
                return state


async def moves_through_app(
    client: AppClient, game: str, stream: EventStream, tries: int
) -> AsyncIterator[tuple[int, dict[str, Any]]]:
    """Up to ``tries`` times: the client's first legal move, posted through the app (the
    status and answer are yielded), or, when it has none, a wait for the next change.

    Like the page, it plays on from the state each answer brings (a 409 its fresh one)
    instead of asking again before every move: two requests a move ran a fast table into
    the per-user rate limit (429)."""
    _, state = await client.state(game)
    for _ in range(tries):
        if state["phase"] != "playing":
            return
        if not state["legal"]:
            state = await stream.until(lambda s, n=state["step"]: s["step"] > n or s["legal"])
            continue
        status, answer = await client.move(game, state["legal"][0])
        yield status, answer
        if status not in (200, 409):
            return
        state = answer if status == 200 else answer["state"]
