"""The bot's Prometheus metrics, defined once; other modules call the small helpers below.

Every metric lives in one private registry (not the library's global one) so tests can
build several bots in one process and `/metrics` shows only the bot's own figures.
"""

from __future__ import annotations

from prometheus_client import CollectorRegistry, Counter, Gauge, Histogram

REGISTRY = CollectorRegistry(auto_describe=True)

UPDATES = Counter(
    "durak_updates", "Telegram updates handled, by kind.", ["kind"], registry=REGISTRY
)
MOVES = Counter(
    "durak_moves",
    "Moves applied to games, by kind (attack, defend, take, ...).",
    ["kind"],
    registry=REGISTRY,
)
TAP_LATENCY = Histogram(
    "durak_tap_answer_seconds",
    "From receiving a button tap to answering it (answerCallbackQuery sent).",
    buckets=(0.005, 0.01, 0.025, 0.05, 0.1, 0.25, 0.5, 1.0, 2.5, 5.0),
    registry=REGISTRY,
)
API_CALLS = Counter(
    "durak_bot_api_calls",
    "Bot API calls, by method and outcome (ok, retry_after, bad_request, network, error).",
    ["method", "outcome"],
    registry=REGISTRY,
)
API_429 = Counter(
    "durak_bot_api_429",
    "Bot API answers 429 Too Many Requests (should stay 0).",
    registry=REGISTRY,
)
OUTBOX_BACKLOG = Gauge(
    "durak_outbox_backlog", "Chats with output waiting to be sent.", registry=REGISTRY
)
OUTBOX_OLDEST_AGE = Gauge(
    "durak_outbox_oldest_age_seconds",
    "Age of the oldest output waiting to be sent.",
    registry=REGISTRY,
)
AI_THINK = Histogram(
    "durak_ai_think_seconds",
    "Time a computer player took to choose a move, by level.",
    ["level"],
    buckets=(0.001, 0.005, 0.01, 0.05, 0.1, 0.25, 0.5, 1.0, 2.5),
    registry=REGISTRY,
)
RUNNING_GAMES = Gauge(
    "durak_running_games",
    "Games being played (from the running-games index).",
    registry=REGISTRY,
)
STORAGE_CONFLICTS = Counter(
    "durak_storage_conflicts",
    "Optimistic transactions retried because another writer changed the record.",
    registry=REGISTRY,
)
STORAGE_RETRIES = Counter(
    "durak_storage_retries",
    "Storage calls repeated after a Redis error (connection lost, failover).",
    registry=REGISTRY,
)
QUARANTINED = Counter(
    "durak_records_quarantined",
    "Records that could not be read, by kind (tables are moved to a quarantine key).",
    ["kind"],
    registry=REGISTRY,
)
PACING_CALLS = Counter(
    "durak_pacing_calls",
    "Fleet-wide pacing script calls (one books a send; more when a chat was busy).",
    registry=REGISTRY,
)


# One-line calls for the other modules (each a single statement at the call site).


def update_seen(kind: str) -> None:
    UPDATES.labels(kind).inc()


def move_applied(kind: str) -> None:
    MOVES.labels(kind).inc()


def tap_answered(seconds: float) -> None:
    TAP_LATENCY.observe(seconds)


def api_call(method: str, outcome: str) -> None:
    API_CALLS.labels(method, outcome).inc()
    if outcome == "retry_after":
        API_429.inc()


def outbox_state(backlog: int, oldest_age: float) -> None:
    OUTBOX_BACKLOG.set(backlog)
    OUTBOX_OLDEST_AGE.set(oldest_age)


def ai_thought(level: str, seconds: float) -> None:
    AI_THINK.labels(level).observe(seconds)


def running_games(count: int) -> None:
    RUNNING_GAMES.set(count)


def storage_conflict() -> None:
    STORAGE_CONFLICTS.inc()


def storage_retry() -> None:
    STORAGE_RETRIES.inc()


def quarantined(kind: str) -> None:
    QUARANTINED.labels(kind).inc()


def pacing_called() -> None:
    PACING_CALLS.inc()
