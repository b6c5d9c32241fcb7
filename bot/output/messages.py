"""The kinds of a game's messages, each a ``message_sync.GameMessage``: the group message
(the lobby's, then the table's) and a player's hand in private (and, in ``group_hands``,
a hand shown as an ephemeral message in the group)."""

from __future__ import annotations

from collections.abc import Awaitable, Callable
from dataclasses import dataclass
from typing import Any

from bot.domain.place import Place, private_chat
from bot.domain.records import ChatGame
from bot.domain.roles import GROUP, hand_role
from bot.output import planner
from bot.output.context import OutputContext
from bot.output.jobs import OutputJob
from bot.output.message_sync import Showing
from bot.render import Rendered
from bot.store import owed_fields
from bot.store.storage import OwedOutput, Reowe, Write
from bot.transport.bot_api import Edit
from bot.transport.lanes import Lane

GroupRenderer = Callable[[ChatGame], Awaitable[Rendered]]
HandRenderer = Callable[[ChatGame, int], Awaitable[Rendered]]
"""Renders a seat's hand, in whatever mode the service keeps for it."""


class ChatCalls:
    """Ordinary messages of a chat: sent, edited and deleted by chat and message id."""

    context: OutputContext

    async def edit(self, chat_id: int, message_id: int, content: Rendered) -> Edit:
        return await self.context.api.edit_text(chat_id, message_id, content.text, content.markup)

    async def send(self, to: Place, showing: Showing) -> int:
        content = showing.content
        return await self.context.api.send_text(
            to.chat_id, content.text, content.markup, to.topic_id
        )

    async def delete(self, chat_id: int, message_id: int) -> None:
        await self.context.retire(chat_id, message_id)


@dataclass
class GroupShowing(Showing):
    lobby: bool = False
    """The lobby message (else the table message)."""


class GroupMessage(ChatCalls):
    """The message of the game's place, in that place (its chat, or its forum topic)."""

    role = GROUP

    def __init__(
        self, context: OutputContext, place: Place, render: GroupRenderer, *, urgent: bool = False
    ) -> None:
        self.context = context
        self.place = place
        self.urgent = urgent
        self.to = place
        self.render = render

    def held(self, table: ChatGame) -> set[int | None]:
        return planner.shown_in_group(table)

    async def plan(
        self, job: OutputJob, owed: OwedOutput, table: ChatGame | None
    ) -> GroupShowing | None:
        job.covers = owed.rev
        if table is None or planner.shown_elsewhere(job.owed_target, owed):
            return None
        await self.context.taps.first()
        content = await job.render(table, lambda: self.render(table))
        spot = planner.group_spot(table)
        if spot is None:
            return None
        slot = planner.send_slot(GROUP, table.place, table.game_id)
        return GroupShowing(table, content, spot.message_id, slot, owed.rev, lobby=spot.lobby)

    async def still_due(self, showing: GroupShowing) -> bool:
        now = await self.context.storage.load_table(self.place)
        if now is None or now.game_id != showing.table.game_id:
            return False
        shown = now.lobby_message_id if showing.lobby else now.table_message_id
        return shown == showing.message_id

    async def store_new(self, showing: GroupShowing, new_id: int, replaced: int | None) -> bool:
        # The chat the replaced message is in (a group that became a supergroup: the old).
        retire = None if replaced is None else (self.place.chat_id, replaced)
        reowe = Reowe([GROUP], showing.rev)
        game_id, lobby = showing.table.game_id, showing.lobby

        def change(t: ChatGame | None) -> Write[None]:
            if t is None or t.game_id != game_id:
                return Write(None, None)
            if lobby:
                t.lobby_message_id = new_id
            else:
                t.table_message_id = new_id
            return Write(t, None, retire=retire, reowe=reowe)

        await self.context.storage.update_table(showing.table.place, change)
        return reowe.newer

    async def shown(self, lane: Lane[Any], showing: GroupShowing, new_id: int | None) -> None:
        table, live = showing.table, self.context.cache.live_tables
        on_screen = new_id or showing.message_id
        if table.phase in planner.LIVE_PHASES and on_screen is not None:
            live[table.place] = (table.game_id, on_screen)
        else:
            live.pop(table.place, None)


@dataclass
class HandShowing(Showing):
    seat: int = 0
    notify: bool = False
    """Sent as a new, notifying message."""
    quieted: bool = False
    """A notification that went out late, as an edit instead (``planner.NOTIFY_LATE``)."""


class HandMessage(ChatCalls):
    """A player's hand of the game at ``place``, in their private chat."""

    def __init__(
        self, context: OutputContext, place: Place, user_id: int, render: HandRenderer
    ) -> None:
        self.context = context
        self.place = place
        self.to = private_chat(user_id)
        self.user_id = user_id
        self.role = hand_role(user_id)
        self.urgent = True
        self.render = render

    def held(self, table: ChatGame) -> set[int | None]:
        return planner.hand_message_ids(table, self.user_id)

    async def plan(
        self, job: OutputJob, owed: OwedOutput, table: ChatGame | None
    ) -> HandShowing | None:
        job.covers = owed.rev
        user = self.user_id
        if table is None or table.state is None:
            return None
        if user not in owed.notify and planner.shown_elsewhere(job.owed_target, owed):
            return None
        seat = planner.hand_seat(table, user)
        if seat is None:
            return None
        await self.context.taps.first()
        content = await job.render(table, lambda: self.render(table, seat))
        message_id = table.seats[seat].hand_message_id
        notify = planner.notifies(user, owed, job.notify)
        started = self.context.clock() if job.looked_at is None else job.looked_at
        # The bot is behind (the global budget is spent): a send and a delete would cost
        # two calls where an edit costs one, and slow every table further. Settling the job
        # settles the notification too; a player who is away still gets the reminder
        # before their turn times out.
        quieted = notify and planner.late_notification(table, message_id, job.queued_at, started)
        notify = notify and not quieted
        playing = table.phase == "playing"
        slot = planner.send_slot(self.role, table.place, table.game_id)
        return HandShowing(
            table,
            content,
            message_id,
            slot,
            owed.rev,
            # A game that ended because its place refuses messages tells each player anew.
            force_new=notify and (playing or table.phase == "cancelled"),
            reconcile=playing,
            seat=seat,
            notify=notify,
            quieted=quieted,
        )

    async def still_due(self, showing: HandShowing) -> bool:
        storage, seat = self.context.storage, showing.seat
        now = await storage.load_table(self.place)
        if now is None or now.game_id != showing.table.game_id or seat >= len(now.seats):
            return False
        if now.seats[seat].hand_message_id != showing.message_id:
            return False
        return not showing.notify or self.user_id in (await storage.owed_output(self.place)).notify

    async def store_new(self, showing: HandShowing, new_id: int, replaced: int | None) -> bool:
        """The new hand's id, and its notification marked done, in one transaction: the
        only window for a second notifying send is between Telegram's answer and this."""
        retire = None if replaced is None else (self.user_id, replaced)
        reowe = Reowe([self.role], showing.rev)
        game_id, seat = showing.table.game_id, showing.seat
        settle: dict[str, int | None] = {owed_fields.notify(self.user_id): showing.rev}

        def change(t: ChatGame | None) -> Write[None]:
            if t is None or t.game_id != game_id or seat >= len(t.seats):
                return Write(None, None)
            t.seats[seat].hand_message_id = new_id
            return Write(t, None, settle=settle, retire=retire, reowe=reowe)

        await self.context.storage.update_table(showing.table.place, change)
        return reowe.newer

    async def shown(self, lane: Lane[Any], showing: HandShowing, new_id: int | None) -> None:
        ctx, table = self.context, showing.table
        ctx.stats.quieted += showing.quieted
        on_screen = new_id is not None or showing.message_id is not None
        confirmed = on_screen and ctx.cache.unconfirmed_send(lane.chat_id, showing.slot) is None
        if not confirmed or table.phase != "playing":
            return
        # The turn timer waits for this (see bot.app.turn_gate).
        step = planner.step_of(table)
        seen = (table.game_id, step)
        if ctx.cache.hands_shown.get((table.place, self.user_id)) != seen:
            # From when the request left: the turn gate counts a player's wait from then
            # (bot.app.turn_gate), so pacing delays are not theirs.
            at = lane.sent_at if lane.sent_at is not None else ctx.wall_clock()
            await ctx.storage.mark_hand_shown(table.place, self.user_id, table.game_id, step, at)
            ctx.cache.hands_shown[(table.place, self.user_id)] = seen
