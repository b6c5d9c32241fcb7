"""The fleet's review worker: takes a queued review (any worker may), judges it one
decision at a time in the computer players' process pool, shows its progress, and
stores and delivers the result.

Only the player's own views reach the pool (``bot.domain.review.judge_point``), one
decision per call: a Hard player's move waits behind one decision at most, and between
two the worker renews its lease and edits the progress line (at most every
``PROGRESS_EVERY`` seconds). A worker that dies leaves the job leased; once the lease
runs out another worker takes it and starts again (or, the result stored already,
only delivers it).
"""

from __future__ import annotations

import asyncio
import contextlib
import logging
import time
from collections.abc import Callable

from redis.exceptions import RedisError

from ai.review import ReviewBudget
from bot.app.ai_runner import AiRunner
from bot.app.reviews import Reviews
from bot.domain.review import (
    Moment,
    ReviewResult,
    ReviewSubject,
    costliest,
    judge_point,
    moment,
    player_points,
    review_seed,
)
from bot.render import review as render
from bot.store.reviews import Lease
from engine import IllegalActionError

log = logging.getLogger(__name__)

LEASE = 30.0
"""Seconds a worker holds a job between renewals (a decision takes well under one)."""
POLL_EVERY = 1.0
PROGRESS_EVERY = 3.0
"""At most one progress edit per this many seconds (Telegram: about one a second in a
private chat; a review is not worth more)."""


class ReviewWorker:
    def __init__(
        self,
        reviews: Reviews,
        ai: AiRunner,
        *,
        budget: ReviewBudget | None = None,
        lease: float = LEASE,
        poll_every: float = POLL_EVERY,
        progress_every: float = PROGRESS_EVERY,
        clock: Callable[[], float] = time.time,
    ) -> None:
        self.reviews = reviews
        self.store = reviews.store
        self.ai = ai
        self.budget = budget or ReviewBudget()
        self.lease = lease
        self.poll_every = poll_every
        self.progress_every = progress_every
        self.clock = clock
        self.judged = 0
        """Decisions this worker judged (tests: a stored review costs none)."""
        self._task: asyncio.Task[None] | None = None

    def start(self) -> None:
        if self._task is None:
            self._task = asyncio.create_task(self._run(), name="review-worker")

    async def stop(self) -> None:
        """Stop at once: a job held now is left to its lease (another worker redoes it)."""
        task, self._task = self._task, None
        if task is not None:
            task.cancel()
            with contextlib.suppress(asyncio.CancelledError):
                await task

    async def _run(self) -> None:
        while True:
            try:
                held = await self.store.claim(self.clock(), self.lease)
                if held is not None:
                    await self._work_or_give_up(held)
                    continue
            except (RedisError, OSError):
                log.warning("review worker: the store is unreachable; trying again", exc_info=True)
            await asyncio.sleep(self.poll_every)

    async def _work_or_give_up(self, held: Lease) -> None:
        """A review that fails by a fault of its own is not tried again and again: the
        player is told, and may ask again."""
        try:
            await self.work(held)
        except (RedisError, OSError):
            raise  # the store: the lease runs out and the job is tried again
        except Exception:
            log.exception("review worker: the review %s failed", held.job.job_id)
            tr = await self.reviews.language(held.job)
            await self.reviews.deliver(held.job, render.failed(tr, str(held.job.place.chat_id)))
            await self.store.finish(held)

    async def work(self, held: Lease) -> None:
        """Review the job's game (unless its result is stored), deliver it, finish."""
        job = held.job
        result = await self.store.result(job.place, job.game_id, job.user_id)
        subject = await self.reviews.subject(job.place, job.game_id)
        seat = subject.seat_of(job.user_id) if subject is not None else None
        if result is None and subject is not None and seat is not None:
            judged = await self._judge(held, subject, seat)
            if judged is None:
                return  # the lease was lost: another worker has the job now
            held, result = judged
            if result is not None:
                await self.store.save_result(job, result)
        if result is not None:
            content = await self.reviews.result_message(job, result)
        else:
            tr = await self.reviews.language(job)
            content = render.failed(
                tr, subject.title if subject is not None else str(job.place.chat_id)
            )
        await self.reviews.deliver(job, content)
        await self.store.finish(held)

    async def _judge(
        self, held: Lease, subject: ReviewSubject, seat: int
    ) -> tuple[Lease, ReviewResult | None] | None:
        """Every decision of ``seat`` judged: (the lease as renewed, the result; None if
        the game does not replay). None when the lease was lost on the way."""
        try:
            points = player_points(subject, seat)
        except IllegalActionError:
            log.error("review of %s: the game does not replay", held.job.job_id)
            return held, None
        seed = review_seed(subject.game_id, seat)
        found: list[Moment] = []
        shown_at = time.monotonic()
        for done, point in enumerate(points, 1):
            costly = await self.ai.think(judge_point, point, seed, self.budget)
            self.judged += 1
            if costly is not None:
                found.append(moment(point, costly))
            renewed = await self._renew(held)
            if renewed is None:
                return None
            held = renewed
            if time.monotonic() - shown_at >= self.progress_every and done < len(points):
                shown_at = time.monotonic()
                await self.reviews.show_progress(held.job, subject, done, len(points))
        return held, costliest(seat, len(points), found)

    async def _renew(self, held: Lease) -> Lease | None:
        now = self.clock()
        if held.until - now > self.lease * 2 / 3:
            return held
        return await self.store.renew(held, now + self.lease)
