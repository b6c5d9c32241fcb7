"""Flood limits, injected faults and call statistics for the Bot API emulator."""

from __future__ import annotations

import math
from collections import Counter, deque
from collections.abc import Callable
from dataclasses import dataclass, field
from typing import Any


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


@dataclass
class Fault:
    """An injected error returned by the next ``times`` matching calls."""

    method: str  # lower-case method name, or "*" for any
    error_code: int
    description: str
    retry_after: int | None = None
    times: int = 1
    chat_id: int | None = None

    def matches(self, method: str, chat_id: int | None) -> bool:
        if self.method not in ("*", method.lower()):
            return False
        return self.chat_id is None or self.chat_id == chat_id


@dataclass
class EmuStats:
    """Call counters. ``calls`` per method, ``chat_calls`` per chat, errors per code."""

    calls: Counter[str] = field(default_factory=Counter)
    chat_calls: Counter[int] = field(default_factory=Counter)
    chat_method_calls: Counter[tuple[int, str]] = field(default_factory=Counter)
    errors: Counter[int] = field(default_factory=Counter)
    too_many_requests: int = 0

    @property
    def total(self) -> int:
        return sum(self.calls.values())

    def record(self, method: str, chat_id: int | None) -> None:
        self.calls[method] += 1
        if chat_id is not None:
            self.chat_calls[chat_id] += 1
            self.chat_method_calls[(chat_id, method)] += 1

    def record_error(self, error_code: int) -> None:
        self.errors[error_code] += 1
        if error_code == 429:
            self.too_many_requests += 1

    def to_dict(self) -> dict[str, Any]:
        return {
            "total": self.total,
            "calls": dict(self.calls),
            "chat_calls": {str(k): v for k, v in self.chat_calls.items()},
            "errors": {str(k): v for k, v in self.errors.items()},
            "too_many_requests": self.too_many_requests,
        }
