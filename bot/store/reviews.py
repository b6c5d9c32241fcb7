"""Reviews in Redis: the finished games kept for them, the results, and the fleet's queue.

The queue is one sorted set (``REVIEW_JOBS_KEY``): a job's score is when any worker may
take it, 0 when queued and its lease's end while a worker has it; the worker renews the
lease while it works, and a worker that dies leaves the job to whoever comes once it has
run out. Taking a job, one player's running mark and the fleet's rate counter are one
transaction in one slot (every ``{reviews}`` key).
"""

from __future__ import annotations

import json
from dataclasses import dataclass
from typing import Any, Literal

from redis.asyncio import Redis
from redis.exceptions import WatchError

from bot.domain.place import Place
from bot.domain.review import ReviewResult, ReviewSubject
from bot.store.conditional import MAX_RETRIES, ConditionalWrites, as_text
from bot.store.keys import (
    REVIEW_JOBS_KEY,
    review_job_key,
    review_rate_key,
    review_result_key,
    review_running_key,
    review_subject_key,
)
from bot.store.transactions import StorageConflict, Transactions

JOB_TTL = 3600
"""A job's hash outlives any review: its progress message id is asked for at the end."""
RUNNING_TTL = 900
"""A player's running mark ends by itself should every worker lose their job."""
NEW_MESSAGE = "new"
"""The job's ``message`` field once the result went out as a new message."""

Requested = Literal["queued", "running", "busy"]


@dataclass(frozen=True)
class ReviewJob:
    """One player's review of one game."""

    place: Place
    game_id: str
    user_id: int
    lang: str
    """The requester's language (their chat's, when they set none)."""

    @property
    def job_id(self) -> str:
        return f"{self.place.text}:{self.game_id}:{self.user_id}"

    def to_json(self) -> str:
        return json.dumps([self.place.text, self.game_id, self.user_id, self.lang])

    @classmethod
    def from_json(cls, raw: str | bytes) -> ReviewJob:
        place, game_id, user_id, lang = json.loads(raw)
        return cls(Place.parse(str(place)), str(game_id), int(user_id), str(lang))


@dataclass(frozen=True)
class Lease:
    """A job a worker holds until ``until`` (renewed while it works)."""

    job: ReviewJob
    until: float


class ReviewStore:
    def __init__(self, redis: Redis, *, ttl: int) -> None:
        self.redis = redis
        self.ttl = ttl
        """How long a finished game and its results are kept (the finished record's)."""
        self._db = Transactions(redis)
        self._conditional = ConditionalWrites(redis, self._db.transaction)

    # --- the games and the results --------------------------------------------------

    async def keep_subject(self, subject: ReviewSubject) -> None:
        key = review_subject_key(subject.place, subject.game_id)
        await self.redis.set(key, subject.to_json(), ex=self.ttl)

    async def subject(self, place: Place, game_id: str) -> ReviewSubject | None:
        raw = await self.redis.get(review_subject_key(place, game_id))
        return None if raw is None else ReviewSubject.from_json(raw)

    async def result(self, place: Place, game_id: str, user_id: int) -> ReviewResult | None:
        raw = await self.redis.get(review_result_key(place, game_id, user_id))
        return None if raw is None else ReviewResult.from_json(raw)

    async def save_result(self, job: ReviewJob, result: ReviewResult) -> None:
        key = review_result_key(job.place, job.game_id, job.user_id)
        await self.redis.set(key, result.to_json(), ex=self.ttl)

    # --- asking for one -------------------------------------------------------------

    async def request(self, job: ReviewJob, minute: int, per_minute: int) -> Requested:
        """Queue ``job`` unless the player has one running ("running") or the fleet has
        started ``per_minute`` this minute ("busy")."""
        running, rate = review_running_key(job.user_id), review_rate_key(minute)
        for _ in range(MAX_RETRIES):
            async with self._db.transaction(REVIEW_JOBS_KEY) as pipe:
                try:
                    await pipe.watch(running, rate)
                    if await pipe.get(running) is not None:
                        await pipe.unwatch()  # type: ignore[no-untyped-call]
                        return "running"
                    if int(await pipe.get(rate) or 0) >= per_minute:
                        await pipe.unwatch()  # type: ignore[no-untyped-call]
                        return "busy"
                    self._queue(pipe, job, running, rate)
                    await pipe.execute()
                    return "queued"
                except WatchError:
                    continue
        raise StorageConflict("the review queue kept changing")

    def _queue(self, pipe: Any, job: ReviewJob, running: str, rate: str) -> None:
        key = review_job_key(job.job_id)
        pipe.multi()
        pipe.set(running, job.job_id, ex=RUNNING_TTL)
        pipe.incr(rate)
        pipe.expire(rate, 120)
        pipe.delete(key)  # a job of the same game asked before: a fresh progress message
        pipe.hset(key, "job", job.to_json())
        pipe.expire(key, JOB_TTL)
        pipe.zadd(REVIEW_JOBS_KEY, {job.job_id: 0})

    # --- working on one -------------------------------------------------------------

    async def claim(self, now: float, lease: float) -> Lease | None:
        """A queued job (or one whose worker's lease ran out), leased to this worker."""
        due = await self.redis.zrangebyscore(REVIEW_JOBS_KEY, "-inf", now, start=0, num=10)
        for member in due:
            job_id = as_text(member)
            if not await self._conditional.lease_due(REVIEW_JOBS_KEY, job_id, now, now + lease):
                continue  # another worker took it first
            raw = await self.redis.hget(review_job_key(job_id), "job")
            if raw is None:  # its hash expired: nothing left to do
                await self.redis.zrem(REVIEW_JOBS_KEY, job_id)
                continue
            return Lease(ReviewJob.from_json(raw), now + lease)
        return None

    async def renew(self, held: Lease, until: float) -> Lease | None:
        """The lease extended to ``until``; None when another worker has the job now."""
        job_id = held.job.job_id
        if await self._conditional.move_if(REVIEW_JOBS_KEY, job_id, held.until, until):
            return Lease(held.job, until)
        return None

    async def finish(self, held: Lease) -> None:
        """The job is done: off the queue, and the player may ask for another review."""
        job = held.job
        await self._conditional.drop_if(REVIEW_JOBS_KEY, job.job_id, held.until)
        running = review_running_key(job.user_id)
        async with self._db.transaction(REVIEW_JOBS_KEY) as pipe:
            try:
                await pipe.watch(running)
                if as_text(await pipe.get(running) or b"") != job.job_id:
                    await pipe.unwatch()  # type: ignore[no-untyped-call]
                    return
                pipe.multi()  # type: ignore[no-untyped-call]
                pipe.delete(running)
                await pipe.execute()
            except WatchError:
                return  # a new request took the mark meanwhile: it stays

    # --- the progress message -------------------------------------------------------

    async def claim_message(self, job: ReviewJob, message_id: int | str) -> bool:
        """Record the job's message (its id, or ``NEW_MESSAGE``) unless one is already:
        the progress message and a result sent anew never both become the result."""
        key = review_job_key(job.job_id)
        return bool(await self.redis.hsetnx(key, "message", str(message_id)))

    async def message_of(self, job: ReviewJob) -> int | None:
        """The progress message's id, once it was sent."""
        raw = await self.redis.hget(review_job_key(job.job_id), "message")
        text = None if raw is None else as_text(raw)
        return int(text) if text is not None and text.isdigit() else None
