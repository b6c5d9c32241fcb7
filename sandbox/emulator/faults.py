"""Injected faults: Bot API calls that fail, and answers that arrive late.

A rule matches calls of one method (``"*"`` = any; names are case-insensitive, as in
Telegram), optionally only those naming one ``chat_id``, for the next ``times`` matching
calls and/or ``for_seconds`` on the emulator's clock (neither = until cancelled). Rules
are tried in the order they were added; the first match applies. Each rule is returned
to the caller as a handle: ``hits`` counts the calls it affected, ``cancel()`` ends it.
"""

from __future__ import annotations

from collections.abc import Callable
from dataclasses import dataclass, field
from typing import TypeVar

from sandbox.emulator.errors import ApiError, EmulatorError

R = TypeVar("R", bound="FaultRule")


@dataclass
class FaultRule:
    """Which calls a fault applies to, and for how long."""

    method: str  # lower-case method name, or "*"
    chat_id: int | None = None
    times: int | None = None  # matching calls left; None = no count limit
    until: float | None = None  # clock time it ends; None = no time limit
    hits: int = 0
    cancelled: bool = field(default=False, repr=False)

    def expired(self, now: float) -> bool:
        return (
            self.cancelled
            or (self.times is not None and self.times <= 0)
            or (self.until is not None and now >= self.until)
        )

    @property
    def active(self) -> bool:
        """False once cancelled or its calls are used up (time is checked on use)."""
        return not self.cancelled and (self.times is None or self.times > 0)

    def matches(self, method: str, chat_id: int | None) -> bool:
        if self.method not in ("*", method.lower()):
            return False
        return self.chat_id is None or self.chat_id == chat_id

    def use(self) -> None:
        self.hits += 1
        if self.times is not None:
            self.times -= 1

    def cancel(self) -> None:
        self.cancelled = True


@dataclass
class InjectedError(FaultRule):
    """Matching calls fail with this error and have no effect."""

    error_code: int = 502
    description: str = "Bad Gateway"
    retry_after: int | None = None

    def error(self) -> ApiError:
        return ApiError(self.error_code, self.description, self.retry_after)


@dataclass
class SlowAnswer(FaultRule):
    """Matching calls take effect at once, but their HTTP answer waits ``delay`` seconds."""

    delay: float = 0.0


class Faults:
    """The active fault rules, consulted by the Bot API dispatcher on every call."""

    def __init__(self, clock: Callable[[], float]) -> None:
        self._clock = clock
        self._errors: list[InjectedError] = []
        self._delays: list[SlowAnswer] = []

    def _window(self, times: int | None, for_seconds: float | None) -> float | None:
        if times is not None and times < 1:
            raise EmulatorError("times must be >= 1")
        if for_seconds is not None and for_seconds <= 0:
            raise EmulatorError("for_seconds must be > 0")
        return None if for_seconds is None else self._clock() + for_seconds

    def add_error(
        self,
        method: str,
        *,
        error_code: int,
        description: str,
        retry_after: int | None = None,
        chat_id: int | None = None,
        times: int | None = None,
        for_seconds: float | None = None,
    ) -> InjectedError:
        until = self._window(times, for_seconds)
        rule = InjectedError(
            method.lower(),
            chat_id,
            times,
            until,
            error_code=error_code,
            description=description,
            retry_after=retry_after,
        )
        self._errors.append(rule)
        return rule

    def add_delay(
        self,
        method: str,
        delay: float,
        *,
        chat_id: int | None = None,
        times: int | None = None,
        for_seconds: float | None = None,
    ) -> SlowAnswer:
        if delay <= 0:
            raise EmulatorError("delay must be > 0 seconds")
        until = self._window(times, for_seconds)
        rule = SlowAnswer(method.lower(), chat_id, times, until, delay=delay)
        self._delays.append(rule)
        return rule

    def clear(self) -> None:
        for rule in (*self._errors, *self._delays):
            rule.cancel()
        self._errors.clear()
        self._delays.clear()

    def take_error(self, method: str, chat_id: int | None) -> ApiError | None:
        """The error this call must fail with, if a rule says so (counts the call)."""
        rule = self._take(self._errors, method, chat_id)
        return rule.error() if rule is not None else None

    def take_delay(self, method: str, chat_id: int | None) -> float | None:
        """How long this call's answer must be held back, if a rule says so."""
        rule = self._take(self._delays, method, chat_id)
        return rule.delay if rule is not None else None

    def _take(self, rules: list[R], method: str, chat_id: int | None) -> R | None:
        now = self._clock()
        rules[:] = [rule for rule in rules if not rule.expired(now)]
        for rule in rules:
            if rule.matches(method, chat_id):
                rule.use()
                return rule
        return None
