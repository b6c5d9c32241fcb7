"""Settings from the environment and `.env`, validated once in ``main()``."""

from __future__ import annotations

import hashlib
import hmac
import re
from typing import Literal

from pydantic import AliasChoices, Field, SecretStr, ValidationInfo, field_validator
from pydantic_settings import BaseSettings, SettingsConfigDict

TOKEN_SHAPE = re.compile(r"\d+:[A-Za-z0-9_-]+")
WEBHOOK_SECRET_SHAPE = re.compile(r"[A-Za-z0-9_-]{1,256}")  # what setWebhook accepts
WEBAPP_URL_SHAPE = re.compile(r"https?://[^\s?#]+")
SHORT_NAME_SHAPE = re.compile(r"[A-Za-z0-9_]{3,64}")  # what @BotFather /newapp accepts


class Settings(BaseSettings):
    """Everything the bot reads from its environment. Field docs feed `.env.example`."""

    model_config = SettingsConfigDict(env_file=".env", env_file_encoding="utf-8", extra="ignore")

    telegram_bot_token: SecretStr
    """Required. The token @BotFather gives you (/newbot), e.g. 123456:ABC-DEF…"""
    telegram_api_url: str = "https://api.telegram.org"
    """Bot API server; the bot calls {TELEGRAM_API_URL}/bot<token>/<method>."""
    redis_url: str | None = None
    """e.g. redis://localhost:6379/0 (rediss:// for TLS). Unset: a private redis-server
    under DATA_DIR if installed, else an in-memory store that forgets games on restart."""
    redis_max_connections: int = Field(256, gt=0)
    """Size of the Redis connection pool (updates wait for a free connection). Each
    move's transaction holds one for several round trips while the outbox and the timers
    use others: at 64, 200 busy groups waited for connections (p99 0.5 s of a tap)."""
    redis_cluster: bool = False
    """true: REDIS_URL names any node of a Redis Cluster; the bot finds the others."""
    redis_sentinels: str = ""
    """host:port,host:port of Redis Sentinels; the bot asks them for the current master."""
    redis_sentinel_master: str = "mymaster"
    """The master's name as the Sentinels know it (with REDIS_SENTINELS)."""
    data_dir: str = "./data"
    """Without REDIS_URL: where the private redis-server keeps its append-only file."""
    health_port: int = Field(9090, ge=0, le=65535)
    """Port of /healthz, /readyz and /metrics (bound to WEBHOOK_LISTEN; 0: disabled)."""
    log_format: Literal["text", "json"] = "text"
    """text: one readable line per event; json: one JSON object per line, for log shippers."""
    turn_timeout: float = Field(60.0, gt=0)
    """Seconds a player has for a move before the bot moves for them."""
    throw_in_window: float = Field(7.0, gt=0)
    """Seconds attackers have to add cards once the defender is done (all beaten, or
    taking); then they pass automatically. Twice as long while one of them moved lately
    (``bot.domain.flow.turns.wait_window``). Capped by TURN_TIMEOUT."""
    ai_delay: float = Field(1.2, ge=0)
    """Seconds a computer player 'thinks' before it moves, so the table is readable."""
    output_lease: float = Field(
        10.0, gt=0, validation_alias=AliasChoices("OUTPUT_LEASE", "DURAK_OUTPUT_LEASE")
    )
    """Seconds a worker holds a chat's owed messages before another worker takes them
    over (a fleet; the holder renews it while it sends). Also DURAK_OUTPUT_LEASE."""
    bot_api_timeout: float = Field(30.0, gt=0)
    """Seconds to wait for a Bot API answer. Generous on purpose: a request that timed
    out may still have been carried out, so the bot never repeats it blindly."""
    log_level: Literal["DEBUG", "INFO", "WARNING", "ERROR"] = "INFO"
    """Logging verbosity."""
    webhook_url: str | None = None
    """Public HTTPS URL Telegram posts updates to. Unset: long polling."""
    webhook_listen: str = "127.0.0.1"
    """Address the webhook server binds to: loopback, behind your HTTPS reverse proxy."""
    webhook_port: int = 8443
    """Port the webhook server listens on."""
    webhook_path: str = "telegram"
    """URL path of the webhook endpoint."""
    webhook_secret: SecretStr | None = None
    """Secret Telegram sends with every webhook call (1-256 of A-Z a-z 0-9 _ -); requests
    without it are refused. Unset: derived from the bot token, the same for every worker."""
    group_edit_interval: float = Field(3.0, ge=0)
    """Minimum seconds between messages/edits in one group (Telegram allows 20 a minute)."""
    group_max_per_minute: int = Field(19, gt=0)
    """Hard cap of messages/edits per group in any 60 seconds (Telegram: 20)."""
    private_interval: float = Field(1.0, ge=0)
    """Minimum seconds between messages/edits in one private chat (Telegram: about 1/s)."""
    global_rate: float = Field(25.0, gt=0)
    """Bot API sends per second across all chats (Telegram allows about 30)."""
    fleet_pacing: bool | None = None
    """true: the limits above are kept in Redis, shared by every worker (needs a Redis
    that runs Lua scripts; the in-memory store paces per process). false: per process.
    Unset: true in webhook mode (any number of workers), false in polling mode (Telegram
    lets one process poll a token, so pacing in that process is exact, and cheaper)."""

    redis_wait_replicas: int = Field(0, ge=0)
    """After a game's move is stored, wait until this many replicas have it (Redis WAIT);
    0: off (a move acknowledged just before a failover may be lost)."""
    redis_wait_timeout_ms: int = Field(100, gt=0)
    """Longest wait for REDIS_WAIT_REPLICAS in milliseconds; then the move goes on anyway."""
    calm_delay: float = Field(3.0, ge=0)
    """Seconds the hand of a player who did not move (and has nothing to do) may wait
    after a move, so its edit merges with the next change; the mover's own hand is
    edited at once (it shows the effect of their tap)."""
    notify_quiet: float = Field(20.0, ge=0)
    """A player active this recently is not sent a new (notifying) hand message."""
    rating_min_games: int = Field(5, ge=1)
    """Rated games a player needs in a month before /top lists them (and their rating is
    no longer marked provisional)."""
    finished_ttl: int = Field(2 * 24 * 3600, gt=0)
    """Seconds a finished or cancelled game is kept."""
    idle_ttl: int = Field(7 * 24 * 3600, gt=0)
    """Seconds an untouched lobby or game is kept before it expires."""
    settings_ttl: int = Field(180 * 24 * 3600, gt=0)
    """Seconds a group's settings and a user's preferences are kept after their last use."""
    reviews_per_minute: int = Field(6, ge=0)
    """Reviews of finished games (the 🔍 button) the whole fleet starts per minute at
    most; each costs 2 to 5 s of one core. 0: reviews are off (the bot says it is busy)."""

    # --- Mini App (bot/webapp): served by the bot itself when WEBAPP_URL is set ---
    webapp_url: str | None = None
    """Public HTTPS base URL of the Mini App (your reverse proxy forwards it to
    WEBAPP_LISTEN:WEBAPP_PORT). Unset: no Mini App, nothing changes."""
    webapp_listen: str = "127.0.0.1"
    """Address the Mini App server binds to: loopback, behind your HTTPS reverse proxy."""
    webapp_port: int = Field(8081, gt=0, lt=65536)
    """Port the Mini App server listens on."""
    webapp_short_name: str | None = None
    """The app's short name registered with @BotFather /newapp: groups get a
    t.me/<bot>/<short name>?startapp=<game> link (web_app buttons are private-only)."""
    webapp_auth_max_age: int = Field(86400, gt=0)
    """Seconds Telegram's signed init data stays valid for the Mini App's requests."""

    @field_validator("webapp_url", "webapp_short_name", mode="before")
    @classmethod
    def _webapp_shape(cls, value: object, info: ValidationInfo) -> object:
        if not isinstance(value, str):
            return value
        text = value.strip()
        if not text:
            return None  # an empty WEBAPP_URL= line means "no Mini App"
        if info.field_name == "webapp_url" and not WEBAPP_URL_SHAPE.fullmatch(text):
            raise ValueError("must be an http(s):// URL (Telegram opens only https)")
        if info.field_name == "webapp_short_name" and not SHORT_NAME_SHAPE.fullmatch(text):
            raise ValueError("must be 3-64 characters of A-Z, a-z, 0-9 and _")
        return text

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

    @field_validator("webhook_secret", mode="before")
    @classmethod
    def _secret_shape(cls, value: object) -> object:
        text = value.get_secret_value() if isinstance(value, SecretStr) else value
        if isinstance(text, str):
            text = text.strip()
            if not text:
                return None  # an empty WEBHOOK_SECRET= line means "derive one"
            if not WEBHOOK_SECRET_SHAPE.fullmatch(text):
                raise ValueError("must be 1-256 characters of A-Z, a-z, 0-9, _ and -")
        return text

    def paces_fleet_wide(self) -> bool:
        if self.fleet_pacing is not None:
            return self.fleet_pacing
        return bool(self.webhook_url)

    def webhook_secret_value(self) -> str:
        """The secret webhook requests must carry: the configured one, or one derived from
        the token, so that every worker started with the same settings expects the same
        secret and nobody without the token can forge updates."""
        if self.webhook_secret is not None:
            return self.webhook_secret.get_secret_value()
        token = self.telegram_bot_token.get_secret_value().encode()
        return hmac.new(token, b"durak webhook secret", hashlib.sha256).hexdigest()
