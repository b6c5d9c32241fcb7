"""Entry point: ``durak-bot`` / ``python -m bot``."""

from __future__ import annotations

import gc
import logging
import sys

from pydantic import ValidationError

from bot.ops.jsonlog import configure_logging
from bot.ops.redaction import Redactor
from bot.ops.runtime import STOP_SIGNALS, install_runtime
from bot.ops.settings import Settings
from bot.store.redis_connect import connect
from bot.wiring.application import build_application

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


GC_THRESHOLDS = (700, 10, 1000)
"""The collector's thresholds: Python's defaults, but a full collection after 1,000 young
ones instead of 10. A full collection scans every parsed record (each event of each
history) and stalls every request for 70-150 ms; under the Mini App bench (200 tables,
about 94 moves a second) the default ran one every 3-4 s, which made the p99 of a move's
events 150-180 ms (bench/bot_load.py --app). Little garbage here is cyclic (refcounting
frees the rest: about 2,600 objects in a full collection after a whole run), and the
process's memory after that run was the same with 100 or 1,000 (122-123 MB)."""


def main() -> None:
    settings = load_settings()
    configure_logging(settings.log_level, settings.log_format)
    install_redaction(settings)
    logging.getLogger("httpx").setLevel(logging.WARNING)
    redis = connect(settings)
    app = build_application(settings, redis)
    install_runtime(app, settings, redis)
    # Everything loaded so far (modules, schemas, catalogues) lives as long as the process:
    # the collector stops scanning it, so a full collection no longer stalls every tap
    # for 100-200 ms under load.
    gc.collect()
    gc.freeze()
    gc.set_threshold(*GC_THRESHOLDS)
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
            stop_signals=STOP_SIGNALS,
        )
    else:
        app.run_polling(stop_signals=STOP_SIGNALS)


if __name__ == "__main__":
    main()
