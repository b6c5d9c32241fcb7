"""What a scheduler's read and claims of the timers do, as one call for storage tests."""

from __future__ import annotations

from bot.domain.place import Place
from bot.store.storage import Storage


async def claim_due(storage: Storage, now: float) -> list[Place]:
    """The places whose due timer ``storage`` won (each leased; see ``claim_timer``)."""
    claimed = []
    for _, place, key in await storage.timers_due_by(now):
        if await storage.claim_timer(place, key, now):
            claimed.append(place)
    return claimed


async def next_due(storage: Storage) -> float | None:
    """When the soonest timer is due (None: no timer)."""
    firsts = await storage.timers_due_by(float("inf"), limit=1)
    return min((due for due, _, _ in firsts), default=None)
