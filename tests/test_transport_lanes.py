"""The per-chat lanes: jobs merge under a key, say by their outcome whether to run again,
and count for their account until they are over."""

from __future__ import annotations

import asyncio
from dataclasses import dataclass, field
from typing import Any

from telegram.error import Forbidden

from bot.transport.lanes import BackOff, ChatLanes, Job, Lane, LaneEvents, LaneSettings, Outcome
from bot.transport.pacing import GlobalLimiter


@dataclass
class Counters:
    retry_after: int = 0
    unconfirmed: int = 0
    dropped_replies: int = 0
    retried: int = 0
    chat_busy: int = 0


@dataclass(kw_only=True, eq=False)
class Step(Job):
    """Returns its outcomes one run after another, then None."""

    outcomes: list[Outcome] = field(default_factory=list)
    runs: int = 0

    async def run(self, lane: Lane[Any]) -> Outcome:
        self.runs += 1
        await lane.pace()
        return self.outcomes.pop(0) if self.outcomes else None


def lanes(finished: list[Step]) -> ChatLanes[Step]:
    async def done(job: Step) -> None:
        finished.append(job)

    async def migrated(old: int, new: int) -> None: ...

    async def forbidden(chat_id: int, err: Forbidden) -> None: ...

    settings = LaneSettings(0, 1000, 0, in_flight=4, settle_delay=1, idle_forget=60)
    return ChatLanes(
        settings, GlobalLimiter(1000), Counters(), LaneEvents(done, migrated, forbidden)
    )


async def test_a_job_queued_under_a_pending_key_merges_into_it() -> None:
    finished: list[Step] = []
    box = lanes(finished)
    first, second = Step(account=-1), Step(account=-1)
    with box.coming():  # both queued before the lane runs
        box.enqueue(-1, "group", first)
        box.enqueue(-1, "group", second)
        assert box.open_accounts() == {-1}
    await asyncio.wait_for(box.idle(), 5)
    assert (first.runs, second.runs) == (1, 0)
    assert finished == [first]
    assert not box.working_for(-1)
    await box.close()


async def test_a_job_backing_off_runs_again_and_is_over_once() -> None:
    finished: list[Step] = []
    box = lanes(finished)
    job = Step(account=-1, outcomes=[BackOff(0.01), BackOff(0.01)])
    box.enqueue(-1, "group", job)
    await asyncio.wait_for(box.idle(), 5)
    assert job.runs == 3
    assert finished == [job]
    await box.close()
