"""Owed output: what a move stored for the screen, worked off and settled.

A move writes what it owes next to the record (``Storage.owed_output``): each role's
revision, each notifying hand, each note (an announcement, the results) and each delete of
a replaced message. Jobs clear their fields once done (``settle``), so a worker that dies
leaves the rest to another worker's sweeper (``Outbox.deliver``). Notes and deletes are
settled by doing them, once; a refresh up to the revision it read.
"""

from __future__ import annotations

import contextlib
import logging
from collections.abc import Awaitable, Callable
from typing import Any

from redis.exceptions import RedisError

from bot.domain.place import Place
from bot.output import planner
from bot.output.context import OutputContext
from bot.output.jobs import OutputJob
from bot.output.message_sync import SEND_BUSY_RETRY
from bot.render import Rendered
from bot.store import owed_fields
from bot.transport.lanes import ANNOUNCE, BackOff, ChatLanes, Lane, Outcome

log = logging.getLogger(__name__)

NoteRenderer = Callable[[Place, dict[str, Any]], Awaitable[Rendered | None]]
"""Renders an owed note (an announcement, the results) for a game's place; None: nothing
to say."""


class OwedWork:
    def __init__(self, context: OutputContext, lanes: ChatLanes[OutputJob]) -> None:
        self.context = context
        self.lanes = lanes

    def send_note(self, place: Place, note_id: str, render_note: NoteRenderer) -> None:
        """Send an owed note once, into the game's place: it is cleared in Redis right
        after Telegram took it."""

        async def work(lane: Lane[Any], job: OutputJob) -> Outcome:
            return await self._send_note(lane, place, note_id, render_note)

        field = owed_fields.note(note_id)
        job = OutputJob(
            work=work, priority=ANNOUNCE, repeatable=False, account=place, settles=(field,)
        )
        self.lanes.enqueue(place.chat_id, ("note", note_id), job)

    async def _send_note(
        self, lane: Lane[Any], place: Place, note_id: str, render_note: NoteRenderer
    ) -> Outcome:
        """Send the note, and first every earlier note the place still owes: notes go out
        in the order they were owed. A deal's code owed by a worker that died must not
        reach the group after the result that reveals the deal."""
        owed = await self.context.storage.owed_output(place)
        for earlier in sorted(n for n in owed.notes if n <= note_id):
            outcome = await self._send_one(lane, place, earlier, owed.notes[earlier], render_note)
            if outcome is not None:
                return outcome
        return None

    async def _send_one(
        self,
        lane: Lane[Any],
        place: Place,
        note_id: str,
        note: dict[str, Any],
        render_note: NoteRenderer,
    ) -> Outcome:
        storage = self.context.storage
        content = await render_note(place, note)
        claim = planner.note_slot(note_id)
        if not await storage.claim_send(place, claim):
            return BackOff(SEND_BUSY_RETRY)  # another worker is sending it right now
        try:
            if await storage.owed_note(place, note_id) is None:
                return None  # it was sent between our first look and the claim
            if content is not None:
                await lane.pace()
                api, text, markup = self.context.api, content.text, content.markup
                sent = await api.send_message(lane.chat_id, text, markup, place.topic_id)
                self.context.stats.sent += 1
                if self.context.note_sent is not None:
                    try:
                        await self.context.note_sent(place, note, sent.message_id)
                    except Exception:  # sent: only tidy-up misses it, never send it twice
                        log.exception("chat %s: note %s not noted for tidy-up", place, note_id)
            # Cleared before the claim ends, so nobody can see it unsent and unclaimed.
            await storage.settle_output(place, {owed_fields.note(note_id): None})
        finally:
            with contextlib.suppress(RedisError):
                await storage.release_send(place, claim)
        return None

    def retire(self, place: Place, chat_id: int, message_id: int) -> None:
        """Delete a replaced message (in ``chat_id``) the game's output still owes
        deleting."""

        async def work(lane: Lane[Any], job: OutputJob) -> Outcome:
            await self.context.retire(chat_id, message_id)
            return None

        field = owed_fields.delete(chat_id, message_id)
        # Repeatable: a delete that may have happened already is harmless to repeat.
        job = OutputJob(work=work, repeatable=True, account=place, settles=(field,))
        self.lanes.enqueue(chat_id, ("retire", message_id), job)

    async def settle(self, job: OutputJob) -> None:
        """A job is over (done, or given up): its owed fields are cleared in Redis right
        away. For a new message this is the one step between Telegram's answer and the
        mark; a worker that dies exactly there leaves the message to be sent again."""
        place = job.account
        if not isinstance(place, Place):
            return
        fields = planner.settled_fields(job.settles, job.covers)
        try:
            done = await self.context.storage.settle_output(place, fields)
            if done and not self.lanes.working_for(place):
                await self.context.storage.release_output(place)
        except RedisError as err:  # what stays owed is swept up after the lease
            log.warning("could not mark output of chat %s as shown: %s", place, err)
