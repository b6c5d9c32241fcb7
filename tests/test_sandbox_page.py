"""The sandbox page and its API against a stand-in bot (PTB's ``Bot`` driven by the test).

No bot process: the test plays the bot, so every rendering path (formatting, edits,
deletes, toasts, alerts, URL buttons, several tabs) is checked exactly and quickly.
"""

from __future__ import annotations

import contextlib
import json
from collections.abc import AsyncIterator
from dataclasses import dataclass
from pathlib import Path
from typing import Any

import aiohttp
import pytest
from playwright.async_api import Error as PlaywrightError
from playwright.async_api import Page
from support.browser import ARTIFACTS, browser, join
from telegram import (
    Bot,
    BotCommand,
    BotCommandScopeAllGroupChats,
    InlineKeyboardButton,
    InlineKeyboardMarkup,
    Update,
)
from test_sandbox import (  # noqa: F401
    WAIT_FOR_TURN,
    Sandbox,
    callback_data,
    choose_move,
    computer,
    en,
    group_button,
    sandbox,
)

from bot.domain.callbacks import HandButton, decode
from engine import Take
from sandbox.emulator import BotApiEmulator
from sandbox.main import BOT_USERNAME, build
from sandbox.web import FIRST_USER_ID, GROUP_ID, SandboxWeb
from sandbox.web.view import classify_link

ANN, BOB = FIRST_USER_ID, FIRST_USER_ID + 1


@dataclass
class Site:
    emu: BotApiEmulator
    web: SandboxWeb
    bot: Bot
    http: aiohttp.ClientSession

    @property
    def url(self) -> str:
        return f"{self.emu.url}/"

    async def post(self, path: str, **body: Any) -> tuple[int, dict[str, Any]]:
        async with self.http.post(f"{self.emu.url}{path}", json=body) as response:
            return response.status, await response.json()

    async def get(self, path: str, **query: Any) -> tuple[int, dict[str, Any]]:
        async with self.http.get(f"{self.emu.url}{path}", params=query) as response:
            return response.status, await response.json()

    async def callback(self) -> Update:
        """The next callback query the (stand-in) bot receives."""
        while True:
            for update in await self.bot.get_updates(timeout=5):
                await self.bot.get_updates(offset=update.update_id + 1, timeout=0)
                if update.callback_query is not None:
                    return update


@pytest.fixture
async def site() -> AsyncIterator[Site]:
    emu, web, token = build(rate_limits=False)
    await emu.start()
    web.set_bot_status("running")
    try:
        async with (
            Bot(token, base_url=emu.base_url()) as bot,
            aiohttp.ClientSession() as http,
        ):
            yield Site(emu, web, bot, http)
    finally:
        await emu.stop()


async def next_event(stream: aiohttp.ClientResponse) -> tuple[str, dict[str, Any]]:
    name = ""
    while True:
        line = (await stream.content.readline()).decode().rstrip("\n")
        if line.startswith("event: "):
            name = line[len("event: ") :]
        elif line.startswith("data: ") and name:
            return name, json.loads(line[len("data: ") :])


# ---------------------------------------------------------------------- API


async def test_join_makes_the_first_person_the_group_creator(site: Site) -> None:
    status, body = await site.post("/_sandbox/join", name="  Ann\x00 ", language="en")
    assert status == 200 and body["result"] == {"id": ANN, "name": "Ann", "language": "en"}
    status, body = await site.post("/_sandbox/join", name="Bob", language="de")
    assert body["result"]["id"] == BOB
    group = site.emu.chat(GROUP_ID)
    assert group is not None
    assert site.emu.member_status(group, ANN) == "creator"
    assert site.emu.member_status(group, BOB) == "member"
    assert site.emu.users[BOB].language_code == "de"
    # The bot was added by the creator, as the bot's my_chat_member update says.
    [update] = await site.bot.get_updates(timeout=0)
    assert update.my_chat_member is not None and update.my_chat_member.from_user.id == ANN

    for bad in ({"name": " ", "language": "en"}, {"name": "Cy", "language": "xx"}):
        status, body = await site.post("/_sandbox/join", **bad)
        assert status == 400 and body["ok"] is False
    async with site.http.post(f"{site.emu.url}/_sandbox/join", data="name=x") as response:
        assert response.status == 400  # JSON only: no cross-site form posts
    status, body = await site.get("/_sandbox/info")
    assert [m["name"] for m in body["result"]["group"]["members"]] == ["Ann", "Bob"]


async def test_event_stream_snapshot_then_changes(site: Site) -> None:
    await site.post("/_sandbox/join", name="Ann", language="en")
    await site.post("/_sandbox/join", name="Bob", language="en")
    await site.post("/_sandbox/send", user_id=ANN, chat="group", text="/newgame")
    url = f"{site.emu.url}/_sandbox/events"
    async with site.http.get(url, params={"user_id": BOB}) as stream:
        name, snap = await next_event(stream)
        assert name == "snapshot"
        assert snap["me"]["id"] == BOB and snap["started"] is False
        assert [m["text"] for m in snap["messages"]["group"]] == ["/newgame"]
        assert snap["messages"]["private"] == []

        keyboard = InlineKeyboardMarkup([[InlineKeyboardButton("Go", callback_data="go")]])
        sent = await site.bot.send_message(
            GROUP_ID, "<b>Lobby</b> &lt;script&gt;", parse_mode="HTML", reply_markup=keyboard
        )
        name, event = await next_event(stream)
        assert name == "message" and event["chat"] == "group"
        message = event["message"]
        assert message["html"] == "<b>Lobby</b> &lt;script&gt;"
        assert message["buttons"] == [[{"text": "Go", "kind": "callback", "data": "go"}]]
        assert "raw" not in json.dumps(message) and message["from"]["is_bot"]

        # Ann presses; only Ann's page gets the answer, Bob's gets the edit.
        status, body = await site.post(
            "/_sandbox/press", user_id=ANN, chat="group", message_id=sent.message_id, data="go"
        )
        assert status == 200
        query = (await site.callback()).callback_query
        assert query is not None and query.from_user.id == ANN
        await query.answer("only for Ann")
        await site.bot.edit_message_text("Started", chat_id=GROUP_ID, message_id=sent.message_id)
        name, event = await next_event(stream)
        assert name == "message" and event["message"]["version"] == 1
        assert event["message"]["edited"] and event["message"]["buttons"] == []

        await site.bot.delete_message(GROUP_ID, sent.message_id)
        assert await next_event(stream) == ("delete", {"chat": "group", "id": sent.message_id})

    status, _ = await site.get("/_sandbox/events", user_id=999)
    assert status == 404
    status, body = await site.post(
        "/_sandbox/press", user_id=ANN, chat="group", message_id=sent.message_id, data="go"
    )
    assert status == 400 and body["error"] == "This button is no longer there."


async def test_links_are_followed_like_the_telegram_app(site: Site) -> None:
    await site.post("/_sandbox/join", name="Ann", language="en")

    async def open_(url: str) -> tuple[int, dict[str, Any]]:
        return await site.post("/_sandbox/open", user_id=ANN, url=url)

    status, body = await open_(f"https://t.me/{BOT_USERNAME}")
    # Never started: the START button, which sends the link's payload if it has one.
    assert body["result"] == {"action": "show_start", "payload": None}
    status, body = await open_(f"https://t.me/{BOT_USERNAME}?start=g-100")
    assert body["result"] == {"action": "show_start", "payload": "g-100"}
    assert site.emu.last_message(ANN) is None
    await site.emu.user_starts_bot(ANN)
    status, body = await open_(f"https://t.me/{BOT_USERNAME}?start=g-100")
    assert body["result"] == {"action": "started"}
    last = site.emu.last_message(ANN)
    assert last is not None and last.text == "/start g-100"
    status, body = await open_(f"tg://resolve?domain={BOT_USERNAME}")
    assert body["result"] == {"action": "show_private"}
    status, body = await open_("https://example.org/rules")
    assert body["result"] == {"action": "external", "url": "https://example.org/rules"}
    for url in ("https://t.me/other_bot?start=x", "javascript:alert(1)", "tg://settings"):
        status, body = await open_(url)
        assert status == 400, url
    link = classify_link(f"https://t.me/{BOT_USERNAME}?startgroup=x", BOT_USERNAME)
    assert link.kind == "telegram"


async def test_command_menu_and_static_files(site: Site) -> None:
    await site.post("/_sandbox/join", name="Ann", language="de")
    await site.bot.set_my_commands([BotCommand("newgame", "New game")])
    await site.bot.set_my_commands(
        [BotCommand("newgame", "Neues Spiel")],
        scope=BotCommandScopeAllGroupChats(),
        language_code="de",
    )
    _, body = await site.get("/_sandbox/commands", user_id=ANN, chat="group")
    assert body["result"] == [{"command": "newgame", "description": "Neues Spiel"}]
    _, body = await site.get("/_sandbox/commands", user_id=ANN, chat="private")
    assert body["result"] == [{"command": "newgame", "description": "New game"}]

    async with site.http.get(site.url) as response:
        assert response.status == 200
        assert "script-src 'self'" in response.headers["Content-Security-Policy"]
    async with site.http.get(f"{site.emu.url}/static/app.js") as response:
        assert response.headers["Content-Type"].startswith("text/javascript")
    for path in ("/static/..%2Fweb.py", "/static/index.htm"):
        async with site.http.get(f"{site.emu.url}{path}") as response:
            assert response.status == 404
    async with site.http.get(site.url, headers={"Host": "evil.example"}) as response:
        assert response.status == 403  # the emulator's DNS-rebinding guard covers the page


# ---------------------------------------------------------------------- in the browser


async def test_page_renders_what_the_bot_sends_in_two_tabs(site: Site, tmp_path: Path) -> None:
    async with browser(tmp_path / "profile") as context:
        ann = context.pages[0] if context.pages else await context.new_page()
        bob = await context.new_page()  # sessionStorage is per tab: a second person
        await join(ann, site.url, "Ann")
        await join(bob, site.url, "Bob", language="pt")
        assert "3 members" in await ann.locator("#group-sub").inner_text()

        # Formatting is rendered; anything else stays text.
        keyboard = InlineKeyboardMarkup(
            [
                [InlineKeyboardButton("Toast", callback_data="toast")],
                [InlineKeyboardButton("Alert", callback_data="alert")],
                [InlineKeyboardButton("Link", url=f"https://t.me/{BOT_USERNAME}?start=abc")],
            ]
        )
        sent = await site.bot.send_message(
            GROUP_ID,
            '<b>Bold</b> &lt;img src=x onerror="alert(1)"&gt; <a href="javascript:alert(2)">js</a>'
            " <tg-spoiler>secret</tg-spoiler>\n<code>x</code>",
            parse_mode="HTML",
            reply_markup=keyboard,
        )
        selector = f'#messages-group .msg[data-id="{sent.message_id}"]'
        for page in (ann, bob):
            message = page.locator(selector)
            await message.wait_for()
            assert await message.locator(".text b").inner_text() == "Bold"
            assert await message.locator(".text code").inner_text() == "x"
            assert await message.locator(".tg-spoiler").count() == 1
            assert await message.locator("img, a[href^=javascript], script").count() == 0
            assert '<img src=x onerror="alert(1)">' in await message.inner_text()

        # A callback answer: a toast for the presser only; show_alert: a dialog.
        await ann.locator(f'{selector} button[data-callback="toast"]').click()
        query = (await site.callback()).callback_query
        assert query is not None
        await query.answer("Your turn")
        await ann.locator("#pane-group .toast", has_text="Your turn").wait_for()
        assert await bob.locator(".toast").count() == 0
        await ann.locator(f'{selector} button[data-callback="alert"]').click()
        query = (await site.callback()).callback_query
        assert query is not None
        await query.answer("Not your turn!", show_alert=True)
        await ann.locator("#alert-text", has_text="Not your turn!").wait_for()
        ARTIFACTS.mkdir(exist_ok=True)
        await ann.screenshot(path=ARTIFACTS / "sandbox-page-alert.png")
        await ann.click("#alert-ok")
        assert await ann.locator("#alert").is_hidden()

        # Edits are applied in place.
        await site.bot.edit_message_text(
            "<i>Edited</i>",
            chat_id=GROUP_ID,
            message_id=sent.message_id,
            parse_mode="HTML",
            reply_markup=keyboard,
        )
        for page in (ann, bob):
            await page.locator(f'{selector}[data-version="1"] .text i').wait_for()
            assert await page.locator("#messages-group .msg").count() == 1
            assert "edited" in await page.locator(f"{selector} .meta").inner_text()

        # A t.me deep link opens Bob's private chat with the bot: /start abc.
        await bob.locator(f"{selector} button[data-url]").click()
        await bob.locator('#start-button[data-payload="abc"]').wait_for()
        assert site.emu.last_message(BOB) is None  # not started until he presses START
        await bob.click("#start-button")
        await bob.locator("#messages-private .msg[data-from=me]", has_text="/start").wait_for()
        last = site.emu.last_message(BOB)
        assert last is not None and last.text == "/start abc"
        assert await bob.locator("#start-button").is_hidden()
        assert await ann.locator("#start-button").is_visible()
        assert await ann.locator("#messages-private .msg").count() == 0

        # The bot writes to Bob privately; the command menu comes from setMyCommands.
        await site.bot.send_message(BOB, "Your cards: <b>6♠</b>", parse_mode="HTML")
        await bob.locator("#messages-private .msg[data-from=bot] b", has_text="6♠").wait_for()
        await site.bot.set_my_commands([BotCommand("rules", "The rules")])
        await bob.fill("#pane-group input[name=text]", "/ru")
        await bob.locator("#pane-group .suggestions li", has_text="/rules").click()
        await bob.locator("#messages-group .msg[data-from=me]", has_text="/rules").wait_for()
        await ann.locator("#messages-group .msg[data-from=user]", has_text="/rules").wait_for()

        # Deleted messages disappear everywhere.
        await site.bot.delete_message(GROUP_ID, sent.message_id)
        for page in (ann, bob):
            await page.locator(selector).wait_for(state="detached")
        await bob.screenshot(path=ARTIFACTS / "sandbox-page-bob.png")

        # The bot process dying is shown on every page.
        site.web.set_bot_status("exited", code=1, reason="exit code 1")
        await ann.locator("#bot-status[data-state=exited]", has_text="exit code 1").wait_for()


# ---------------------------------------------------------------------- the real bot at phone width

# Every visible button whose label is wider than the button (cut off or ellipsised).
OVERFLOWING_BUTTONS = """
() => [...document.querySelectorAll('button')]
  .filter(b => b.offsetParent !== null && b.scrollWidth > b.clientWidth)
  .map(b => b.innerText)
"""


async def show_chat(page: Page, chat: str) -> None:
    """On a narrow screen the sandbox shows one chat at a time, like the phone app."""
    await page.click(f'#tabs button[data-show="{chat}"]')
    await page.locator(f'#chats[data-show="{chat}"]').wait_for(state="attached")


async def test_no_button_label_overflows_on_a_390_px_phone(
    sandbox: Sandbox,  # noqa: F811
    tmp_path: Path,
) -> None:
    async with browser(tmp_path / "profile") as context:
        page = context.pages[0] if context.pages else await context.new_page()
        await page.set_viewport_size({"width": 390, "height": 844})
        await join(page, sandbox.url, "Ann")
        await page.fill("#pane-group input[name=text]", "/newgame")
        await page.press("#pane-group input[name=text]", "Enter")
        lobby = page.locator("#messages-group .msg[data-from=bot] >> nth=-1")
        await lobby.locator("button[data-callback]").first.wait_for()
        lobby_id = await lobby.get_attribute("data-id")
        selector = f'#messages-group .msg[data-id="{lobby_id}"]'
        lobby = page.locator(selector)
        datas = await callback_data(page, selector)
        ARTIFACTS.mkdir(exist_ok=True)
        await page.screenshot(path=ARTIFACTS / "phone-390-lobby.png")
        assert await page.evaluate(OVERFLOWING_BUTTONS) == []
        await lobby.locator("button[data-url]").click()  # open the private chat
        await page.locator("#start-button[data-payload]").wait_for()
        await page.click("#start-button")
        await page.locator("#messages-private .msg[data-from=bot]").first.wait_for()
        await show_chat(page, "group")

        for op, seat in (("ai_easy", computer("easy", 0)), ("ai_hard", computer("hard", 1))):
            await lobby.locator(f'button[data-callback="{group_button(datas, op)}"]').click()
            await lobby.filter(has_text=seat).wait_for()
        assert await page.evaluate(OVERFLOWING_BUTTONS) == []
        await lobby.locator(f'button[data-callback="{group_button(datas, "start")}"]').click()

        table = page.locator("#messages-group .msg[data-from=bot]").filter(
            has_text=en("table.my_cards")
        )
        await table.wait_for()
        ARTIFACTS.mkdir(exist_ok=True)
        # In one step in the page: the computer keeps playing, and the message an element
        # handle points to may be replaced between finding and scrolling it.
        await page.evaluate(
            """(label) => [...document.querySelectorAll('#messages-group .msg[data-from=bot]')]
                .filter(m => m.textContent.includes(label)).pop()?.scrollIntoView()""",
            en("table.my_cards"),
        )
        assert await page.evaluate(OVERFLOWING_BUTTONS) == []
        await page.screenshot(path=ARTIFACTS / "phone-390-table.png")

        await show_chat(page, "private")
        # The hand: a private message with at least one move button plus Leave. Not more: a
        # defender who cannot beat the first card holds just Take and Leave, and the game then
        # waits for them (the turn timeout outlasts this wait).
        await page.wait_for_function(
            "() => [...document.querySelectorAll('#messages-private .msg')]"
            ".some(m => m.querySelectorAll('button[data-callback]').length >= 2)"
        )
        assert await page.evaluate(OVERFLOWING_BUTTONS) == []
        await page.screenshot(path=ARTIFACTS / "phone-390-hand.png")


async def test_six_at_the_table_and_a_defence_at_phone_width(
    sandbox: Sandbox,  # noqa: F811
    tmp_path: Path,
) -> None:
    async with browser(tmp_path / "profile") as context:
        page = context.pages[0] if context.pages else await context.new_page()
        await page.set_viewport_size({"width": 390, "height": 844})
        await join(page, sandbox.url, "Ann")
        await page.fill("#pane-group input[name=text]", "/newgame")
        await page.press("#pane-group input[name=text]", "Enter")
        newest = page.locator("#messages-group .msg[data-from=bot] >> nth=-1")
        await newest.locator("button[data-callback]").first.wait_for()
        selector = f'#messages-group .msg[data-id="{await newest.get_attribute("data-id")}"]'
        lobby = page.locator(selector)
        datas = await callback_data(page, selector)
        await lobby.locator("button[data-url]").click()  # open the private chat
        await page.locator("#start-button[data-payload]").wait_for()
        await page.click("#start-button")
        await page.locator("#messages-private .msg[data-from=bot]").first.wait_for()
        await show_chat(page, "group")

        # The options screen: every value a button, the current one marked.
        await lobby.locator(f'button[data-callback="{group_button(datas, "options")}"]').click()
        await lobby.locator("button", has_text="✓ 36").wait_for()
        assert await page.evaluate(OVERFLOWING_BUTTONS) == []
        await page.screenshot(path=ARTIFACTS / "phone-390-lobby-options.png")
        back = await callback_data(page, selector)
        await lobby.locator(f'button[data-callback="{group_button(back, "options_back")}"]').click()
        await lobby.locator(f'button[data-callback="{group_button(datas, "start")}"]').wait_for()

        for count, op in enumerate(("ai_easy", "ai_normal", "ai_hard", "ai_easy", "ai_normal"), 2):
            await lobby.locator(f'button[data-callback="{group_button(datas, op)}"]').click()
            await lobby.filter(has_text=f"({count}/6)").wait_for()
        # A full table: no Join and no "+ AI"; "−" names the seat it removes.
        labels = await lobby.locator("button").all_inner_texts()
        assert not any(label in ("Join", en("lobby.ai_easy")) for label in labels), labels
        assert "− " + computer("normal", 4) in labels
        await page.screenshot(path=ARTIFACTS / "phone-390-lobby-full.png")
        await lobby.locator(f'button[data-callback="{group_button(datas, "start")}"]').click()

        table = page.locator("#messages-group .msg[data-from=bot]").filter(
            has_text=en("table.my_cards")
        )
        await table.wait_for()
        await page.evaluate(
            """(label) => [...document.querySelectorAll('#messages-group .msg[data-from=bot]')]
                .filter(m => m.textContent.includes(label)).pop()?.scrollIntoView()""",
            en("table.my_cards"),
        )
        assert await page.evaluate(OVERFLOWING_BUTTONS) == []
        await page.screenshot(path=ARTIFACTS / "phone-390-table-six.png")

        # Ann plays (pass, else her first card) until she must defend; that hand is shot.
        await show_chat(page, "private")
        seen = ""
        for _ in range(200):
            handle = await page.wait_for_function(
                WAIT_FOR_TURN, arg=[seen, en("result.title")], timeout=60_000, polling="raf"
            )
            turn = await handle.json_value()
            assert not turn["over"], "the game ended before Ann defended"
            seen = turn["sig"]
            moves = [b for b in map(decode, turn["data"]) if isinstance(b, HandButton)]
            if any(isinstance(b.action, Take) for b in moves):
                break
            move = choose_move(turn["data"])
            if move is not None:
                hand = f'#messages-private .msg[data-id="{turn["id"]}"]'
                with contextlib.suppress(PlaywrightError):
                    await page.locator(f'{hand} button[data-callback="{move}"]').click(timeout=2000)
        else:
            raise AssertionError("Ann never had to defend")
        await page.evaluate(
            "(id) => document.querySelector(`#messages-private .msg[data-id='${id}']`)"
            ".scrollIntoView({block: 'end'})",
            turn["id"],
        )
        assert await page.evaluate(OVERFLOWING_BUTTONS) == []
        await page.screenshot(path=ARTIFACTS / "phone-390-defence.png")
