"""Send pacing: Telegram's flood limits, kept on our side so 429s stay rare."""

from __future__ import annotations

import asyncio
import time
from collections import deque
from collections.abc import Callable
from typing import Protocol


class ChatBusy(Exception):
    """Another worker has just sent to this chat: read and render again after ``seconds``
    (content read before that send may be older than what it showed)."""

    def __init__(self, seconds: float) -> None:
        super().__init__(f"chat busy for {seconds:.3f}s")
        self.seconds = seconds


class SendLimiter(Protocol):
    """What the outbox asks before every send (``bot.transport.fleet_pacing`` has the Redis one)."""

    async def acquire(self, *, low_priority: bool = False, chat_id: int | None = None) -> None:
        """Wait for a send slot (for ``chat_id`` when the limiter keeps chat budgets);
        ``ChatBusy`` if that chat's budget is used up by another worker's send."""

    async def back_off(self, chat_id: int, seconds: float) -> None:
        """Telegram answered 429 for this chat."""


class GlobalLimiter:
    """At most ``rate`` sends in any one-second window, across all chats."""

    def __init__(self, rate: float, clock: Callable[[], float] = time.monotonic) -> None:
        self.max = max(1, int(rate))
        self.clock = clock
        self.sent: deque[float] = deque()
        self._high = asyncio.Lock()
        self._low = asyncio.Lock()

    async def acquire(self, *, low_priority: bool = False, chat_id: int | None = None) -> None:
        """Wait for a send slot; low-priority sends leave a fifth of the rate free.

        ``chat_id`` is not used: in one process the outbox's ``ChatPacer`` paces chats.

        Waiters queue on a (fair) lock per priority, so only one task per priority
        sleeps on the window; hundreds of waiting chats cost nothing while they wait.
        """
        lock = self._low if low_priority else self._high
        cap = max(1, self.max * 4 // 5) if low_priority else self.max
        async with lock:
            while True:
                now = self.clock()
                while self.sent and self.sent[0] <= now - 1.0:
                    self.sent.popleft()
                wait = 0.0
                if len(self.sent) >= cap:
                    wait = max(wait, self.sent[len(self.sent) - cap] + 1.0 - now)
                if self.sent:
                    # Evenly spaced, so a late-delivered request cannot bunch up with
                    # the next second's and break Telegram's window on arrival.
                    wait = max(wait, self.sent[-1] + 1.0 / self.max - now)
                if wait <= 0:
                    self.sent.append(now)
                    return
                await asyncio.sleep(wait)

    async def back_off(self, chat_id: int, seconds: float) -> None:
        """Nothing to share: the chat's own ``ChatPacer`` backs off in this process."""


class ChatPacer:
    """Minimum spacing plus a sliding window (20 a minute in groups) for one chat."""

    def __init__(
        self,
        interval: float,
        window_max: int,
        window: float,
        clock: Callable[[], float] = time.monotonic,
    ) -> None:
        self.interval = interval
        self.window_max = window_max
        self.window = window
        self.clock = clock
        self.sent: deque[float] = deque()
        self.not_before = 0.0

    def delay(self) -> float:
        """Seconds until the next send to this chat is allowed."""
        now = self.clock()
        while self.sent and self.sent[0] <= now - self.window:
            self.sent.popleft()
        wait = self.not_before - now
        if self.sent:
            wait = max(wait, self.sent[-1] + self.interval - now)
        if len(self.sent) >= self.window_max:
            wait = max(wait, self.sent[-self.window_max] + self.window - now)
        return max(0.0, wait)

    def record(self) -> None:
        self.sent.append(self.clock())

    def idle_for(self) -> float:
        """Seconds since this chat's last send (or back-off end); infinite if none."""
        last = max(self.sent[-1] if self.sent else float("-inf"), self.not_before)
        return self.clock() - last

    def back_off(self, seconds: float) -> None:
        self.not_before = max(self.not_before, self.clock() + seconds)
