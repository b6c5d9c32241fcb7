"""Settings from the environment and `.env`, validated once in ``main()``."""

from __future__ import annotations

import re
from typing import Literal

from pydantic import Field, SecretStr, field_validator
from pydantic_settings import BaseSettings, SettingsConfigDict

TOKEN_SHAPE = re.compile(r"\d+:[A-Za-z0-9_-]+")


class Settings(BaseSettings):
    """Everything the bot reads from its environment. Field docs feed `.env.example`."""

    model_config = SettingsConfigDict(env_file=".env", env_file_encoding="utf-8", extra="ignore")

    telegram_bot_token: SecretStr
    """Required. The token @BotFather gives you (/newbot), e.g. 123456:ABC-DEF…"""
    telegram_api_url: str = "https://api.telegram.org"
    """Bot API server; the bot calls {TELEGRAM_API_URL}/bot<token>/<method>."""
    redis_url: str | None = None
    """e.g. redis://localhost:6379/0. Unset: an in-memory store; games do not survive a restart."""
    redis_max_connections: int = Field(64, gt=0)
    """Size of the Redis connection pool (updates wait for a free connection)."""
    turn_timeout: float = Field(60.0, gt=0)
    """Seconds a player has for a move before the bot moves for them."""
    throw_in_window: float = Field(7.0, gt=0)
    """Seconds attackers have to add cards once the defender is done (all beaten, or
    taking); then they pass automatically. Capped by TURN_TIMEOUT."""
    ai_delay: float = Field(1.2, ge=0)
    """Seconds a computer player 'thinks' before it moves, so the table is readable."""
    log_level: Literal["DEBUG", "INFO", "WARNING", "ERROR"] = "INFO"
    """Logging verbosity."""
    webhook_url: str | None = None
    """Public HTTPS URL Telegram posts updates to. Unset: long polling."""
    webhook_listen: str = "0.0.0.0"
    """Address the webhook server binds to."""
    webhook_port: int = 8443
    """Port the webhook server listens on."""
    webhook_path: str = "telegram"
    """URL path of the webhook endpoint."""
    webhook_secret: SecretStr | None = None
    """Secret token Telegram sends with every webhook call (recommended)."""
    group_edit_interval: float = Field(3.0, ge=0)
    """Minimum seconds between messages/edits in one group (Telegram allows 20 a minute)."""
    group_max_per_minute: int = Field(19, gt=0)
    """Hard cap of messages/edits per group in any 60 seconds (Telegram: 20)."""
    private_interval: float = Field(1.0, ge=0)
    """Minimum seconds between messages/edits in one private chat (Telegram: about 1/s)."""
    global_rate: float = Field(25.0, gt=0)
    """Bot API sends per second across all chats (Telegram allows about 30)."""
    calm_delay: float = Field(3.0, ge=0)
    """Seconds a player's hand edit may wait after their own move when they have nothing
    to do, so it merges with the next change (saves Bot API calls)."""
    notify_quiet: float = Field(20.0, ge=0)
    """A player active this recently is not sent a new (notifying) hand message."""
    finished_ttl: int = Field(2 * 24 * 3600, gt=0)
    """Seconds a finished or cancelled game is kept."""
    idle_ttl: int = Field(7 * 24 * 3600, gt=0)
    """Seconds an untouched lobby or game is kept before it expires."""

    @field_validator("telegram_bot_token", mode="before")
    @classmethod
    def _token_shape(cls, value: object) -> object:
        text = value.get_secret_value() if isinstance(value, SecretStr) else value
        if isinstance(text, str):
            text = text.strip()
            if not text:
                raise ValueError("missing")  # an empty TELEGRAM_BOT_TOKEN= line is no token
            if not TOKEN_SHAPE.fullmatch(text):
                raise ValueError("does not look like a token from @BotFather (digits:letters)")
        return text
