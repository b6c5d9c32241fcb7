"""What a failed Bot API call means for the message it was about.

A timed-out request may still have been carried out (Telegram answered too late), so it
must never be repeated blindly; a request that never left (no free connection, no TCP
connection) or that Telegram refused with a 5xx can be repeated safely.
"""

from __future__ import annotations

from redis.exceptions import RedisError
from telegram.error import BadRequest, NetworkError, TelegramError, TimedOut

from bot.transport.metered_request import NotSent


def possibly_applied(err: TelegramError) -> bool:
    """True when Telegram may have carried out the request although we saw an error."""
    if not isinstance(err, TimedOut):
        return False
    return not isinstance(err.__cause__, NotSent)


def transient(err: BaseException) -> bool:
    """Errors that pass by themselves: network trouble, 5xx answers, Redis outages."""
    if isinstance(err, RedisError):
        return True
    return isinstance(err, NetworkError) and not isinstance(err, BadRequest)


def backoff_seconds(attempt: int, *, base: float = 0.5, cap: float = 30.0) -> float:
    """0.5, 1, 2, 4 … seconds, at most ``cap``: retries forever without hammering."""
    return min(cap, base * 2.0 ** max(0, attempt - 1))
