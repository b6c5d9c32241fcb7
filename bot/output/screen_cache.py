"""What this process alone knows about messages on screen.

The fleet's knowledge lives in Redis (the screen record, ``Storage.peek_screen``; the time
a hand landed, ``Storage.mark_hand_shown``; the message ids in the game record). This is
the one cache beside it, for what only the worker that made a call can know: a request
that timed out may still land, and which tables it shows.
"""

from __future__ import annotations

from bot.domain.bounded import BoundedDict
from bot.domain.place import Place

MAX_REMEMBERED = 20_000
"""Entries kept per kind (least recently written forgotten first)."""


class ScreenCache:
    def __init__(self, max_items: int = MAX_REMEMBERED) -> None:
        self.unconfirmed_sends: BoundedDict[tuple[int, str], tuple[str, float]] = BoundedDict(
            max_items
        )
        """(chat, send slot) -> digest and time of a new message whose send timed out: it
        counts as shown until the content changes (or nobody used it for a while)."""
        self.suspect_edits: BoundedDict[tuple[int, int], float] = BoundedDict(max_items)
        """(chat, message) -> until when an edit that timed out may still land."""
        self.hands_shown: BoundedDict[tuple[Place, int], tuple[str, int]] = BoundedDict(max_items)
        """(place, user) -> the game and step whose hand was last marked as on screen."""
        self.live_tables: BoundedDict[Place, tuple[str, int]] = BoundedDict(max_items)
        """Place -> (game id, message id) of a lobby or game this process shows."""

    def edit_may_land(self, chat_id: int, message_id: int) -> bool:
        """An edit of ours timed out and may still change the message."""
        return (chat_id, message_id) in self.suspect_edits

    def edit_timed_out(self, chat_id: int, message_id: int, until: float) -> None:
        self.suspect_edits[(chat_id, message_id)] = until

    def edit_landed(self, chat_id: int, message_id: int) -> float | None:
        """An edit went through: until when an older one that timed out may still land."""
        return self.suspect_edits.pop((chat_id, message_id), None)

    def send_timed_out(self, chat_id: int, slot: str, digest: str, at: float) -> None:
        self.unconfirmed_sends[(chat_id, slot)] = (digest, at)

    def unconfirmed_send(self, chat_id: int, slot: str) -> tuple[str, float] | None:
        return self.unconfirmed_sends.get((chat_id, slot))

    def send_confirmed(self, chat_id: int, slot: str) -> None:
        """The slot's message is known again (an edit or a send landed)."""
        self.unconfirmed_sends.pop((chat_id, slot), None)
