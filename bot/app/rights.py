"""The bot's rights in a group, as Telegram says (remembered for a while).

Players without a private chat play from the group only where the bot is an admin: a bot
may send an ephemeral message to any member at any time only as an admin (otherwise only
within 15 s of that member's own tap). Tidy-up deletes the ``/newgame`` commands people
sent only where the bot may delete others' messages.
"""

from __future__ import annotations

import logging
import time
from collections.abc import Callable
from dataclasses import dataclass
from typing import Any, Final

from telegram.constants import ChatMemberStatus
from telegram.error import TelegramError

from bot.domain.bounded import BoundedDict

log = logging.getLogger(__name__)

ADMIN_SECONDS = 60.0
"""How long an answer is trusted when it need not be fresh."""
DELETE_SECONDS = 600.0
"""How long tidy-up trusts what it was told of the right to delete others' messages."""
MAX_GROUPS = 10_000


@dataclass(frozen=True)
class Rights:
    """What one ``getChatMember`` of the bot says of its place in a group."""

    admin: bool
    delete_messages: bool
    """It may delete others' messages (the group's owner, or an admin with the right)."""


NONE: Final = Rights(admin=False, delete_messages=False)


class BotRights:
    """The bot's rights in groups, asked of Telegram once per group and remembered."""

    def __init__(self, bot: Any, clock: Callable[[], float] = time.monotonic) -> None:
        self.bot = bot
        self.clock = clock
        self._known: BoundedDict[int, tuple[float, Rights]] = BoundedDict(MAX_GROUPS)

    async def admin(self, chat_id: int, *, fresh: bool = False) -> bool:
        """Whether the bot is an admin of ``chat_id``; ``fresh``: ask Telegram now (Start:
        an admin may have just promoted the bot because the lobby asked for it)."""
        return (await self.rights(chat_id, 0.0 if fresh else ADMIN_SECONDS)).admin

    async def may_delete(self, chat_id: int) -> bool:
        """Whether the bot may delete others' messages in ``chat_id`` (tidy-up)."""
        return (await self.rights(chat_id, DELETE_SECONDS)).delete_messages

    async def rights(self, chat_id: int, max_age: float) -> Rights:
        """As Telegram said at most ``max_age`` seconds ago (asked now if not known)."""
        now = self.clock()
        known = self._known.get(chat_id)
        if known is not None and now - known[0] < max_age:
            return known[1]
        try:
            member = await self.bot.get_chat_member(chat_id, self.bot.id)
        except TelegramError as err:
            log.info("chat %s: could not read the bot's rights: %s", chat_id, err)
            rights = NONE
        else:
            owner = member.status == ChatMemberStatus.OWNER
            admin = owner or member.status == ChatMemberStatus.ADMINISTRATOR
            delete = owner or (admin and bool(getattr(member, "can_delete_messages", False)))
            rights = Rights(admin, delete)
        self._known[chat_id] = (now, rights)
        return rights
