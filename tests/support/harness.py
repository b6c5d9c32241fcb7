"""The bot end-to-end harness: the real PTB application against our emulator and Redis.

``conftest.py`` turns these into fixtures (``redis_server``, ``make_harness``, ``clock``);
tests import the helpers (``Harness``, ``play_out``, ``press`` ...) from here.
"""

from __future__ import annotations

import asyncio
import contextlib
import io
import re
import shutil
import socket
import subprocess
import time
from collections.abc import AsyncIterator, Collection, Iterator
from dataclasses import dataclass, field
from types import EllipsisType
from typing import Any

from pydantic import SecretStr
from redis.asyncio import Redis

from bot.app.games import Games
from bot.domain import callbacks
from bot.domain.lobby_options import OPTIONS_BY_OP
from bot.domain.place import Place
from bot.domain.records import ChatGame
from bot.ops.settings import Settings
from bot.ops.verify import main as verify_main
from bot.wiring.application import build_application, games_of, start_services, stop_services
from sandbox.emulator import BotApiEmulator, EmuMessage, RateLimits

TOKEN = "5550001:durak-test-token"
BOT_USERNAME = "durak_test_bot"


def free_port() -> int:
    with socket.socket() as s:
        s.bind(("127.0.0.1", 0))
        return int(s.getsockname()[1])


@contextlib.contextmanager
def redis_server_process() -> Iterator[str]:
    """A throwaway redis-server on a free port (no persistence); yields its URL."""
    binary = shutil.which("redis-server")
    if binary is None:  # never skip silently: tests/run.sh installs it
        raise RuntimeError("redis-server is not installed (apt-get install redis-server)")
    port = free_port()
    proc = subprocess.Popen(
        [binary, "--port", str(port), "--bind", "127.0.0.1", "--save", "", "--appendonly", "no"],
        stdout=subprocess.DEVNULL,
        stderr=subprocess.DEVNULL,
    )
    try:
        deadline = time.monotonic() + 10
        while True:
            with contextlib.suppress(OSError), socket.create_connection(("127.0.0.1", port), 0.2):
                break
            if time.monotonic() > deadline or proc.poll() is not None:
                raise RuntimeError("redis-server did not start")
            time.sleep(0.05)
        yield f"redis://127.0.0.1:{port}/0"
    finally:
        proc.terminate()
        try:
            proc.wait(5)
        except subprocess.TimeoutExpired:
            proc.kill()
            proc.wait()


class FakeClock:
    """Wall clock for the bot that tests can move forward."""

    def __init__(self) -> None:
        self.offset = 0.0

    def __call__(self) -> float:
        return time.time() + self.offset

    def advance(self, seconds: float) -> None:
        self.offset += seconds


def bot_settings(url: str, **overrides: Any) -> Settings:
    values: dict[str, Any] = {
        "telegram_bot_token": SecretStr(TOKEN),
        "telegram_api_url": url,
        "turn_timeout": 60.0,
        "ai_delay": 0.0,
        "group_edit_interval": 0.0,
        "group_max_per_minute": 100_000,
        "private_interval": 0.0,
        "global_rate": 1000.0,
        "notify_quiet": 0.0,
        "calm_delay": 0.0,
    }
    values.update(overrides)
    return Settings(**values)


@dataclass
class Bot:
    """One running bot process (a PTB Application polling the emulator)."""

    app: Any
    games: Games

    async def stop(self) -> None:
        app = self.app
        if app.updater is not None and app.updater.running:
            await app.updater.stop()
        if app.running:
            await app.stop()
        await stop_services(app)
        await app.shutdown()


@dataclass
class Harness:
    emu: BotApiEmulator
    redis: Redis
    settings: Settings
    clock: FakeClock
    bots: list[Bot] = field(default_factory=list)
    offline: list[Any] = field(default_factory=list)

    @property
    def bot(self) -> Bot:
        return self.bots[-1]

    @property
    def games(self) -> Games:
        return self.bot.games

    async def start_bot(self, **overrides: Any) -> Bot:
        settings = self.settings.model_copy(update=overrides) if overrides else self.settings
        app = build_application(settings, self.redis, clock=self.clock, ai_processes=0)
        await app.initialize()
        await start_services(app, set_commands=False)
        await app.start()
        assert app.updater is not None
        await app.updater.start_polling(poll_interval=0.0, timeout=1)
        bot = Bot(app, games_of(app))
        self.bots.append(bot)
        return bot

    async def start_bot_offline(self) -> Games:
        """A second bot process on the same Redis that does not poll (no update conflict)."""
        app = build_application(self.settings, self.redis, clock=self.clock, ai_processes=0)
        await app.initialize()
        games = games_of(app)
        games.bot_username = BOT_USERNAME
        self.offline.append(app)
        return games

    async def kill_bot(self, bot: Bot | None = None) -> None:
        bot = bot or self.bot
        await bot.stop()
        self.bots.remove(bot)

    async def table(self, chat_id: int) -> ChatGame:
        table = await self.games.storage.load_table(Place(chat_id))
        assert table is not None
        return table

    async def settle(self) -> None:
        """Wait until every bot has sent everything it meant to."""
        for bot in self.bots:
            await asyncio.wait_for(bot.games.box.idle(), 10)

    def group_message(self, chat_id: int, text: str) -> EmuMessage:
        found = [m for m in self.emu.messages(chat_id) if m.from_bot and text in m.text]
        assert found, f"no bot message containing {text!r} in {chat_id}"
        return found[-1]

    async def wait_text(self, chat_id: int, text: str, timeout: float = 5.0) -> EmuMessage:
        def find() -> EmuMessage | None:
            for m in reversed(self.emu.messages(chat_id)):
                if m.from_bot and text in m.text:
                    return m
            return None

        return await self.emu.wait_for(find, timeout, what=f"{text!r} in {chat_id}")


@contextlib.asynccontextmanager
async def harness(
    redis: Redis, clock: FakeClock, rate_limits: bool | RateLimits = False, **overrides: Any
) -> AsyncIterator[Harness]:
    """A started emulator with the test bot registered; bots started in it stop at the end."""
    emu = BotApiEmulator(rate_limits=rate_limits)
    await emu.start()
    emu.add_bot(TOKEN, username=BOT_USERNAME)
    h = Harness(emu, redis, bot_settings(emu.url, **overrides), clock)
    try:
        yield h
    finally:
        # Each stop is bounded: a bot that cannot stop (a stuck request, say) must fail its
        # test, not hang the whole run.
        for bot in list(h.bots):
            with contextlib.suppress(Exception):
                await asyncio.wait_for(bot.stop(), 30)
        for app in h.offline:
            with contextlib.suppress(Exception):
                await asyncio.wait_for(_stop_offline(app), 30)
        await asyncio.wait_for(emu.stop(), 30)


async def _stop_offline(app: Any) -> None:
    await stop_services(app)
    await app.shutdown()


# --- driving games through the emulator --------------------------------------------------

_PREFERENCE = "pBabt"


def hand_buttons(emu: BotApiEmulator, user_id: int) -> list[tuple[int, int, str]]:
    """(step, message id, data) of every move button in the user's private chat (a
    finished game's 🔍 Review is not one)."""
    out = []
    for message in emu.messages(user_id):
        if not message.from_bot:
            continue
        for row in message.inline_keyboard:
            for button in row:
                data = button.get("callback_data")
                if isinstance(data, str) and data.startswith("h:") and _op(data) != "v":
                    step = int(data.split(":")[3])
                    out.append((step, message.message_id, data))
    return out


def ephemeral_hand_buttons(
    emu: BotApiEmulator, user_id: int, chat_id: int
) -> list[tuple[int, int, str]]:
    """(step, ephemeral message id, data) of every move button of the hands the user's
    app shows in the group as ephemeral messages (a player without a private chat)."""
    out = []
    for message in emu.ephemerals_of(user_id, chat_id):
        for row in message.inline_keyboard:
            for button in row:
                data = button.get("callback_data")
                if isinstance(data, str) and data.startswith("h:") and _op(data) != "v":
                    step = int(data.split(":")[3])
                    out.append((step, message.ephemeral_message_id or 0, data))
    return out


def pressable(h: Harness, user_id: int, step: int) -> list[tuple[int, int, str]]:
    """(step made at, message id, data) of the move buttons the user can press while the
    game is at ``step``: buttons made at that step, or those of their newest hand
    message once a bot has recorded that hand as shown for ``step``. A keyboard whose
    moves stay the same is not edited and keeps the step it was made at (see
    ``Rendered.digest``), which the flow accepts while its move is legal."""
    buttons = hand_buttons(h.emu, user_id)
    if not buttons:
        return []
    newest = max(mid for _, mid, _ in buttons)
    _, chat, game, *_ = next(data for _, mid, data in buttons if mid == newest).split(":")
    shown = (game, step)
    current = any(bot.games.box.shown.get((Place.parse(chat), user_id)) == shown for bot in h.bots)
    return [
        (s, mid, data)
        for s, mid, data in buttons
        if s == step or (current and mid == newest and s < step)
    ]


def _op(data: str) -> str:
    return data.split(":")[4][0]


async def play_out(
    h: Harness,
    group: int,
    humans: list[int],
    *,
    max_presses: int = 3000,
    timeout: float = 10.0,
    game_over: str = "Game over",
    verify_deal: bool = True,
    topic: int | EllipsisType | None = ...,
    in_group: Collection[int] = (),
) -> EmuMessage:
    """Play the game to its end by pressing legal buttons; returns the result message
    (the group message containing ``game_over``: the result title in the group's language).
    ``verify_deal``: the result's deal must verify (``check_deal``); only a game dealt
    before verifiable deals has none. ``topic``: the forum topic the game is played in
    (its result and deal code are looked for there alone; None: General); by default,
    anywhere in the group. ``in_group``: players who play from the group, by
    the buttons of their ephemeral hand there (shown already: "🃏 My hand")."""
    pressed: set[tuple[int, int, int, str]] = set()
    """(user, message id, its edit count, data) of every button pressed: a keyboard
    whose moves stay the same keeps its data (and step), so what makes a button worth
    pressing again is a new version of its message."""

    def edits(user: int, mid: int) -> int:
        if user in in_group:
            shown = [m for m in h.emu.ephemerals_of(user, group) if m.ephemeral_message_id == mid]
            return shown[0].edit_count if shown else -1
        message = h.emu.message(user, mid)
        return -1 if message is None else message.edit_count

    def buttons(user: int) -> list[tuple[int, int, str]]:
        if user in in_group:
            return ephemeral_hand_buttons(h.emu, user, group)
        return hand_buttons(h.emu, user)

    # A result already in the group is an earlier game's (of a series, say).
    earlier = max((m.message_id for m in h.emu.messages(group)), default=0)

    def over() -> EmuMessage | None:
        for message in h.emu.messages(group):
            ours = topic is ... or message.thread_id == topic
            new = message.from_bot and message.message_id > earlier
            if new and ours and game_over in message.text:
                return message
        return None

    def candidate() -> tuple[int, int, str] | None:
        best: tuple[int, int, int, str] | None = None
        for user in humans:
            for step, mid, data in buttons(user):
                op = _op(data)
                if op not in _PREFERENCE or (user, mid, edits(user, mid), data) in pressed:
                    continue
                key = (-step, _PREFERENCE.index(op))
                if best is None or key < (best[0], best[1]):
                    best = (key[0], key[1], user, mid, data)  # type: ignore[assignment]
        if best is None:
            return None
        return best[2], best[3], best[4]  # type: ignore[misc]

    for _ in range(max_presses):
        found = await h.emu.wait_for(lambda: over() or candidate(), timeout, what="a move")
        if isinstance(found, EmuMessage):
            if verify_deal:
                check_deal(h.emu, group, found, topic=topic)
            return found
        user, mid, data = found
        pressed.add((user, mid, edits(user, mid), data))
        with contextlib.suppress(Exception):
            if user in in_group:
                handle = await h.emu.user_presses_ephemeral(user, group, mid, data=data)
            else:
                handle = await h.emu.user_presses(user, user, mid, data=data)
            await asyncio.wait_for(handle.answer(), timeout)
    raise AssertionError("the game did not end")


DEAL_CODE = re.compile(r"(?:[0-9a-f]{4} ){7}[0-9a-f]{4}")
"""The deal code as the group is shown it at a game's start: 32 hex, in groups of 4."""


def deal_note(
    emu: BotApiEmulator, group: int, before: int, *, topic: int | EllipsisType | None = ...
) -> EmuMessage:
    """The group's latest deal code message before message ``before`` (its game's; with
    ``topic``, in that forum topic alone)."""
    notes = [
        m
        for m in emu.messages(group)
        if m.from_bot
        and m.message_id < before
        and DEAL_CODE.search(m.text)
        and (topic is ... or m.thread_id == topic)
    ]
    assert notes, "no deal code was shown in the group before the result"
    return notes[-1]


def check_deal(
    emu: BotApiEmulator, group: int, result: EmuMessage, *, topic: int | EllipsisType | None = ...
) -> str:
    """Every game played out verifies: ``durak-verify`` accepts the result message and the
    code the group was shown at the start (in a message never edited). Returns that code."""
    note = deal_note(emu, group, result.message_id, topic=topic)
    assert note.edit_count == 0, "the deal code message was edited"
    code = DEAL_CODE.findall(note.text)[-1]
    out = io.StringIO()
    with contextlib.redirect_stdout(out):
        status = verify_main(["--text", result.text, "--shown", code])
    assert status == 0, out.getvalue()
    return code


async def open_lobby(h: Harness, group: int, creator: int) -> EmuMessage:
    await h.emu.user_sends(creator, group, "/newgame")
    return await h.wait_text(group, "new game")


async def press(
    h: Harness,
    user: int,
    chat: int,
    message_id: int,
    *,
    text: str | None = None,
    data: str | None = None,
) -> Any:
    handle = await h.emu.user_presses(user, chat, message_id, text=text, data=data)
    return await asyncio.wait_for(handle.answer(), 5)


async def set_options(h: Harness, user: int, chat: int, message_id: int, **values: Any) -> None:
    """Set lobby options as a person does: "⚙️ Options", a value's button each (``deck=52``,
    ``transfer="perevodnoy"``: an option's op and the value it takes), "‹ Back"."""
    game_id = (await h.table(chat)).game_id

    def offers(op: str) -> bool:
        message = h.emu.message(chat, message_id)
        rows = message.buttons if message is not None else []
        return callbacks.encode_group(game_id, op) in [
            b.get("callback_data") for r in rows for b in r
        ]

    await press(h, user, chat, message_id, data=callbacks.encode_group(game_id, "options"))
    await h.emu.wait_for(lambda: offers("options_back"), 5, what="the options screen")
    for op, value in values.items():
        choice = OPTIONS_BY_OP[op].values.index(value)
        answer = await press(
            h, user, chat, message_id, data=callbacks.encode_group(game_id, op, choice)
        )
        assert answer.text is not None and answer.text.startswith("✓ "), answer.text
    await press(h, user, chat, message_id, data=callbacks.encode_group(game_id, "options_back"))
    await h.emu.wait_for(lambda: offers("start"), 5, what="the lobby's buttons")


async def moved_past(h: Harness, chat_id: int, step: int, timeout: float = 10.0) -> None:
    """Wait until the game stored in ``chat_id`` is past ``step`` (re-read after
    each emulator change, and at least every second, so a change just before the wait is
    never missed)."""
    loop = asyncio.get_running_loop()
    deadline = loop.time() + timeout
    while loop.time() < deadline:
        table = await h.table(chat_id)
        if table.phase != "playing" or table.engine_state().step > step:
            return
        last = h.emu.recent_events(1)
        with contextlib.suppress(TimeoutError):
            await h.emu.wait_for(lambda last=last: h.emu.recent_events(1) != last, 1.0)
    raise AssertionError(f"the game stayed at step {step}")
