"""Webhook mode: the real bot process serves updates posted to its webhook."""

from __future__ import annotations

import asyncio
import os
import socket
import sys
from pathlib import Path

import aiohttp
import pytest

from bot.ops.settings import Settings
from sandbox.emulator import BotApiEmulator

TOKEN = "5550002:webhook-test-token"
SECRET = "s3cret-webhook-token"
USER = 7001


def free_port() -> int:
    with socket.socket() as s:
        s.bind(("127.0.0.1", 0))
        return int(s.getsockname()[1])


def help_update(update_id: int) -> dict[str, object]:
    return {
        "update_id": update_id,
        "message": {
            "message_id": 1,
            "date": 1_700_000_000,
            "chat": {"id": USER, "type": "private", "first_name": "Wanda"},
            "from": {"id": USER, "is_bot": False, "first_name": "Wanda", "language_code": "en"},
            "text": "/help",
            "entities": [{"type": "bot_command", "offset": 0, "length": 5}],
        },
    }


def registered_secret(emu: BotApiEmulator) -> str | None:
    """The secret_token the bot passed to setWebhook, as the emulator recorded it."""
    webhook = emu.bot(TOKEN).webhook
    return None if webhook is None else webhook.secret_token


@pytest.mark.parametrize("configured", [True, False], ids=["configured", "derived"])
async def test_webhook_mode_registers_and_answers(tmp_path: Path, configured: bool) -> None:
    """Webhook mode never runs unauthenticated: without WEBHOOK_SECRET a secret is derived
    from the token and registered; a forged POST without it is refused and changes nothing;
    no log line (at DEBUG) contains the token or the secret."""
    async with BotApiEmulator() as emu:  # started by the context manager
        emu.add_bot(TOKEN, username="durak_webhook_bot")
        emu.add_user(USER, "Wanda")
        await emu.user_starts_bot(USER)  # the private chat is open
        port = free_port()
        env = {k: v for k, v in os.environ.items() if not k.startswith(("TELEGRAM_", "REDIS_"))}
        env |= {
            "TELEGRAM_BOT_TOKEN": TOKEN,
            "TELEGRAM_API_URL": emu.url,
            "WEBHOOK_URL": "https://durak.example.test/hook",
            "WEBHOOK_LISTEN": "127.0.0.1",
            "WEBHOOK_PORT": str(port),
            "WEBHOOK_PATH": "telegram",
            "LOG_LEVEL": "DEBUG",
        }
        if configured:
            env["WEBHOOK_SECRET"] = SECRET
        expected = Settings(
            telegram_bot_token=TOKEN,  # type: ignore[arg-type]
            webhook_secret=SECRET if configured else None,  # type: ignore[arg-type]
            _env_file=None,  # type: ignore[call-arg]
        ).webhook_secret_value()
        assert len(expected) >= 16
        bot = await asyncio.create_subprocess_exec(
            sys.executable, "-m", "bot", cwd=tmp_path, env=env, stderr=asyncio.subprocess.PIPE
        )
        try:
            await emu.wait_for(
                lambda: emu.stats.calls.get("setWebhook", 0) > 0, timeout=30, what="setWebhook"
            )
            url = f"http://127.0.0.1:{port}/telegram"
            async with aiohttp.ClientSession() as http:
                info_url = f"{emu.url}/bot{TOKEN}/getWebhookInfo"
                async with http.get(info_url) as response:
                    info = (await response.json())["result"]
                assert info["url"] == "https://durak.example.test/hook/telegram"
                assert registered_secret(emu) == expected
                # The listener starts right after setWebhook; retry the connection briefly.
                for attempt in range(100):
                    try:
                        async with http.post(url, json=help_update(1)) as wrong:
                            assert wrong.status == 403  # no secret header: refused
                        break
                    except aiohttp.ClientConnectionError:
                        if attempt == 99:
                            raise
                        await asyncio.sleep(0.1)
                forged = {"X-Telegram-Bot-Api-Secret-Token": "guessed-secret"}
                async with http.post(url, json=help_update(2), headers=forged) as wrong:
                    assert wrong.status == 403
                headers = {"X-Telegram-Bot-Api-Secret-Token": expected}
                async with http.post(url, json=help_update(3), headers=headers) as ok:
                    assert ok.status == 200
            reply = await emu.wait_for_message(USER, timeout=15)
            assert "/newgame" in reply.text
            # Updates are handled in order: the refused ones would have answered first.
            answers = [m for m in emu.messages(USER) if "/newgame" in (m.text or "")]
            assert len(answers) == 1
        except BaseException:
            bot.terminate()
            _, err = await bot.communicate()
            print(err.decode(errors="replace")[-3000:])  # shown by pytest on failure
            raise
        bot.terminate()
        _, err = await bot.communicate()
        log = err.decode(errors="replace")
        assert "DEBUG" in log  # the check below read real debug output
        assert TOKEN not in log and TOKEN.split(":")[1] not in log
        assert expected not in log
