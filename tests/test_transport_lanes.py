"""The per-chat lanes: jobs merge under a key, say by their outcome whether to run again,
and count for their account until they are over."""

from __future__ import annotations

import asyncio
from dataclasses import dataclass, field
from typing import Any

from telegram.error import BadRequest, Forbidden, TelegramError

from bot.transport.delivery import refused_by_group
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


@dataclass(kw_only=True, eq=False)
class Refused(Job):
    """Telegram refuses it the way a closed topic does."""

    error: Exception
    runs: int = 0

    async def run(self, lane: Lane[Any]) -> Outcome:
        self.runs += 1
        await lane.pace()
        raise self.error


def test_a_group_or_topic_that_refuses_messages_is_told_apart() -> None:
    for text in (
        "TOPIC_CLOSED",
        "Message thread not found",
        "TOPIC_DELETED",
        "Not enough rights to send text messages to the chat",
        "CHAT_WRITE_FORBIDDEN",
    ):
        assert refused_by_group(-1, BadRequest(text)), text
    assert refused_by_group(-1, Forbidden("bot was kicked from the supergroup chat"))
    assert not refused_by_group(-1, BadRequest("Message is not modified"))
    assert not refused_by_group(-1, BadRequest("Message to edit not found"))
    assert not refused_by_group(7, Forbidden("bot was blocked by the user"))  # a person


async def test_a_refusal_ends_the_job_and_its_accounts_waiting_jobs_but_no_other() -> None:
    finished: list[Job] = []
    refused: list[tuple[Job, Exception]] = []

    async def done(job: Job) -> None:
        finished.append(job)

    async def on_refused(job: Job, err: TelegramError) -> None:
        refused.append((job, err))

    async def nothing(*args: Any) -> None: ...

    settings = LaneSettings(0, 1000, 0, in_flight=4, settle_delay=1, idle_forget=60)
    events = LaneEvents[Job](done, nothing, nothing, on_refused)
    box: ChatLanes[Job] = ChatLanes(settings, GlobalLimiter(1000), Counters(), events)
    failing = Refused(account="topic 7", error=BadRequest("TOPIC_CLOSED"))
    waiting, other = Step(account="topic 7"), Step(account="topic 8")
    with box.coming():
        box.enqueue(-1, "table 7", failing)
        box.enqueue(-1, "note 7", waiting)
        box.enqueue(-1, "table 8", other)
    await asyncio.wait_for(box.idle(), 5)
    assert failing.runs == 1  # not retried
    assert [job for job, _ in refused] == [failing]
    assert (waiting.runs, other.runs) == (0, 1)  # its account's waiting job ended unrun
    assert set(finished) == {failing, waiting, other}
    assert not box.working_for("topic 7") and not box.working_for("topic 8")
    await box.close()


class Spy(GlobalLimiter):
    """Records the priority each send asked the global budget with."""

    def __init__(self) -> None:
        super().__init__(1000)
        self.asked: list[bool] = []

    async def acquire(self, *, low_priority: bool = False, chat_id: int | None = None) -> None:
        self.asked.append(low_priority)
        await super().acquire(low_priority=low_priority, chat_id=chat_id)


async def test_an_urgent_job_in_a_group_goes_first_and_does_not_yield() -> None:
    """A player's hand shown in a group (an ephemeral message) waits neither behind the
    group's table edit in its chat's queue nor, near the bot's global limit, behind the
    private hands: under load a table edit may wait for minutes (it merges moves), and the
    player would sit before an old hand meanwhile (bench/bot_load.py --group-hands)."""
    finished: list[Step] = []
    spy = Spy()

    async def done(job: Step) -> None:
        finished.append(job)

    async def ignore(*args: Any) -> None: ...

    settings = LaneSettings(0, 1000, 0, in_flight=4, settle_delay=1, idle_forget=60)
    box = ChatLanes(settings, spy, Counters(), LaneEvents(done, ignore, ignore))
    table, hand = Step(account=-1), Step(account=-1, urgent=True)
    with box.coming():
        box.enqueue(-1, "group", table)
        box.enqueue(-1, "ghand", hand)
    await box.idle()
    assert finished == [hand, table]
    assert spy.asked == [False, True]  # the hand at full priority, the table yields
