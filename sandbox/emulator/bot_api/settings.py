"""The bot's own settings: command menus, name and descriptions, the menu button."""

from __future__ import annotations

import copy
import re
from typing import Any

from sandbox.emulator.bot_api import Handler
from sandbox.emulator.errors import ApiError
from sandbox.emulator.models import CommandsKey, EmuBot
from sandbox.emulator.params import Params
from sandbox.emulator.types import JsonDict
from sandbox.emulator.world import World

_SCOPE_TYPES = frozenset(
    {
        "default",
        "all_private_chats",
        "all_group_chats",
        "all_chat_administrators",
        "chat",
        "chat_administrators",
        "chat_member",
    }
)
_COMMAND_NAME_RE = re.compile(r"[a-z0-9_]{1,32}")


def _commands_key(p: Params) -> CommandsKey:
    scope = p.get_json("scope", "Bad Request: can't parse BotCommandScope JSON object")
    if scope is None:
        scope = {"type": "default"}
    if not isinstance(scope, dict) or scope.get("type") not in _SCOPE_TYPES:
        raise ApiError(400, "Bad Request: can't parse BotCommandScope JSON object")
    kind = str(scope["type"])
    chat_id: int | None = None
    user_id: int | None = None
    if kind in ("chat", "chat_administrators", "chat_member"):
        scoped = Params(scope)
        chat_id = scoped.get_int("chat_id")
        if chat_id is None:
            raise ApiError(400, "Bad Request: chat not found")
        if kind == "chat_member":
            user_id = scoped.get_int("user_id")
            if user_id is None:
                raise ApiError(400, "Bad Request: user not found")
    return (kind, chat_id, user_id, p.get_str("language_code") or "")


async def set_my_commands(w: World, b: EmuBot, p: Params) -> Any:
    key = _commands_key(p)
    commands = p.get_json("commands")
    if not isinstance(commands, list) or len(commands) > 100:
        raise ApiError(400, "Bad Request: can't parse commands JSON object")
    stored: list[JsonDict] = []
    for item in commands:
        if not isinstance(item, dict) or not _COMMAND_NAME_RE.fullmatch(
            str(item.get("command", ""))
        ):
            raise ApiError(400, "Bad Request: BOT_COMMAND_INVALID")
        description = str(item.get("description", ""))
        if not 1 <= len(description) <= 256:
            raise ApiError(400, "Bad Request: BOT_COMMAND_DESCRIPTION_INVALID")
        command: JsonDict = {"command": str(item["command"]), "description": description}
        if item.get("is_ephemeral") in (True, "true", "True"):
            command["is_ephemeral"] = True  # Bot API 10.2: sent ephemerally in groups
        stored.append(command)
    if stored:
        b.commands[key] = stored
    else:
        b.commands.pop(key, None)
    w.events.touch()
    return True


async def get_my_commands(w: World, b: EmuBot, p: Params) -> Any:
    return copy.deepcopy(b.commands.get(_commands_key(p), []))


async def delete_my_commands(w: World, b: EmuBot, p: Params) -> Any:
    b.commands.pop(_commands_key(p), None)
    w.events.touch()
    return True


def setting_setter(field: str) -> Handler:
    async def setter(w: World, b: EmuBot, p: Params) -> Any:
        b.settings[field] = p.get_str(field) or ""
        return True

    return setter


def setting_getter(field: str) -> Handler:
    async def getter(w: World, b: EmuBot, p: Params) -> Any:
        default = b.user.first_name if field == "name" else ""
        return {field: b.settings.get(field, default)}

    return getter


async def set_chat_menu_button(w: World, b: EmuBot, p: Params) -> Any:
    button = p.get_json("menu_button")
    b.settings["menu_button"] = button if isinstance(button, dict) else {"type": "default"}
    return True


async def get_chat_menu_button(w: World, b: EmuBot, p: Params) -> Any:
    return b.settings.get("menu_button", {"type": "default"})
