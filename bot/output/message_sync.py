"""Keeping one message showing its record: look, claim, edit or send, record.

Every message of a game (the group message, each hand, in private or as an ephemeral
message in the group) follows one protocol; what differs is a ``GameMessage``: which role
it is, what it should show now, where its id is stored and which calls show it.

1. Look: read the owed output, the record and what the message shows (the fleet's screen
   record, ``Storage.peek_screen``), without the message's claim. Most refreshes end here:
   the message shows what it would show, one read and nothing else.
2. Claim: one that must call Telegram waits for the chat's pacing, takes the message's
   claim (``Storage.open_screen``) and reads again (a move may have come meanwhile), so an
   edit always shows the record as it is under the claim.
3. Edit in place, or send a new message (one worker at a time, ``Storage.claim_send``) and
   store its id, deleting the one it replaces.
4. Record what the message shows now (``Storage.close_screen``), ending the claim.
"""

from __future__ import annotations

import contextlib
import enum
import logging
from dataclasses import dataclass
from typing import Any, Generic, Protocol, TypeVar

from redis.exceptions import RedisError
from telegram.error import TelegramError

from bot.domain.place import Place
from bot.domain.records import ChatGame
from bot.domain.roles import Role
from bot.output.context import OutputContext
from bot.output.jobs import OutputJob
from bot.render import Rendered
from bot.store import owed_fields
from bot.store.storage import OwedOutput, Screen, ScreenBusy
from bot.transport.bot_api import Edit
from bot.transport.delivery import possibly_applied
from bot.transport.lanes import BackOff, Lane, Outcome, RunAgainAt

log = logging.getLogger(__name__)

SEND_BUSY_RETRY = 0.3
"""Another worker is sending this message's replacement right now: look again then (its
id will be in the record, and an edit is all that is left to do)."""
SCREEN_BUSY_RETRY = 0.1
"""Another worker is refreshing the message: about one edit's round trip."""


@dataclass
class Showing:
    """What a message should show now, planned from one read of the record."""

    table: ChatGame
    content: Rendered
    message_id: int | None
    """The message showing it now (None: none yet)."""
    slot: str
    """Its send slot (``planner.send_slot``)."""
    rev: int
    """The revision of owed output the plan read."""
    force_new: bool = False
    """A new, notifying message even though one exists."""
    reconcile: bool = False
    """A send that timed out counts as shown only for ``reconcile_after``, then is sent
    again (else until the content changes)."""


S = TypeVar("S", bound=Showing)


class GameMessage(Protocol[S]):
    """One message of a game: what the protocol asks of the group message and of a hand."""

    place: Place
    """The game's place: whose record the message shows."""
    to: Place
    """Where the message goes: the game's place, or (a hand) its owner's private chat."""
    role: Role
    urgent: bool
    """Its player waits on it to act (a hand): its jobs are ``Job.urgent``."""

    def held(self, table: ChatGame) -> set[int | None]:
        """The ids of this role's messages that the record holds."""

    async def plan(self, job: OutputJob, owed: OwedOutput, table: ChatGame | None) -> S | None:
        """What to show (rendered), or None: nothing to do."""

    async def still_due(self, showing: S) -> bool:
        """Read again, once this worker alone may send: is the new message still wanted
        (another worker may have sent it since the plan was made)?"""

    async def store_new(self, showing: S, new_id: int, replaced: int | None) -> bool:
        """Store a new message's id (and the replaced one's, owed to be deleted) at once,
        before anything else is sent; True if a move came since the plan (show it too)."""

    async def shown(self, lane: Lane[Any], showing: S, new_id: int | None) -> None:
        """What follows once the message shows the plan (or a send's fate is unknown)."""

    async def edit(self, chat_id: int, message_id: int, content: Rendered) -> Edit:
        """Edit the message in place."""

    async def send(self, to: Place, showing: S) -> int:
        """Send it as a new message; its id."""

    async def delete(self, chat_id: int, message_id: int) -> None:
        """Delete a message of this role no longer kept up to date (raises if that may
        be tried again)."""


class Call(enum.Enum):
    NEEDED = "needed"
    """Only looked, and found a call to make: pace, claim and look again."""


@dataclass(frozen=True)
class Shown:
    new_id: int | None = None
    """The id of a new message sent."""
    again_at: float | None = None
    """What shows may be overtaken (a late edit, a move during a send): refresh then."""


class MessageSync(Generic[S]):
    def __init__(self, context: OutputContext, message: GameMessage[S]) -> None:
        self.context = context
        self.message = message

    async def refresh(self, lane: Lane[Any], job: OutputJob) -> Outcome:
        """Look; if a call is needed, pace, claim and do it (see the module docstring)."""
        ctx, message = self.context, self.message
        job.looked_at, job.rendered = ctx.clock(), None
        ctx.stats.looked += 1
        owed, table, screen = await ctx.storage.peek_screen(message.place, message.role)
        if screen.unstored is None:  # else a dead worker's send is left: only under the claim
            looked = await self._show(lane, job, owed, table, screen)
            if looked is not Call.NEEDED:
                return looked
        await lane.pace()
        try:
            owed, table, screen = await ctx.storage.open_screen(message.place, message.role)
        except ScreenBusy:
            ctx.stats.claim_busy += 1
            return BackOff(SCREEN_BUSY_RETRY)
        ctx.stats.claimed += 1
        try:
            held = set() if table is None else message.held(table)
            await self._drop_unstored(lane.chat_id, screen, held)
            done = await self._show(lane, job, owed, table, screen)
            return None if done is Call.NEEDED else done  # claimed: never needed again
        finally:
            await self._close_screen(screen)

    async def _show(
        self,
        lane: Lane[Any],
        job: OutputJob,
        owed: OwedOutput,
        table: ChatGame | None,
        screen: Screen,
    ) -> Outcome | Call:
        showing = await self.message.plan(job, owed, table)
        if showing is None:
            return None
        shown = await self._edit_or_send(lane, showing, screen)
        if not isinstance(shown, Shown):
            return shown
        await self.message.shown(lane, showing, shown.new_id)
        return None if shown.again_at is None else RunAgainAt(shown.again_at)

    async def _edit_or_send(
        self, lane: Lane[Any], showing: S, screen: Screen
    ) -> Shown | BackOff | Call:
        """Show the plan in its message (or a new one); ``screen`` is what the message
        shows, updated here as it changes."""
        if showing.message_id is not None and not showing.force_new:
            edited = await self._edit(lane, showing, showing.message_id, screen)
            if edited is not None:
                return edited
        return await self._send(lane, showing, screen)

    async def _edit(
        self, lane: Lane[Any], showing: S, message_id: int, screen: Screen
    ) -> Shown | Call | None:
        """Edit the message in place; None: it is gone, a new one must show the plan."""
        ctx, chat_id, content = self.context, lane.chat_id, showing.content
        digest = content.digest()
        if screen.shows(message_id, digest) and not ctx.cache.edit_may_land(chat_id, message_id):
            ctx.stats.skipped += 1
            return Shown()
        if not screen.claimed:
            return Call.NEEDED
        try:
            edit = await self.message.edit(chat_id, message_id, content)
        except TelegramError as err:
            if possibly_applied(err):
                # What shows is unknown until an edit of ours lands after the late one.
                screen.unknown()
                ctx.cache.edit_timed_out(chat_id, message_id, ctx.clock() + 3 * ctx.settle_delay)
            raise
        if edit is Edit.GONE:
            return None
        if edit is Edit.GIVEN_UP:
            return Shown()  # what shows stays unknown: the next change edits again
        if edit is Edit.NOT_MODIFIED:
            ctx.stats.not_modified += 1
            screen.now_shows(message_id, digest)
            ctx.cache.send_confirmed(chat_id, showing.slot)
            return Shown()
        ctx.stats.edited += 1
        ctx.cache.send_confirmed(chat_id, showing.slot)
        until = ctx.cache.edit_landed(chat_id, message_id)
        if until is not None and until > ctx.clock():
            screen.unknown()
            return Shown(again_at=until)  # a late edit may still land: edit again then
        screen.now_shows(message_id, digest)
        return Shown()

    async def _send(self, lane: Lane[Any], showing: S, screen: Screen) -> Shown | BackOff | Call:
        """A new message; a send that timed out counts as shown until the content changes
        (or, ``reconcile``, until ``reconcile_after`` passed without anyone using it)."""
        ctx, chat_id, digest = self.context, lane.chat_id, showing.content.digest()
        attempt = ctx.cache.unconfirmed_send(chat_id, showing.slot)
        if attempt is not None and showing.message_id is None and attempt[0] == digest:
            fresh = ctx.clock() - attempt[1] < ctx.reconcile_after
            if fresh or not showing.reconcile:
                ctx.stats.skipped += 1  # possibly showing already: wait for a change
                return Shown()
        if not screen.claimed:
            return Call.NEEDED
        # Where it goes, in the chat of its lane (a group that became a supergroup: the new).
        to = self.message.to.in_chat(chat_id)
        if not await ctx.storage.claim_send(to, showing.slot):
            return BackOff(SEND_BUSY_RETRY)  # another worker is sending it right now
        try:
            sent = await self._send_claimed(to, showing, screen, digest)
        finally:
            with contextlib.suppress(RedisError):
                await ctx.storage.release_send(to, showing.slot)
        replaced = showing.message_id
        if isinstance(sent, Shown) and sent.new_id is not None and replaced is not None:
            await self._retire_replaced(chat_id, replaced)
        return sent

    async def _retire_replaced(self, chat_id: int, replaced: int) -> None:
        """Delete the message a new one replaced. Its delete was stored owed with the new
        id: it is cleared only once done, so a failed delete is left to the sweeper."""
        try:
            await self.message.delete(chat_id, replaced)
        except TelegramError as err:
            log.info("chat %s: message %s left for the sweeper: %s", chat_id, replaced, err)
            return
        with contextlib.suppress(RedisError):  # else the sweeper deletes it again
            await self.context.storage.settle_output(
                self.message.place, {owed_fields.delete(chat_id, replaced): None}
            )

    async def _send_claimed(
        self, to: Place, showing: S, screen: Screen, digest: str
    ) -> Shown | BackOff:
        ctx, chat_id = self.context, to.chat_id
        if not await self.message.still_due(showing):
            return BackOff(SEND_BUSY_RETRY)  # sent meanwhile: start over from the record
        try:
            new_id = await self.message.send(to, showing)
        except TelegramError as err:
            if not possibly_applied(err):
                raise
            ctx.stats.unconfirmed += 1
            ctx.cache.send_timed_out(chat_id, showing.slot, digest, ctx.clock())
            log.warning("send to chat %s timed out; treating it as shown", chat_id)
            return Shown()
        ctx.cache.send_confirmed(chat_id, showing.slot)
        ctx.stats.sent += 1
        screen.now_shows(new_id, digest)
        with contextlib.suppress(RedisError):  # then storing it fails as well, and says so
            await ctx.storage.note_sent(screen, new_id)
        newer = await self.message.store_new(showing, new_id, showing.message_id)
        screen.unstored = None
        return Shown(new_id, ctx.clock() if newer else None)

    async def _drop_unstored(self, chat_id: int, screen: Screen, known: set[int | None]) -> None:
        """Delete a message a worker sent and died before storing (the record names
        another): nobody would ever keep it up to date."""
        if screen.unstored is not None and screen.unstored not in known:
            log.info(
                "chat %s: deleting message %s, sent but never stored", chat_id, screen.unstored
            )
            try:
                await self.message.delete(chat_id, screen.unstored)
            except TelegramError as err:  # still noted: the next refresh tries again
                log.info("chat %s: message %s not deleted yet: %s", chat_id, screen.unstored, err)
                return
        screen.unstored = None

    async def _close_screen(self, screen: Screen) -> None:
        place = self.message.place
        try:
            await self.context.storage.close_screen(place, screen)
        except RedisError as err:  # the claim runs out by itself
            log.warning("could not record what a message of chat %s shows: %s", place, err)
