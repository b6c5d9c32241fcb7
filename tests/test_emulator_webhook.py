"""Webhook delivery by the emulator: POSTs with the secret header, retries with backoff,
order per chat, getWebhookInfo, and getUpdates refused while a webhook is set."""

from __future__ import annotations

import asyncio
from collections.abc import AsyncIterator
from typing import Any

import pytest
from support.emulator import ANN, BOB, TOKEN, Delivery, WebhookReceiver, populate
from support.harness import free_port
from telegram import Bot, Update
from telegram.error import BadRequest, Conflict
from telegram.ext import ApplicationBuilder, ContextTypes, MessageHandler, filters

from sandbox.emulator import BotApiEmulator, RetryPolicy

FAST_RETRIES = RetryPolicy(first_delay=0.05, factor=2.0, max_delay=0.2, timeout=1.0)


@pytest.fixture
async def emu() -> AsyncIterator[BotApiEmulator]:
    async with BotApiEmulator(webhook_retry=FAST_RETRIES) as emulator:
        populate(emulator)
        yield emulator


@pytest.fixture
async def bot(emu: BotApiEmulator) -> AsyncIterator[Bot]:
    async with Bot(TOKEN, base_url=emu.base_url()) as b:
        yield b


def texts(deliveries: list[Delivery], chat_id: int) -> list[str]:
    return [d.text for d in deliveries if d.update["message"]["chat"]["id"] == chat_id]


async def test_updates_are_posted_with_the_secret(emu: BotApiEmulator, bot: Bot) -> None:
    async with WebhookReceiver() as receiver:
        await emu.user_sends(ANN, ANN, "before the webhook")  # pending updates go too
        assert await bot.set_webhook(receiver.url, secret_token="s3cret", max_connections=5)
        for text in ("one", "two", "three"):
            await emu.user_sends(ANN, ANN, text)
        await emu.wait_for(lambda: len(receiver.accepted()) == 4, what="4 deliveries")
        assert texts(receiver.deliveries, ANN) == ["before the webhook", "one", "two", "three"]
        assert {d.secret for d in receiver.deliveries} == {"s3cret"}
        info = await bot.get_webhook_info()
        assert (info.url, info.pending_update_count, info.max_connections) == (receiver.url, 0, 5)
        assert info.last_error_message is None
        assert emu.stats.webhook_delivered == 4
        with pytest.raises(Conflict, match="webhook is active"):
            await bot.get_updates()

        assert await bot.delete_webhook()
        await emu.user_sends(ANN, ANN, "polled")
        [update] = await bot.get_updates()
        assert update.message is not None and update.message.text == "polled"
        assert len(receiver.deliveries) == 4


async def test_failed_posts_are_retried_in_order_per_chat(emu: BotApiEmulator, bot: Bot) -> None:
    ann_attempts = 0
    recovered = asyncio.Event()

    async def failing_for_ann(update: dict[str, Any]) -> int:
        nonlocal ann_attempts
        if update["message"]["chat"]["id"] != ANN:
            return 200
        ann_attempts += 1
        return 200 if recovered.is_set() else 500

    async with WebhookReceiver(failing_for_ann) as receiver:
        await bot.set_webhook(receiver.url)
        await emu.user_sends(ANN, ANN, "a1")
        await emu.user_sends(ANN, ANN, "a2")
        await emu.user_sends(BOB, BOB, "b1")
        # Bob's chat is not held up by Ann's failing one.
        await emu.wait_for(lambda: texts(receiver.accepted(), BOB) == ["b1"], what="b1")
        await emu.wait_for(lambda: ann_attempts >= 3, what="retries")
        info = await bot.get_webhook_info()
        assert info.pending_update_count == 2  # a1 and a2
        expected = "Wrong response from the webhook: 500 Internal Server Error"
        assert (info.last_error_message, info.last_error_date is not None) == (expected, True)
        recovered.set()
        await emu.wait_for(lambda: len(receiver.accepted()) == 3, what="all delivered")
    # a2 was never sent before a1 was accepted: a1's retries come first.
    ann = [(d.text, d.status) for d in receiver.deliveries if d.text.startswith("a")]
    failures = len(ann) - 2
    assert failures >= 3
    assert ann == [("a1", 500)] * failures + [("a1", 200), ("a2", 200)]
    assert (await bot.get_webhook_info()).pending_update_count == 0
    assert emu.stats.webhook_posts == len(receiver.deliveries)


async def test_slow_webhook_times_out_and_is_retried(emu: BotApiEmulator, bot: Bot) -> None:
    never = asyncio.Event()
    calls = 0

    async def hang_once(update: dict[str, Any]) -> int:
        nonlocal calls
        calls += 1
        if calls == 1:
            await never.wait()  # longer than the delivery timeout: cancelled by it
        return 200

    async with WebhookReceiver(hang_once) as receiver:
        await bot.set_webhook(receiver.url)
        await emu.user_sends(ANN, ANN, "patience")
        await emu.wait_for(lambda: receiver.accepted(), timeout=10, what="the retry")
        assert texts(receiver.accepted(), ANN) == ["patience"]
        assert (await bot.get_webhook_info()).last_error_message == "Read timeout expired"


async def test_public_urls_are_delivered_only_through_a_route(
    emu: BotApiEmulator, bot: Bot
) -> None:
    with pytest.raises(BadRequest, match=r"(?i)https url must be provided"):
        await bot.set_webhook("http://bot.example.test/hook")
    async with WebhookReceiver() as receiver:
        await bot.set_webhook("https://bot.example.test/hook", secret_token="t")
        await emu.user_sends(ANN, ANN, "waiting")
        info = await bot.get_webhook_info()
        assert info.pending_update_count == 1
        assert "route_webhook" in (info.last_error_message or "")
        # Like a reverse proxy in front of the bot: the public URL leads to the receiver.
        emu.route_webhook("https://bot.example.test", receiver.base)
        await emu.wait_for(lambda: receiver.accepted(), what="routed delivery")
        assert [(d.text, d.secret) for d in receiver.accepted()] == [("waiting", "t")]
        with pytest.raises(ValueError, match="loopback"):
            emu.route_webhook("https://x.example", "http://10.0.0.1:80")


async def test_ptb_application_in_webhook_mode(emu: BotApiEmulator) -> None:
    async def echo(update: Update, context: ContextTypes.DEFAULT_TYPE) -> None:
        assert update.effective_message is not None
        await update.effective_message.reply_text(f"echo {update.effective_message.text}")

    app = ApplicationBuilder().token(TOKEN).base_url(emu.base_url()).build()
    app.add_handler(MessageHandler(filters.TEXT, echo))
    port = free_port()
    async with app:
        await app.start()
        assert app.updater is not None
        # PTB's own webhook server checks the secret header on every POST.
        await app.updater.start_webhook(
            listen="127.0.0.1",
            port=port,
            url_path="hook",
            webhook_url=f"http://127.0.0.1:{port}/hook",
            secret_token="ptb-secret",
        )
        try:
            await emu.user_sends(ANN, ANN, "hello")
            reply = await emu.wait_for_message(ANN, "echo hello")
            assert reply.from_bot
            assert emu.stats.calls["getUpdates"] == 0
            assert emu.stats.webhook_delivered == 1
        finally:
            await app.updater.stop()
            await app.stop()
