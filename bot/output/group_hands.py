"""A player's hand shown as an ephemeral message in the group, a ``message_sync.GameMessage``.

For a player who never opened a private chat with the bot (``Seat.in_group``): the hand
is a message in the group that only they see (Bot API 10.2), addressed by chat, receiver
and ``ephemeral_message_id``. It follows the same protocol as every other message: what it
shows is in the screen record, one worker at a time changes it, it is edited only when its
owner's lines or moves change, and its calls go through the group's lane (they count
against the group's budget, as Telegram counts them).

What differs: it is first sent when its player asks (the "🃏 My hand" button of the table:
``Outbox.show_group_hand``, answering that tap), and each ask sends it anew (the app may
have dropped the old one; that is deleted). Telegram does not promise to deliver one, so
an edit it refuses is not tried again: the next change edits afresh.
"""

from __future__ import annotations

import logging
from dataclasses import dataclass
from typing import Any

from telegram.error import RetryAfter, TelegramError

from bot.domain.place import Place
from bot.domain.records import ChatGame
from bot.domain.roles import group_hand_role
from bot.output import planner
from bot.output.context import OutputContext
from bot.output.jobs import OutputJob
from bot.output.message_sync import Showing
from bot.output.messages import HandRenderer
from bot.render import Rendered
from bot.store.storage import OwedOutput, Reowe, Write
from bot.transport.bot_api import Edit
from bot.transport.delivery import possibly_applied
from bot.transport.lanes import ANNOUNCE, Lane, Outcome

log = logging.getLogger(__name__)

ANSWER_WINDOW = 12.0
"""A tap's id is named in the new message this long after the tap (Telegram accepts it for
15 s; a bot that is an admin needs none)."""


@dataclass(frozen=True)
class Asked:
    """The tap that asked for the hand: its callback query and when it came (the
    outbox's clock)."""

    query_id: str
    at: float


@dataclass
class GroupHandShowing(Showing):
    seat: int = 0


class GroupHandMessage:
    """``user_id``'s hand of the game at ``place``, as an ephemeral message there."""

    def __init__(
        self,
        context: OutputContext,
        place: Place,
        user_id: int,
        render: HandRenderer,
        asked: Asked | None = None,
    ) -> None:
        self.context = context
        self.place = place
        self.to = place
        self.user_id = user_id
        self.role = group_hand_role(user_id)
        self.urgent = True
        self.render = render
        self.asked = asked

    def held(self, table: ChatGame) -> set[int | None]:
        return planner.group_hand_ids(table, self.user_id)

    async def plan(
        self, job: OutputJob, owed: OwedOutput, table: ChatGame | None
    ) -> GroupHandShowing | None:
        job.covers = owed.rev
        if table is None or table.state is None:
            return None
        if planner.shown_elsewhere(job.owed_target, owed):
            return None
        seat = planner.hand_seat(table, self.user_id, group=True)
        if seat is None:
            return None
        message_id = table.seats[seat].group_hand_id
        if message_id is None and not job.notify:
            return None  # shown first when its player asks for it
        await self.context.taps.first()
        content = await job.render(table, lambda: self.render(table, seat))
        slot = planner.send_slot(self.role, table.place, table.game_id)
        return GroupHandShowing(
            table, content, message_id, slot, owed.rev, force_new=job.notify, seat=seat
        )

    async def still_due(self, showing: GroupHandShowing) -> bool:
        now = await self.context.storage.load_table(self.place)
        seat = showing.seat
        if now is None or now.game_id != showing.table.game_id or seat >= len(now.seats):
            return False
        return now.seats[seat].group_hand_id == showing.message_id

    async def store_new(self, showing: GroupHandShowing, new_id: int, replaced: int | None) -> bool:
        """The new message's id (the one it replaces is deleted right after, by
        ``deleteEphemeralMessage``: never an owed ``deleteMessage``)."""
        reowe = Reowe([self.role], showing.rev)
        game_id, seat = showing.table.game_id, showing.seat

        def change(t: ChatGame | None) -> Write[None]:
            if t is None or t.game_id != game_id or seat >= len(t.seats):
                return Write(None, None)
            t.seats[seat].group_hand_id = new_id
            return Write(t, None, reowe=reowe)

        await self.context.storage.update_table(showing.table.place, change)
        return reowe.newer

    async def shown(self, lane: Lane[Any], showing: GroupHandShowing, new_id: int | None) -> None:
        """Nothing waits for it: the turn gate never waits on a hand Telegram does not
        promise to deliver."""

    # --- the calls ------------------------------------------------------------------------

    async def edit(self, chat_id: int, message_id: int, content: Rendered) -> Edit:
        try:
            return await self.context.api.edit_ephemeral(
                chat_id, self.user_id, message_id, content.text, content.markup
            )
        except RetryAfter:
            raise
        except TelegramError as err:
            if possibly_applied(err):
                raise
            log.info("chat %s: ephemeral hand of %s not edited: %s", chat_id, self.user_id, err)
            return Edit.GIVEN_UP

    async def send(self, to: Place, showing: Showing) -> int:
        asked, now = self.asked, self.context.clock()
        query = asked.query_id if asked is not None and now - asked.at < ANSWER_WINDOW else None
        content = showing.content
        return await self.context.api.send_ephemeral(
            to.chat_id, self.user_id, content.text, content.markup, query, to.topic_id
        )

    async def delete(self, chat_id: int, message_id: int) -> None:
        if await self.context.api.delete_ephemeral(chat_id, self.user_id, message_id):
            self.context.stats.deleted += 1


def retire_job(message: GroupHandMessage, ephemeral_id: int) -> OutputJob:
    """A job that deletes an ephemeral hand no longer kept up to date (its player tapped
    it), paced with the group's other calls."""

    async def work(lane: Lane[Any], job: OutputJob) -> Outcome:
        await lane.pace()
        await message.delete(message.place.chat_id, ephemeral_id)
        return None

    return OutputJob(work=work, priority=ANNOUNCE, repeatable=True)
