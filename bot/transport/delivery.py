"""What a failed Bot API call means for the message it was about.

A timed-out request may still have been carried out (Telegram answered too late), so it
must never be repeated blindly; a request that never left (no free connection, no TCP
connection) or that Telegram refused with a 5xx can be repeated safely.
"""

from __future__ import annotations

from redis.exceptions import RedisError
from telegram.error import BadRequest, Forbidden, NetworkError, TelegramError, TimedOut

from bot.transport.metered_request import NotSent


def possibly_applied(err: TelegramError) -> bool:
    """True when Telegram may have carried out the request although we saw an error."""
    if not isinstance(err, TimedOut):
        return False
    return not isinstance(err.__cause__, NotSent)


PLACE_REFUSALS = (
    "topic_closed",
    "topic_deleted",
    "message thread not found",
    "not enough rights",
    "chat_write_forbidden",
    "have no rights to send",
)
"""Telegram's answers (lower case) when a group, or a forum topic of it, refuses the bot's
messages for good: the topic was closed ("Bad Request: TOPIC_CLOSED") or deleted
("Bad Request: message thread not found", or "TOPIC_DELETED" passed through from the
server), or the bot may no longer post there ("not enough rights to send text messages
to the chat", "CHAT_WRITE_FORBIDDEN", "have no rights to send a message")."""


def refused_by_group(chat_id: int, err: TelegramError) -> bool:
    """A group (``chat_id`` < 0) or one of its topics refuses messages: waiting or trying
    again will not help, so nothing more should be sent there for that game. Any 403 in
    a group (the bot was kicked, or may not write), or a 400 that says so."""
    if chat_id >= 0:
        return False
    if isinstance(err, Forbidden):
        return True
    reason = str(err).lower()
    return isinstance(err, BadRequest) and any(text in reason for text in PLACE_REFUSALS)


def transient(err: BaseException) -> bool:
    """Errors that pass by themselves: network trouble, 5xx answers, Redis outages."""
    if isinstance(err, RedisError):
        return True
    return isinstance(err, NetworkError) and not isinstance(err, BadRequest)


def backoff_seconds(attempt: int, *, base: float = 0.5, cap: float = 30.0) -> float:
    """0.5, 1, 2, 4 … seconds, at most ``cap``: retries forever without hammering."""
    return min(cap, base * 2.0 ** max(0, attempt - 1))
