"""New messages that are not a game's: command replies and announcements (``Outbox.say``).

A command's reply replaces a pending reply of the same kind in that place (a chat, or a
topic of it) and waits behind the game's messages; other messages are announcements, each
sent once.
"""

from __future__ import annotations

import contextvars
import itertools
import logging
from collections.abc import Awaitable, Callable, Hashable
from dataclasses import dataclass
from typing import Any

from telegram import Message

from bot.domain.place import Place
from bot.output.context import OutputContext
from bot.output.jobs import OutputJob
from bot.render import Rendered
from bot.transport.bot_api import Edit
from bot.transport.lanes import ANNOUNCE, REPLY, Lane, Outcome

log = logging.getLogger(__name__)


@dataclass
class ReplyScope:
    """The command being answered: its replies merge with a pending reply of that kind."""

    kind: str
    count: int = 0


REPLY_SCOPE: contextvars.ContextVar[ReplyScope | None] = contextvars.ContextVar(
    "durak_reply_scope", default=None
)


class Replies:
    def __init__(self, context: OutputContext) -> None:
        self.context = context
        self._ids = itertools.count()

    def job(
        self,
        place: Place,
        content: Rendered,
        *,
        reply_to: int | None,
        on_sent: Callable[[Message], Awaitable[None]] | None,
        kind: str | None,
    ) -> tuple[Hashable, OutputJob]:
        """The key and job of one new message into ``place`` (see ``Outbox.say``)."""
        api, stats, topic = self.context.api, self.context.stats, place.topic_id

        async def work(lane: Lane[Any], job: OutputJob) -> Outcome:
            await lane.pace()
            message = await api.reply(lane.chat_id, content.text, content.markup, reply_to, topic)
            stats.sent += 1
            if on_sent is not None:
                await on_sent(message)
            if kind is not None and self.context.reply_sent is not None:
                try:
                    await self.context.reply_sent(place, message.message_id)
                except Exception:  # sent: only tidy-up misses it, never send it twice
                    log.exception("chat %s: reply not noted for tidy-up", place)
            return None

        scope = REPLY_SCOPE.get()
        key: Hashable
        if kind is None and scope is not None:
            # One command may answer with several messages (the rules): merge each part.
            kind = f"{scope.kind}#{scope.count}"
            scope.count += 1
        if kind is not None:
            key, priority = ("reply", topic, kind), REPLY
        else:
            key, priority = ("say", next(self._ids)), ANNOUNCE
        return key, OutputJob(work=work, priority=priority, repeatable=False)

    def edit_job(
        self, message_id: int, content: Rendered, *, send_if_gone: bool
    ) -> tuple[Hashable, OutputJob]:
        """The key and job of one edit of a message that is no game's (a review's
        progress): a newer edit of it queued meanwhile takes this one's place."""
        api, stats = self.context.api, self.context.stats

        async def work(lane: Lane[Any], job: OutputJob) -> Outcome:
            await lane.pace()
            outcome = await api.edit_text(lane.chat_id, message_id, content.text, content.markup)
            stats.edited += 1
            if outcome is Edit.GONE and send_if_gone:
                await lane.pace()
                await api.send_text(lane.chat_id, content.text, content.markup)
                stats.sent += 1
            return None

        return ("edit", message_id), OutputJob(work=work, priority=ANNOUNCE, repeatable=True)

    def delete_job(
        self, message_id: int, done: Callable[[], Awaitable[None]]
    ) -> tuple[Hashable, OutputJob]:
        """The key and job of a tidy-up delete: paced like everything else in its chat
        and after the game's messages; ``done`` once Telegram deleted it or refused for
        good."""
        context = self.context

        async def work(lane: Lane[Any], job: OutputJob) -> Outcome:
            await lane.pace()
            await context.retire(lane.chat_id, message_id)
            await done()
            return None

        return ("tidy", message_id), OutputJob(work=work, priority=ANNOUNCE, repeatable=True)
