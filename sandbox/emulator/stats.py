"""Call statistics of the Bot API emulator."""

from __future__ import annotations

from collections import Counter
from dataclasses import dataclass, field
from typing import Any


@dataclass
class EmuStats:
    """Call counters. ``calls`` per method, ``chat_calls`` per chat, errors per code."""

    calls: Counter[str] = field(default_factory=Counter)
    chat_calls: Counter[int] = field(default_factory=Counter)
    chat_method_calls: Counter[tuple[int, str]] = field(default_factory=Counter)
    errors: Counter[int] = field(default_factory=Counter)
    too_many_requests: int = 0
    delayed_answers: int = 0  # answers held back by an injected slow answer
    webhook_posts: int = 0  # webhook delivery attempts
    webhook_delivered: int = 0  # ... of which the bot accepted (2xx)

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
            "delayed_answers": self.delayed_answers,
            "webhook_posts": self.webhook_posts,
            "webhook_delivered": self.webhook_delivered,
        }
