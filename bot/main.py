"""Entry point: ``durak-bot`` / ``python -m bot``."""

from __future__ import annotations

import logging
import sys

from pydantic import ValidationError
from redis.asyncio import BlockingConnectionPool, Redis

from bot.app import build_application
from bot.config import Settings
from bot.redaction import Redactor

log = logging.getLogger("bot")

TOKEN_HELP = """\
TELEGRAM_BOT_TOKEN is not set.

Get a token from @BotFather in Telegram: open https://t.me/BotFather, send /newbot,
choose a name and a username, and copy the token it gives you. Then either
  export TELEGRAM_BOT_TOKEN=123456:ABC...
or put TELEGRAM_BOT_TOKEN=123456:ABC... into a .env file next to where you run the bot
(see .env.example for every setting).
"""


def load_settings() -> Settings:
    try:
        return Settings()
    except ValidationError as err:
        token_errors = [e for e in err.errors() if e["loc"] == ("telegram_bot_token",)]
        if any(e["type"] == "missing" or "missing" in e["msg"] for e in token_errors):
            sys.exit(TOKEN_HELP)
        sys.exit(describe_settings_errors(err))


def describe_settings_errors(err: ValidationError) -> str:
    """Each bad setting by name and what is wrong, never its value (it may be a secret)."""
    lines = ["Invalid settings:"]
    for e in err.errors(include_input=False, include_url=False):
        field = ".".join(str(part) for part in e["loc"]) or "settings"
        lines.append(f"  {field.upper()} ({field}): {e['msg']}")
    return "\n".join(lines)


def install_redaction(settings: Settings) -> None:
    """Every handler of the root logger drops the token and the webhook secret, at any level."""
    secrets = [settings.telegram_bot_token.get_secret_value(), settings.webhook_secret_value()]
    redactor = Redactor(secrets)
    for handler in logging.getLogger().handlers:
        handler.addFilter(redactor)


def connect(settings: Settings) -> Redis:
    if settings.redis_url:
        # A blocking pool: a burst of updates waits for a free connection instead of
        # failing with "Too many connections".
        # Socket timeouts: during an outage a call fails within seconds (taps then get
        # "try again") instead of hanging on a dead connection.
        pool = BlockingConnectionPool.from_url(
            settings.redis_url,
            max_connections=settings.redis_max_connections,
            timeout=20,
            socket_timeout=5,
            socket_connect_timeout=3,
        )
        return Redis(connection_pool=pool)
    import fakeredis

    log.warning(
        "REDIS_URL is not set: using an in-memory store. Games and statistics do NOT "
        "survive a restart; set REDIS_URL=redis://host:6379/0 for real use."
    )
    redis: Redis = fakeredis.aioredis.FakeRedis()
    return redis


def main() -> None:
    settings = load_settings()
    logging.basicConfig(
        level=settings.log_level, format="%(asctime)s %(levelname)s %(name)s: %(message)s"
    )
    install_redaction(settings)
    logging.getLogger("httpx").setLevel(logging.WARNING)
    app = build_application(settings, connect(settings))
    if settings.webhook_url:
        if settings.webhook_secret is None:
            log.info("WEBHOOK_SECRET is not set: using one derived from the bot token")
        app.run_webhook(
            listen=settings.webhook_listen,
            port=settings.webhook_port,
            url_path=settings.webhook_path,
            webhook_url=f"{settings.webhook_url.rstrip('/')}/{settings.webhook_path}",
            # Always set: PTB then answers 403 to any request without this header.
            secret_token=settings.webhook_secret_value(),
        )
    else:
        app.run_polling()


if __name__ == "__main__":
    main()
