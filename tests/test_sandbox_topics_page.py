"""The real bot in the sandbox at phone width: a game in a forum topic, and a player who
never opened a private chat seeing his hand as an ephemeral message there.

The emulator and the page run in this process (as ``durak-sandbox`` runs them), the bot as
the child process ``python -m bot``, so the test can check the page against the emulator's
own record of who was sent what, and where.
"""

from __future__ import annotations

import os
from collections.abc import AsyncIterator
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

import aiohttp
import pytest
from playwright.async_api import Page
from support.browser import ARTIFACTS, browser, join
from test_sandbox import FAST_BOT, callback_data, group_button

from sandbox.emulator import BotApiEmulator, EmuMessage
from sandbox.main import build
from sandbox.web import FIRST_USER_ID, GROUP_ID
from sandbox.web.botprocess import BotProcess, bot_environment

ANN, BOB = FIRST_USER_ID, FIRST_USER_ID + 1
GENERAL = 1
BOT_READY_TIMEOUT = 60.0  # a cold start imports PTB, the engine and the AI


@dataclass
class Live:
    emu: BotApiEmulator
    http: aiohttp.ClientSession
    log: list[str] = field(default_factory=list)

    async def post(self, path: str, **body: Any) -> tuple[int, Any]:
        async with self.http.post(f"{self.emu.url}{path}", json=body) as response:
            data = await response.json()
            return response.status, data.get("result", data.get("error"))


@pytest.fixture
async def live(tmp_path: Path) -> AsyncIterator[Live]:
    """The sandbox's emulator and page, and the real bot polling it."""
    emu, web, token = build(rate_limits=False)
    await emu.start()
    base = {**os.environ, **FAST_BOT}
    base.pop("REDIS_URL", None)  # the bot's own redis-server in DATA_DIR, never a shared one
    data_dir = tmp_path / "data"
    data_dir.mkdir()
    env = bot_environment(base, token, emu.url, data_dir=data_dir)
    log: list[str] = []
    bot = BotProcess(env, echo=log.append)
    try:
        await bot.start()
        await emu.wait_for(
            lambda: emu.stats.calls["getUpdates"] > 0,
            timeout=BOT_READY_TIMEOUT,
            what="the bot polls for updates",
        )
        web.set_bot_status("running", pid=bot.pid)
        async with aiohttp.ClientSession() as http:
            yield Live(emu, http, log)
    finally:
        await bot.stop()
        await emu.stop()


async def phone(page: Page, url: str, name: str) -> Page:
    await page.set_viewport_size({"width": 390, "height": 844})
    await join(page, url, name)
    return page


async def show_chat(page: Page, chat: str) -> None:
    """On a narrow screen the sandbox shows one chat at a time, like the phone app."""
    await page.click(f'#tabs button[data-show="{chat}"]')
    await page.locator(f'#chats[data-show="{chat}"]').wait_for(state="attached")


def has_hand_buttons(message: EmuMessage) -> bool:
    """A hand: the bot's move buttons (callback data ``h:...``)."""
    return any(
        str(b.get("callback_data", "")).startswith("h:")
        for row in message.inline_keyboard
        for b in row
    )


async def test_a_game_in_a_topic_and_a_hand_only_bob_sees(live: Live, tmp_path: Path) -> None:
    emu = live.emu
    url = f"{emu.url}/"
    async with browser(tmp_path / "profile") as context:
        ann = await phone(
            context.pages[0] if context.pages else await context.new_page(), url, "Ann"
        )
        bob = await phone(await context.new_page(), url, "Bob")
        group = emu.chat(GROUP_ID)
        assert group is not None
        assert emu.member_status(group, emu.bot().id) == "administrator"

        # Ann (the group's creator) turns topics on and makes a "Cards" topic.
        await ann.click("#forum-toggle")
        await bob.locator("#topic-bar .topic", has_text="General").wait_for()
        status, created = await live.post(
            "/_sandbox/topics", user_id=ANN, action="create", name="Cards"
        )
        assert status == 200, created
        thread = created["thread"]
        assert thread != GENERAL
        cards = f'#topic-bar .topic[data-thread="{thread}"]'
        for page in (ann, bob):
            await page.click(cards)

        # /newgame in the topic: the lobby answers there.
        await ann.fill("#pane-group input[name=text]", "/newgame")
        await ann.press("#pane-group input[name=text]", "Enter")
        newest = ann.locator("#messages-group .msg[data-from=bot] >> nth=-1")
        await newest.locator("button[data-callback]").first.wait_for()
        lobby_id = await newest.get_attribute("data-id")
        selector = f'#messages-group .msg[data-id="{lobby_id}"]'
        [lobby_msg] = [m for m in emu.messages(GROUP_ID) if str(m.message_id) == lobby_id]
        assert lobby_msg.thread_id == thread
        datas = await callback_data(ann, selector)
        # Ann opens the private chat with the bot (the lobby's link); Bob never does.
        await ann.locator(f"{selector} button[data-url]").click()
        await ann.locator("#start-button[data-payload]").wait_for()
        await ann.click("#start-button")
        await ann.locator("#messages-private .msg[data-from=bot]").first.wait_for()
        await show_chat(ann, "group")
        await ann.locator(f"{cards}.active").wait_for()

        # Bob joins from the topic; the bot tells him he can play from the group.
        bob_lobby = bob.locator(selector)
        await bob_lobby.locator(f'button[data-callback="{group_button(datas, "join")}"]').click()
        # The answer opens the bot's private chat at its START button, as the Telegram app
        # does; Bob goes back to the group without pressing it.
        joined = bob.locator("#pane-group .toast", has_text="play from the group")
        await joined.wait_for(state="attached")
        await bob.locator("#start-button[data-payload]").wait_for()
        await show_chat(bob, "group")
        await bob.locator(f"{cards}.active").wait_for()
        await bob_lobby.filter(has_text="2. Bob").wait_for()
        assert BOB not in emu.bot().started
        await emu.wait_for(
            lambda: any(
                "play from the group" in (m.text or "") and m.thread_id == thread
                for m in emu.messages(GROUP_ID)
            ),
            timeout=10,
            what="the lobby says Bob plays from the group",
        )
        await (
            ann.locator(selector)
            .locator(f'button[data-callback="{group_button(datas, "start")}"]')
            .click()
        )

        # The table, in the topic, with the "🃏 My hand" button.
        table = ann.locator("#messages-group .msg[data-from=bot]").filter(has_text="Trump:")
        await table.last.wait_for()
        my_hand_button = table.last.locator("button[data-callback]", has_text="🃏 My hand")
        await my_hand_button.wait_for()
        my_hand = group_button(
            [str(await my_hand_button.get_attribute("data-callback"))], "my_hand"
        )
        bot_messages = [m for m in emu.messages(GROUP_ID) if m.sender.id == emu.bot().id]
        assert any("Trump:" in (m.text or "") for m in bot_messages)
        # Nothing of the game in General: every bot message of the group is in the topic.
        assert bot_messages and {m.thread_id for m in bot_messages} == {thread}, [
            (m.thread_id, (m.text or "")[:40]) for m in bot_messages
        ]
        await ann.evaluate(
            """() => [...document.querySelectorAll('#messages-group .msg[data-from=bot]')]
                .filter(m => m.textContent.includes('Trump:')).pop()
                ?.scrollIntoView({block: 'end'})"""
        )
        assert await ann.locator(f"{cards}.active").count() == 1
        ARTIFACTS.mkdir(exist_ok=True)
        await ann.screenshot(path=ARTIFACTS / "phone-390-topic-table.png")
        # General, on the page: not the game's messages.
        await bob.click(f'#topic-bar .topic[data-thread="{GENERAL}"]')
        await bob.locator("#topic-bar .topic.active", has_text="General").wait_for()
        assert await bob.locator("#messages-group .msg[data-from=bot]:visible").count() == 0
        await bob.click(cards)

        # Bob taps "🃏 My hand": his hand, an ephemeral message in the topic, for him alone.
        shown = emu.wait_for_ephemeral(BOB, GROUP_ID, has_hand_buttons, timeout=15)
        await bob.locator(f'#messages-group button[data-callback="{my_hand}"]').last.click()
        hand = await shown
        assert hand.thread_id == thread
        ephemeral = bob.locator("#messages-group .msg.ephemeral").filter(
            has=bob.locator("button[data-callback^='h:']")
        )
        await ephemeral.wait_for()
        assert "Only you can see this" in await ephemeral.inner_text()
        await ephemeral.scroll_into_view_if_needed()
        await joined.wait_for(state="detached")  # the join's toast no longer covers the topics
        await bob.screenshot(path=ARTIFACTS / "phone-390-ephemeral-hand.png")

        # Ann sees no hand of Bob's: not on her page, not in the emulator's record.
        assert emu.ephemerals_of(ANN, GROUP_ID) == []
        assert not any(has_hand_buttons(m) for m in emu.messages_seen_by(ANN, GROUP_ID))
        ephemeral_events = [e for e in emu.chat_events(GROUP_ID) if e["type"] == "ephemeral"]
        assert ephemeral_events and {e["viewer_id"] for e in ephemeral_events} == {BOB}
        await ann.locator("#messages-group .msg", has_text="Trump:").last.wait_for()
        assert await ann.locator("#messages-group .msg.ephemeral").count() == 0
        assert await ann.locator("#messages-group button[data-callback^='h:']").count() == 0
        hand_text = await ephemeral.locator(".text").first.inner_text()
        assert hand_text.strip()
        assert hand_text not in await ann.locator("#messages-group").inner_text()
