"""Our own Telegram Bot API emulator: an aiohttp server on 127.0.0.1 for tests, benchmarks
and the sandbox. The real python-telegram-bot runs against it unmodified.

Layout (each module one job):

- ``emulator``: ``BotApiEmulator``, the server plus the Python control API (composes the rest)
- ``scene``: bots, people, groups, membership, group upgrades (``migrate_group``)
- ``users``: what people do in the app (write, start, press, block, delete)
- ``forum``: forum topics (``Forum`` rules, ``ForumActions`` what admins do)
- ``ephemeral``: ephemeral messages (server copy vs. what the receiver's app shows)
- ``messages``: storing and reading messages; ``registry``: lookups and membership rules
- ``updates``: per-bot update queues; ``webhook``: delivery by HTTP POST with retries
- ``events``: change events, subscriptions, ``wait_for``
- ``faults``: injected failures and slow answers; ``limits``: Telegram's flood limits
- ``bot_api``: the Bot API methods (``dispatch`` runs a call); ``server``: their HTTP routes
- ``control``: the ``/_emu/`` JSON mirror of the control API; ``httputil``: shared HTTP helpers
- ``telegram_html``: Telegram's HTML parse mode (``parse_html``) and safe rendering
- ``models``, ``params``, ``errors``, ``stats``, ``types``: data
"""

from __future__ import annotations

from sandbox.emulator.emulator import BotApiEmulator
from sandbox.emulator.errors import ApiError, EmulatorError, NotFound
from sandbox.emulator.events import Subscription
from sandbox.emulator.faults import InjectedError, SlowAnswer
from sandbox.emulator.limits import RateLimits
from sandbox.emulator.models import (
    CallbackAnswer,
    CallbackHandle,
    EmuBot,
    EmuChat,
    EmuEphemeral,
    EmuMessage,
    EmuTopic,
    EmuUser,
    Webhook,
)
from sandbox.emulator.stats import EmuStats
from sandbox.emulator.types import BotRef, JsonDict
from sandbox.emulator.webhook import SECRET_HEADER, RetryPolicy

__all__ = [
    "SECRET_HEADER",
    "ApiError",
    "BotApiEmulator",
    "BotRef",
    "CallbackAnswer",
    "CallbackHandle",
    "EmuBot",
    "EmuChat",
    "EmuEphemeral",
    "EmuMessage",
    "EmuStats",
    "EmuTopic",
    "EmuUser",
    "EmulatorError",
    "InjectedError",
    "JsonDict",
    "NotFound",
    "RateLimits",
    "RetryPolicy",
    "SlowAnswer",
    "Subscription",
    "Webhook",
]
