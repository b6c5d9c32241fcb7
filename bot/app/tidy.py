"""Tidy-up (a group setting, on unless its admins turn it off): what a game leaves in the
chat is its result and its final table.

* The bot's replies to commands in a group (/rules, /stats, /top, /settings …) are
  deleted ``REPLY_LIFETIME`` after they were sent.
* When a game ends, the announcements its place got meanwhile (a player left, was handed
  to the computer …) are deleted; the deal's code stays: it is what the result is checked
  against. The lobby needs nothing: it became the table, one message.
* When a game ends and the bot may delete others' messages (an admin with
  ``can_delete_messages``), the /newgame commands that opened its lobbies go too.

Every delete is stored in Redis first (``bot.store.tidy``), due at a time, and any worker
takes it once due (leased, so a worker that dies leaves it to another); it is sent through
the chat's lane, paced like the rest of the chat's output. With tidy-up off, nothing is
deleted.
"""

from __future__ import annotations

import logging
from collections.abc import Awaitable, Callable
from typing import Any

from bot.app.rights import BotRights
from bot.domain.place import Place
from bot.domain.records import ChatGame
from bot.output.outbox import Outbox
from bot.store.storage import Storage

log = logging.getLogger(__name__)

REPLY_LIFETIME = 600.0
"""Seconds a command's reply stays in a group with tidy-up on."""
KEPT_NOTES = frozenset({"deal.code", "deal.code_series"})
"""Announcements tidy-up keeps: the deal's code is what the result is verified against."""


class Tidy:
    def __init__(
        self, storage: Storage, outbox: Outbox, rights: BotRights, clock: Callable[[], float]
    ) -> None:
        self.storage = storage
        self.outbox = outbox
        self.clock = clock
        self.rights = rights

    async def _on(self, chat_id: int) -> bool:
        return chat_id < 0 and (await self.storage.chat_settings(chat_id)).tidy

    async def reply_sent(self, place: Place, message_id: int) -> None:
        """A command's reply went out: in a tidy group it goes after a while."""
        if await self._on(place.chat_id):
            due = self.clock() + REPLY_LIFETIME
            await self.storage.tidy.delete_at(due, [(place.chat_id, message_id)])

    async def note_sent(self, place: Place, note: dict[str, Any], message_id: int) -> None:
        """An owed note went out: an announcement goes when its game ends (at once if it
        has: the move that ended it may have owed it)."""
        if note.get("kind") != "announce" or note.get("key") in KEPT_NOTES:
            return
        game = await self.storage.peek_table(place)
        if game is not None and game.phase in ("finished", "cancelled"):
            if await self._on(place.chat_id):
                await self.storage.tidy.delete_at(self.clock(), [(place.chat_id, message_id)])
            return
        await self.storage.tidy.litter(place, message_id, person=False)

    async def command(self, place: Place, message_id: int) -> None:
        """A /newgame command opened a lobby here: it goes when a game ends."""
        await self.storage.tidy.litter(place, message_id, person=True)

    async def game_over(self, game: ChatGame) -> None:
        """The game ended: what its place left goes now (if the group tidies)."""
        place = game.place
        litter = await self.storage.tidy.litter_of(place)
        if not litter:
            return
        chat_id = place.chat_id
        if await self._on(chat_id):
            people = any(person for _, person in litter) and await self.rights.may_delete(chat_id)
            doomed = [(chat_id, m) for m, person in litter if people or not person]
            await self.storage.tidy.delete_at(self.clock(), doomed)
        await self.storage.tidy.forget_litter(place, len(litter))

    async def sweep(self) -> None:
        """Take every due delete (leased) and queue it in its chat's lane (the scheduler
        runs this every read, about once a second)."""
        now = self.clock()
        for chat_id, message_id in await self.storage.tidy.due(now):
            lease = await self.storage.tidy.lease(chat_id, message_id, now)
            if lease is None:
                continue  # another worker took it
            self.outbox.delete(chat_id, message_id, self._done(chat_id, message_id, lease))

    def _done(self, chat_id: int, message_id: int, lease: float) -> Callable[[], Awaitable[None]]:
        async def done() -> None:
            await self.storage.tidy.done(chat_id, message_id, lease)

        return done
