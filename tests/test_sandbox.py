"""The sandbox end to end: `python -m sandbox` runs the real bot; a browser plays a game.

Headless Debian Chromium driven by Playwright; screenshots go to test-artifacts/.
"""

from __future__ import annotations

import asyncio
import contextlib
import os
import re
import signal
import sys
import time
from collections.abc import AsyncIterator
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

import pytest
from playwright.async_api import Error as PlaywrightError
from playwright.async_api import Page
from support.browser import ARTIFACTS, browser, join

from bot.domain.callbacks import CallbackError, GroupButton, HandButton, decode
from bot.render.common import computer_name
from engine import Attack, Beat, Pass, Take
from locales import translator, visible_text
from sandbox.main import parse_args
from sandbox.web.botprocess import bot_environment
from sandbox.web.store import sandbox_store

# Quick computer players and no self-imposed pacing, so a game takes seconds. The turn
# timeout stays long enough that the moves are really the test's clicks.
FAST_BOT = {
    "AI_DELAY": "0.05",
    "TURN_TIMEOUT": "30",
    "GROUP_EDIT_INTERVAL": "0",
    "PRIVATE_INTERVAL": "0",
    "GROUP_MAX_PER_MINUTE": "100000",
    "LOG_LEVEL": "INFO",
}
EN = translator("en")


def en(key: str, **kwargs: Any) -> str:
    """What an English-speaking user sees for a bot text."""
    return visible_text(str(EN.t(key, **kwargs)))


def computer(level: str, nth: int) -> str:
    """The ``nth`` computer seat of a table (0 first) as English readers see it."""
    return visible_text(str(computer_name(level, nth, EN)))


async def callback_data(page: Page, message: str) -> list[str]:
    datas = await page.locator(f"{message} button[data-callback]").evaluate_all(
        "buttons => buttons.map(b => b.dataset.callback)"
    )
    return [str(d) for d in datas]


# ---------------------------------------------------------------------- the sandbox process


@dataclass
class Sandbox:
    proc: asyncio.subprocess.Process
    lines: list[str] = field(default_factory=list)
    url: str = ""

    @property
    def log(self) -> str:
        return "\n".join(self.lines)

    def bot_pid(self) -> int | None:
        found = re.search(r"python -m bot \(pid (\d+)\)", self.log)
        return int(found.group(1)) if found else None

    def data_dir(self) -> Path | None:
        """The fresh store the sandbox said it uses (a temporary directory)."""
        found = re.search(r"games and statistics are kept in (\S+) \(fresh", self.log)
        return Path(found.group(1)) if found else None


async def _read_output(sandbox: Sandbox, ready: asyncio.Event) -> None:
    # Always drained: a full pipe would block the sandbox's prints.
    assert sandbox.proc.stdout is not None
    async for raw in sandbox.proc.stdout:
        line = raw.decode("utf-8", "replace").rstrip()
        sandbox.lines.append(line)
        found = re.search(r"Durak sandbox ready: (http://\S+)", line)
        if found:
            sandbox.url = found.group(1)
            ready.set()


@pytest.fixture
async def sandbox(tmp_path: Path) -> AsyncIterator[Sandbox]:
    env = {**os.environ, **FAST_BOT}
    env.pop("REDIS_URL", None)
    proc = await asyncio.create_subprocess_exec(
        sys.executable,
        "-m",
        "sandbox",
        "--port",
        "0",
        "--no-open",
        "--no-rate-limits",
        stdout=asyncio.subprocess.PIPE,
        stderr=asyncio.subprocess.STDOUT,
        env=env,
        cwd=tmp_path,  # no developer .env is picked up
        start_new_session=True,
    )
    box = Sandbox(proc)
    ready = asyncio.Event()
    reader = asyncio.create_task(_read_output(box, ready))
    try:
        async with asyncio.timeout(60):
            await ready.wait()
        # A fresh store outside the checkout (here the working directory): never ./data.
        data = box.data_dir()
        assert data is not None and data.is_dir() and not (tmp_path / "data").exists(), box.log
        assert not data.is_relative_to(tmp_path)
        yield box
        assert not (tmp_path / "data").exists()
        # Ctrl-C stops everything cleanly: the bot first, then the server.
        proc.send_signal(signal.SIGINT)
        async with asyncio.timeout(20):
            code = await proc.wait()
        await reader
        assert code == 0, box.log
        assert box.lines[-1] == "sandbox | stopped", box.log
        pid = box.bot_pid()
        assert pid is not None
        with pytest.raises(ProcessLookupError):
            os.kill(pid, 0)
        assert not data.exists(), "the run's store is removed when it stops"
    finally:
        if proc.returncode is None:
            os.killpg(proc.pid, signal.SIGKILL)
            await proc.wait()
        pid = box.bot_pid()
        if pid is not None:
            with contextlib.suppress(ProcessLookupError):
                os.kill(pid, signal.SIGKILL)
        reader.cancel()


# ---------------------------------------------------------------------- playing


def group_button(datas: list[str], op: str) -> str:
    for data in datas:
        with contextlib.suppress(CallbackError):
            button = decode(data)
            if isinstance(button, GroupButton) and button.op == op:
                return data
    raise AssertionError(f"no {op!r} button among {datas}")


def choose_move(datas: list[str]) -> str | None:
    """A simple, always-legal way to finish a game: take, pass, else play the first card."""
    moves: list[tuple[str, HandButton]] = []
    for data in datas:
        with contextlib.suppress(CallbackError):
            button = decode(data)
            if isinstance(button, HandButton) and button.op == "move":
                moves.append((data, button))
    for kind in (Take, Pass, Attack, Beat):
        for data, button in moves:
            if isinstance(button.action, kind):
                return data
    return None


# Resolves when the game is over, or when the newest hand message with buttons differs
# from the one the last decision was made on (new message or new edit).
WAIT_FOR_TURN = """
([seen, over]) => {
  if (document.querySelector('#messages-group').innerText.includes(over)) return {over: true};
  const hands = [...document.querySelectorAll('#messages-private .msg[data-from=bot]')]
    .filter(m => m.querySelector('button[data-callback]'));
  const hand = hands[hands.length - 1];
  if (!hand || hand.querySelector('.kb.pending')) return false;
  const sig = hand.dataset.id + ':' + hand.dataset.version;
  if (sig === seen) return false;
  const data = [...hand.querySelectorAll('button[data-callback]')].map(b => b.dataset.callback);
  return {over: false, sig, id: hand.dataset.id, data};
}
"""


async def play_to_the_end(page: Page, deadline: float) -> int:
    """Click through the private chat's hand keyboards until the group shows the result."""
    over = en("result.title")
    seen, clicks = "", 0
    while True:
        remaining_ms = max(1.0, deadline - time.monotonic()) * 1000
        handle = await page.wait_for_function(
            WAIT_FOR_TURN, arg=[seen, over], timeout=remaining_ms, polling="raf"
        )
        turn = await handle.json_value()
        if turn["over"]:
            return clicks
        seen = turn["sig"]
        move = choose_move(turn["data"])
        if move is None:
            continue  # nothing for us to do at this moment (e.g. others throw in)
        if clicks == 2:
            ARTIFACTS.mkdir(exist_ok=True)
            await page.screenshot(path=ARTIFACTS / "sandbox-game.png")
        button = page.locator(
            f'#messages-private .msg[data-id="{turn["id"]}"] button[data-callback="{move}"]'
        )
        # The hand may be redrawn under the cursor; the next turn is read again anyway.
        with contextlib.suppress(PlaywrightError):
            await button.click(timeout=2000)
            clicks += 1


# ---------------------------------------------------------------------- tests


def test_each_run_gets_a_fresh_store_unless_told_to_keep_one(tmp_path: Path) -> None:
    env = bot_environment({"DATA_DIR": "./data"}, "1:x", "http://127.0.0.1:1", data_dir=tmp_path)
    assert env["DATA_DIR"] == str(tmp_path)  # never the checkout's ./data
    with sandbox_store(None) as first:
        (first / "appendonlydir").mkdir()
    with sandbox_store(None) as second:
        assert second != first and list(second.iterdir()) == []
    assert not first.exists() and not second.exists()
    kept = tmp_path / "kept"
    with sandbox_store(str(kept)) as chosen:
        (chosen / "appendonly.aof").write_text("games")
    with sandbox_store(str(kept)) as again:
        assert (again / "appendonly.aof").read_text() == "games"
    assert parse_args(["--data-dir", str(kept)]).data_dir == str(kept)
    assert parse_args([]).data_dir is None


def test_refuses_a_non_loopback_host(capsys: pytest.CaptureFixture[str]) -> None:
    with pytest.raises(SystemExit) as exit_info:
        parse_args(["--host", "0.0.0.0"])
    assert exit_info.value.code == 2
    assert "loopback addresses only" in capsys.readouterr().err
    assert parse_args(["--host", "::1", "--port", "0"]).host == "::1"


async def test_play_a_game_against_two_ais_in_the_browser(sandbox: Sandbox, tmp_path: Path) -> None:
    started = time.monotonic()
    group_last = "#messages-group .msg[data-from=bot] >> nth=-1"
    async with browser(tmp_path / "profile") as context:
        page = context.pages[0] if context.pages else await context.new_page()
        errors: list[str] = []
        page.on("pageerror", lambda err: errors.append(str(err)))
        await join(page, sandbox.url, "Ann")
        assert await page.locator("#start-button").is_visible()  # a never-started bot chat

        await page.fill("#pane-group input[name=text]", "/newgame")
        await page.press("#pane-group input[name=text]", "Enter")
        lobby = page.locator(group_last)
        await lobby.locator("button[data-callback]").first.wait_for()
        lobby_id = await lobby.get_attribute("data-id")
        lobby = page.locator(f'#messages-group .msg[data-id="{lobby_id}"]')
        datas = await callback_data(page, f'#messages-group .msg[data-id="{lobby_id}"]')

        # Ann has not opened the private chat: the lobby's URL button is the deep link.
        await lobby.locator("button[data-url]").click()
        await page.locator("#start-button[data-payload]").wait_for()
        await page.click("#start-button")
        await (
            page.locator("#messages-private .msg[data-from=bot]")
            .filter(has_text=en("start.linked", group="Durak sandbox"))
            .wait_for()
        )
        sent = await page.locator("#messages-private .msg[data-from=me] .text").inner_text()
        assert sent.startswith("/start") and "g-" not in sent  # the payload stays hidden
        assert await page.locator("#start-button").is_hidden()

        for op, seat in (("ai_easy", computer("easy", 0)), ("ai_normal", computer("normal", 1))):
            await lobby.locator(f'button[data-callback="{group_button(datas, op)}"]').click()
            await lobby.filter(has_text=seat).wait_for()
        await lobby.locator("button[data-url]").wait_for(state="detached")
        await lobby.locator(f'button[data-callback="{group_button(datas, "start")}"]').click()

        # The table: one group message with every seat; the hand arrives in private.
        table = page.locator("#messages-group .msg[data-from=bot]").filter(
            has_text=en("table.my_cards")
        )
        await table.wait_for()
        for name in ("Ann", computer("easy", 0), computer("normal", 1)):
            assert name in await table.inner_text()

        clicks = await play_to_the_end(page, deadline=started + 100)
        assert clicks >= 3

        result = page.locator("#messages-group .msg[data-from=bot]").filter(
            has_text=en("result.title")
        )
        text = await result.inner_text()
        assert en("result.durak", name="") in text
        # The deal: its code came at the start, its reveal is in the result.
        assert "🔐 deal v1 p3 " in text
        group_messages = page.locator("#messages-group .msg[data-from=bot]")
        code_note = group_messages.filter(has_text="Deal code:")
        assert await code_note.count() == 1
        assert await result.locator("button[data-callback]").count() == 2  # Rematch, New lobby
        # The private hand closed: no move buttons left, only the result's 🔍 Review.
        private = "#messages-private button[data-callback]"
        hand_buttons = page.locator(f'{private}:not([data-callback$=":v"])')
        await hand_buttons.first.wait_for(state="detached")
        await page.locator(f'{private}[data-callback$=":v"]').wait_for()
        ARTIFACTS.mkdir(exist_ok=True)
        await page.screenshot(path=ARTIFACTS / "sandbox-result.png")
        assert errors == []
    assert time.monotonic() - started < 110
