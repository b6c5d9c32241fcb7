"""How the bot starts: settings, the token help, the embedded store, .env.example."""

from __future__ import annotations

import logging
import os
import re
import subprocess
import sys
from pathlib import Path

import pytest

from bot.ops.redaction import MASK, Redactor
from bot.ops.settings import Settings
from bot.store.redis_connect import connect

ROOT = Path(__file__).resolve().parent.parent


def run_bot(tmp_path: Path, **env: str) -> subprocess.CompletedProcess[str]:
    """``python -m bot`` in an empty folder (no .env) with only ``env`` set."""
    clean = {k: v for k, v in os.environ.items() if not k.startswith(("TELEGRAM_", "REDIS_"))}
    return subprocess.run(
        [sys.executable, "-m", "bot"],
        cwd=tmp_path,
        env=clean | env,
        capture_output=True,
        text=True,
        timeout=60,
        check=False,
    )


@pytest.mark.parametrize("token", [None, "", "   "])
def test_missing_token_explains_how_to_get_one(tmp_path: Path, token: str | None) -> None:
    env = {} if token is None else {"TELEGRAM_BOT_TOKEN": token}
    done = run_bot(tmp_path, **env)
    assert done.returncode != 0
    assert "@BotFather" in done.stderr and "/newbot" in done.stderr
    assert "Traceback" not in done.stderr


def test_malformed_token_is_refused_clearly(tmp_path: Path) -> None:
    done = run_bot(tmp_path, TELEGRAM_BOT_TOKEN="not a token: 123456:s3cretpart")
    assert done.returncode != 0
    assert "telegram_bot_token" in done.stderr and "@BotFather" in done.stderr
    assert "Traceback" not in done.stderr
    assert "s3cretpart" not in done.stderr  # the error names the setting, not its value


def test_malformed_webhook_secret_is_refused_without_echo(tmp_path: Path) -> None:
    done = run_bot(tmp_path, TELEGRAM_BOT_TOKEN="1:abc", WEBHOOK_SECRET="has spaces/and-$ecret")
    assert done.returncode != 0
    assert "WEBHOOK_SECRET" in done.stderr and "$ecret" not in done.stderr


def test_webhook_defaults_are_safe() -> None:
    settings = Settings(telegram_bot_token="1:abc", _env_file=None)  # type: ignore[call-arg]
    assert settings.webhook_listen == "127.0.0.1"
    derived = settings.webhook_secret_value()
    other = Settings(telegram_bot_token="1:abd", _env_file=None)  # type: ignore[call-arg]
    assert derived != other.webhook_secret_value()  # unguessable without the token
    assert derived == settings.webhook_secret_value()  # the same in every worker
    assert len(derived) == 64 and derived.isalnum()


def test_redactor_masks_secrets_in_messages_args_and_tracebacks() -> None:
    token = "123456:ABCdefSECRET"
    redactor = Redactor([token, "short"])
    try:
        raise RuntimeError(f"POST https://api.telegram.org/bot{token}/getMe failed")
    except RuntimeError:
        record = logging.LogRecord(
            "httpx", logging.DEBUG, __file__, 1, "calling %s", (f"/bot{token}/x",), sys.exc_info()
        )
    assert redactor.filter(record)
    assert token not in record.getMessage() and MASK in record.getMessage()
    assert record.exc_text is not None and token not in record.exc_text
    assert "short" in redactor.redact("short")  # too short to be a secret: left alone


def test_without_redis_url_the_store_is_in_memory_and_says_so(
    caplog: pytest.LogCaptureFixture, monkeypatch: pytest.MonkeyPatch
) -> None:
    monkeypatch.delenv("REDIS_URL", raising=False)
    monkeypatch.setenv("PATH", "/nonexistent")  # no redis-server to start
    settings = Settings(telegram_bot_token="1:abc", _env_file=None)  # type: ignore[call-arg]
    with caplog.at_level(logging.WARNING):
        store = connect(settings)
    assert type(store).__module__.startswith("fakeredis")
    assert "REDIS_URL is not set" in caplog.text and "restart" in caplog.text


def test_env_example_lists_every_setting() -> None:
    text = (ROOT / ".env.example").read_text()
    listed = set(re.findall(r"^#?([A-Z][A-Z0-9_]+)=", text, re.MULTILINE))
    assert {name.upper() for name in Settings.model_fields} == listed


@pytest.mark.parametrize(
    ("webhook_url", "fleet_pacing", "limiter"),
    [
        (None, None, "GlobalLimiter"),  # polling: one process per token
        ("https://durak.example.test", None, "FleetLimiter"),  # webhook: maybe a fleet
        (None, True, "FleetLimiter"),
        ("https://durak.example.test", False, "GlobalLimiter"),
    ],
)
def test_pacing_is_fleet_wide_by_default_only_where_a_fleet_can_run(
    webhook_url: str | None, fleet_pacing: bool | None, limiter: str
) -> None:
    import fakeredis

    from bot.transport.fleet_pacing import send_limiter

    settings = Settings(
        telegram_bot_token="5550010:pacing-token",  # type: ignore[arg-type]
        webhook_url=webhook_url,
        fleet_pacing=fleet_pacing,
        _env_file=None,  # type: ignore[call-arg]
    )
    assert type(send_limiter(settings, fakeredis.aioredis.FakeRedis())).__name__ == limiter
