"""Production runtime: the private redis-server, health endpoints, JSON logs, SIGTERM."""

from __future__ import annotations

import asyncio
import json
import logging
import os
import signal
import sys
import time
from pathlib import Path

import aiohttp
import redis as sync_redis
from redis.asyncio import Redis
from support.harness import free_port

from bot.ops.health import Health, HealthServer
from bot.ops.jsonlog import JsonFormatter
from bot.ops.metrics import api_call
from bot.ops.redaction import Redactor
from bot.store.redis_connect import start_private_server
from sandbox.emulator import BotApiEmulator

TOKEN = "5550003:fleet-runtime-token-secret"
USER = 7301


def test_private_redis_server_keeps_data_across_restarts(tmp_path: Path) -> None:
    """Without REDIS_URL the bot's own redis-server appends to an AOF under DATA_DIR:
    what was written before a shutdown is there after the next start."""
    binary = "redis-server"
    url = start_private_server(binary, tmp_path / "data")
    client = sync_redis.Redis.from_url(url)
    client.set("durak:{1}:table", "kept")
    client.shutdown(nosave=False)  # what the bot does at exit (atexit)
    assert not (tmp_path / "data" / "redis.sock").exists() or not _answers(url)
    again = start_private_server(binary, tmp_path / "data")
    client = sync_redis.Redis.from_url(again)
    try:
        assert client.get("durak:{1}:table") == b"kept"
        assert client.config_get("appendonly")["appendonly"] == "yes"
        assert client.config_get("port")["port"] == "0"  # no TCP port: private
    finally:
        client.shutdown(nosave=False)


def _answers(url: str) -> bool:
    try:
        return bool(sync_redis.Redis.from_url(url, socket_timeout=0.5).ping())
    except (sync_redis.RedisError, OSError):
        return False


async def test_health_endpoints_report_redis_and_api(real_redis: Redis) -> None:
    api_calls = 0
    api_up = True

    async def probe_api() -> None:
        nonlocal api_calls
        api_calls += 1
        if not api_up:
            raise ConnectionError("Bot API unreachable")

    now = [1000.0]
    health = Health(ping_redis=real_redis.ping, probe_api=probe_api, clock=lambda: now[0])
    server = HealthServer(health, "127.0.0.1", 0)
    await server.start()
    base = f"http://127.0.0.1:{server.bound_port}"
    try:
        async with aiohttp.ClientSession() as http:
            async with http.get(f"{base}/healthz") as r:
                assert r.status == 200
            async with http.get(f"{base}/readyz") as r:
                assert r.status == 503 and "starting" in await r.text()
            assert api_calls == 0
            health.started = True
            async with http.get(f"{base}/readyz") as r:
                assert r.status == 200 and "redis ok" in await r.text()
            async with http.get(f"{base}/readyz") as r:
                assert r.status == 200
            assert api_calls == 1  # a fresh answer is reused, not probed again
            now[0] += 61
            api_up = False
            async with http.get(f"{base}/readyz") as r:
                assert r.status == 503 and "bot_api down" in await r.text()
            api_up = True
            health.ping_redis = _refuse
            async with http.get(f"{base}/readyz") as r:
                assert r.status == 503 and "redis down" in await r.text()
            health.ping_redis = real_redis.ping
            health.stopping = True
            async with http.get(f"{base}/readyz") as r:
                assert r.status == 503  # SIGTERM: the balancer stops sending updates
            api_call("sendMessage", "retry_after")
            async with http.get(f"{base}/metrics") as r:
                text = await r.text()
            assert r.status == 200 and "text/plain" in r.headers["Content-Type"]
            assert 'durak_bot_api_calls_total{method="sendMessage",outcome="retry_after"}' in text
            assert "durak_bot_api_429_total" in text and "durak_tap_answer_seconds_bucket" in text
    finally:
        await server.stop()


async def _refuse() -> None:
    raise ConnectionError("redis down")


def test_json_log_lines_are_json_and_never_hold_the_token() -> None:
    formatter, redactor = JsonFormatter(), Redactor([TOKEN])
    try:
        raise RuntimeError(f"GET /bot{TOKEN}/getMe failed")
    except RuntimeError:
        record = logging.LogRecord(
            "httpx", logging.ERROR, __file__, 1, "call %s", (f"/bot{TOKEN}/x",), sys.exc_info()
        )
    assert redactor.filter(record)
    line = formatter.format(record)
    entry = json.loads(line)
    assert entry["level"] == "ERROR" and entry["logger"] == "httpx"
    assert "RuntimeError" in entry["exception"]
    assert TOKEN not in line and TOKEN.split(":")[1] not in line


async def test_bot_process_is_ready_then_stops_on_sigterm_within_ten_seconds(
    tmp_path: Path, redis_server: str
) -> None:
    """The real bot (polling) with JSON logs: /readyz turns 200, /metrics answers, and
    SIGTERM ends the process cleanly well inside the 10 s budget."""
    async with BotApiEmulator() as emu:
        emu.add_bot(TOKEN, username="durak_fleet_bot")
        port = free_port()
        env = {k: v for k, v in os.environ.items() if not k.startswith(("TELEGRAM_", "REDIS_"))}
        env |= {
            "TELEGRAM_BOT_TOKEN": TOKEN,
            "TELEGRAM_API_URL": emu.url,
            "REDIS_URL": redis_server,
            "HEALTH_PORT": str(port),
            "LOG_FORMAT": "json",
            "LOG_LEVEL": "DEBUG",
        }
        bot = await asyncio.create_subprocess_exec(
            sys.executable, "-m", "bot", cwd=tmp_path, env=env, stderr=asyncio.subprocess.PIPE
        )
        try:
            async with aiohttp.ClientSession() as http:
                status = await _ready_status(http, f"http://127.0.0.1:{port}/readyz")
                assert status == 200
                emu.add_user(USER, "Mia")
                await emu.user_starts_bot(USER)  # a /start command
                await emu.wait_for_message(USER, timeout=15)
                async with http.get(f"http://127.0.0.1:{port}/metrics") as r:
                    text = await r.text()
                assert "durak_running_games 0.0" in text
                assert 'durak_updates_total{kind="command"} 1.0' in text
            started = time.monotonic()
            bot.send_signal(signal.SIGTERM)
            _, err = await asyncio.wait_for(bot.communicate(), 15)
            took = time.monotonic() - started
        except BaseException:
            bot.kill()
            _, err = await bot.communicate()
            print(err.decode(errors="replace")[-3000:])
            raise
    assert bot.returncode == 0, err.decode(errors="replace")[-2000:]
    assert took < 10
    lines = [line for line in err.decode().splitlines() if line.strip()]
    entries = [json.loads(line) for line in lines if line.startswith("{")]
    assert len(entries) == len(lines)  # every line is a JSON object
    assert any("SIGTERM" in e["message"] for e in entries)
    assert TOKEN not in err.decode() and TOKEN.split(":")[1] not in err.decode()


async def _ready_status(http: aiohttp.ClientSession, url: str) -> int:
    """Poll until the endpoint answers 200 (start-up takes a moment); the last status."""
    status = 0
    for _ in range(300):
        try:
            async with http.get(url) as r:
                status = r.status
                if status == 200:
                    return status
        except aiohttp.ClientConnectionError:
            pass
        await asyncio.sleep(0.05)
    return status
