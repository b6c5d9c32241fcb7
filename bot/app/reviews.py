"""Reviews by the Hard player: asking for one, keeping finished games for them, and the
messages (progress, result) in the player's private chat.

A tap on 🔍 Review answers at once: the stored result again (no new work), "already
running", "busy" (the fleet's rate), or a progress message while a worker of the fleet
takes the job (``bot.app.review_worker``). The result replaces the progress message, so
the player gets one result message even when a worker dies and another redoes the job.
"""

from __future__ import annotations

import asyncio
import logging
import time
from collections.abc import Callable

from telegram import Message

from bot.app.games import Games
from bot.domain.flow import Effects
from bot.domain.place import Place, private_chat
from bot.domain.records import ChatGame
from bot.domain.review import ReviewResult, ReviewSubject, review_subject
from bot.output.app_buttons import app_url
from bot.render import Rendered
from bot.render import review as render
from bot.store.reviews import NEW_MESSAGE, ReviewJob, ReviewStore
from locales import Translator

log = logging.getLogger(__name__)

MESSAGE_WAIT = 10.0
"""How long a finished review waits for its progress message to be sent (it becomes the
result) before the result goes out as a new message instead."""


def moments_url(base_url: str, job: ReviewJob) -> str:
    """The Mini App page of the review's moments."""
    return f"{app_url(base_url, job.game_id)}&review={job.place.text}"


class Reviews:
    def __init__(
        self,
        store: ReviewStore,
        games: Games,
        *,
        per_minute: int,
        clock: Callable[[], float] = time.time,
    ) -> None:
        self.store = store
        self.games = games
        self.per_minute = per_minute
        self.clock = clock

    # --- the finished games ---------------------------------------------------------

    async def keep(self, game: ChatGame, effects: Effects) -> None:
        """A game just ended: keep what its reviews need (the record moves on with a
        rematch, the players' 🔍 buttons stay)."""
        if effects.ended and any(seat.human for seat in game.seats):
            subject = review_subject(game)
            if subject is not None:
                await self.store.keep_subject(subject)

    async def subject(self, place: Place, game_id: str) -> ReviewSubject | None:
        """The finished game: kept at its end, or (its end's keeping lost with a worker)
        still the chat's record."""
        kept = await self.store.subject(place, game_id)
        if kept is not None:
            return kept
        table = await self.games.storage.peek_table(place)
        if table is None or table.game_id != game_id:
            return None
        subject = review_subject(table)
        if subject is not None:
            await self.store.keep_subject(subject)
        return subject

    # --- asking ---------------------------------------------------------------------

    async def request(
        self, place: Place, game_id: str, user_id: int, tr: Translator, *, resend: bool = True
    ) -> str | None:
        """A tap on 🔍 Review: the toast's key (None: the progress message answers).
        ``resend``: a review done before is sent again (the Mini App shows it itself)."""
        job = ReviewJob(place, game_id, user_id, tr.lang)
        done = await self.store.result(place, game_id, user_id)
        if done is not None:
            if resend:
                self.games.box.tell(user_id, await self.result_message(job, done))
            return "review.again"
        subject = await self.subject(place, game_id)
        if subject is None:
            return "review.gone"
        if subject.seat_of(user_id) is None:
            return "toast.not_in_game"
        minute = int(self.clock() // 60)
        outcome = await self.store.request(job, minute, self.per_minute)
        if outcome == "running":
            return "review.running"
        if outcome == "busy":
            return "review.busy"
        first = render.progress(tr, _group(subject), 0, 0)

        async def sent(message: Message) -> None:
            await self._progress_sent(job, message.message_id)

        self.games.box.say(private_chat(user_id), first, on_sent=sent)
        return None

    async def _progress_sent(self, job: ReviewJob, message_id: int) -> None:
        """The progress message is out: it becomes the result, unless the result went
        out as a new message first (then it is deleted) or is already here (shown)."""
        if not await self.store.claim_message(job, message_id):
            await self.games.box.retire(job.user_id, message_id)
            return
        result = await self.store.result(job.place, job.game_id, job.user_id)
        if result is not None:
            content = await self.result_message(job, result)
            self.games.box.edit(job.user_id, message_id, content, send_if_gone=True)

    # --- the messages ---------------------------------------------------------------

    async def language(self, job: ReviewJob) -> Translator:
        return await self.games.languages.person(job.user_id, job.lang)

    async def result_message(self, job: ReviewJob, result: ReviewResult) -> Rendered:
        tr = await self.language(job)
        subject = await self.store.subject(job.place, job.game_id)
        group = _group(subject) if subject is not None else str(job.place.chat_id)
        buttons = self.games.app_buttons
        url = moments_url(buttons.base_url, job) if buttons is not None else None
        return render.result_message(result, tr, group, url)

    async def show_progress(
        self, job: ReviewJob, subject: ReviewSubject, done: int, total: int
    ) -> None:
        message_id = await self.store.message_of(job)
        if message_id is not None:
            tr = await self.language(job)
            content = render.progress(tr, _group(subject), done, total)
            self.games.box.edit(job.user_id, message_id, content)

    async def deliver(self, job: ReviewJob, content: Rendered, wait: float = MESSAGE_WAIT) -> None:
        """The result (or why there is none) in place of the progress message: one
        message, whichever worker delivers it and however often."""
        message_id = await self._progress_message(job, wait)
        if message_id is None and await self.store.claim_message(job, NEW_MESSAGE):
            self.games.box.tell(job.user_id, content)
            return
        message_id = message_id or await self.store.message_of(job)
        if message_id is not None:
            self.games.box.edit(job.user_id, message_id, content, send_if_gone=True)

    async def _progress_message(self, job: ReviewJob, wait: float) -> int | None:
        """The progress message's id, waiting a little while it may still be on its way."""
        deadline = time.monotonic() + wait
        while True:
            message_id = await self.store.message_of(job)
            if message_id is not None or time.monotonic() >= deadline:
                return message_id
            await asyncio.sleep(0.2)


def _group(subject: ReviewSubject) -> str:
    return subject.title or str(subject.place.chat_id)
