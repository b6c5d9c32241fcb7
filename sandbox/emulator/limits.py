"""Telegram's flood limits (429 Too Many Requests) for the Bot API emulator."""

from __future__ import annotations

import math
from collections import deque
from collections.abc import Callable
from dataclasses import dataclass

from sandbox.emulator.errors import too_many_requests


@dataclass(frozen=True)
class RateLimits:
    """Telegram's documented flood limits, per bot; windows are configurable for tests."""

    group_max: int = 20
    group_window: float = 60.0
    private_rate: float = 1.0  # messages per second, token bucket
    private_burst: int = 3
    global_max: int = 30
    global_window: float = 1.0


class RateLimiter:
    """Sliding windows (group, global) and a token bucket (private chats).

    ``retry_after`` is computed with ``check`` and a slot is consumed only by ``record``,
    so a request rejected for another reason does not eat into the budget.
    """

    def __init__(self, limits: RateLimits, clock: Callable[[], float]) -> None:
        self.limits = limits
        self._clock = clock
        self._global: dict[int, deque[float]] = {}
        self._groups: dict[tuple[int, int], deque[float]] = {}
        self._buckets: dict[tuple[int, int], tuple[float, float]] = {}

    def _bucket(self, key: tuple[int, int], now: float) -> float:
        tokens, last = self._buckets.get(key, (float(self.limits.private_burst), now))
        refill = (now - last) * self.limits.private_rate
        return min(float(self.limits.private_burst), tokens + refill)

    @staticmethod
    def _prune(window: deque[float], now: float, span: float) -> None:
        while window and window[0] <= now - span:
            window.popleft()

    def check(self, bot_id: int, chat_id: int, is_group: bool) -> int | None:
        """Seconds to wait (≥1) if a send to this chat now would exceed a limit, else None."""
        now = self._clock()
        waits: list[float] = []
        lim = self.limits
        glob = self._global.setdefault(bot_id, deque())
        self._prune(glob, now, lim.global_window)
        if len(glob) >= lim.global_max:
            waits.append(glob[0] + lim.global_window - now)
        if is_group:
            win = self._groups.setdefault((bot_id, chat_id), deque())
            self._prune(win, now, lim.group_window)
            if len(win) >= lim.group_max:
                waits.append(win[-lim.group_max] + lim.group_window - now)
        else:
            tokens = self._bucket((bot_id, chat_id), now)
            if tokens < 1.0:
                waits.append((1.0 - tokens) / lim.private_rate)
        if not waits:
            return None
        return max(1, math.ceil(max(waits) - 1e-9))

    def record(self, bot_id: int, chat_id: int, is_group: bool) -> None:
        now = self._clock()
        self._global.setdefault(bot_id, deque()).append(now)
        if is_group:
            self._groups.setdefault((bot_id, chat_id), deque()).append(now)
        else:
            key = (bot_id, chat_id)
            self._buckets[key] = (self._bucket(key, now) - 1.0, now)


class FloodControl:
    """The limiter plus its on/off switch, as the sending methods use it."""

    def __init__(self, limits: bool | RateLimits, clock: Callable[[], float]) -> None:
        self._clock = clock
        chosen = limits if isinstance(limits, RateLimits) else RateLimits()
        self.limiter = RateLimiter(chosen, clock)
        self.enabled = bool(limits)

    def configure(self, limits: RateLimits | bool = True) -> None:
        """Switch limits on (optionally with custom limits) or off; resets the windows."""
        if isinstance(limits, RateLimits):
            self.limiter = RateLimiter(limits, self._clock)
        elif limits:
            self.limiter = RateLimiter(self.limiter.limits, self._clock)
        self.enabled = bool(limits)

    def check(self, bot_id: int, chat_id: int, is_group: bool) -> None:
        """Raise Telegram's 429 if a send to this chat now would exceed a limit."""
        if self.enabled:
            wait = self.limiter.check(bot_id, chat_id, is_group)
            if wait is not None:
                raise too_many_requests(wait)

    def record(self, bot_id: int, chat_id: int, is_group: bool) -> None:
        if self.enabled:
            self.limiter.record(bot_id, chat_id, is_group)
