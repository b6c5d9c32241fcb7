"""Everything the emulator knows, in one place the Bot API methods and control API share."""

from __future__ import annotations

import itertools
from collections.abc import Callable

from sandbox.emulator.events import EventLog
from sandbox.emulator.faults import Faults
from sandbox.emulator.limits import FloodControl, RateLimits
from sandbox.emulator.messages import MessageStore
from sandbox.emulator.registry import Registry
from sandbox.emulator.stats import EmuStats
from sandbox.emulator.updates import UpdateQueues
from sandbox.emulator.webhook import RetryPolicy, WebhookDelivery


class World:
    """The emulator's state and the components that change it; no logic of its own.

    ``clock`` (monotonic) drives rate windows, callback expiry and fault windows;
    ``wall_clock`` gives Telegram's ``date`` fields.
    """

    def __init__(
        self,
        *,
        rate_limits: bool | RateLimits,
        clock: Callable[[], float],
        wall_clock: Callable[[], float],
        callback_ttl: float | None,
        webhook_retry: RetryPolicy,
    ) -> None:
        self.clock = clock
        self.callback_ttl = callback_ttl
        self.registry = Registry()
        self.events = EventLog(wall_clock)
        self.messages = MessageStore(self.registry, self.events)
        self.updates = UpdateQueues(self.events)
        # Through self.clock, so a test may swap the clock after construction.
        self.flood = FloodControl(rate_limits, lambda: self.clock())
        self.faults = Faults(lambda: self.clock())
        self.stats = EmuStats()
        self.webhooks = WebhookDelivery(self.events, lambda: self.stats, webhook_retry)
        self.query_ids = itertools.count(4_000_000_000_000_000_001)
        self.closing = False  # set while the server shuts down: long polls return at once
