"""All Bot API output (except callback answers) goes through here.

One lane per chat (``bot.transport.lanes``) serialises that chat's sends and edits and paces
them (Telegram paces a chat, whatever topic a message goes to). A game's messages, notes
and owed output are addressed by its ``Place``; a message goes into its place (the
chat, and its forum topic if any); private messages go to the user's private chat.

A lane holds *what* to refresh, not rendered text: a refresh reads the latest record
when its turn comes, so quick moves coalesce into one edit, and a 429 only delays the edit.
Unchanged content is never re-sent; "message is not modified" counts as success.

Failures: a refresh is retried until it lands (it re-reads the record, so a retry shows the
latest state); a request that timed out may have been carried out, so it is never repeated
blindly. A group or topic that refuses messages for good (closed, deleted, the bot may
not post: ``bot.transport.delivery.refused_by_group``) is not retried: its game ends
there (``on_place_gone``). The table and the results go before announcements; command
replies come last, merged (one pending per kind) and bounded.

Durability: what a move owes the screen is stored with the move (``bot.output.owed``); the
jobs here work it off and clear each mark once done, so a worker that dies leaves the rest
to another worker's sweeper (``deliver``). What a message shows is kept in Redis too, and one
worker at a time refreshes a given message, from the record as it is then
(``bot.output.message_sync``); what each message should show is decided by
``bot.output.planner``.
"""

from __future__ import annotations

import contextlib
import logging
import time
from collections.abc import Awaitable, Callable, Iterable, Iterator
from dataclasses import dataclass
from typing import Any

from redis.exceptions import RedisError
from telegram import Bot, Message
from telegram.error import Forbidden, TelegramError

from bot.domain.bounded import BoundedDict
from bot.domain.place import Place, private_chat
from bot.domain.records import ChatGame
from bot.domain.roles import GROUP, Role, group_hand_owner, hand_owner, hand_role
from bot.output import planner
from bot.output.context import NoteSentHook, OutboxStats, OutputContext, SentHook, TapsFirst
from bot.output.group_hands import Asked, GroupHandMessage, retire_job
from bot.output.jobs import OutputJob
from bot.output.message_sync import GameMessage, MessageSync
from bot.output.messages import GroupMessage, GroupRenderer, HandMessage, HandRenderer
from bot.output.owed import NoteRenderer, OwedWork
from bot.output.planner import NOTIFY_LATE, hand_roles, hand_targets, private_hands, shown_in_group
from bot.output.replies import REPLY_SCOPE, Replies, ReplyScope
from bot.render import Rendered
from bot.store.storage import OwedOutput, Storage
from bot.transport.bot_api import BotApi
from bot.transport.lanes import ChatLanes, Lane, LaneEvents, LaneSettings
from bot.transport.pacing import GlobalLimiter, SendLimiter

__all__ = [
    "NOTIFY_LATE",
    "REPLY_SCOPE",
    "MigrationHook",
    "NoteRenderer",
    "Outbox",
    "OutboxHooks",
    "OutboxStats",
    "PlaceGoneHook",
    "ReplyScope",
    "hand_roles",
    "hand_targets",
    "private_hands",
    "shown_in_group",
]

log = logging.getLogger(__name__)

MigrationHook = Callable[[int, int], Awaitable[None]]
"""(old, new): a group became a supergroup; move its records (``bot.app.migration``)."""
PlaceGoneHook = Callable[[Place], Awaitable[None]]
"""A game's place refuses the bot's messages for good: end its game (``bot.app.place_gone``)."""
TAPS_FIRST_WAIT = 0.05
"""At most this long a job about to render waits for the taps being answered (``answering``)."""
IN_FLIGHT_SECONDS = 2.0
"""Jobs past their chat's pacing that may read, render and wait for the global budget at
once: this many seconds of the global rate, per kind of chat. The others wait *before*
reading, so a burst of moves does not read and render every record at once (the taps
keep the CPU), and what finally goes out is rendered just before it is sent."""


@dataclass(frozen=True)
class OutboxHooks:
    """What the outbox tells the layers above it, which are built after it (the wiring
    passes closures over them)."""

    migrated: MigrationHook | None = None
    """A group became a supergroup (``ChatMigrated``): its records move."""
    place_gone: PlaceGoneHook | None = None
    """A place refuses the bot's messages for good (a topic closed or deleted)."""
    reply_sent: SentHook | None = None
    """A command's reply went out (tidy-up deletes it later)."""
    note_sent: NoteSentHook | None = None
    """An owed note went out into a game's place (tidy-up)."""


class Outbox:
    def __init__(
        self,
        bot: Bot,
        storage: Storage,
        *,
        render_group: GroupRenderer,
        render_hand: HandRenderer,
        render_group_hand: HandRenderer | None = None,
        group_interval: float,
        group_max_per_minute: int,
        calm_delay: float,
        private_interval: float,
        global_rate: float,
        clock: Callable[[], float] = time.monotonic,
        wall_clock: Callable[[], float] = time.time,
        settle_delay: float = 30.0,
        idle_forget: float = 120.0,
        limiter: SendLimiter | None = None,
        hooks: OutboxHooks | None = None,
    ) -> None:
        """``settle_delay``: how long a timed-out request may still land (the read timeout);
        ``idle_forget``: seconds after which an idle chat's lane is dropped; ``limiter``:
        the global budget (default: this process's own, ``GlobalLimiter``)."""
        hooks = hooks or OutboxHooks()
        self.bot = bot
        self.storage = storage
        self.render_group = render_group
        self.render_hand = render_hand
        self.render_group_hand = render_group_hand or render_hand  # no Mini App in groups
        self.calm_delay = calm_delay
        self.clock = clock
        self.on_migrated = hooks.migrated
        self.on_place_gone = hooks.place_gone
        self.context = OutputContext(
            *(BotApi(bot), storage, TapsFirst(TAPS_FIRST_WAIT), settle_delay, clock, wall_clock),
            reply_sent=hooks.reply_sent,
            note_sent=hooks.note_sent,
        )
        self.stats: OutboxStats = self.context.stats
        settings = LaneSettings(
            group_interval,
            group_max_per_minute,
            private_interval,
            in_flight=max(4, round(IN_FLIGHT_SECONDS * global_rate)),
            settle_delay=settle_delay,
            idle_forget=idle_forget,
        )
        events = LaneEvents[OutputJob](
            finished=lambda job: self.owed.settle(job),
            migrated=self._migrated,
            forbidden=self._forbidden,
            refused=self._refused,
        )
        budget = limiter if limiter is not None else GlobalLimiter(global_rate, clock)
        self._lanes = ChatLanes(
            settings, budget, self.stats, events, clock=clock, wall_clock=wall_clock
        )
        self.owed = OwedWork(self.context, self._lanes)
        self.replies = Replies(self.context)

    # --- what the process shows, for its callers -------------------------------------------

    @property
    def limiter(self) -> SendLimiter:
        return self._lanes.limiter

    @limiter.setter
    def limiter(self, limiter: SendLimiter) -> None:
        self._lanes.limiter = limiter

    @property
    def lanes(self) -> dict[int, Lane[OutputJob]]:
        return self._lanes.lanes

    @property
    def closed(self) -> bool:
        return self._lanes.closed

    @property
    def shown(self) -> BoundedDict[tuple[Place, int], tuple[str, int]]:
        """(place, user) -> the game and step whose hand was last marked as on screen."""
        return self.context.cache.hands_shown

    @property
    def live_tables(self) -> BoundedDict[Place, tuple[str, int]]:
        """Place -> (game id, message id) of a lobby or game this process shows."""
        return self.context.cache.live_tables

    # --- what callers ask for -------------------------------------------------------------

    def refresh(
        self,
        table: ChatGame,
        notify: Iterable[int] = (),
        calm: Iterable[int] = (),
        skip: Iterable[int] = (),
        *,
        owed: bool = False,
    ) -> None:
        """Show the latest state of ``table``: its group message and every hand (but
        those of ``skip``: known to show what they would show). ``owed``: only while the
        stored owed output still asks for it (see ``OutputJob.owed_target``)."""
        place = table.place
        # With a player on ephemeral hands, the table is what they read between moves
        # too, and it shares its chat's queue with their hand: neither yields.
        self._refresh_group(place, owed=owed, urgent=any(s.in_group for s in table.seats))
        for hand in planner.hand_refreshes(table, notify, calm, skip):
            self.refresh_hand(
                place, hand.user_id, hand.notify, calm=hand.calm, owed=owed, in_group=hand.in_group
            )

    async def shows_hand(
        self, place: Place, user_id: int, message_id: int, content: Rendered
    ) -> bool:
        """Whether the user's hand message is known to show ``content`` (and no worker is
        changing it right now)."""
        if self.context.cache.edit_may_land(user_id, message_id):
            return False
        screen = await self.storage.screen(place, hand_role(user_id))
        return screen is not None and screen.shows(message_id, content.digest())

    def refresh_hand(
        self,
        place: Place,
        user_id: int,
        notify: bool = False,
        *,
        calm: bool = False,
        owed: bool = False,
        in_group: bool = False,
    ) -> None:
        """Refresh ``user_id``'s hand of the game at ``place``: in their private chat, or
        (``in_group``) the ephemeral one in the group, if it was shown."""
        not_before = self.clock() + self.calm_delay if calm else 0.0
        message: GameMessage[Any] = (
            GroupHandMessage(self.context, place, user_id, self.render_group_hand)
            if in_group
            else HandMessage(self.context, place, user_id, self.render_hand)
        )
        # A hand in the group comes anew only when its player asks (``show_group_hand``).
        notify = notify and not in_group
        job = self._message_job(
            message, owed, notify=notify, not_before=not_before, queued_at=self.clock()
        )
        self._lanes.enqueue(message.to.chat_id, planner.message_key(place, message.role), job)

    def show_group_hand(self, place: Place, user_id: int, query_id: str) -> None:
        """``user_id`` tapped "🃏 My hand": their hand as a new ephemeral message in the
        group (answering that tap), the one shown before deleted."""
        asked = Asked(query_id, self.clock())
        message = GroupHandMessage(self.context, place, user_id, self.render_group_hand, asked)
        job = self._message_job(message, False, notify=True, queued_at=self.clock())
        key = (planner.message_key(place, message.role), "asked")
        self._lanes.enqueue(place.chat_id, key, job)

    def _refresh_group(self, place: Place, *, owed: bool = False, urgent: bool = False) -> None:
        message = GroupMessage(self.context, place, self.render_group, urgent=urgent)
        job = self._message_job(message, owed)
        self._lanes.enqueue(message.to.chat_id, planner.message_key(place, GROUP), job)

    def _message_job(self, message: GameMessage[Any], owed: bool, **options: Any) -> OutputJob:
        role: Role = message.role
        return OutputJob(
            work=MessageSync(self.context, message).refresh,
            account=message.place,
            settles=planner.settles(role),
            owed_target=role if owed else None,
            urgent=message.urgent,
            **options,
        )

    def deliver(self, place: Place, owed: OwedOutput, render_note: NoteRenderer) -> None:
        """Work off output another worker owed and did not finish (it died): every target
        is rendered afresh from the stored record, every note still unsent is sent."""
        for refresh in planner.owed_refreshes(owed):
            user, in_group = hand_owner(refresh.role), group_hand_owner(refresh.role)
            if in_group is not None:
                self.refresh_hand(place, in_group, owed=refresh.owed, in_group=True)
            elif user is None:
                self._refresh_group(place, owed=refresh.owed)
            else:
                self.refresh_hand(place, user, owed=refresh.owed)
        for note_id in owed.notes:
            self.send_note(place, note_id, render_note)
        for where, message_id in owed.deletes:
            self.owed.retire(place, where, message_id)

    def send_note(self, place: Place, note_id: str, render_note: NoteRenderer) -> None:
        """Send an owed note once: it is cleared in Redis right after Telegram took it."""
        self.owed.send_note(place, note_id, render_note)

    def owing_places(self) -> set[Place]:
        """Games whose owed output this process is still working off."""
        return {a for a in self._lanes.open_accounts() if isinstance(a, Place)}

    def say(
        self,
        place: Place,
        content: Rendered,
        *,
        reply_to: int | None = None,
        on_sent: Callable[[Message], Awaitable[None]] | None = None,
        kind: str | None = None,
    ) -> None:
        """Send a new message into ``place`` (paced like everything else in its chat).

        A command's reply (``kind``, or the command being handled) replaces a pending
        reply of the same kind in that place and waits behind the game's messages."""
        key, job = self.replies.job(place, content, reply_to=reply_to, on_sent=on_sent, kind=kind)
        self._lanes.enqueue(place.chat_id, key, job, replace=True)

    def tell(self, user_id: int, content: Rendered, *, kind: str | None = None) -> None:
        """Send a new message to a person's private chat (``say`` there)."""
        self.say(private_chat(user_id), content, kind=kind)

    def edit(
        self, chat_id: int, message_id: int, content: Rendered, *, send_if_gone: bool = False
    ) -> None:
        """Edit a message of ours that is no game's (paced; an edit still pending is
        replaced by this newer one); ``send_if_gone``: send it anew if it was deleted."""
        key, job = self.replies.edit_job(message_id, content, send_if_gone=send_if_gone)
        self._lanes.enqueue(chat_id, key, job, replace=True)

    def delete(self, chat_id: int, message_id: int, done: Callable[[], Awaitable[None]]) -> None:
        """Delete a message (tidy-up); ``done`` once Telegram deleted it or refused."""
        self._lanes.enqueue(chat_id, *self.replies.delete_job(message_id, done))

    async def retire(self, chat_id: int, message_id: int) -> None:
        """Delete a message we no longer keep up to date (its buttons would mislead): at a
        tap on it, so a failure now is tried again at the next tap."""
        try:
            await self.context.retire(chat_id, message_id)
        except TelegramError as err:
            log.info("chat %s: message %s not deleted at a tap: %s", chat_id, message_id, err)

    def retire_group_hand(self, place: Place, user_id: int, ephemeral_id: int) -> None:
        """Delete an ephemeral hand in the group no longer kept up to date (tapped)."""
        message = GroupHandMessage(self.context, place, user_id, self.render_group_hand)
        job = retire_job(message, ephemeral_id)
        self._lanes.enqueue(place.chat_id, ("tidy", user_id, ephemeral_id), job)

    # --- the process around it ------------------------------------------------------------

    @contextlib.contextmanager
    def coming(self) -> Iterator[None]:
        """Output about to be queued (a stored move, shown after its tap's answer): the
        outbox does not count as idle meanwhile."""
        with self._lanes.coming():
            yield

    def answering(self) -> contextlib.AbstractContextManager[None]:
        """A tap is being answered. Jobs about to render wait until no tap is (at most
        ``TAPS_FIRST_WAIT``): see ``TapsFirst``."""
        return self.context.taps.answering()

    async def idle(self) -> None:
        """Wait until every lane is empty (tests, shutdown)."""
        await self._lanes.idle()

    async def close(self) -> None:
        """Stop sending; what is still owed is handed back, so another worker sends it at
        once (it is all in Redis: nothing is lost with this process's queues)."""
        await self._lanes.close()
        with contextlib.suppress(RedisError):
            await self.storage.hand_back_output()

    async def _migrated(self, old: int, new: int) -> None:
        """The group became a supergroup: move the game there (its jobs follow)."""
        if self.on_migrated is not None:
            try:
                await self.on_migrated(old, new)
            except Exception:
                # The records stay under the old id for now; the output follows anyway,
                # and the migration service message (or the next call) moves them later.
                log.exception("could not move chat %s to %s", old, new)
        for place in [place for place in self.live_tables if place.chat_id == old]:
            self.live_tables.pop(place, None)

    async def _refused(self, job: OutputJob, err: TelegramError) -> None:
        """A game's group or topic refuses messages for good (``delivery.refused_by_group``):
        its game ends there. The one place such an answer is handled; a reply that is no
        game's is simply not sent."""
        place = job.account
        if not isinstance(place, Place) or self.on_place_gone is None:
            return
        try:
            await self.on_place_gone(place)
        except Exception:
            log.exception("could not end the game of %s, which refuses messages", place)

    async def _forbidden(self, chat_id: int, err: Forbidden) -> None:
        log.info("chat %s refuses messages: %s", chat_id, err)
        if chat_id > 0:
            record = await self.storage.user(chat_id)
            record.dm_open = False
            await self.storage.save_user(chat_id, record)
