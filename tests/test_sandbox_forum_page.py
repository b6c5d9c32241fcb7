"""The sandbox page with forum topics and ephemeral messages, against a stand-in bot
(the test plays the bot over raw HTTP, as the real one would call Telegram)."""

from __future__ import annotations

import json
from collections.abc import AsyncIterator
from pathlib import Path
from typing import Any

import aiohttp
import pytest
from support.browser import ARTIFACTS, browser, join

from sandbox.emulator import BotApiEmulator
from sandbox.main import build
from sandbox.web import FIRST_USER_ID, GROUP_ID, SandboxWeb

ANN, BOB = FIRST_USER_ID, FIRST_USER_ID + 1
KEYBOARD = {"inline_keyboard": [[{"text": "Show my hand", "callback_data": "hand"}]]}


class Site:
    def __init__(
        self, emu: BotApiEmulator, web: SandboxWeb, token: str, http: aiohttp.ClientSession
    ) -> None:
        self.emu, self.web, self.token, self.http = emu, web, token, http

    async def post(self, path: str, **body: Any) -> tuple[int, Any]:
        async with self.http.post(f"{self.emu.url}{path}", json=body) as response:
            data = await response.json()
            return response.status, data.get("result", data.get("error"))

    async def bot(self, method: str, **params: Any) -> dict[str, Any]:
        form = {k: v if isinstance(v, str) else json.dumps(v) for k, v in params.items()}
        async with self.http.post(f"{self.emu.url}/bot{self.token}/{method}", data=form) as r:
            body: dict[str, Any] = await r.json()
            assert body["ok"], body
            return body


@pytest.fixture
async def site() -> AsyncIterator[Site]:
    emu, web, token = build(rate_limits=False)
    await emu.start()
    web.set_bot_status("running")
    try:
        async with aiohttp.ClientSession() as http:
            yield Site(emu, web, token, http)
    finally:
        await emu.stop()


async def test_topics_and_ephemeral_messages_at_phone_width(site: Site, tmp_path: Path) -> None:
    async with browser(tmp_path / "profile") as context:
        ann = context.pages[0] if context.pages else await context.new_page()
        await ann.set_viewport_size({"width": 390, "height": 844})
        await join(ann, f"{site.emu.url}/", "Ann")
        bob = await context.new_page()
        await bob.set_viewport_size({"width": 390, "height": 844})
        await join(bob, f"{site.emu.url}/", "Bob")
        bot_id = site.emu.bot().id
        site.emu.add_bot_to_group(GROUP_ID, bot_id, admin=True)

        # Only the admin (the group's creator) has the topic controls.
        assert await bob.locator("#forum-toggle").is_hidden()
        await ann.click("#forum-toggle")
        await bob.locator("#topic-bar .topic", has_text="General").wait_for()
        status, created = await site.post(
            "/_sandbox/topics", user_id=ANN, action="create", name="Game night"
        )
        assert status == 200
        thread = created["thread"]
        await bob.click(f'#topic-bar .topic[data-thread="{thread}"]')
        await bob.fill("#pane-group input[name=text]", "/newgame")
        await bob.press("#pane-group input[name=text]", "Enter")
        sent = bob.locator("#messages-group .msg[data-from=me]", has_text="/newgame")
        await sent.wait_for()
        [stored] = [m for m in site.emu.messages(GROUP_ID) if m.text == "/newgame"]
        assert stored.thread_id == thread

        # The bot answers Bob alone, in the topic.
        result = await site.bot(
            "sendMessage",
            chat_id=GROUP_ID,
            text="Your hand: 6♠ 7♥",
            message_thread_id=thread,
            reply_markup=KEYBOARD,
            ephemeral_message_parameters={"receiver_user_id": BOB},
        )
        ephemeral = bob.locator("#messages-group .msg.ephemeral")
        await ephemeral.wait_for()
        assert "Only you can see this" in await ephemeral.inner_text()
        await bob.screenshot(path=_artifact("phone-390-forum-ephemeral.png"))
        await ann.click(f'#topic-bar .topic[data-thread="{thread}"]')
        await ann.locator("#messages-group .msg", has_text="/newgame").wait_for()
        assert await ann.locator("#messages-group .msg.ephemeral").count() == 0
        assert "Your hand" not in await ann.locator("#messages-group").inner_text()
        # General does not show the topic's messages.
        await bob.click('#topic-bar .topic[data-thread="1"]')
        assert await ephemeral.is_hidden()
        await bob.click(f'#topic-bar .topic[data-thread="{thread}"]')

        # A tap on the ephemeral message's button reaches the bot as Telegram sends it.
        await ephemeral.locator("button[data-callback]").click()
        updates = (await site.bot("getUpdates", timeout=0))["result"]
        [query] = [u["callback_query"] for u in updates if "callback_query" in u]
        assert query["from"]["id"] == BOB and query["message"]["message_id"] == 0
        ephemeral_id = result["result"]["ephemeral_message_id"]
        assert query["message"]["ephemeral_message_id"] == ephemeral_id
        await site.bot("answerCallbackQuery", callback_query_id=query["id"], text="Sorted")
        await site.bot(
            "editEphemeralMessageText",
            chat_id=GROUP_ID,
            receiver_user_id=BOB,
            ephemeral_message_id=ephemeral_id,
            text="Played 6♠",
        )
        await ephemeral.filter(has_text="Played 6♠").wait_for()

        # Dismissed from Bob's app; the bot's later edits no longer show.
        await ephemeral.locator(".dismiss").click()
        await ephemeral.wait_for(state="detached")

        # Closing the topic: Bob's composer says so.
        await site.post("/_sandbox/topics", user_id=ANN, action="close", thread=thread)
        await bob.locator("#pane-group input[placeholder='The topic is closed']").wait_for()
        await bob.screenshot(path=_artifact("phone-390-forum-closed.png"))
        # Everything in the top bar and the topic bar still fits on the phone.
        right = await bob.evaluate(
            "document.querySelector('#switch-user').getBoundingClientRect().right"
        )
        assert right <= 390


def _artifact(name: str) -> Path:
    ARTIFACTS.mkdir(exist_ok=True)
    return ARTIFACTS / name
