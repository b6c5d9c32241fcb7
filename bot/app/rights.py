"""Whether the bot is an admin of a group, as Telegram says (remembered for a while).

Players without a private chat play from the group only where the bot is an admin: a bot
may send an ephemeral message to any member at any time only as an admin (otherwise only
within 15 s of that member's own tap).
"""

from __future__ import annotations

import logging
import time
from collections.abc import Callable
from typing import Any

from telegram.constants import ChatMemberStatus
from telegram.error import TelegramError

from bot.domain.bounded import BoundedDict

log = logging.getLogger(__name__)

ADMIN_SECONDS = 60.0
"""How long an answer is trusted when it need not be fresh."""
MAX_GROUPS = 10_000


class BotRights:
    def __init__(self, bot: Any, clock: Callable[[], float] = time.monotonic) -> None:
        self.bot = bot
        self.clock = clock
        self._admin: BoundedDict[int, tuple[float, bool]] = BoundedDict(MAX_GROUPS)

    async def admin(self, chat_id: int, *, fresh: bool = False) -> bool:
        """Whether the bot is an admin of ``chat_id``; ``fresh``: ask Telegram now (Start:
        an admin may have just promoted the bot because the lobby asked for it)."""
        now = self.clock()
        known = self._admin.get(chat_id)
        if known is not None and not fresh and now - known[0] < ADMIN_SECONDS:
            return known[1]
        try:
            member = await self.bot.get_chat_member(chat_id, self.bot.id)
            admin = member.status in (ChatMemberStatus.ADMINISTRATOR, ChatMemberStatus.OWNER)
        except TelegramError as err:
            log.info("chat %s: could not read the bot's status: %s", chat_id, err)
            admin = False
        self._admin[chat_id] = (now, admin)
        return admin
