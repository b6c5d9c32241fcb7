"""Each bot's queue of pending updates (drained by getUpdates or by webhook delivery)."""

from __future__ import annotations

from sandbox.emulator.events import EventLog
from sandbox.emulator.models import EmuBot
from sandbox.emulator.types import JsonDict

# What Telegram delivers when allowed_updates was never set (or set to []).
_DEFAULT_EXCLUDED_UPDATES = frozenset({"chat_member", "message_reaction", "message_reaction_count"})


class UpdateQueues:
    """Queues updates for bots, honouring allowed_updates; wakes whoever waits for them."""

    def __init__(self, events: EventLog) -> None:
        self.events = events

    def deliver(self, b: EmuBot, kind: str, payload: JsonDict) -> None:
        """Queue an update of ``kind`` (e.g. "message") for a bot."""
        if b.allowed_updates:
            if kind not in b.allowed_updates:
                return
        elif kind in _DEFAULT_EXCLUDED_UPDATES:
            return
        b.updates.append({"update_id": b.next_update_id, kind: payload})
        b.next_update_id += 1
        b.poke()
        self.events.touch()

    def confirm(self, b: EmuBot, offset: int | None) -> None:
        """getUpdates' ``offset``: forget the updates before it (negative: keep the last N)."""
        if offset is None:
            return
        if offset < 0:
            b.updates = b.updates[offset:]
        else:
            b.updates = [u for u in b.updates if u["update_id"] >= offset]
