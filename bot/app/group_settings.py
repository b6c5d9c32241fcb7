"""/settings use cases: a group's settings as they are, and an admin's change to one."""

from __future__ import annotations

from typing import Any

from bot.app.games import Games
from bot.domain.group_settings import GroupSetting
from bot.domain.records import ChatSettings


async def change(games: Games, chat_id: int, setting: GroupSetting, value: Any) -> ChatSettings:
    """Set ``setting`` of the group to ``value``; the settings as they now are. The value
    it has already changes nothing (a group that never chose keeps "not chosen")."""
    settings = await games.storage.chat_settings(chat_id)
    if setting.current(settings, games.timing.turn_timeout) != value:
        settings = setting.set_to(settings, value)
        await games.storage.save_chat_settings(chat_id, settings)
    return settings
