"""Entry point: ``durak-bot`` / ``python -m bot``."""

from __future__ import annotations

import logging
import sys

from pydantic import ValidationError
from redis.asyncio import BlockingConnectionPool, Redis

from bot.app import build_application
from bot.config import Settings

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
        sys.exit(f"Invalid settings:\n{err}")


def connect(settings: Settings) -> Redis:
    if settings.redis_url:
        # A blocking pool: a burst of updates waits for a free connection instead of
        # failing with "Too many connections".
        pool = BlockingConnectionPool.from_url(
            settings.redis_url, max_connections=settings.redis_max_connections, timeout=20
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
    logging.getLogger("httpx").setLevel(logging.WARNING)
    app = build_application(settings, connect(settings))
    if settings.webhook_url:
        secret = settings.webhook_secret.get_secret_value() if settings.webhook_secret else None
        app.run_webhook(
            listen=settings.webhook_listen,
            port=settings.webhook_port,
            url_path=settings.webhook_path,
            webhook_url=f"{settings.webhook_url.rstrip('/')}/{settings.webhook_path}",
            secret_token=secret,
        )
    else:
        app.run_polling()


if __name__ == "__main__":
    main()
