"""Where a game lives: a chat, or one topic of a forum supergroup.

Every game is addressed by its place, never by a bare chat id: Redis keys, records,
renders, sends, callback data and the Mini App all carry one. A chat without topics (and
a forum's General topic) is ``Place(chat_id)``; its text is the chat id alone, so keys and
button data written before places existed read as the same place.
"""

from __future__ import annotations

import re
from dataclasses import dataclass
from typing import Final

_TEXT_RE: Final = re.compile(r"(-?\d{1,20})(?:_(\d{1,12}))?")
PLACE_PATTERN: Final = r"-?\d{1,20}(?:_\d{1,12})?"
"""A place's text inside a larger pattern (callback data, keys)."""


class PlaceError(ValueError):
    """Text that is not a place's."""


@dataclass(frozen=True, slots=True)
class Place:
    chat_id: int
    topic_id: int | None = None
    """The forum topic (``message_thread_id``); None for a chat without topics."""

    def __post_init__(self) -> None:
        if self.topic_id is not None and self.topic_id <= 0:
            raise PlaceError(f"a topic id is positive, not {self.topic_id}")

    @property
    def text(self) -> str:
        """``<chat>`` or ``<chat>_<topic>``: in keys, callback data and links."""
        return str(self.chat_id) if self.topic_id is None else f"{self.chat_id}_{self.topic_id}"

    @property
    def tag(self) -> str:
        """The place in a Redis key: its text with the chat in braces (``{<chat>}`` or
        ``{<chat>}_<topic>``). The chat is the cluster hash tag, so every topic's game
        shares its chat's slot: a move's transaction also writes the group's totals and
        reads its settings, which stay the chat's."""
        suffix = "" if self.topic_id is None else f"_{self.topic_id}"
        return f"{{{self.chat_id}}}{suffix}"

    def __str__(self) -> str:
        return self.text

    def __lt__(self, other: Place) -> bool:
        """Chats in id order, each chat's topics after its place without one."""
        return self._order() < other._order()

    def _order(self) -> tuple[int, int]:
        return (self.chat_id, 0 if self.topic_id is None else self.topic_id)

    @classmethod
    def parse(cls, text: str) -> Place:
        match = _TEXT_RE.fullmatch(text)
        if match is None:
            raise PlaceError(f"not a place: {text!r}")
        topic = match.group(2)
        return cls(int(match.group(1)), int(topic) if topic is not None else None)

    def in_chat(self, chat_id: int) -> Place:
        """The same topic in another chat (a group that became a supergroup)."""
        return Place(chat_id, self.topic_id)


def private_chat(user_id: int) -> Place:
    """Where a person's private messages from the bot go (their hands, replies to them):
    their private chat, which has no topics."""
    return Place(user_id)
