"""Setting the scene: bots, users and groups, who is in which group, and group upgrades."""

from __future__ import annotations

import copy
from collections.abc import Iterable

from sandbox.emulator.errors import EmulatorError
from sandbox.emulator.forum import Forum
from sandbox.emulator.models import EmuBot, EmuChat, EmuUser, admin_rights, member_api
from sandbox.emulator.types import BotRef, JsonDict
from sandbox.emulator.world import World

# Supergroup ids look like -100xxxxxxxxxx; upgraded groups get fresh ones from here down.
_FIRST_UPGRADE_ID = -1_002_000_000_001


class Scene:
    """Registers bots and people, creates groups, changes membership; bots get the updates
    Telegram would send them (my_chat_member, migration service messages)."""

    def __init__(self, world: World) -> None:
        self.w = world
        self._next_upgrade_id = _FIRST_UPGRADE_ID

    def add_bot(
        self, token: str, username: str = "durak_test_bot", first_name: str = "Durak"
    ) -> EmuUser:
        """Register a bot; its user id is the number before ':' in the token, as in Telegram."""
        registry = self.w.registry
        head, sep, secret = token.partition(":")
        if not sep or not head.isdigit() or not secret:
            raise EmulatorError("token must look like '<bot id>:<secret>'")
        if token in registry.bots_by_token:
            raise EmulatorError(f"bot with token {token!r} already exists")
        user = EmuUser(int(head), first_name, is_bot=True, username=username, language_code=None)
        registry.bots_by_token[token] = EmuBot(token, user)
        registry.users[user.id] = user
        self.w.events.emit(None, "state", what="bot", user=user.to_api())
        return user

    def add_user(
        self,
        user_id: int,
        first_name: str,
        *,
        username: str | None = None,
        language_code: str | None = "en",
        last_name: str | None = None,
    ) -> EmuUser:
        """Register (or update in place) a human user."""
        if user_id <= 0:
            raise EmulatorError("user ids are positive")
        users = self.w.registry.users
        user = users.get(user_id)
        if user is not None and user.is_bot:
            raise EmulatorError(f"{user_id} is a bot")
        if user is None:
            user = EmuUser(user_id, first_name)
            users[user_id] = user
        user.first_name = first_name
        user.username = username
        user.language_code = language_code
        user.last_name = last_name
        self.w.events.emit(None, "state", what="user", user=user.to_api())
        return user

    def add_group(
        self,
        chat_id: int,
        title: str,
        *,
        members: Iterable[int] = (),
        admins: Iterable[int] = (),
        creator: int | None = None,
        bots: Iterable[BotRef] | None = None,
        chat_type: str = "supergroup",
        forum: bool = False,
    ) -> EmuChat:
        """Create a group with its members; each bot joins with a my_chat_member update.

        ``bots`` defaults to every registered bot; bots listed in ``admins`` join as admins.
        ``chat_type="group"`` makes a basic group (one that ``migrate_group`` can upgrade).
        ``forum=True`` makes a supergroup with topics (only its General topic, at first).
        """
        registry = self.w.registry
        if chat_id >= 0:
            raise EmulatorError("group chat ids are negative")
        if chat_type not in ("group", "supergroup"):
            raise EmulatorError("chat_type must be 'group' or 'supergroup'")
        if chat_id in registry.groups:
            raise EmulatorError(f"group {chat_id} already exists")
        admin_ids = set(admins)
        people = set(members) | admin_ids | ({creator} if creator is not None else set())
        bot_ids = {uid for uid in people if uid in registry.users and registry.users[uid].is_bot}
        for uid in people - bot_ids:
            registry.user(uid)
        chat = EmuChat(
            chat_id,
            chat_type,
            title=title,
            members=people - bot_ids,
            admins=admin_ids,
            creator=creator,
        )
        registry.groups[chat_id] = chat
        if forum:
            Forum(self.w).set_forum(chat, True)
        self.w.events.emit(chat, "state", what="group", chat=chat.to_dict())
        joining = [registry.bot(b) for b in bots] if bots is not None else registry.bots
        for uid in bot_ids:
            if all(b.id != uid for b in joining):
                joining.append(registry.bot(uid))
        for b in joining:
            self.add_bot_to_group(chat_id, b.id, admin=b.id in admin_ids)
        return chat

    def add_member(self, chat_id: int, user_id: int, *, admin: bool = False) -> None:
        """Silently make a user a member (no service message)."""
        chat = self.w.registry.group(chat_id)
        self.w.registry.user(user_id)
        chat.members.add(user_id)
        if admin:
            chat.admins.add(user_id)
        status = self.w.registry.member_status(chat, user_id)
        self.w.events.emit(chat, "member", user_id=user_id, status=status)

    def add_bot_to_group(
        self, chat_id: int, bot: BotRef = None, *, admin: bool = False, by: int | None = None
    ) -> None:
        """Add a bot to a group; the bot gets a my_chat_member update."""
        chat = self.w.registry.group(chat_id)
        b = self.w.registry.bot(bot)
        old = self.w.registry.member_status(chat, b.id)
        chat.bots.add(b.id)
        chat.kicked_bots.discard(b.id)
        if admin:
            chat.admins.add(b.id)
        self._bot_status_changed(chat, b, old, by)

    def remove_bot_from_group(
        self, chat_id: int, bot: BotRef = None, *, kicked: bool = False, by: int | None = None
    ) -> None:
        """The bot leaves (or, with ``kicked``, is banned from) a group."""
        chat = self.w.registry.group(chat_id)
        b = self.w.registry.bot(bot)
        old = self.w.registry.member_status(chat, b.id)
        chat.bots.discard(b.id)
        chat.admins.discard(b.id)
        if kicked:
            chat.kicked_bots.add(b.id)
        self._bot_status_changed(chat, b, old, by)

    def set_admin_rights(
        self, chat_id: int, user_id: int, *, by: int | None = None, **rights: bool
    ) -> None:
        """Change an administrator's rights (e.g. ``can_manage_topics=True``), as the
        group's owner does in the app; a bot gets a my_chat_member update."""
        chat = self.w.registry.group(chat_id)
        if self.w.registry.member_status(chat, user_id) != "administrator":
            raise EmulatorError(f"{user_id} is not an administrator of {chat_id}")
        unknown = set(rights) - set(admin_rights())
        if unknown:
            raise EmulatorError(f"unknown administrator rights: {sorted(unknown)}")
        old = self.w.registry.member_api(chat, user_id)
        chat.admin_rights[user_id] = {**chat.admin_rights.get(user_id, {}), **rights}
        self._member_changed(chat, user_id, old, by)

    def set_muted(
        self, chat_id: int, user_id: int, muted: bool = True, *, by: int | None = None
    ) -> None:
        """Restrict a member (person or bot) from sending messages, or lift it. A muted
        bot's sends fail "not enough rights to send text messages to the chat"; it gets a
        my_chat_member update (status "restricted"). Admins cannot be muted."""
        chat = self.w.registry.group(chat_id)
        if self.w.registry.member_status(chat, user_id) in ("creator", "administrator"):
            raise EmulatorError(f"{user_id} is an administrator of {chat_id}; demote first")
        old = self.w.registry.member_api(chat, user_id)
        if muted:
            chat.muted.add(user_id)
        else:
            chat.muted.discard(user_id)
        self._member_changed(chat, user_id, old, by)

    def _member_changed(self, chat: EmuChat, user_id: int, old: JsonDict, by: int | None) -> None:
        new = self.w.registry.member_api(chat, user_id)
        if new == old:
            return
        user = self.w.registry.users[user_id]
        if user.is_bot:
            b = self.w.registry.bot(user_id)
            self.w.updates.deliver(
                b,
                "my_chat_member",
                {
                    "chat": chat.to_api(),
                    "from": self._actor(chat, by, b.user).to_api(),
                    "date": self.w.events.now(),
                    "old_chat_member": old,
                    "new_chat_member": new,
                },
            )
        self.w.events.emit(
            chat, "member", user_id=user_id, status=new["status"], old_status=old["status"]
        )

    def _actor(self, chat: EmuChat, by: int | None, fallback: EmuUser) -> EmuUser:
        """Who did something to a group: ``by``, else its creator, an admin, a member."""
        actor_id = by if by is not None else chat.creator
        if actor_id is None:
            actor_id = min(chat.members & chat.admins, default=min(chat.members, default=None))
        if actor_id is None:
            return fallback
        return self.w.registry.users.get(actor_id, fallback)

    def _bot_status_changed(self, chat: EmuChat, b: EmuBot, old: str, by: int | None) -> None:
        actor = self._actor(chat, by, b.user)
        new = self.w.registry.member_status(chat, b.id)
        self.w.updates.deliver(
            b,
            "my_chat_member",
            {
                "chat": chat.to_api(),
                "from": actor.to_api(),
                "date": self.w.events.now(),
                "old_chat_member": member_api(b.user, old),
                "new_chat_member": self.w.registry.member_api(chat, b.id),
            },
        )
        self.w.events.emit(chat, "member", user_id=b.id, status=new, old_status=old)

    # ----------------------------------------------------------------- group upgrade

    def migrate_group(self, chat_id: int, *, by: int | None = None) -> int:
        """Upgrade a basic group to a supergroup, as Telegram does; returns the new chat id.

        Members, admins and bots carry over. Bots in the group receive two ``message``
        updates: ``migrate_to_chat_id`` in the old group, then ``migrate_from_chat_id``
        in the new supergroup. The old messages stay readable under the new id (as the
        chat's history; bots can no longer edit or delete them there). From now on every
        Bot API call naming the old id fails with 400 "Bad Request: group chat was upgraded
        to a supergroup chat" and ``parameters.migrate_to_chat_id`` (PTB: ``ChatMigrated``).
        """
        registry = self.w.registry
        old = registry.group(chat_id)
        if old.type != "group":
            raise EmulatorError(f"chat {chat_id} is a {old.type}; only basic groups are upgraded")
        if old.migrated_to is not None:
            raise EmulatorError(f"group {chat_id} was already upgraded to {old.migrated_to}")
        while self._next_upgrade_id in registry.groups:
            self._next_upgrade_id -= 1
        new_id = self._next_upgrade_id
        self._next_upgrade_id -= 1
        new = EmuChat(
            new_id,
            "supergroup",
            title=old.title,
            members=set(old.members),
            admins=set(old.admins),
            creator=old.creator,
            bots=set(old.bots),
            kicked_bots=set(old.kicked_bots),
        )
        for message_id, message in old.messages.items():
            if not message.deleted:
                shown = copy.deepcopy(message)
                shown.chat_id, shown.chat_type, shown.history = new_id, "supergroup", True
                new.messages[message_id] = shown
        new.next_message_id = old.next_message_id
        actor = self._actor(old, by, registry.bot().user)
        registry.groups[new_id] = new
        self.w.events.emit(new, "state", what="group", chat=new.to_dict())
        self._service_message(old, actor, {"migrate_to_chat_id": new_id})
        old.migrated_to = new_id
        self._service_message(new, actor, {"migrate_from_chat_id": chat_id})
        return new_id

    def _service_message(self, chat: EmuChat, actor: EmuUser, fields: dict[str, int]) -> None:
        message = self.w.messages.store(chat, actor, text="", extra=dict(fields))
        payload = self.w.messages.to_api(message)
        for b in self.w.registry.bots:
            if b.id in chat.bots:
                self.w.updates.deliver(b, "message", payload)
