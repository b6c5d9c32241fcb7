"""The outbox's jobs: what the lanes (``bot.transport.lanes``) run for a game's messages."""

from __future__ import annotations

from collections.abc import Awaitable, Callable
from dataclasses import dataclass
from typing import Any

from bot.domain.records import ChatGame
from bot.domain.roles import Role
from bot.render import Rendered
from bot.transport.lanes import Job, Lane, Outcome

Work = Callable[[Lane[Any], "OutputJob"], Awaitable[Outcome]]


def earliest(a: float | None, b: float | None) -> float | None:
    return b if a is None else a if b is None else min(a, b)


@dataclass(kw_only=True, eq=False)
class OutputJob(Job):
    work: Work
    notify: bool = False
    """Asked for as a new, notifying message (a hand)."""
    settles: tuple[str, ...] = ()
    """The owed fields this job fulfils once it is done (or given up); its ``account`` is
    the game's place whose owed output (``Storage.owed_output``) they are in."""
    covers: int | None = None
    """The revision of owed output the job read before rendering (None: any)."""
    owed_target: Role | None = None
    """Set when the job only works off that owed role (a move's refresh): if the role
    is no longer owed when it runs, another worker has shown that revision or a later
    one, and the job has nothing to do (in a fleet a table's moves land on different
    workers, each queueing the same refreshes)."""
    queued_at: float | None = None
    """When the oldest request merged into this job was made (hand jobs)."""
    looked_at: float | None = None
    """When this run of the job first read the record (``MessageSync.refresh``)."""
    rendered: tuple[ChatGame, Rendered] | None = None
    """What this run rendered while it looked, and from which record."""

    async def run(self, lane: Lane[Any]) -> Outcome:
        return await self.work(lane, self)

    def absorb(self, newer: OutputJob) -> None:
        super().absorb(newer)
        self.notify = self.notify or newer.notify
        self.queued_at = earliest(self.queued_at, newer.queued_at)
        if newer.owed_target is None:
            self.owed_target = None  # one of them must run regardless

    def absorb_rerun(self, ran: OutputJob) -> None:
        self.notify = self.notify or ran.notify
        self.queued_at = earliest(self.queued_at, ran.queued_at)

    async def render(self, table: ChatGame, render: Callable[[], Awaitable[Rendered]]) -> Rendered:
        """``render()``, or what it gave for this same record when the job looked: read
        again under the claim, an unchanged record is the very same parsed copy (the
        storage shares one per record), so its rendering need not be repeated."""
        if self.rendered is not None and self.rendered[0] is table:
            return self.rendered[1]
        content = await render()
        self.rendered = (table, content)
        return content
