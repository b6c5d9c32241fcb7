"""Who and what exists: bots, users, groups and private chats; lookups and membership."""

from __future__ import annotations

from sandbox.emulator.errors import (
    ERR_BLOCKED,
    ERR_BOT_TO_BOT,
    ERR_CANT_INITIATE,
    ERR_CHAT_NOT_FOUND,
    ERR_MIGRATED,
    ApiError,
    EmulatorError,
)
from sandbox.emulator.models import (
    EmuBot,
    EmuChat,
    EmuMessage,
    EmuUser,
    admin_rights,
    member_api,
)
from sandbox.emulator.types import BotRef, JsonDict


class Registry:
    """Bots, users and chats by id, and who may see or write what."""

    def __init__(self) -> None:
        self.users: dict[int, EmuUser] = {}
        self.bots_by_token: dict[str, EmuBot] = {}
        self.groups: dict[int, EmuChat] = {}
        self.privates: dict[tuple[int, int], EmuChat] = {}

    # ----------------------------------------------------------------- lookups

    @property
    def bots(self) -> list[EmuBot]:
        return list(self.bots_by_token.values())

    def bot(self, bot: BotRef = None) -> EmuBot:
        """Resolve a bot by token, username or id; None means the first registered bot."""
        if bot is None:
            if not self.bots_by_token:
                raise EmulatorError("no bot registered; call add_bot() first")
            return next(iter(self.bots_by_token.values()))
        if isinstance(bot, int):
            for b in self.bots_by_token.values():
                if b.id == bot:
                    return b
        else:
            if bot in self.bots_by_token:
                return self.bots_by_token[bot]
            name = bot.lstrip("@").lower()
            for b in self.bots_by_token.values():
                if (b.user.username or "").lower() == name:
                    return b
        raise EmulatorError(f"unknown bot {bot!r}")

    def bot_by_token(self, token: str) -> EmuBot | None:
        return self.bots_by_token.get(token)

    def user(self, user_id: int) -> EmuUser:
        user = self.users.get(user_id)
        if user is None:
            raise EmulatorError(f"unknown user {user_id}; call add_user() first")
        return user

    def group(self, chat_id: int) -> EmuChat:
        chat = self.groups.get(chat_id)
        if chat is None:
            raise EmulatorError(f"unknown group {chat_id}; call add_group() first")
        return chat

    def private_chat(self, user: EmuUser, b: EmuBot) -> EmuChat:
        key = (user.id, b.id)
        chat = self.privates.get(key)
        if chat is None:
            chat = EmuChat(user.id, "private", peer=user, bot_id=b.id)
            self.privates[key] = chat
        return chat

    def chat(self, chat_id: int, *, bot: BotRef = None) -> EmuChat | None:
        """The live chat object (a group, or the user's private chat with ``bot``)."""
        group = self.groups.get(chat_id)
        if group is not None:
            return group
        if not self.bots_by_token:
            return None
        return self.privates.get((chat_id, self.bot(bot).id))

    def chat_of(self, message: EmuMessage) -> EmuChat:
        if message.bot_id is not None:
            return self.privates[(message.chat_id, message.bot_id)]
        return self.groups[message.chat_id]

    # ----------------------------------------------------------------- membership

    def member_status(self, chat: EmuChat, user_id: int) -> str:
        """ChatMember status: creator, administrator, member, kicked or left."""
        if chat.peer is not None:
            return "member"
        if chat.creator == user_id:
            return "creator"
        if user_id in chat.admins and (user_id in chat.members or user_id in chat.bots):
            return "administrator"
        if user_id in chat.members or user_id in chat.bots:
            return "restricted" if user_id in chat.muted else "member"
        if user_id in chat.kicked_bots:
            return "kicked"
        return "left"

    def right(self, chat: EmuChat, user_id: int, name: str) -> bool:
        """Whether a member holds an administrator right (the creator holds them all)."""
        status = self.member_status(chat, user_id)
        if status == "creator":
            return True
        if status != "administrator":
            return False
        return bool(admin_rights(chat.admin_rights.get(user_id)).get(name))

    def member_api(self, chat: EmuChat, user_id: int) -> JsonDict:
        """The ChatMember object for a user in a chat, with their actual rights."""
        return member_api(
            self.users[user_id],
            self.member_status(chat, user_id),
            rights=chat.admin_rights.get(user_id),
        )

    def chat_for_bot(self, b: EmuBot, chat_ref: int | str, *, write: bool) -> EmuChat:
        """The chat a Bot API call refers to, or Telegram's error for it."""
        if isinstance(chat_ref, str):
            # Only public chats resolve by @username; the emulator has none.
            raise ApiError(400, ERR_CHAT_NOT_FOUND)
        group = self.groups.get(chat_ref)
        if group is not None:
            if group.migrated_to is not None:
                raise ApiError(400, ERR_MIGRATED, migrate_to_chat_id=group.migrated_to)
            if b.id in group.bots:
                return group
            kind = "supergroup" if group.type == "supergroup" else "group"
            if b.id in group.kicked_bots:
                raise ApiError(403, f"Forbidden: bot was kicked from the {kind} chat")
            raise ApiError(403, f"Forbidden: bot is not a member of the {kind} chat")
        user = self.users.get(chat_ref)
        if user is None:
            raise ApiError(400, ERR_CHAT_NOT_FOUND)
        if user.is_bot:
            raise ApiError(403, ERR_BOT_TO_BOT)
        if write:
            if user.id in b.blocked:
                raise ApiError(403, ERR_BLOCKED)
            if user.id not in b.started:
                raise ApiError(403, ERR_CANT_INITIATE)
        return self.private_chat(user, b)

    def state(self) -> JsonDict:
        """JSON-able overview for the sandbox page (tokens are not exposed)."""
        return {
            "bots": [
                {**b.user.to_api(), "started": sorted(b.started), "blocked": sorted(b.blocked)}
                for b in self.bots_by_token.values()
            ],
            "users": [u.to_api() for u in self.users.values() if not u.is_bot],
            "groups": [c.to_dict() for c in self.groups.values()],
            "private_chats": [c.to_dict() for c in self.privates.values()],
        }
